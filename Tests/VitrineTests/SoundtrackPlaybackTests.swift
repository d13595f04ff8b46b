import Foundation
import Testing
import Media
@testable import Vitrine
import VitrineCore
import VitrineTestSupport

/// The soundtrack under the catalog, heard in the recording (`--record`: PCM S16LE, lossless): a
/// 1 kHz sine as the music and a 440 Hz tone as a video's own sound. Over any 50 ms window the two
/// are orthogonal (50 and 22 whole cycles), so a least-squares fit at 1 kHz reads the music's level
/// and phase through the item's sound.
@Suite("Soundtrack: music under the pictures", .serialized)
struct SoundtrackPlaybackTests {
    static let rate = 48000
    /// 1 s of a 1 kHz sine at half scale, 48 kHz stereo: 1000 whole cycles, so it loops in phase.
    static func music() throws -> String {
        try Harness.clip("music-1k.wav", ["-f", "lavfi", "-i", "aevalsrc=exprs='0.5*sin(2*PI*1000*t)|0.5*sin(2*PI*1000*t)':s=48000:d=1",
                                          "-c:a", "pcm_s16le"])
    }

    /// The video's 440 Hz tone in each output channel: lavfi's sine is 1/8 of full scale, and
    /// libswresample puts a mono stream in both channels at −3 dB (its `center_mix_level`), as ffmpeg does.
    static let voice = 0.125 * 0.5.squareRoot()

    static func still(_ color: String) throws -> String {
        try Harness.clip("still-\(color).png", ["-f", "lavfi", "-i", "color=c=\(color):s=64x36", "-frames:v", "1"])
    }

    /// Amplitude (full scale 1) and phase in degrees of the `hertz` component (1 kHz by default) of the left channel over
    /// frames [from, from + 2400), the phase taken against the output's own frame index.
    static func fit(_ s: [Int16], at seconds: Double, hertz: Double = 1000) -> (level: Double, phase: Double) {
        let from = Int((seconds * Double(rate)).rounded()), n = 2400
        let w = 2 * Double.pi * hertz / Double(rate)
        var a = 0.0, b = 0.0
        for k in from..<(from + n) {
            let x = Double(s[2 * k]) / 32768
            a += x * sin(w * Double(k)); b += x * cos(w * Double(k))
        }
        a *= 2 / Double(n); b *= 2 / Double(n)
        return ((a * a + b * b).squareRoot(), atan2(b, a) * 180 / .pi)
    }

    /// The difference of two phases in degrees, in −180…180.
    static func angle(_ x: Double, _ y: Double) -> Double {
        var d = (x - y).truncatingRemainder(dividingBy: 360)
        if d > 180 { d -= 360 } else if d < -180 { d += 360 }
        return d
    }

    /// A catalog of a red still (1 s), a green video with a 440 Hz tone (`videoSeconds`), and a blue
    /// still (1 s), with `soundtrack`; played and recorded for `duration` s.
    static func playCatalog(soundtrack: String, videoSeconds: Double = 1, duration: Double = 3, music: String? = nil)
        throws -> (stats: RunStatistics, samples: [Int16], logs: [LogRecord]) {
        let dir = try Harness.newFolder("soundtrack")
        try FileManager.default.copyItem(atPath: try music ?? Self.music(), toPath: dir + "/media/music.wav")
        try FileManager.default.copyItem(atPath: try Self.still("red"), toPath: dir + "/media/red.png")
        try FileManager.default.copyItem(atPath: try Self.still("blue"), toPath: dir + "/media/blue.png")
        try FileManager.default.copyItem(atPath: try Harness.colorClip("green", seconds: 2, size: "64x36", tone: 440), toPath: dir + "/media/voice.mp4")
        try Harness.writeManifest("""
            { "schema": "vitrine.manifest/1", "version": 1, "loop": false, "display": { "mode": "64x36@30" },
              "soundtrack": \(soundtrack),
              "playlist": [ { "id": "red", "type": "image", "src": "media/red.png", "duration": 1 },
                            { "id": "voice", "type": "video", "src": "media/voice.mp4", "duration": \(videoSeconds) },
                            { "id": "blue", "type": "image", "src": "media/blue.png", "duration": 1 } ] }
            """, in: dir)
        let rec = dir + "/rec.mkv"
        let (stats, _, logs) = try Harness.play(try Harness.manifest(in: dir), catalog: dir, duration: duration, snapshots: []) { $0.recordPath = rec }
        return (stats, try TransitionTests.decode(rec).samples, logs)
    }

