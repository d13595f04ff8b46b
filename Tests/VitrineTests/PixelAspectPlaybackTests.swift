import Foundation
import Testing
import Media
@testable import Vitrine
import VitrineCore

/// An H.263 3GP whose bitstream says 12:11 (H.263's CIF pixel) and whose track header says 1:1 shows
/// as ffmpeg and mpv show it: square pixels, an 11:9 picture, pillarboxed on a 4:3 screen.
@Suite("Pixel aspect on screen", .serialized)
struct PixelAspectPlaybackTests {
    @Test("176x144 H.263 on a 320x240 screen: 294 px wide between background bars, not stretched to 4:3")
    func h263() throws {
        let clip = try Harness.clip("qcif-white.3gp", ["-f", "lavfi", "-i", "color=c=white:s=176x144:r=15:d=1", "-c:v", "h263"])
        let dir = try Harness.newFolder("h263")
        try FileManager.default.copyItem(atPath: clip, toPath: dir + "/media/c.3gp")
        try Harness.writeManifest("""
            { "schema": "vitrine.manifest/1", "version": 1,
              "display": { "mode": "320x240@30", "fit": "contain", "background": "#FF00FF" },
              "playlist": [ { "id": "c", "type": "video", "src": "media/c.3gp" } ] }
            """, in: dir)
        let (_, shots, _) = try Harness.play(try Harness.manifest(in: dir), catalog: dir, duration: 0.6, snapshots: [0.5])
        let img = shots[0.5]!
        // 240 × 11/9 = 293.3 → 294 px wide, centred: bars of 13 px each side.
        for y in [10, 120, 230] {
            #expect(img.isColor(x: 5, y: y, 0xFF00FF, tolerance: 0) && img.isColor(x: 314, y: y, 0xFF00FF, tolerance: 0), "bars at row \(y)")
            #expect(img.isColor(x: 16, y: y, 0xFFFFFF) && img.isColor(x: 303, y: y, 0xFFFFFF), "picture at row \(y)")
        }
    }
}
