import Foundation
import Testing
import Media
@testable import Vitrine
import VitrineCore
import VitrineTestSupport

@Suite("Headless playback: pixels at known times", .serialized)
struct HeadlessPlaybackTests {
    @Test("a 1 s red clip then a 1 s blue clip: red at the centre at 0.5 s, blue at 1.5 s")
    func redThenBlue() throws {
        let dir = try Harness.newFolder("redblue")
        try FileManager.default.copyItem(atPath: try Harness.colorClip("red", seconds: 1), toPath: dir + "/media/red.mp4")
        try FileManager.default.copyItem(atPath: try Harness.colorClip("blue", seconds: 1), toPath: dir + "/media/blue.mp4")
        try Harness.writeManifest("""
            { "schema": "vitrine.manifest/1", "version": 1, "display": { "mode": "320x180@30" },
              "playlist": [ { "id": "r", "type": "video", "src": "media/red.mp4" },
                            { "id": "b", "type": "video", "src": "media/blue.mp4" } ] }
            """, in: dir)
        let (stats, shots, _) = try Harness.play(try Harness.manifest(in: dir), catalog: dir, duration: 2.5, snapshots: [0.5, 1.5, 2.2])
        #expect(shots[0.5]!.isColor(x: 160, y: 90, 0xFF0000))
        #expect(shots[1.5]!.isColor(x: 160, y: 90, 0x0000FF))
        #expect(shots[2.2]!.isColor(x: 160, y: 90, 0xFF0000), "the playlist loops back to red")
        // 2.5 s at 30 fps: every decoded frame presented, none dropped.
        #expect(stats.framesPresented >= 74 && stats.framesPresented <= 76)
        #expect(stats.framesDropped == 0)
    }

