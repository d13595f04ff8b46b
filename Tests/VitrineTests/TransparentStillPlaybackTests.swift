import Foundation
import Testing
import Media
@testable import Vitrine
import VitrineCore

/// A PNG with alpha shows `display.background` where it is transparent and blends where it is
/// translucent, instead of white and opaque red.
@Suite("Transparent stills on screen", .serialized)
struct TransparentStillPlaybackTests {
    @Test("transparent → background; 50 % red → half red over black and over a coloured background",
          arguments: ["#000000", "#2040C0"])
    func blended(background: String) throws {
        // 96x32 RGBA: transparent white, 50 % red (alpha 127), opaque green, left to right.
        let png = try Harness.clip("alpha-thirds.png", [
            "-filter_complex", "color=c=white@0.0:s=32x32,format=rgba[a];color=c=red@0.5:s=32x32,format=rgba[b];"
                + "color=c=0x00FF00:s=32x32,format=rgba[c];[a][b][c]hstack=3", "-frames:v", "1"])
        let dir = try Harness.newFolder("alpha")
        try FileManager.default.copyItem(atPath: png, toPath: dir + "/media/a.png")
        try Harness.writeManifest("""
            { "schema": "vitrine.manifest/1", "version": 1,
              "display": { "mode": "288x96@30", "fit": "contain", "background": "\(background)" },
              "playlist": [ { "id": "a", "type": "image", "src": "media/a.png", "duration": 1 } ] }
            """, in: dir)
        let (_, shots, _) = try Harness.play(try Harness.manifest(in: dir), catalog: dir, duration: 0.5, snapshots: [0.3])
        let img = shots[0.3]!
        let bg = UInt32(background.dropFirst(), radix: 16)!
        let (r, g, b) = (Int(bg >> 16), Int(bg >> 8 & 0xFF), Int(bg & 0xFF))
        func over(_ c: Int, _ base: Int) -> Int { (c * 127 + base * 128 + 127) / 255 }
        // Scaled 3x: each third is 96 px wide.
        #expect(img.isColor(x: 48, y: 48, bg, tolerance: 0), "transparent shows the background: \(img.rgb(x: 48, y: 48))")
        let half = img.rgb(x: 144, y: 48)
        let want = UInt32(over(255, r)) << 16 | UInt32(over(0, g)) << 8 | UInt32(over(0, b))
        #expect(img.isColor(x: 144, y: 48, want, tolerance: 2), "50 % red over \(background): \(half), want \(String(want, radix: 16))")
        #expect(img.isColor(x: 240, y: 48, 0x00FF00, tolerance: 0), "opaque green stays green")
    }
}
