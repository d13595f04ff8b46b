import Foundation
import Testing
import Media
@testable import Vitrine
import VitrineCore

/// A 2×2 wall of headless boxes: the same catalog on each, each box's config giving its column and row,
/// each screen the size of one tile. The four snapshots, stitched, are compared with ffmpeg's `crop` of
/// the same picture for each tile region (stitched with `xstack`) by PSNR over R, G and B.
@Suite("Video wall tiles on screen", .serialized)
struct VideoWallPlaybackTests {
    /// 320x240 testsrc2 (colour bars, gradients, text) as one PNG.
    static func picture() throws -> String {
        try Harness.clip("wall-picture.png", ["-f", "lavfi", "-i", "testsrc2=s=320x240:r=30", "-frames:v", "1"])
    }

    /// One second of that picture as H.264 4:2:0, lossless: every frame decodes to the same pixels, so
    /// whichever frame a snapshot shows is ffmpeg's first.
    static func clip() throws -> String {
        try Harness.clip("wall-clip.mp4", ["-loop", "1", "-framerate", "30", "-i", try picture(), "-t", "1",
                                           "-c:v", "libx264", "-preset", "ultrafast", "-qp", "0", "-pix_fmt", "yuv420p"])
    }

    /// ffmpeg's picture of `path` cut at `rects` (each `crop=w:h:x:y`) and stitched 2×2 with xstack,
    /// turned by `transpose` when given: RGB bytes.
    static func reference(_ path: String, rects: [Rect], transpose: String? = nil, scale: String? = nil) throws -> [UInt8] {
        let crops = rects.enumerated().map {
            "[s\($0)]crop=\($1.width):\($1.height):\($1.x):\($1.y)\(scale.map { ",scale=" + $0 } ?? "")\(transpose.map { ",transpose=" + $0 } ?? "")[c\($0)]"
        }
        let graph = "[0:v]split=4[s0][s1][s2][s3];" + crops.joined(separator: ";")
            + ";[c0][c1][c2][c3]xstack=inputs=4:layout=0_0|w0_0|0_h0|w0_h0,format=rgb24"
        let data = try Harness.output("ffmpeg", ["-v", "error", "-i", path, "-filter_complex", graph,
                                                 "-frames:v", "1", "-f", "rawvideo", "-"])
        return [UInt8](data)
    }

