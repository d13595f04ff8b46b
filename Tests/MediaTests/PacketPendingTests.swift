import Foundation
import Testing
@testable import Media

/// A packet a decoder refuses with EAGAIN (it holds frames that must be taken first) is kept and sent
/// again, as ffplay keeps it (`packet_pending`), never dropped. `read()` takes every frame before it
/// sends the next packet, so with FFmpeg 5.1's decoders it never meets EAGAIN; a caller that demuxes
/// ahead does, which `demuxAhead` reproduces: with libavcodec 59, an H.264 decoder with B-frames
/// refuses the 5th packet sent without taking frames (one thread), later with frame threads.
@Suite("EAGAIN from avcodec_send_packet: the packet is kept")
struct PacketPendingTests {
    static func clip() throws -> String {
        try Fixtures.generate("bframes-av.mp4", ["-f", "lavfi", "-i", "testsrc2=s=320x240:r=30:d=3",
                                                 "-f", "lavfi", "-i", "sine=frequency=440:duration=3",
                                                 "-c:v", "libx264", "-preset", "ultrafast", "-bf", "3", "-pix_fmt", "yuv420p",
                                                 "-c:a", "aac", "-shortest"])
    }

    /// ffprobe's decoded frame count of `stream` (`-count_frames`).
    static func countFrames(_ path: String, _ stream: String) throws -> Int {
        let out = try Fixtures.run("ffprobe", ["-v", "error", "-count_frames", "-select_streams", stream,
                                               "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0", path])
        return try #require(Int(out.trimmingCharacters(in: .whitespacesAndNewlines.union(.punctuationCharacters))))
    }

    static func decodeAll(_ file: MediaFile) throws -> (video: Int, audio: Int) {
        var v = 0, a = 0
        while let f = try file.read() { if case .video = f { v += 1 } else { a += 1 } }
        return (v, a)
    }

    @Test("demuxing ahead, video only (one thread, frame threads): refused packets are sent again, every frame decoded",
          arguments: [1, 0])
    func demuxAheadVideo(threads: Int) throws {
        let path = try Self.clip()
        let file = try MediaFile(path: path, audio: false, threads: threads)
        try file.demuxAhead(packets: 40)
        #expect(file.packetsDeferred > 0, "threads \(threads): the decoder refused no packet, the case is not exercised")
        let n = try Self.decodeAll(file)
        #expect(n.video == (try Self.countFrames(path, "v:0")), "threads \(threads): video frames")
        #expect(file.corruptPackets == 0)
    }

    @Test("demuxing ahead, video and audio: both decoders give every frame ffprobe counts")
    func demuxAheadBoth() throws {
        let path = try Self.clip()
        let file = try MediaFile(path: path)
        try file.demuxAhead(packets: 40)
        #expect(file.packetsDeferred > 0)
        let n = try Self.decodeAll(file)
        let want = (video: try Self.countFrames(path, "v:0"), audio: try Self.countFrames(path, "a:0"))
        #expect(n.video == want.video && n.audio == want.audio, "got \(n), ffprobe \(want)")
        #expect(file.corruptPackets == 0)
    }

    @Test("read() alone never meets EAGAIN and decodes every frame")
    func plainRead() throws {
        let path = try Self.clip()
        let file = try MediaFile(path: path)
        let n = try Self.decodeAll(file)
        let want = (video: try Self.countFrames(path, "v:0"), audio: try Self.countFrames(path, "a:0"))
        #expect(file.packetsDeferred == 0)
        #expect(n.video == want.video && n.audio == want.audio)
    }
}
