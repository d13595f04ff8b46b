import Foundation
import Testing
import Media
@testable import Vitrine
import VitrineCore

@Suite("Bad input never stops playback", .serialized)
struct BadInputTests {
    @Test("missing, empty, truncated and non-media files are logged by name and skipped; the loop goes on")
    func skipsBadItems() throws {
        let dir = try Harness.newFolder("bad")
        let red = try Harness.colorClip("red", seconds: 1)
        try FileManager.default.copyItem(atPath: red, toPath: dir + "/media/red.mp4")
        _ = FileManager.default.createFile(atPath: dir + "/media/empty.mp4", contents: Data())
        try Data((0..<20000).map { UInt8(truncatingIfNeeded: $0 &* 2654435761 >> 7) }).write(to: URL(fileURLWithPath: dir + "/media/noise.mp4"))
        // A real MP4 cut to its first 600 bytes: the moov atom is gone.
        let whole = try Data(contentsOf: URL(fileURLWithPath: try Harness.colorClip("blue", seconds: 1)))
        try whole.prefix(600).write(to: URL(fileURLWithPath: dir + "/media/truncated.mp4"))
        try Harness.writeManifest("""
            { "schema": "vitrine.manifest/1", "version": 1, "display": { "mode": "320x180@30" },
              "playlist": [ { "id": "gone", "type": "video", "src": "media/missing.mp4" },
                            { "id": "empty", "type": "video", "src": "media/empty.mp4" },
                            { "id": "noise", "type": "video", "src": "media/noise.mp4" },
                            { "id": "cut", "type": "video", "src": "media/truncated.mp4" },
                            { "id": "red", "type": "video", "src": "media/red.mp4" } ] }
            """, in: dir)
        // The validator reports the missing and empty files…
        let check = ManifestParser.load(path: dir + "/manifest.json")
        #expect(check.errors.map(\.description) == ["playlist[0].src: file not found: media/missing.mp4",
                                                     "playlist[1].src: file is empty: media/empty.mp4"])
        // …and the player plays what it can: the structure is valid.
        let data = try Data(contentsOf: URL(fileURLWithPath: dir + "/manifest.json"))
        let manifest = try #require(ManifestParser.parse(data).manifest)
        let (stats, shots, logs) = try Harness.play(manifest, catalog: dir, duration: 3.2, snapshots: [0.5, 1.5, 2.5])
        for t in [0.5, 1.5, 2.5] { #expect(shots[t]!.isColor(x: 160, y: 90, 0xFF0000), "red on screen at \(t) s") }
        let errors = logs.filter { $0.level == .error }.map(\.message)
        for name in ["media/missing.mp4", "media/empty.mp4", "media/noise.mp4", "media/truncated.mp4"] {
            #expect(errors.contains { $0.contains(name) }, "no error names \(name): \(errors)")
        }
        // Bad items are skipped each pass: red plays 3 times in 3.2 s.
        #expect(stats.itemsStarted == 4)
        #expect(stats.framesPresented >= 95)
    }

    @Test("when no item can play, the slate says why and playback is retried")
    func slateWhenNothingPlays() throws {
        let dir = try Harness.newFolder("none")
        try Harness.writeManifest("""
            { "schema": "vitrine.manifest/1", "version": 1, "display": { "mode": "320x180@30" },
              "playlist": [ { "id": "gone", "type": "video", "src": "media/missing.mp4" } ] }
            """, in: dir)
        let manifest = try #require(ManifestParser.parse(try Data(contentsOf: URL(fileURLWithPath: dir + "/manifest.json"))).manifest)
        let (_, shots, logs) = try Harness.play(manifest, catalog: dir, duration: 12, snapshots: [1, 11])
        #expect(shots[1]!.isColor(x: 2, y: 2, 0x1E2A38, tolerance: 0))
        // Text is drawn: some pixels in the upper half differ from the slate colour.
        var ink = 0
        for y in 0..<90 { for x in 0..<320 where !shots[1]!.isColor(x: x, y: y, 0x1E2A38, tolerance: 8) { ink += 1 } }
        #expect(ink > 200)
        // Checked again after 10 s: the failure is logged twice, not once.
        #expect(logs.filter { $0.message.contains("media/missing.mp4") }.count == 2)
    }

    @Test("an audio file that opens but decodes to nothing is skipped, and is never \"now playing\" first")
    func undecodableNeverNowPlaying() throws {
        let dir = try Harness.newFolder("nodecode")
        // 60 s of AAC in MP4 with its packets zeroed (the `mdat` box's payload): the container opens
        // and its stream is found, and no packet decodes.
        let tone = try Harness.clip("tone-60s.m4a", ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=60",
                                                      "-c:a", "aac", "-b:a", "128k"])
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: tone)))
        let tag = Array("mdat".utf8)
        let at = try #require((4..<(bytes.count - 4)).first { Array(bytes[$0..<($0 + 4)]) == tag }, "no mdat box")
        let size = bytes[(at - 4)..<at].reduce(0) { $0 << 8 | Int($1) }
        for k in (at + 4)..<(at - 4 + size) { bytes[k] = 0 }
        try Data(bytes).write(to: URL(fileURLWithPath: dir + "/media/broken.m4a"))
        try FileManager.default.copyItem(atPath: try Harness.colorClip("red", seconds: 1), toPath: dir + "/media/red.mp4")
        try Harness.writeManifest("""
            { "schema": "vitrine.manifest/1", "version": 1, "loop": false, "display": { "mode": "320x180@30" },
              "playlist": [ { "id": "broken", "type": "audio", "src": "media/broken.m4a" },
                            { "id": "red", "type": "video", "src": "media/red.mp4" } ] }
            """, in: dir)
        let (stats, _, logs) = try Harness.play(try Harness.manifest(in: dir), catalog: dir, duration: 2, snapshots: [])
        let messages = logs.map(\.message)
        #expect(messages.contains { $0.hasPrefix("skipping broken (media/broken.m4a): no decodable frames") }, "\(messages)")
        #expect(!messages.contains { $0.hasPrefix("now playing broken") }, "\(messages.filter { $0.hasPrefix("now playing") })")
        #expect(stats.itemsStarted == 1 && stats.itemsFailed == 1, "started \(stats.itemsStarted), failed \(stats.itemsFailed)")
    }
}
