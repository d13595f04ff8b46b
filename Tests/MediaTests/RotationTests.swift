import Foundation
import Testing
@testable import Media

/// Phone clips carry a display matrix; the picture is turned as ffmpeg's autorotate turns it.
/// Clips: a 320x180 blue picture with a red block at the top left and a green one at the top right,
/// stream-copied with `-metadata:s:v rotate=N` (ffmpeg 5.1 writes the matrix), compared with
/// `ffmpeg -i clip -frames:v 1` (which autorotates).
@Suite("Rotation metadata: display matrix")
struct RotationTests {
    static func markerClip() throws -> String {
        try Fixtures.generate("markers.mp4", [
            "-f", "lavfi", "-i", "color=c=blue:s=320x180:r=30:d=0.5",
            "-vf", "drawbox=x=0:y=0:w=64:h=48:color=red:t=fill,drawbox=x=256:y=0:w=64:h=48:color=0x00FF00:t=fill",
            "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p"])
    }

    /// The marker clip with `rotate=tag` metadata.
    static func tagged(_ tag: Int) throws -> String {
        let base = try markerClip()
        return try Fixtures.generate("markers-rotate\(tag).mp4", ["-i", base, "-c", "copy", "-metadata:s:v", "rotate=\(tag)"])
    }

    /// ffprobe's display-matrix angle (counter-clockwise degrees), 0 without one.
    static func ffprobeRotation(_ path: String) throws -> Int {
        let out = try Fixtures.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries",
                                               "stream_side_data=rotation", "-of", "default=nw=1:nk=1", path])
        return Int(out.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "\n").first ?? "0") ?? 0
    }

    /// Compares `img` (w×h) with ffmpeg's BGRA `ref` of the same size on a 16x16 grid of points whose
    /// 5x5 neighbourhood is one colour in the reference; returns the points that differ by more than 40.
    static func mismatches(_ img: ImageBuffer, _ ref: Data) -> [String] {
        let w = img.width, h = img.height
        func refPixel(_ x: Int, _ y: Int) -> (Int, Int, Int) {
            let o = (y * w + x) * 4
            return (Int(ref[o + 2]), Int(ref[o + 1]), Int(ref[o]))
        }
        var bad: [String] = []
        for gy in 0..<16 {
            for gx in 0..<16 {
                let x = (gx * 2 + 1) * w / 32, y = (gy * 2 + 1) * h / 32
                let c = refPixel(x, y)
                var uniform = true
                for dy in -2...2 { for dx in -2...2 {
                    let n = refPixel(min(w - 1, max(0, x + dx)), min(h - 1, max(0, y + dy)))
                    if abs(n.0 - c.0) + abs(n.1 - c.1) + abs(n.2 - c.2) > 60 { uniform = false }
                } }
                guard uniform else { continue }
                let p = img.rgb(x: x, y: y)
                if abs(Int(p.r) - c.0) > 40 || abs(Int(p.g) - c.1) > 40 || abs(Int(p.b) - c.2) > 40 {
                    bad.append("(\(x),\(y)): \(p.r),\(p.g),\(p.b) vs ffmpeg \(c.0),\(c.1),\(c.2)")
                }
            }
        }
        return bad
    }

    @Test("rotation is the clockwise turn: minus ffprobe's angle, in 0…359", arguments: [0, 90, 180, 270])
    func streamRotation(tag: Int) throws {
        let path = tag == 0 ? try Self.markerClip() : try Self.tagged(tag)
        let file = try MediaFile(path: path, audio: false)
        let info = try #require(file.video)
        let probed = try Self.ffprobeRotation(path)
        let expected = ((-probed) % 360 + 360) % 360
        #expect(info.rotation == expected, "rotate=\(tag): ffprobe says \(probed)")
        #expect(info.width == 320 && info.height == 180, "coded size is unchanged")
        let frame = try Fixtures.firstVideoFrame(path)
        #expect(frame.rotation == info.rotation)
        #expect(frame.displayWidth == (expected % 180 == 0 ? 320 : 180))
    }

    @Test("the scaled picture matches ffmpeg's autorotated picture", arguments: [90, 180, 270])
    func pixelsMatchFFmpeg(tag: Int) throws {
        let path = try Self.tagged(tag)
        let frame = try Fixtures.firstVideoFrame(path)
        let img = ImageBuffer(width: frame.displayWidth, height: frame.displayHeight)
        try img.withTarget { try Scaler().scale(frame, into: $0, rect: PixelRect(x: 0, y: 0, width: img.width, height: img.height)) }
        let ref = try Fixtures.ffmpegBGRA(path)
        try #require(ref.count == img.width * img.height * 4, "ffmpeg's picture is \(ref.count / 4) pixels")
        let bad = Self.mismatches(img, ref)
        #expect(bad.isEmpty, "rotate=\(tag): \(bad.prefix(5))")
        // The red marker (top left of the coded picture) lands where ffmpeg puts it.
        let red = (0..<img.height).flatMap { y in (0..<img.width).map { (x: $0, y: y) } }
            .filter { let p = img.rgb(x: $0.x, y: $0.y); return p.r > 200 && p.g < 60 && p.b < 60 }
        #expect(!red.isEmpty)
    }

    @Test("a crop given in displayed pixels, scaled 2x, matches ffmpeg's autorotate + crop + scale", arguments: [90, 180, 270])
    func cropInDisplayedPixels(tag: Int) throws {
        let path = try Self.tagged(tag)
        let frame = try Fixtures.firstVideoFrame(path)
        let (w, h) = (frame.displayWidth, frame.displayHeight)
        let crop = PixelRect(x: 0, y: 0, width: w / 2, height: h / 2)     // the displayed top-left quarter
        let img = ImageBuffer(width: crop.width * 2, height: crop.height * 2)
        try img.withTarget { try Scaler().scale(frame, crop: crop, into: $0, rect: PixelRect(x: 0, y: 0, width: img.width, height: img.height)) }
        let ref = try Fixtures.ffmpegBGRA(path, filter: "crop=\(crop.width):\(crop.height):0:0,scale=\(img.width):\(img.height)")
        try #require(ref.count == img.width * img.height * 4)
        let bad = Self.mismatches(img, ref)
        #expect(bad.isEmpty, "rotate=\(tag): \(bad.prefix(5))")
    }
}