    @Test("bikes.mp4 (2.35:1) on a 16:9 output: black bars at the top and bottom, picture between",
          .enabled(if: RealMedia.available, RealMedia.absent))
    func letterbox() throws {
        let dir = try Harness.newFolder("bikes")
        try FileManager.default.createSymbolicLink(atPath: dir + "/media/bikes.mp4", withDestinationPath: RealMedia.path("bikes.mp4"))
        try Harness.writeManifest("""
            { "schema": "vitrine.manifest/1", "version": 1,
              "display": { "mode": "1280x720@25", "fit": "contain", "background": "#000000" },
              "playlist": [ { "id": "bikes", "type": "video", "src": "media/bikes.mp4" } ] }
            """, in: dir)
        let m = try Harness.manifest(in: dir)
        let (_, shots, _) = try Harness.play(m, catalog: dir, duration: 1.2, snapshots: [1.0])
        let img = shots[1.0]!
        // 640x272 → 1280x544: bars of 88 rows above and below.
        for y in [0, 40, 86, 634, 680, 719] {
            for x in stride(from: 0, to: 1280, by: 64) { #expect(img.pixel(x: x, y: y) & 0xFFFFFF == 0, "bar pixel (\(x), \(y))") }
        }
        var lit = 0
        for y in stride(from: 100, to: 620, by: 20) { for x in stride(from: 0, to: 1280, by: 40) where img.pixel(x: x, y: y) & 0xFFFFFF != 0 { lit += 1 } }
        #expect(lit > 500, "the picture fills the band between the bars (\(lit) of 832 samples lit)")
    }

    @Test("pillarbox bars use the manifest background colour; cover fills the screen")
    func pillarboxAndCover() throws {
        let clip = try Harness.clip("square-green.mp4", ["-f", "lavfi", "-i", "color=c=0x00FF00:s=200x200:r=30:d=1", "-pix_fmt", "yuv420p"])
        let dir = try Harness.newFolder("pillar")
        try FileManager.default.copyItem(atPath: clip, toPath: dir + "/media/sq.mp4")
        for fit in ["contain", "cover", "stretch"] {
            try Harness.writeManifest("""
                { "schema": "vitrine.manifest/1", "version": 1,
                  "display": { "mode": "320x180@30", "fit": "\(fit)", "background": "#FF00FF" },
                  "playlist": [ { "id": "sq", "type": "video", "src": "media/sq.mp4" } ] }
                """, in: dir)
            let (_, shots, _) = try Harness.play(try Harness.manifest(in: dir), catalog: dir, duration: 0.6, snapshots: [0.5])
            let img = shots[0.5]!
            #expect(img.isColor(x: 160, y: 90, 0x00FF00))
            if fit == "contain" {
                // 200x200 → 180x180 centred: 70 px magenta bars left and right.
                #expect(img.isColor(x: 10, y: 90, 0xFF00FF, tolerance: 0) && img.isColor(x: 310, y: 90, 0xFF00FF, tolerance: 0))
                #expect(img.isColor(x: 75, y: 90, 0x00FF00))
            } else {
                #expect(img.isColor(x: 2, y: 90, 0x00FF00) && img.isColor(x: 317, y: 2, 0x00FF00))
            }
        }
    }

    @Test("rotation 90 turns a left/right split into a top/bottom split")
    func rotation() throws {
        let clip = try Harness.clip("split.mp4", ["-f", "lavfi", "-i", "color=c=red:s=160x180:r=30:d=1", "-f", "lavfi",
                                                  "-i", "color=c=blue:s=160x180:r=30:d=1", "-filter_complex", "[0][1]hstack",
                                                  "-pix_fmt", "yuv420p", "-c:v", "libx264", "-preset", "ultrafast"])
        let dir = try Harness.newFolder("rot")
        try FileManager.default.copyItem(atPath: clip, toPath: dir + "/media/split.mp4")
        for rotation in [0, 90, 270] {
            try Harness.writeManifest("""
                { "schema": "vitrine.manifest/1", "version": 1,
                  "display": { "mode": "320x320@30", "rotation": \(rotation), "fit": "stretch" },
                  "playlist": [ { "id": "s", "type": "video", "src": "media/split.mp4" } ] }
                """, in: dir)
            let (_, shots, _) = try Harness.play(try Harness.manifest(in: dir), catalog: dir, duration: 0.6, snapshots: [0.5])
            let img = shots[0.5]!
            switch rotation {
            case 0:
                #expect(img.isColor(x: 60, y: 160, 0xFF0000) && img.isColor(x: 260, y: 160, 0x0000FF))
            case 90:  // clockwise: the left (red) half goes to the top
                #expect(img.isColor(x: 160, y: 60, 0xFF0000) && img.isColor(x: 160, y: 260, 0x0000FF))
            default:  // 270: the left half goes to the bottom
                #expect(img.isColor(x: 160, y: 260, 0xFF0000) && img.isColor(x: 160, y: 60, 0x0000FF))
            }
        }
    }

    @Test("a still image is shown for its duration, then the next item")
    func stillDuration() throws {
        let png = try Harness.clip("yellow.png", ["-f", "lavfi", "-i", "color=c=yellow:s=64x36", "-frames:v", "1"])
        let dir = try Harness.newFolder("still")
        try FileManager.default.copyItem(atPath: png, toPath: dir + "/media/y.png")
        try FileManager.default.copyItem(atPath: try Harness.colorClip("blue", seconds: 1), toPath: dir + "/media/blue.mp4")
        try Harness.writeManifest("""
            { "schema": "vitrine.manifest/1", "version": 1, "display": { "mode": "320x180@30" },
              "playlist": [ { "id": "y", "type": "image", "src": "media/y.png", "duration": 1.5 },
                            { "id": "b", "type": "video", "src": "media/blue.mp4" } ] }
            """, in: dir)
        let (_, shots, _) = try Harness.play(try Harness.manifest(in: dir), catalog: dir, duration: 2.0, snapshots: [0.1, 1.4, 1.6])
        #expect(shots[0.1]!.isColor(x: 160, y: 90, 0xFFFF00))
        #expect(shots[1.4]!.isColor(x: 160, y: 90, 0xFFFF00))
        #expect(shots[1.6]!.isColor(x: 160, y: 90, 0x0000FF))
    }
}