    @Test("duck: the music plays at `volume` under stills, goes down to `duckVolume` over `fade` before the video with sound, comes back after it, and runs on without losing a sample")
    func duck() throws {
        let (stats, s, _) = try Self.playCatalog(soundtrack: #"{ "src": "media/music.wav", "volume": 0.8, "duckVolume": 0.2, "fade": 0.25 }"#)
        #expect(stats.itemsStarted == 3 && stats.soundtrackUnderflowFrames == 0, "\(stats.itemsStarted) items, soundtrack underflow \(stats.soundtrackUnderflowFrames)")
        try #require(s.count >= 2 * 3 * Self.rate - 2 * 1600, "recorded \(s.count / 2) frames")
        // Half scale × gain. Plateaus: 0.4 under the stills, 0.1 under the video.
        let plateaus: [(Double, Double)] = [(0.30, 0.4), (0.60, 0.4), (1.10, 0.1), (1.50, 0.1), (1.90, 0.1), (2.40, 0.4), (2.90, 0.4)]
        for (t, want) in plateaus {
            let got = Self.fit(s, at: t).level
            #expect(abs(got - want) < 0.004, "at \(t) s the music's level is \(got), want \(want)")
        }
        // The ramps are linear over `fade` = 0.25 s: down from 0.75 s to 1.0 s (before the video's
        // sound begins), up from 2.0 s (its end) to 2.25 s. The windows' middles are the ramps' middles.
        for (t, want) in [(0.85, 0.25), (2.10, 0.25), (0.75, 0.4 - 0.3 * 0.1), (2.0, 0.1 + 0.3 * 0.1)] {
            let got = Self.fit(s, at: t).level
            #expect(abs(got - want) < 0.006, "at \(t) s, in a ramp, the level is \(got), want \(want)")
        }
        // The video's own sound is there, at full level, over the music.
        let tone = Self.fit(s, at: 1.5, hertz: 440).level
        #expect(abs(tone - Self.voice) < 0.005, "the 440 Hz tone under the music is at \(tone), want \(Self.voice)")
        // One phase throughout: across the item boundaries and the music's loop points (every 1 s),
        // no sample lost or repeated (one would move it by 7.5°).
        let reference = Self.fit(s, at: 0.30).phase
        for t in stride(from: 0.3, through: 2.9, by: 0.1) {
            let d = Self.angle(Self.fit(s, at: t).phase, reference)
            #expect(abs(d) < 1.5, "at \(t) s the music's phase is \(d)° off")
        }
    }

    @Test("pause: the music fades out before the video with sound, stands still under it, and resumes where it stopped")
    func pause() throws {
        // 1.0125 s: the music is held 48,601 frames (from the ramp's last frame, 47,999, to the
        // video's end, 96,600), 25 frames past a whole number of its 48-frame cycles.
        let (stats, s, _) = try Self.playCatalog(soundtrack: #"{ "src": "media/music.wav", "volume": 0.8, "itemSound": "pause", "fade": 0.25 }"#,
                                                 videoSeconds: 1.0125)
        #expect(stats.itemsStarted == 3)
        for t in [1.10, 1.50, 1.90] {
            #expect(Self.fit(s, at: t).level < 0.001, "at \(t) s, under the video, the music is at \(Self.fit(s, at: t).level)")
        }
        let before = Self.fit(s, at: 0.30), after = Self.fit(s, at: 2.50)
        #expect(abs(before.level - 0.4) < 0.004 && abs(after.level - 0.4) < 0.004, "levels \(before.level), \(after.level)")
        let held = 96600 - 47999
        let want = -Double(held % 48) * 7.5
        let shift = Self.angle(after.phase, before.phase)
        #expect(abs(Self.angle(shift, want)) < 1.5, "the music resumed \(shift)° from where it was; held \(held) frames gives \(Self.angle(want, 0))°")
    }

    @Test("mix: the music stays at `volume` under the video's sound")
    func mix() throws {
        let (_, s, _) = try Self.playCatalog(soundtrack: #"{ "src": "media/music.wav", "volume": 0.6, "itemSound": "mix", "fade": 0.25 }"#)
        for t in [0.5, 1.1, 1.5, 1.9, 2.5] {
            let got = Self.fit(s, at: t).level
            #expect(abs(got - 0.3) < 0.004, "at \(t) s the music's level is \(got), want 0.3")
        }
    }

    @Test("a soundtrack that is not audio is logged with its name and reason; the items play, with their own sound")
    func brokenSoundtrack() throws {
        let dir = try Harness.newFolder("notaudio")
        let text = dir + "/music.wav"
        try "not a sound file\n".write(toFile: text, atomically: true, encoding: .utf8)
        let (stats, s, logs) = try Self.playCatalog(soundtrack: #"{ "src": "media/music.wav" }"#, music: text)
        #expect(stats.itemsStarted == 3 && stats.itemsFailed == 0)
        let errors = logs.filter { $0.level == .error }.map(\.message)
        #expect(errors.contains { $0.hasPrefix("soundtrack media/music.wav: ") && $0.hasSuffix("the catalog plays without it") }, "\(errors)")
        #expect(Self.fit(s, at: 0.5).level < 0.001)
        let tone = Self.fit(s, at: 1.5, hertz: 440).level
        #expect(abs(tone - Self.voice) < 0.005, "the video's own sound is at \(tone), want \(Self.voice)")
    }

    @Test("a catalog switch: the same file with a new volume goes on in phase and moves to it over `fade`; another file fades the first out, then fades in")
    func switchCatalog() throws {
        let format = AudioFormat(sampleRate: Self.rate, channels: 2)
        let log = Logger(label: "test", sink: LogSink.memory().0)
        let path = try Self.music()
        let other = try Harness.clip("music-1500.wav", ["-f", "lavfi", "-i", "aevalsrc=exprs='0.5*sin(2*PI*1500*t)|0.5*sin(2*PI*1500*t)':s=48000:d=1",
                                                          "-c:a", "pcm_s16le"])
        var bed = SoundtrackBed()
        var out: [Int16] = []
        func play(_ seconds: Double) {
            for _ in 0..<Int(seconds * 30) {
                bed.adoptPending(format: format)
                out += bed.mix([Int16](repeating: 0, count: 1600 * 2), itemHasSound: false, wait: 5)
            }
        }
        bed.pending = .some(SoundtrackSource(settings: Soundtrack(src: "media/music.wav", volume: 0.8, fade: 0.25), path: path, format: format, log: log))
        play(1)
        bed.pending = .some(SoundtrackSource(settings: Soundtrack(src: "media/music.wav", volume: 0.4, fade: 0.25), path: path, format: format, log: log))
        play(1)
        bed.pending = .some(SoundtrackSource(settings: Soundtrack(src: "media/other.wav", volume: 0.8, fade: 0.25), path: other, format: format, log: log))
        play(1.5)
        bed.source?.stop()
        let first = Self.fit(out, at: 0.5), kept = Self.fit(out, at: 1.5)
        #expect(abs(first.level - 0.4) < 0.004 && abs(kept.level - 0.2) < 0.004, "levels \(first.level), \(kept.level)")
        #expect(abs(Self.fit(out, at: 1.1).level - 0.3) < 0.006, "half-way down at 1.125 s: \(Self.fit(out, at: 1.1).level)")
        #expect(abs(Self.angle(kept.phase, first.phase)) < 1.5, "the same file went on \(Self.angle(kept.phase, first.phase))° off")
        // From 2.0 s the first fades out (to 2.25 s); the second then fades in from 0 (to 2.5 s).
        #expect(Self.fit(out, at: 2.3).level < 0.02, "the first music after its fade out: \(Self.fit(out, at: 2.3).level)")
        let second = Self.fit(out, at: 2.7, hertz: 1500).level
        #expect(abs(second - 0.4) < 0.004, "the second music at 2.7 s: \(second)")
        #expect(Self.fit(out, at: 2.7).level < 0.001, "the first music after the switch: \(Self.fit(out, at: 2.7).level)")
    }

    @Test("through ALSA (the file plugin over null, a real clock): the music plays under a still at its volume, with no gap")
    func throughALSA() throws {
        let dir = try Harness.newFolder("soundtrack-alsa")
        try FileManager.default.copyItem(atPath: try Self.music(), toPath: dir + "/media/music.wav")
        try FileManager.default.copyItem(atPath: try Self.still("red"), toPath: dir + "/media/red.png")
        try Harness.writeManifest("""
            { "schema": "vitrine.manifest/1", "version": 1, "loop": false, "display": { "mode": "64x36@30" },
              "soundtrack": { "src": "media/music.wav", "volume": 0.8, "fade": 0.25 },
              "playlist": [ { "id": "red", "type": "image", "src": "media/red.png", "duration": 2 } ] }
            """, in: dir)
        let wav = dir + "/out.wav"
        let (stats, _, _) = try Harness.play(try Harness.manifest(in: dir), catalog: dir, duration: 2.2, snapshots: []) { o in
            o.audioDevice = "vitrine_capture"
            o.alsaConfigText = ALSAPlaybackTests.capture(wav)
            // A still's clock is the reference clock: real vblanks, as on a screen.
            o.realtime = true
            o.periodFrames = 1024
            o.bufferFrames = 4096
        }
        let (channels, rate, s) = try ALSAPlaybackTests.readWAV(wav)
        try #require(channels == 2 && rate == Self.rate && s.count >= 2 * 2 * Self.rate - 2 * 1024, "\(channels) ch, \(rate) Hz, \(s.count / 2) frames; \(stats)")
        #expect(stats.soundtrackUnderflowFrames == 0, "soundtrack underflow \(stats.soundtrackUnderflowFrames) frames")
        let reference = Self.fit(s, at: 0.6).phase
        for t in stride(from: 0.6, through: 1.9, by: 0.1) {
            let f = Self.fit(s, at: t)
            #expect(abs(f.level - 0.4) < 0.004, "at \(t) s the music's level is \(f.level), want 0.4")
            #expect(abs(Self.angle(f.phase, reference)) < 1.5, "at \(t) s the music's phase is \(Self.angle(f.phase, reference))° off")
        }
    }
}
