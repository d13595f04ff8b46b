import Foundation
import Testing
@testable import Media

/// YUV pictures convert with the matrix and range their stream states, or, when it states none, as
/// mpv guesses them: BT.709 for HD, BT.601 for SD, full range for JPEG. Each is compared, pixel for
/// pixel at the centre of five solid bars, with ffmpeg's own conversion of the same file.
@Suite("Colour: matrix and range")
struct ColourConversionTests {
    /// Red, green, blue, white and a dark grey (64, 64, 64: read at the wrong range it is off by 8,
    /// where saturated colours clip alike), left to right.
    static let bars = ["red", "lime", "blue", "white", "0x404040"]

    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var width: Int, height: Int
        /// `scale` options that write the YUV (matrix and range), and the tags the stream carries.
        var matrix: String, range: String
        var tags: [String]
        /// The encoder and pixel format.
        var codec: [String]
        /// How ffmpeg must read the file to give the reference: nil when it honours the file's own tags.
        var reference: String?
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "SD BT.601 limited", width: 640, height: 480, matrix: "bt601", range: "tv",
             tags: ["-colorspace", "smpte170m", "-color_range", "tv"], codec: h264, reference: nil),
        Case(name: "SD BT.601 full", width: 640, height: 480, matrix: "bt601", range: "pc",
             tags: ["-colorspace", "smpte170m", "-color_range", "pc"], codec: h264, reference: nil),
        // VP9 signals full range as yuv420p with color_range pc (H.264 decodes as yuvj420p instead).
        Case(name: "SD BT.601 full, VP9", width: 640, height: 480, matrix: "bt601", range: "pc",
             tags: ["-colorspace", "smpte170m", "-color_range", "pc"], codec: vp9, reference: nil),
        Case(name: "HD BT.709 full, VP9", width: 1280, height: 720, matrix: "bt709", range: "pc",
             tags: ["-colorspace", "bt709", "-color_range", "pc"], codec: vp9, reference: nil),
        Case(name: "HD BT.709 limited", width: 1280, height: 720, matrix: "bt709", range: "tv",
             tags: ["-colorspace", "bt709", "-color_range", "tv"], codec: h264, reference: nil),
        Case(name: "HD BT.709 full", width: 1920, height: 1080, matrix: "bt709", range: "pc",
             tags: ["-colorspace", "bt709", "-color_range", "pc"], codec: h264, reference: nil),
        // Untagged: ffmpeg's CLI would take BT.601 for all; mpv (and Vitrine) take BT.709 for HD.
        Case(name: "HD untagged (BT.709 guessed)", width: 1280, height: 720, matrix: "bt709", range: "tv",
             tags: [], codec: h264, reference: "scale=in_color_matrix=bt709:in_range=tv"),
        Case(name: "SD untagged (BT.601 guessed)", width: 720, height: 576, matrix: "bt601", range: "tv",
             tags: [], codec: h264, reference: "scale=in_color_matrix=bt601:in_range=tv"),
        // Motion JPEG: yuvj420p, full range by its format.
        Case(name: "JPEG yuvj420p (full range)", width: 1280, height: 720, matrix: "bt601", range: "pc",
             tags: [], codec: ["-c:v", "mjpeg", "-q:v", "2", "-pix_fmt", "yuvj420p"], reference: nil),
    ]
    static let vp9 = ["-c:v", "libvpx-vp9", "-deadline", "realtime", "-crf", "10", "-b:v", "0", "-pix_fmt", "yuv420p"]
    static let h264 = ["-c:v", "libx264", "-preset", "ultrafast", "-crf", "8", "-pix_fmt", "yuv420p"]

    static func clip(_ c: Case) throws -> String {
        let w = c.width / bars.count
        let sources = bars.enumerated().map { "color=c=\($1):s=\(w)x\(c.height):r=10:d=0.3[b\($0)]" }
        let stack = (0..<bars.count).map { "[b\($0)]" }.joined() + "hstack=\(bars.count),format=rgb24,"
            + "scale=out_color_matrix=\(c.matrix):out_range=\(c.range)"
        let ext = c.codec.contains("mjpeg") ? "avi" : c.codec.contains("libvpx-vp9") ? "webm" : "mp4"
        let file = "bars-\(c.name.filter { $0.isLetter || $0.isNumber }).\(ext)"
        return try Fixtures.generate(file, ["-filter_complex", sources.joined(separator: ";") + ";" + stack] + c.codec + c.tags)
    }

    @Test("each bar is within ±4 per channel of ffmpeg's conversion", arguments: cases)
    func matchesFFmpeg(_ c: Case) throws {
        let path = try Self.clip(c)
        let frame = try Fixtures.firstVideoFrame(path)
        let w = frame.width, h = frame.height
        let reference = try Fixtures.ffmpegBGRA(path, filter: c.reference)
        try #require(reference.count == w * h * 4, "ffmpeg gave \(reference.count) bytes for \(w)x\(h)")
        let img = ImageBuffer(width: w, height: h)
        try img.withTarget { try Scaler().scale(frame, into: $0, rect: PixelRect(x: 0, y: 0, width: w, height: h)) }
        let barWidth = w / Self.bars.count
        for (i, name) in Self.bars.enumerated() {
            let x = i * barWidth + barWidth / 2, y = h / 2
            let o = (y * w + x) * 4
            let want = (r: Int(reference[o + 2]), g: Int(reference[o + 1]), b: Int(reference[o]))
            let got = img.rgb(x: x, y: y)
            let off = max(abs(Int(got.r) - want.r), abs(Int(got.g) - want.g), abs(Int(got.b) - want.b))
            #expect(off <= 4, "\(c.name), \(name): Vitrine \(got.r),\(got.g),\(got.b), ffmpeg \(want.r),\(want.g),\(want.b)")
        }
    }

    @Test("pure red of a BT.709 clip is 254,0,0 (±4), not BT.601's 232,0,1")
    func hdRed() throws {
        let frame = try Fixtures.firstVideoFrame(try Self.clip(Self.cases.first { $0.name == "HD BT.709 limited" }!))
        let img = ImageBuffer(width: 64, height: 36)
        // The red bar alone, scaled down: the cropped, scaled path converts with the same matrix.
        try img.withTarget { try Scaler().scale(frame, crop: PixelRect(x: 16, y: 0, width: 224, height: 720), into: $0,
                                               rect: PixelRect(x: 0, y: 0, width: 64, height: 36)) }
        let p = img.rgb(x: 32, y: 18)
        #expect(p.r >= 250 && p.g <= 4 && p.b <= 4, "got \(p.r),\(p.g),\(p.b)")
    }
}
