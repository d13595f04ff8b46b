import Foundation
import Testing
@testable import Media

/// Cover art: the attached picture of an MP3 (ID3 APIC, PNG here) or an M4A (`covr`, JPEG here),
/// made with ffmpeg from a 64x64 picture of four coloured squares.
@Suite("Cover art: attached pictures")
struct CoverArtTests {
    static func cover() throws -> String {
        try Fixtures.generate("cover-quads.png", [
            "-filter_complex", "color=c=red:s=32x32[a];color=c=0x00FF00:s=32x32[b];color=c=blue:s=32x32[c];"
                + "color=c=yellow:s=32x32[d];[a][b]hstack[t];[c][d]hstack[u];[t][u]vstack", "-frames:v", "1"])
    }

    static func withCover(_ name: String, audio: [String], picture: [String]) throws -> String {
        try Fixtures.generate(name, ["-f", "lavfi", "-i", "sine=frequency=440:duration=1", "-i", try cover(),
                                     "-map", "0", "-map", "1"] + audio + picture + ["-disposition:v", "attached_pic"])
    }

    static let files: [(String, [String], [String])] = [
        ("cover.mp3", ["-c:a", "libmp3lame", "-id3v2_version", "3"], ["-c:v", "png"]),
        ("cover.m4a", ["-c:a", "aac"], ["-c:v", "mjpeg"]),
    ]

    @Test("the picture decodes to ffmpeg's, even with video decoding off", arguments: [0, 1])
    func decodes(index: Int) throws {
        let (name, audio, picture) = Self.files[index]
        let path = try Self.withCover(name, audio: audio, picture: picture)
        let file = try MediaFile(path: path, video: false)
        #expect(file.video == nil)
        let art = try #require(try file.coverArt(), "\(name) has cover art")
        #expect(art.width == 64 && art.height == 64)
        let img = ImageBuffer(width: 64, height: 64)
        try img.withTarget { try Scaler().scale(art, into: $0, rect: PixelRect(x: 0, y: 0, width: 64, height: 64)) }
        let ref = try Fixtures.runData("ffmpeg", ["-v", "error", "-i", path, "-map", "0:v", "-frames:v", "1",
                                                  "-pix_fmt", "bgra", "-f", "rawvideo", "-"])
        try #require(ref.count == 64 * 64 * 4)
        for (x, y, colour) in [(16, 16, "red"), (48, 16, "green"), (16, 48, "blue"), (48, 48, "yellow")] {
            let o = (y * 64 + x) * 4
            let p = img.rgb(x: x, y: y)
            let off = max(abs(Int(p.r) - Int(ref[o + 2])), abs(Int(p.g) - Int(ref[o + 1])), abs(Int(p.b) - Int(ref[o])))
            #expect(off <= 4, "\(name) \(colour) square: \(p) vs ffmpeg \(ref[o + 2]),\(ref[o + 1]),\(ref[o])")
        }
        // The sound still decodes to the end.
        var samples = 0
        while let f = try file.read() { if case .audio(let a) = f { samples += a.sampleCount } }
        #expect(samples >= 44100 - 1152)
    }

    @Test("a file without cover art has none")
    func none() throws {
        let path = try Fixtures.generate("no-cover.mp3", ["-f", "lavfi", "-i", "sine=duration=0.5", "-c:a", "libmp3lame"])
        #expect(try MediaFile(path: path).coverArt() == nil)
    }
}
