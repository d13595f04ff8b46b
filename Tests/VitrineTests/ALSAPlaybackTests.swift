import Foundation
import Testing
@testable import Vitrine
import VitrineCore
import VitrineTestSupport

/// Audio through the real alsa-lib path: the `file` plugin over `null` writes what the player sends.
@Suite("ALSA output through the file plugin", .serialized)
struct ALSAPlaybackTests {
    static func capture(_ wav: String) -> String {
        """
        pcm.vitrine_capture {
            type file
            slave.pcm "null"
            file "\(wav)"
            format "wav"
        }
        """
    }

    /// Reads the WAV (the run closed the PCM before returning, and the plugin finalised its header).
    static func readWAV(_ path: String) throws -> (channels: Int, rate: Int, samples: [Int16]) {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        func u16(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }
        func u32(_ at: Int) -> Int { u16(at) | u16(at + 2) << 16 }
        var off = 12, channels = 0, rate = 0
        var samples: [Int16] = []
        while off + 8 <= bytes.count {
            let id = String(decoding: bytes[off..<off + 4], as: UTF8.self)
            let size = u32(off + 4)
            if id == "fmt " { channels = u16(off + 10); rate = u32(off + 12) }
            if id == "data" {
                let end = size > 0 && off + 8 + size <= bytes.count ? off + 8 + size : bytes.count
                samples = stride(from: off + 8, to: end - 1, by: 2).map { Int16(bitPattern: UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8) }
                break
            }
            off += 8 + size
        }
        return (channels, rate, samples)
    }

    @Test("a 1 s tone yields 1 s of samples (within one period) at 440 Hz")
    func oneSecondTone() throws {
        let tone = try Harness.clip("tone440.wav", ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=1", "-ac", "2"])
        let dir = try Harness.newFolder("alsa-tone")
        try FileManager.default.copyItem(atPath: tone, toPath: dir + "/media/tone.wav")
        try Harness.writeManifest("""
            { "schema": "vitrine.manifest/1", "version": 1, "loop": false, "display": { "mode": "320x180@30" },
              "audio": { "device": "vitrine_capture" },
              "playlist": [ { "id": "tone", "type": "audio", "src": "media/tone.wav" } ] }
            """, in: dir)
        let wav = dir + "/out.wav"
        let (stats, _, _) = try Harness.play(try Harness.manifest(in: dir), catalog: dir, duration: 5, snapshots: []) { o in
            o.audioDevice = "vitrine_capture"
            o.alsaConfigText = Self.capture(wav)
            o.periodFrames = 1024
            o.bufferFrames = 4096
        }
        #expect(stats.audio.contains("48000 Hz, 2 ch"))
        let (channels, rate, samples) = try Self.readWAV(wav)
        #expect(channels == 2 && rate == 48000)
        let frames = samples.count / 2
        #expect(abs(frames - 48000) <= 1024, "wrote \(frames) frames for a 1 s tone")
        // Zero crossings of the left channel over the first 0.9 s: 2 per cycle.
        let left = stride(from: 0, to: 2 * 43200, by: 2).map { samples[$0] }
        let crossings = zip(left, left.dropFirst()).filter { ($0 < 0) != ($1 < 0) }.count
        #expect(abs(Double(crossings) / 2 / 0.9 - 440) < 3)
        #expect(stats.xruns == 0)
    }

    @Test("Big Buck Bunny's 5.1 audio arrives at the device as stereo", .enabled(if: RealMedia.available, RealMedia.absent))
    func downmixToStereo() throws {
        let dir = try Harness.newFolder("alsa-51")
        try FileManager.default.createSymbolicLink(atPath: dir + "/media/bbb.mp4", withDestinationPath: RealMedia.path("bigbuckbunny.mp4"))
        try Harness.writeManifest("""
            { "schema": "vitrine.manifest/1", "version": 1, "loop": false, "display": { "mode": "320x180@30" },
              "playlist": [ { "id": "bbb", "type": "video", "src": "media/bbb.mp4", "duration": 1 } ] }
            """, in: dir)
        let wav = dir + "/out.wav"
        _ = try Harness.play(try Harness.manifest(in: dir), catalog: dir, duration: 5, snapshots: []) { o in
            o.audioDevice = "vitrine_capture"
            o.alsaConfigText = Self.capture(wav)
        }
        let (channels, rate, samples) = try Self.readWAV(wav)
        #expect(channels == 2 && rate == 48000)
        #expect(abs(samples.count / 2 - 48000) <= 1024, "wrote \(samples.count / 2) frames for 1 s")
        // `ffmpeg -t 1 -i bigbuckbunny.mp4 -ac 2 -af volumedetect` gives max_volume −42.7 dBFS: 240.
        #expect(abs(samples.map { abs(Int($0)) }.max()! - 240) <= 24, "the downmix peaks where FFmpeg's does")
    }

    @Test("--audio-device null (a PCM that keeps no queue): the clock runs in real time and the pictures are shown")
    func nullDeviceInRealTime() throws {
        let dir = try Harness.newFolder("alsa-null")
        try FileManager.default.copyItem(atPath: try Harness.colorClip("red", seconds: 2, tone: 440), toPath: dir + "/media/red.mp4")
        try Harness.writeManifest("""
            { "schema": "vitrine.manifest/1", "version": 1, "loop": false, "display": { "mode": "320x180@30" },
              "playlist": [ { "id": "red", "type": "video", "src": "media/red.mp4" } ] }
            """, in: dir)
        let (stats, _, logs) = try Harness.play(try Harness.manifest(in: dir), catalog: dir, duration: 1.5, snapshots: []) { o in
            o.audioDevice = "null"
            o.realtime = true
        }
        #expect(stats.audio.contains("ALSA null"))
        // ALSA's null plugin takes every write at once and reports no delay: without a clock of its
        // own given to it, 1.5 s of catalog time passed in a fraction of a second.
        #expect(stats.wallSeconds >= 1.4, "catalog time \(stats.catalogSeconds) s in \(stats.wallSeconds) s wall")
        #expect(stats.framesPresented >= 40, "\(stats.framesPresented) of 45 frames presented, \(stats.dropped.summary)")
        #expect(logs.contains { $0.message.contains("keeps no queue") })
    }
}