    /// The snapshot of box (column, row): one run, headless, screen `mode`.
    static func tile(_ src: String, type: String, column: Int, row: Int, bezel: Int, mode: String,
                     rotation: Int = 0) throws -> ImageBuffer {
        let dir = try Harness.newFolder("wall")
        let name = "media/" + (src as NSString).lastPathComponent
        try FileManager.default.copyItem(atPath: src, toPath: dir + "/" + name)
        try Harness.writeManifest("""
            { "schema": "vitrine.manifest/1", "version": 1,
              "display": { "mode": "\(mode)", "rotation": \(rotation), "fit": "contain", "background": "#FF00FF",
                           "wall": { "columns": 2, "rows": 2, "bezel": \(bezel) } },
              "playlist": [ { "id": "p", "type": "\(type)", "src": "\(name)"\(type == "image" ? ", \"duration\": 1" : "") } ] }
            """, in: dir)
        let config = try PlayerConfig(json: Array(#"{"wall": {"column": \#(column), "row": \#(row)}}"#.utf8))
        let (_, shots, _) = try Harness.play(try Harness.manifest(in: dir), catalog: dir, duration: 0.3, snapshots: [0.2],
                                             configure: { config.apply(to: &$0) })
        return shots[0.2]!
    }

    /// The four tiles stitched 2×2 (0,0 | 1,0 over 0,1 | 1,1) as RGB bytes.
    static func stitch(_ tiles: [ImageBuffer]) -> (width: Int, height: Int, rgb: [UInt8]) {
        let w = tiles[0].width, h = tiles[0].height
        var out = [UInt8](repeating: 0, count: 4 * w * h * 3)
        for (i, t) in tiles.enumerated() {
            let ox = (i % 2) * w, oy = (i / 2) * h
            for y in 0..<h {
                for x in 0..<w {
                    let p = t.rgb(x: x, y: y), o = ((oy + y) * 2 * w + ox + x) * 3
                    out[o] = p.r; out[o + 1] = p.g; out[o + 2] = p.b
                }
            }
        }
        return (2 * w, 2 * h, out)
    }

    /// PSNR in dB over R, G and B of the pixels of `a` and `b` (same size) inside `rect` (whole images when nil).
    static func psnr(_ a: [UInt8], _ b: [UInt8], width: Int, rect: Rect? = nil) -> Double {
        let r = rect ?? Rect(x: 0, y: 0, width: width, height: a.count / 3 / width)
        var sum = 0.0
        for y in r.y..<(r.y + r.height) {
            for x in r.x..<(r.x + r.width) {
                for k in 0..<3 {
                    let d = Double(a[(y * width + x) * 3 + k]) - Double(b[(y * width + x) * 3 + k])
                    sum += d * d
                }
            }
        }
        let mse = sum / Double(r.width * r.height * 3)
        return mse == 0 ? .infinity : 10 * log10(255 * 255 / mse)
    }

    static func tileRects(bezel: Int) -> [Rect] {
        (0..<2).flatMap { r in (0..<2).map { c in
            VideoWall(columns: 2, rows: 2, column: c, row: r, bezelX: bezel, bezelY: bezel).tile(sourceWidth: 320, sourceHeight: 240)
        } }
    }

    /// Bezel 15 puts the right and lower tiles at odd offsets (167, 127): on 4:2:0 video both the player
    /// and ffmpeg's `crop` (without `exact`) move them to the chroma grid (166, 126); a PNG is cut exactly.
    @Test("video and still image, bezel 0, 15 and 16: the stitched tiles match ffmpeg's crops (PSNR ≥ 38 dB)",
          arguments: ["video", "image"], [0, 15, 16])
    func matchesCrop(type: String, bezel: Int) throws {
        let src = type == "video" ? try Self.clip() : try Self.picture()
        let rects = Self.tileRects(bezel: bezel)
        let tw = rects[0].width, th = rects[0].height
        let tiles = try (0..<4).map { i in
            try Self.tile(src, type: type, column: i % 2, row: i / 2, bezel: bezel, mode: "\(tw)x\(th)@30")
        }
        for t in tiles { #expect(t.width == tw && t.height == th) }
        let ours = Self.stitch(tiles)
        let ref = try Self.reference(src, rects: rects)
        try #require(ref.count == ours.rgb.count, "ffmpeg gave \(ref.count) bytes for \(ours.width)x\(ours.height)")
        let whole = Self.psnr(ours.rgb, ref, width: ours.width)
        let each = (0..<4).map { Self.psnr(ours.rgb, ref, width: ours.width, rect: Rect(x: ($0 % 2) * tw, y: ($0 / 2) * th, width: tw, height: th)) }
        print("video wall 2x2 \(type) bezel \(bezel): tiles \(tw)x\(th), PSNR stitched \(String(format: "%.2f", whole)) dB, per tile "
              + each.map { String(format: "%.2f", $0) }.joined(separator: " / ") + " dB")
        #expect(whole >= 38, "PSNR \(whole) dB")
        for (i, p) in each.enumerated() { #expect(p >= 38, "tile \(i % 2),\(i / 2): PSNR \(p) dB") }
        if bezel > 0 {
            // Without the bezel left out (tiles side by side), the right and lower tiles would not match.
            let adjacent = (0..<4).map { Rect(x: ($0 % 2) * tw, y: ($0 / 2) * th, width: tw, height: th) }
            let wrong = try Self.reference(src, rects: adjacent)
            let off = Self.psnr(ours.rgb, wrong, width: ours.width, rect: Rect(x: tw, y: th, width: tw, height: th))
            print("video wall 2x2 \(type) bezel \(bezel): tile 1,1 against the crop without bezel: PSNR \(String(format: "%.2f", off)) dB")
            #expect(off < 25, "PSNR \(off) dB against the crop that ignores the bezel")
        }
    }

    @Test("a wall of screens turned 90°: each screen shows its tile, turned with the display (PSNR ≥ 38 dB)")
    func rotated() throws {
        let src = try Self.clip()
        let rects = Self.tileRects(bezel: 16)
        // Logical canvas 152x112 on a 112x152 screen.
        let tiles = try (0..<4).map { i in
            try Self.tile(src, type: "video", column: i % 2, row: i / 2, bezel: 16, mode: "112x152@30", rotation: 90)
        }
        for t in tiles { #expect(t.width == 112 && t.height == 152) }
        let ours = Self.stitch(tiles)
        let ref = try Self.reference(src, rects: rects, transpose: "clock")
        try #require(ref.count == ours.rgb.count)
        let whole = Self.psnr(ours.rgb, ref, width: ours.width)
        print("video wall 2x2 video bezel 16, display rotation 90: PSNR stitched \(String(format: "%.2f", whole)) dB")
        #expect(whole >= 38, "PSNR \(whole) dB")
    }

    @Test("a tile fitted to a screen twice its size: ffmpeg's crop scaled bilinearly (PSNR ≥ 35 dB)")
    func scaled() throws {
        let src = try Self.clip()
        let rects = Self.tileRects(bezel: 16)
        let tiles = try (0..<4).map { i in
            try Self.tile(src, type: "video", column: i % 2, row: i / 2, bezel: 16, mode: "304x224@30")
        }
        let ours = Self.stitch(tiles)
        let ref = try Self.reference(src, rects: rects, scale: "304:224:flags=bilinear")
        try #require(ref.count == ours.rgb.count)
        let whole = Self.psnr(ours.rgb, ref, width: ours.width)
        print("video wall 2x2 video bezel 16, tiles 152x112 on 304x224 screens: PSNR stitched \(String(format: "%.2f", whole)) dB")
        #expect(whole >= 35, "PSNR \(whole) dB")
    }

    @Test("a crossfade on a wall: the previous tile fades into the next one's tile (PSNR ≥ 35 dB against the blend)")
    func crossfade() throws {
        let a = try Self.picture()
        let b = try Harness.clip("wall-bars.png", ["-f", "lavfi", "-i", "smptebars=s=320x240", "-frames:v", "1"])
        let dir = try Harness.newFolder("wallfade")
        try FileManager.default.copyItem(atPath: a, toPath: dir + "/media/a.png")
        try FileManager.default.copyItem(atPath: b, toPath: dir + "/media/b.png")
        try Harness.writeManifest("""
            { "schema": "vitrine.manifest/1", "version": 1,
              "display": { "mode": "152x112@30", "wall": { "columns": 2, "rows": 2, "bezel": 16, "column": 1, "row": 1 } },
              "playlist": [ { "id": "a", "type": "image", "src": "media/a.png", "duration": 1 },
                            { "id": "b", "type": "image", "src": "media/b.png", "duration": 1,
                              "transition": { "type": "crossfade", "duration": 0.5 } } ] }
            """, in: dir)
        let (_, shots, _) = try Harness.play(try Harness.manifest(in: dir), catalog: dir, duration: 1.4, snapshots: [1.25])
        let shot = shots[1.25]!
        let rect = Self.tileRects(bezel: 16)[3]
        func crop(_ path: String) throws -> [UInt8] {
            [UInt8](try Harness.output("ffmpeg", ["-v", "error", "-i", path, "-vf", "crop=\(rect.width):\(rect.height):\(rect.x):\(rect.y)",
                                                  "-frames:v", "1", "-pix_fmt", "rgb24", "-f", "rawvideo", "-"]))
        }
        let from = try crop(a), to = try crop(b)
        var ours = [UInt8]()
        for y in 0..<shot.height { for x in 0..<shot.width { let p = shot.rgb(x: x, y: y); ours += [p.r, p.g, p.b] } }
        try #require(from.count == ours.count && to.count == ours.count)
        // The progress that best explains the picture (least squares), and how well the blend at it fits.
        var num = 0.0, den = 0.0
        for i in ours.indices {
            let d = Double(to[i]) - Double(from[i])
            num += (Double(ours[i]) - Double(from[i])) * d; den += d * d
        }
        let progress = num / den
        let blend = ours.indices.map { UInt8(max(0, min(255, (Double(from[$0]) * (1 - progress) + Double(to[$0]) * progress).rounded()))) }
        let fit = Self.psnr(ours, blend, width: rect.width)
        print("video wall crossfade, tile 1,1 at 1.25 s: progress \(String(format: "%.3f", progress)), PSNR against the blend of the two tiles \(String(format: "%.2f", fit)) dB")
        #expect((0.3...0.7).contains(progress), "progress \(progress)")
        #expect(fit >= 35, "PSNR \(fit) dB")
    }

    @Test("a popup on a wall is each screen's own: the same panel, in the same place, on tiles 0,0 and 1,1, the tile around it")
    func popupPerScreen() throws {
        let rects = Self.tileRects(bezel: 16)
        var panels: [[UInt8]] = []
        for (column, row) in [(0, 0), (1, 1)] {
            let dir = try Harness.newFolder("wallpopup")
            try FileManager.default.copyItem(atPath: try Self.clip(), toPath: dir + "/media/clip.mp4")
            try Harness.writeManifest("""
                { "schema": "vitrine.manifest/1", "version": 1,
                  "display": { "mode": "304x224@30", "wall": { "columns": 2, "rows": 2, "bezel": 16 } },
                  "playlist": [ { "id": "c", "type": "video", "src": "media/clip.mp4",
                                  "cuePoints": [ { "time": 0.1, "id": "show", "action": { "type": "showOverlay", "overlay": "promo" } } ] } ],
                  "overlays": { "promo": { "title": "Winter hours", "style": "fade", "duration": 0.05,
                                           "dimming": { "color": "#000000", "alpha": 0 },
                                           "buttons": [ { "label": "Close", "action": { "type": "hideOverlays" } } ] } } }
                """, in: dir)
            let manifest = try Harness.manifest(in: dir)
            let (_, shots, _) = try Harness.play(manifest, catalog: dir, duration: 0.7, snapshots: [0.6],
                                                 configure: { $0.wall = WallSettings(column: column, row: row) })
            let shot = shots[0.6]!
            let layer = OverlayLayer(overlays: manifest.overlays, catalogDirectory: dir, log: Logger(label: "t", sink: LogSink.memory().0))
            let g = try #require(layer.geometry("promo", canvasWidth: 304, canvasHeight: 224))
            #expect(g.panel.x >= 0 && g.panel.y >= 0 && g.panel.x + g.panel.width <= 304 && g.panel.y + g.panel.height <= 224)
            #expect(shot.isColor(x: g.panel.x + 4, y: g.panel.y + g.panel.height / 2, 0xF4F6F8, tolerance: 6))
            // The panel inside its rounded corners (where the picture shows through).
            var panel = [UInt8]()
            for y in (g.panel.y + 12)..<(g.panel.y + g.panel.height - 12) { for x in (g.panel.x + 12)..<(g.panel.x + g.panel.width - 12) {
                let p = shot.rgb(x: x, y: y); panel += [p.r, p.g, p.b]
            } }
            panels.append(panel)
            // Outside the panel: this box's tile, scaled 2x (ffmpeg's crop and bilinear scale).
            let i = row * 2 + column
            let ref = [UInt8](try Harness.output("ffmpeg", ["-v", "error", "-i", try Self.clip(), "-vf",
                "crop=\(rects[i].width):\(rects[i].height):\(rects[i].x):\(rects[i].y),scale=304:224:flags=bilinear",
                "-frames:v", "1", "-pix_fmt", "rgb24", "-f", "rawvideo", "-"]))
            var a = [UInt8](), b = [UInt8]()
            for y in 0..<224 { for x in 0..<304 where !(g.panel.x - 2..<g.panel.x + g.panel.width + 2).contains(x) || !(g.panel.y - 2..<g.panel.y + g.panel.height + 2).contains(y) {
                let p = shot.rgb(x: x, y: y); a += [p.r, p.g, p.b]
                b += ref[((y * 304 + x) * 3)..<((y * 304 + x) * 3 + 3)]
            } }
            let around = Self.psnr(a, b, width: a.count / 3)
            print("video wall popup on tile \(column),\(row): panel \(g.panel), PSNR of the picture around it \(String(format: "%.2f", around)) dB")
            #expect(around >= 35, "PSNR \(around) dB")
        }
        let differing = zip(panels[0], panels[1]).filter { $0 != $1 }.count
        #expect(panels[0].count == panels[1].count && differing == 0, "\(differing) of \(panels[0].count) panel bytes differ between the two screens")
    }

    @Test("config wall: its keys are checked like the manifest's, and a wall that does not fit together shows the slate")
    func config() throws {
        let high = #expect(throws: ConfigError.self) { try PlayerConfig(json: Array(#"{"wall": {"column": 16}}"#.utf8)) }
        #expect(high?.problems == ["wall.column: must be an integer (0 is the left-most screen) from 0 to 15 (found 16)"])
        let two = #expect(throws: ConfigError.self) {
            try PlayerConfig(json: Array(#"{"wall": {"columns": 2, "column": 2, "tile": 1}}"#.utf8))
        }
        #expect(two?.problems == [#"wall.tile: unknown field "tile" (expected columns, rows, column, row or bezel)"#,
                                  "wall.column: 2 is outside 0…1 (columns is 2)"])
        let notObject = #expect(throws: ConfigError.self) { try PlayerConfig(json: Array(#"{"wall": 4}"#.utf8)) }
        #expect(notObject?.problems == [#"wall: expected an object {"columns", "rows", "column", "row", "bezel"}, found a number"#])
        var o = RunOptions()
        try PlayerConfig(json: Array(#"{"wall": {"column": 1, "row": 0, "bezel": {"x": 4, "y": 2}}}"#.utf8)).apply(to: &o)
        #expect(o.wall == WallSettings(column: 1, row: 0, bezelX: 4, bezelY: 2))

        // The catalog makes a 2×1 wall; this box says column 2: the slate, with the reason.
        let dir = try Harness.newFolder("wallbad")
        try FileManager.default.copyItem(atPath: try Self.clip(), toPath: dir + "/media/clip.mp4")
        try Harness.writeManifest("""
            { "schema": "vitrine.manifest/1", "version": 1,
              "display": { "mode": "160x240@30", "wall": { "columns": 2, "rows": 1 } },
              "playlist": [ { "id": "c", "type": "video", "src": "media/clip.mp4" } ] }
            """, in: dir)
        let m = try Harness.manifest(in: dir)
        var options = RunOptions()
        options.wall = WallSettings(column: 2, row: 0)
        let player = Player(manifest: m, catalogDirectory: dir, options: options, log: Logger(label: "test", sink: LogSink.memory().0))
        #expect(player.display.wall == nil)
        final class Seen: @unchecked Sendable { var slate: SlateMessage? }
        let seen = Seen()
        let (_, _, records) = try Harness.play(m, catalog: dir, duration: 0.2, snapshots: [0.1], configure: { $0.wall = options.wall },
                                               engine: { seen.slate = $0.fixedSlate })
        #expect(seen.slate?.details == ["wall.column: 2 is outside 0…1 (columns is 2, from display.wall.columns in the catalog)"])
        let lines = records.map(\.message)
        #expect(lines.contains("video wall: wall.column: 2 is outside 0…1 (columns is 2, from display.wall.columns in the catalog)"),
                "\(lines)")
    }
}
