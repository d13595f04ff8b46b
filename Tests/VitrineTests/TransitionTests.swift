import Foundation
import Testing
import Media
@testable import Vitrine
import VitrineCore

/// Seamless transitions, checked on the headless recording: frame numbers burned into the pictures
/// and sample-exact audio.
@Suite("Seamless transitions", .serialized)
struct TransitionTests {
    /// A 1 s, 30 fps, 64x36 grey clip: the left half's luma is 40 + 6 × frame number, the right
    /// half's luma names the item (`tag`).
    static func numbered(_ tag: Int) throws -> String {
        try Harness.clip("numbered-\(tag).mp4", ["-f", "lavfi", "-i", "color=c=black:s=64x36:r=30:d=1",
                                                 "-vf", "geq=lum='if(lt(X,W/2),40+6*N,\(tag))':cb=128:cr=128",
                                                 "-c:v", "libx264", "-preset", "ultrafast", "-qp", "0", "-pix_fmt", "yuv420p"])
    }

    /// Decodes a recording: per video frame, (frame number, item tag) read back from the pixels; and
    /// the interleaved stereo samples.
    static func decode(_ path: String) throws -> (frames: [(n: Int, tag: Int)], samples: [Int16]) {
        let file = try MediaFile(path: path)
        let resampler = Resampler(outputRate: 48000, outputChannels: 2)
        var frames: [(Int, Int)] = []
        var samples: [Int16] = []
        let img = ImageBuffer(width: 64, height: 36)
        let scaler = Scaler()
        while let f = try file.read() {
            switch f {
            case .video(let v):
                try img.withTarget { try scaler.scale(v, into: $0, rect: PixelRect(x: 0, y: 0, width: 64, height: 36)) }
                func luma(_ x: Int) -> Double { Double(img.rgb(x: x, y: 18).g) * 219 / 255 + 16 }
                frames.append((Int(((luma(16) - 40) / 6).rounded()), Int(luma(48).rounded())))
            case .audio(let a):
                samples += try resampler.convert(a)
            }
        }
        return (frames, samples)
    }

    static func tagName(_ luma: Int) -> String {
        [(100, "a"), (150, "b"), (200, "c")].min { abs($0.0 - luma) < abs($1.0 - luma) }!.1
    }

