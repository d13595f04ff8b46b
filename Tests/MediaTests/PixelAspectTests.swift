import Foundation
import Testing
@testable import Media

/// The sample aspect ratio is the container's when it states one, else the codec's, as ffmpeg
/// (`av_guess_sample_aspect_ratio`, the SAR ffprobe prints for frames) and mpv (`--video-aspect-method=container`,
/// its default) choose. An H.263 3GP says 12:11 in its bitstream (H.263's CIF pixel) but 1:1 in its
/// track header, so ffmpeg and mpv show 11:9, not 4:3.
@Suite("Pixel aspect: container before codec")
struct PixelAspectTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var file: String
        var make: [String]
        var testDescription: String { file }
    }

    static let cases = [
        // H.263 in 3GP: bitstream 12:11, track header 1:1 → 1:1.
        Case(file: "qcif-h263.3gp", make: ["-f", "lavfi", "-i", "testsrc=s=176x144:r=15:d=0.4", "-c:v", "h263"]),
        // Raw H.264 with a 4:3 pixel in its VUI and no container: the codec's.
        Case(file: "sar43.h264", make: ["-f", "lavfi", "-i", "testsrc=s=320x240:r=25:d=0.4", "-vf", "setsar=4/3",
                                        "-pix_fmt", "yuv420p", "-c:v", "libx264", "-preset", "ultrafast"]),
        // Square pixels in the VUI, 16:9 display in Matroska: the container's (4:3).
        Case(file: "wide.mkv", make: ["-f", "h264", "-i", "SQUARE", "-c", "copy", "-aspect", "16:9"]),
    ]

    /// The SAR ffprobe gives the first decoded frame (`av_guess_sample_aspect_ratio`), as a number.
    static func ffprobeFrameSAR(_ path: String) throws -> Double {
        let out = try Fixtures.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-read_intervals", "%+#1",
                                               "-show_entries", "frame=sample_aspect_ratio", "-of", "csv=p=0", path])
        let field = out.split(separator: "\n").first?.split(separator: ",").first ?? ""   // "12:11" (csv may end in ",")
        let parts = field.split(separator: ":").compactMap { Double($0) }
        return parts.count == 2 && parts[1] > 0 ? parts[0] / parts[1] : 1
    }

    static func make(_ c: Case) throws -> String {
        var args = c.make
        if let i = args.firstIndex(of: "SQUARE") {
            args[i] = try Fixtures.generate("square.h264", ["-f", "lavfi", "-i", "testsrc=s=320x240:r=25:d=0.4", "-vf", "setsar=1",
                                                            "-pix_fmt", "yuv420p", "-c:v", "libx264", "-preset", "ultrafast"])
        }
        return try Fixtures.generate(c.file, args)
    }

    @Test("stream and frame SAR equal ffprobe's frame SAR", arguments: cases)
    func matchesFFprobe(_ c: Case) throws {
        let path = try Self.make(c)
        let expected = try Self.ffprobeFrameSAR(path)
        let file = try MediaFile(path: path, audio: false)
        let info = try #require(file.video)
        #expect(abs(info.sampleAspectRatio - expected) < 1e-6, "\(c.file): stream SAR \(info.sampleAspectRatio), ffprobe \(expected)")
        let frame = try Fixtures.firstVideoFrame(path)
        #expect(abs(frame.sampleAspectRatio - expected) < 1e-6, "\(c.file): frame SAR \(frame.sampleAspectRatio), ffprobe \(expected)")
    }

    @Test("the H.263 3GP has square pixels: 176x144 is an 11:9 picture")
    func h263Square() throws {
        let path = try Self.make(Self.cases[0])
        let frame = try Fixtures.firstVideoFrame(path)
        #expect(frame.sampleAspectRatio == 1)
        #expect(abs(Double(frame.width) * frame.sampleAspectRatio / Double(frame.height) - 11.0 / 9) < 1e-9)
    }
}
