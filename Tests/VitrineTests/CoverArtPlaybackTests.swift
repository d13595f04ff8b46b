import Foundation
import Testing
import Media
@testable import Vitrine
import VitrineCore

/// An `audio` item shows its file's cover art, drawn like a still (fit, background), and only the
/// background when the file has none.
@Suite("Cover art on screen", .serialized)
struct CoverArtPlaybackTests {
    @Test("an MP3 with a 64x64 cover on a 320x180 screen: the cover pillarboxed on the background, then an MP3 without")
    func coverThenNone() throws {
        let cover = try Harness.clip("cover-quads.png", [
            "-filter_complex", "color=c=red:s=32x32[a];color=c=0x00FF00:s=32x32[b];color=c=blue:s=32x32[c];"
                + "color=c=yellow:s=32x32[d];[a][b]hstack[t];[c][d]hstack[u];[t][u]vstack", "-frames:v", "1"])
        let withCover = try Harness.clip("song-cover.mp3", ["-f", "lavfi", "-i", "sine=frequency=440:duration=1", "-i", cover,
                                                            "-map", "0", "-map", "1", "-c:a", "libmp3lame", "-c:v", "png",
                                                            "-disposition:v", "attached_pic", "-id3v2_version", "3"])
        let plain = try Harness.clip("song-plain.mp3", ["-f", "lavfi", "-i", "sine=frequency=660:duration=1", "-c:a", "libmp3lame"])
        let dir = try Harness.newFolder("cover")
        try FileManager.default.copyItem(atPath: withCover, toPath: dir + "/media/a.mp3")
        try FileManager.default.copyItem(atPath: plain, toPath: dir + "/media/b.mp3")
        try Harness.writeManifest("""
            { "schema": "vitrine.manifest/1", "version": 1,
              "display": { "mode": "320x180@30", "fit": "contain", "background": "#FF00FF" },
              "playlist": [ { "id": "a", "type": "audio", "src": "media/a.mp3" },
                            { "id": "b", "type": "audio", "src": "media/b.mp3" } ] }
            """, in: dir)
        let (_, shots, _) = try Harness.play(try Harness.manifest(in: dir), catalog: dir, duration: 1.8, snapshots: [0.5, 1.5])
        let img = shots[0.5]!
        // 64x64 → 180x180 centred: x 70…249. Quadrants red, green / blue, yellow.
        #expect(img.isColor(x: 10, y: 90, 0xFF00FF, tolerance: 0) && img.isColor(x: 310, y: 90, 0xFF00FF, tolerance: 0), "bars")
        #expect(img.isColor(x: 115, y: 45, 0xFF0000), "top left red: \(img.rgb(x: 115, y: 45))")
        #expect(img.isColor(x: 205, y: 45, 0x00FF00), "top right green")
        #expect(img.isColor(x: 115, y: 135, 0x0000FF), "bottom left blue")
        #expect(img.isColor(x: 205, y: 135, 0xFFFF00), "bottom right yellow")
        // The second file has no cover: the background only.
        let after = shots[1.5]!
        for (x, y) in [(10, 10), (160, 90), (115, 45), (310, 170)] {
            #expect(after.isColor(x: x, y: y, 0xFF00FF, tolerance: 0), "no cover at (\(x),\(y)): \(after.rgb(x: x, y: y))")
        }
    }
}