    @Test("three items looped twice: the recorded frames run 0…29 per item, a b c a b c, with no black or repeated frame")
    func continuousAcrossBoundaries() throws {
        let dir = try Harness.newFolder("seamless")
        for (tag, name) in [(100, "a"), (150, "b"), (200, "c")] {
            try FileManager.default.copyItem(atPath: try Self.numbered(tag), toPath: dir + "/media/\(name).mp4")
        }
        try Harness.writeManifest("""
            { "schema": "vitrine.manifest/1", "version": 1, "display": { "mode": "64x36@30" },
              "playlist": [ { "id": "a", "type": "video", "src": "media/a.mp4" },
                            { "id": "b", "type": "video", "src": "media/b.mp4" },
                            { "id": "c", "type": "video", "src": "media/c.mp4" } ] }
            """, in: dir)
        let rec = dir + "/rec.mkv"
        let (stats, _, _) = try Harness.play(try Harness.manifest(in: dir), catalog: dir, duration: 6, snapshots: []) { $0.recordPath = rec }
        #expect(stats.framesDropped == 0)
        let (frames, _) = try Self.decode(rec)
        #expect(frames.count == 180)
        var mismatches: [String] = []
        for (i, f) in frames.enumerated() {
            let expectedItem = ["a", "b", "c"][(i / 30) % 3]
            if f.n != i % 30 || Self.tagName(f.tag) != expectedItem {
                mismatches.append("vblank \(i): frame \(f.n) of \(Self.tagName(f.tag)), expected \(i % 30) of \(expectedItem)")
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(8))")
    }

    @Test("a single looping item: frames run 0…29 three times across the loop points")
    func singleItemLoop() throws {
        let dir = try Harness.newFolder("loop1")
        try FileManager.default.copyItem(atPath: try Self.numbered(100), toPath: dir + "/media/a.mp4")
        try Harness.writeManifest("""
            { "schema": "vitrine.manifest/1", "version": 1, "display": { "mode": "64x36@30" },
              "playlist": [ { "id": "a", "type": "video", "src": "media/a.mp4" } ] }
            """, in: dir)
        let rec = dir + "/rec.mkv"
        _ = try Harness.play(try Harness.manifest(in: dir), catalog: dir, duration: 3, snapshots: []) { $0.recordPath = rec }
        let (frames, _) = try Self.decode(rec)
        #expect(frames.count == 90)
        #expect(frames.map(\.n) == Array(0..<30) + Array(0..<30) + Array(0..<30))
    }

    @Test("an item that ends between two vblanks: the next item's frames still run 0…29, one a vblank, none dropped",
          arguments: [0.01, 0.02, 0.03])
    func boundaryBetweenVblanks(phase: Double) throws {
        // `a` is cut `phase` s into a period (its `duration`), so `b` starts between two vblanks; from
        // half a period on, `b`'s second frame is due at the vblank its first comes on.
        let dir = try Harness.newFolder("phase")
        try FileManager.default.copyItem(atPath: try Self.numbered(100), toPath: dir + "/media/a.mp4")
        try FileManager.default.copyItem(atPath: try Self.numbered(150), toPath: dir + "/media/b.mp4")
        try Harness.writeManifest("""
            { "schema": "vitrine.manifest/1", "version": 1, "loop": false, "display": { "mode": "64x36@30" },
              "playlist": [ { "id": "a", "type": "video", "src": "media/a.mp4", "duration": \(0.5 + phase) },
                            { "id": "b", "type": "video", "src": "media/b.mp4" } ] }
            """, in: dir)
        let rec = dir + "/rec.mkv"
        let (stats, _, logs) = try Harness.play(try Harness.manifest(in: dir), catalog: dir, duration: 2, snapshots: []) { $0.recordPath = rec }
        let (frames, _) = try Self.decode(rec)
        let b = frames.filter { Self.tagName($0.tag) == "b" }.map(\.n)
        #expect(b == Array(0..<30), "b's frames, one per vblank: \(b)")
        #expect(stats.framesDropped == 0, "\(stats.dropped.summary): \(logs.filter { $0.message.contains("dropped frame") }.map(\.message))")
    }

    /// Largest sample-to-sample step of the left channel in [from, to) frames.
    static func maxStep(_ s: [Int16], from: Int, to: Int) -> Int {
        var m = 0
        for i in max(1, from)..<min(to, s.count / 2) { m = max(m, abs(Int(s[2 * i]) - Int(s[2 * i - 2]))) }
        return m
    }

    /// Longest run of near-silent left-channel samples (|s| < 64) in [from, to) frames, in frames.
    static func longestSilence(_ s: [Int16], from: Int, to: Int) -> Int {
        var best = 0, run = 0
        for i in from..<min(to, s.count / 2) { if abs(Int(s[2 * i])) < 64 { run += 1; best = max(best, run) } else { run = 0 } }
        return best
    }

    @Test("two same-format sine items: the recorded audio is sample-continuous across the boundary")
    func gaplessAudio() throws {
        let dir = try Harness.newFolder("gapless")
        // 440 Hz for exactly 1 s is 440 whole cycles: the second item continues the first one's phase.
        let tone = try Harness.clip("gapless-440.wav", ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=1", "-ac", "2"])
        try FileManager.default.copyItem(atPath: tone, toPath: dir + "/media/one.wav")
        try FileManager.default.copyItem(atPath: tone, toPath: dir + "/media/two.wav")
        try Harness.writeManifest("""
            { "schema": "vitrine.manifest/1", "version": 1, "loop": false, "display": { "mode": "64x36@30" },
              "playlist": [ { "id": "one", "type": "audio", "src": "media/one.wav" },
                            { "id": "two", "type": "audio", "src": "media/two.wav" } ] }
            """, in: dir)
        let rec = dir + "/rec.mkv"
        _ = try Harness.play(try Harness.manifest(in: dir), catalog: dir, duration: 2, snapshots: []) { $0.recordPath = rec }
        let (_, samples) = try Self.decode(rec)
        #expect(abs(samples.count / 2 - 96000) <= 1600, "recorded \(samples.count / 2) frames for 2 s")
        // A 440 Hz sine of amplitude 4096 moves at most 2π·440/48000·4096 ≈ 236 per sample.
        let inside = Self.maxStep(samples, from: 1000, to: 47000)
        let boundary = Self.maxStep(samples, from: 47000, to: 49000)
        #expect(inside <= 240 && boundary <= 240, "steps: inside \(inside), at the boundary \(boundary)")
        #expect(Self.longestSilence(samples, from: 47000, to: 49000) <= 3)
    }

    @Test("a 44.1 kHz item followed by a 48 kHz item: no gap at the change (measured and printed)")
    func rateChange() throws {
        let dir = try Harness.newFolder("ratechange")
        try FileManager.default.copyItem(atPath: try Harness.clip("tone441.wav", ["-f", "lavfi", "-i", "sine=frequency=441:sample_rate=44100:duration=1", "-ac", "2"]),
                                         toPath: dir + "/media/a.wav")
        try FileManager.default.copyItem(atPath: try Harness.clip("tone480.wav", ["-f", "lavfi", "-i", "sine=frequency=480:sample_rate=48000:duration=1", "-ac", "2"]),
                                         toPath: dir + "/media/b.wav")
        try Harness.writeManifest("""
            { "schema": "vitrine.manifest/1", "version": 1, "loop": false, "display": { "mode": "64x36@30" },
              "playlist": [ { "id": "a", "type": "audio", "src": "media/a.wav" },
                            { "id": "b", "type": "audio", "src": "media/b.wav" } ] }
            """, in: dir)
        let rec = dir + "/rec.mkv"
        _ = try Harness.play(try Harness.manifest(in: dir), catalog: dir, duration: 2, snapshots: []) { $0.recordPath = rec }
        let (_, samples) = try Self.decode(rec)
        let gap = Self.longestSilence(samples, from: 46000, to: 50000)
        let gapMs = Double(gap) / 48
        print("44.1 kHz → 48 kHz item change: longest silence at the boundary \(gap) frames = \(String(format: "%.2f", gapMs)) ms")
        #expect(gapMs < 1, "gap \(gapMs) ms")
        #expect(abs(samples.count / 2 - 96000) <= 1600)
    }

    @Test("an image with a crossfade transition blends from the previous picture; the default is a cut")
    func crossfade() throws {
        let dir = try Harness.newFolder("xfade")
        try FileManager.default.copyItem(atPath: try Harness.clip("xf-red.png", ["-f", "lavfi", "-i", "color=c=red:s=64x36", "-frames:v", "1"]), toPath: dir + "/media/red.png")
        try FileManager.default.copyItem(atPath: try Harness.clip("xf-blue.png", ["-f", "lavfi", "-i", "color=c=blue:s=64x36", "-frames:v", "1"]), toPath: dir + "/media/blue.png")
        try Harness.writeManifest("""
            { "schema": "vitrine.manifest/1", "version": 1, "display": { "mode": "64x36@30" },
              "playlist": [ { "id": "r", "type": "image", "src": "media/red.png", "duration": 1 },
                            { "id": "b", "type": "image", "src": "media/blue.png", "duration": 1,
                              "transition": { "type": "crossfade", "duration": 0.5 } } ] }
            """, in: dir)
        let (_, shots, _) = try Harness.play(try Harness.manifest(in: dir), catalog: dir, duration: 2.2, snapshots: [0.9, 1.25, 1.6, 2.1])
        #expect(shots[0.9]!.isColor(x: 32, y: 18, 0xFF0000))
        // Halfway through the fade: half red, half blue.
        #expect(shots[1.25]!.isColor(x: 32, y: 18, 0x800080, tolerance: 16), "\(shots[1.25]!.rgb(x: 32, y: 18))")
        #expect(shots[1.6]!.isColor(x: 32, y: 18, 0x0000FF))
        // Back to red at the loop point: a cut (red has no transition).
        #expect(shots[2.1]!.isColor(x: 32, y: 18, 0xFF0000))
    }
}
