import Foundation
import Testing
import VitrineTestSupport
@testable import Media

/// Files with a stream whose decoder cannot be opened (`avcodec_open2` fails): the other stream still
/// plays, the failure is reported per stream, and nothing is freed twice. Both reproductions are the
/// real corpus cut short with one byte changed (0-based offsets), made at test time.
@Suite("A stream whose decoder cannot be opened", .enabled(if: RealMedia.available, RealMedia.absent))
struct UndecodableStreamTests {
    /// The first `length` bytes of the real file `name`, with byte `offset` changed from `from` to `to`.
    static func corrupted(_ name: String, length: Int, offset: Int, from: UInt8, to: UInt8) throws -> String {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Fixtures.real(name))).prefix(length))
        try #require(bytes.count == length && bytes[offset] == from, "\(name) is not the file the reproduction was made from")
        bytes[offset] = to
        let path = Fixtures.scratch + "/undecodable-\(offset)-" + name
        try Data(bytes).write(to: URL(fileURLWithPath: path), options: .atomic)   // tests run in parallel
        return path
    }

    /// `video-demo.mkv` (H.264 + Vorbis) cut to 5,000 bytes, byte 3784 0x25 → 0x7f: a corrupt Vorbis setup header.
    static func brokenVorbis() throws -> String {
        try corrupted("video-demo.mkv", length: 5000, offset: 3784, from: 0x25, to: 0x7f)
    }

    /// `video-demo.ogv` (Theora + Vorbis) cut to 8,192 bytes, byte 303 0x20 → 0x6a: corrupt Theora extradata.
    static func brokenTheora() throws -> String {
        try corrupted("video-demo.ogv", length: 8192, offset: 303, from: 0x20, to: 0x6a)
    }

    static func decodeAll(_ file: MediaFile) throws -> (video: Int, audio: Int) {
        var n = (video: 0, audio: 0)
        while let f = try file.read() {
            switch f {
            case .video: n.video += 1
            case .audio: n.audio += 1
            }
        }
        return n
    }

    @Test("a corrupt Vorbis setup header: the H.264 stream opens, the Vorbis one is reported, decoding ends cleanly")
    func vorbisSetupHeader() throws {
        let file = try MediaFile(path: try Self.brokenVorbis())
        #expect(file.video?.codecName == "h264")
        #expect(file.video?.width == 176 && file.video?.height == 144)
        #expect(file.audio == nil)
        let bad = try #require(file.undecodableStreams.first)
        #expect(file.undecodableStreams.count == 1)
        #expect(bad.kind == .audio && bad.index == 1 && bad.codecName == "vorbis")
        #expect(bad.error.operation == "avcodec_open2")
        #expect(bad.description == "audio stream 1 (vorbis): avcodec_open2: Invalid data found when processing input")
        // 5,000 bytes end inside the first cluster: no complete frame.
        let n = try Self.decodeAll(file)
        #expect(n.video == 0 && n.audio == 0)
    }

    @Test("corrupt Theora extradata: the Vorbis stream opens, the Theora one is reported with a readable reason")
    func theoraExtradata() throws {
        let file = try MediaFile(path: try Self.brokenTheora())
        #expect(file.video == nil)
        #expect(file.audio?.codecName == "vorbis")
        #expect(file.undecodableStreams.map(\.description) == ["video stream 0 (theora): avcodec_open2: corrupt codec headers"])
        _ = try Self.decodeAll(file)
    }

    @Test("when the only wanted stream cannot be opened, init throws that stream's error", arguments: [true, false])
    func onlyStreamFails(vorbis: Bool) throws {
        let path = vorbis ? try Self.brokenVorbis() : try Self.brokenTheora()
        #expect { _ = try MediaFile(path: path, video: !vorbis, audio: vorbis) } throws: { error in
            (error as? AVError)?.operation == "avcodec_open2"
        }
    }
}
