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
        FileManager.default.createFile(atPath: dir + "/media/empty.mp4", contents: Data())
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
}
