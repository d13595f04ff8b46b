import Foundation
import Testing
import Media
@testable import Vitrine
import VitrineCore

/// A phone clip's display matrix turns its picture on screen as ffmpeg (autorotate) and mpv turn it,
/// combined with the manifest's `display.rotation`, and `fit` places the turned picture (a portrait
/// clip is pillarboxed on a landscape screen). Each snapshot is compared with ffmpeg's own picture
/// (`ffmpeg -i clip -frames:v 1`, plus `transpose` for a turned display), placed on the screen.
@Suite("Rotation metadata on screen", .serialized)
struct RotationPlaybackTests {
    /// 320x180 blue with a red block at the top left and a green one at the top right, tagged `rotate=tag`.
    static func clip(rotate tag: Int) throws -> String {
        let base = try Harness.clip("rot-markers.mp4", [
            "-f", "lavfi", "-i", "color=c=blue:s=320x180:r=30:d=1",
            "-vf", "drawbox=x=0:y=0:w=64:h=48:color=red:t=fill,drawbox=x=256:y=0:w=64:h=48:color=0x00FF00:t=fill",
            "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p"])
        return try Harness.clip("rot-markers-\(tag).mp4", ["-i", base, "-c", "copy", "-metadata:s:v", "rotate=\(tag)"])
    }

    /// ffmpeg's first picture of `path` (autorotated), optionally filtered: (width, height, BGRA bytes).
    static func reference(_ path: String, filter: String?) throws -> (Int, Int, Data) {
        func run(_ args: [String]) throws -> Data { try Harness.output(args[0], Array(args.dropFirst())) }
        // The autorotated size: the coded size, swapped for a quarter-turn matrix, and again for transpose.
        let probe = String(decoding: try run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
                                              "stream=width,height:stream_side_data=rotation", "-of", "default=nw=1:nk=1", path]),
                           as: UTF8.self)
        let v = probe.split(separator: "\n").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        guard v.count >= 2 else { throw HarnessError(description: "ffprobe of \(path): \(probe)") }
        var wh = [v[0], v[1]]
        if v.count > 2, abs(v[2]) % 180 == 90 { wh.swapAt(0, 1) }
        if filter?.hasPrefix("transpose") == true { wh.swapAt(0, 1) }
        let vf = filter.map { ["-vf", $0] } ?? []
        let data = try run(["ffmpeg", "-v", "error", "-i", path] + vf + ["-frames:v", "1", "-pix_fmt", "bgra", "-f", "rawvideo", "-"])
        guard data.count == wh[0] * wh[1] * 4 else { throw HarnessError(description: "ffmpeg reference of \(path): \(data.count) bytes") }
        return (wh[0], wh[1], data)
    }

    static let background: UInt32 = 0xFF00FF

    @Test("display rotation 0, 90 and 270 × rotate=90/180/270: the picture matches ffmpeg's, placed by contain",
          arguments: [0, 90, 270], [90, 180, 270])
    func matchesFFmpeg(display: Int, tag: Int) throws {
        let path = try Self.clip(rotate: tag)
        let dir = try Harness.newFolder("rotmeta")
        try FileManager.default.copyItem(atPath: path, toPath: dir + "/media/clip.mp4")
        try Harness.writeManifest("""
            { "schema": "vitrine.manifest/1", "version": 1,
              "display": { "mode": "480x270@30", "rotation": \(display), "fit": "contain", "background": "#FF00FF" },
              "playlist": [ { "id": "c", "type": "video", "src": "media/clip.mp4" } ] }
            """, in: dir)
        let (_, shots, _) = try Harness.play(try Harness.manifest(in: dir), catalog: dir, duration: 0.6, snapshots: [0.5])
        let img = shots[0.5]!
        // ffmpeg's picture, turned once more for a turned display, placed on the 480x270 screen.
        let turn = [90: "transpose=clock", 270: "transpose=cclock"][display]
        let (rw, rh, ref) = try Self.reference(path, filter: turn)
        let place = Layout.place(sourceWidth: rw, sourceHeight: rh, canvasWidth: 480, canvasHeight: 270, fit: .contain).destination
        let portrait = (tag % 180 != 0) != (display % 180 != 0)
        #expect(portrait == (rh > rw), "ffmpeg's picture is \(rw)x\(rh)")
        if portrait {
            // A portrait picture on a landscape screen: bars left and right, in the background colour.
            #expect(img.isColor(x: 5, y: 135, Self.background, tolerance: 0) && img.isColor(x: 474, y: 135, Self.background, tolerance: 0))
        }
        var bad: [String] = []
        for gy in 0..<12 {
            for gx in 0..<12 {
                let sx = (gx * 2 + 1) * place.width / 24, sy = (gy * 2 + 1) * place.height / 24
                let rx = sx * rw / place.width, ry = sy * rh / place.height
                // Only points whose neighbourhood is one colour in the reference.
                func refColor(_ x: Int, _ y: Int) -> UInt32 {
                    let o = (min(rh - 1, max(0, y)) * rw + min(rw - 1, max(0, x))) * 4
                    return UInt32(ref[o + 2]) << 16 | UInt32(ref[o + 1]) << 8 | UInt32(ref[o])
                }
                let c = refColor(rx, ry)
                let near = [(-6, 0), (6, 0), (0, -6), (0, 6)].map { refColor(rx + $0.0, ry + $0.1) }
                guard near.allSatisfy({ Self.close($0, c) }) else { continue }
                if !img.isColor(x: place.x + sx, y: place.y + sy, c, tolerance: 40) {
                    let p = img.rgb(x: place.x + sx, y: place.y + sy)
                    bad.append("(\(place.x + sx),\(place.y + sy)) \(p.r),\(p.g),\(p.b) vs \(String(c, radix: 16))")
                }
            }
        }
        #expect(bad.isEmpty, "display \(display), rotate=\(tag): \(bad.count) points differ: \(bad.prefix(4))")
    }

    static func close(_ a: UInt32, _ b: UInt32) -> Bool {
        abs(Int(a >> 16) - Int(b >> 16)) + abs(Int(a >> 8 & 0xFF) - Int(b >> 8 & 0xFF)) + abs(Int(a & 0xFF) - Int(b & 0xFF)) < 60
    }

    @Test("cover fills a landscape screen with a portrait clip: the middle of the picture, no bars")
    func coverPortrait() throws {
        let path = try Self.clip(rotate: 90)
        let dir = try Harness.newFolder("rotcover")
        try FileManager.default.copyItem(atPath: path, toPath: dir + "/media/clip.mp4")
        try Harness.writeManifest("""
            { "schema": "vitrine.manifest/1", "version": 1,
              "display": { "mode": "480x270@30", "fit": "cover", "background": "#FF00FF" },
              "playlist": [ { "id": "c", "type": "video", "src": "media/clip.mp4" } ] }
            """, in: dir)
        let (_, shots, _) = try Harness.play(try Harness.manifest(in: dir), catalog: dir, duration: 0.6, snapshots: [0.5])
        let img = shots[0.5]!
        // The 180x320 picture scaled to 480 wide is 853 tall; the middle 270 rows hold no marker: all blue.
        for x in stride(from: 2, to: 480, by: 40) { for y in stride(from: 2, to: 270, by: 30) {
            #expect(img.isColor(x: x, y: y, 0x0000FF, tolerance: 40), "(\(x),\(y)) \(img.rgb(x: x, y: y))")
        } }
    }
}
