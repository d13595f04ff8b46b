import Foundation
import Testing
import VitrineTestSupport
@testable import Vitrine
import VitrineCore

/// The two reproductions of a stream whose decoder cannot be opened (the real corpus cut short, one
/// byte changed; offsets 0-based). Both crashed the player with SIGSEGV while the item was prerolled.
enum UndecodableMedia {
    /// `video-demo.mkv` cut to 5,000 bytes, byte 3784 0x25 → 0x7f: a corrupt Vorbis setup header.
    static func brokenVorbis() throws -> [UInt8] { try corrupted("video-demo.mkv", length: 5000, offset: 3784, from: 0x25, to: 0x7f) }
    /// `video-demo.ogv` cut to 8,192 bytes, byte 303 0x20 → 0x6a: corrupt Theora extradata.
    static func brokenTheora() throws -> [UInt8] { try corrupted("video-demo.ogv", length: 8192, offset: 303, from: 0x20, to: 0x6a) }

    static func corrupted(_ name: String, length: Int, offset: Int, from: UInt8, to: UInt8) throws -> [UInt8] {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: RealMedia.folder + "/" + name)).prefix(length))
        try #require(bytes.count == length && bytes[offset] == from, "\(name) is not the file the reproduction was made from")
        bytes[offset] = to
        return bytes
    }
}

@Suite("Files whose decoder cannot be opened", .serialized, .enabled(if: RealMedia.available, RealMedia.absent))
struct UndecodableMediaTests {
    @Test("are logged with their name and the stream that failed, skipped each pass, and the items after them play")
    func skippedBetweenGoodItems() throws {
        let dir = try Harness.newFolder("undecodable")
        for (color, name) in [("red", "red"), ("lime", "green"), ("blue", "blue")] {
            try FileManager.default.copyItem(atPath: try Harness.colorClip(color, seconds: 1), toPath: dir + "/media/\(name).mp4")
        }
        try Data(try UndecodableMedia.brokenVorbis()).write(to: URL(fileURLWithPath: dir + "/media/vorbis.mkv"))
        try Data(try UndecodableMedia.brokenTheora()).write(to: URL(fileURLWithPath: dir + "/media/theora.ogv"))
        try Harness.writeManifest("""
            { "schema": "vitrine.manifest/1", "version": 1, "display": { "mode": "320x180@30" },
              "playlist": [ { "id": "red", "type": "video", "src": "media/red.mp4" },
                            { "id": "vorbis", "type": "video", "src": "media/vorbis.mkv" },
                            { "id": "green", "type": "video", "src": "media/green.mp4" },
                            { "id": "theora", "type": "video", "src": "media/theora.ogv" },
                            { "id": "blue", "type": "video", "src": "media/blue.mp4" } ] }
            """, in: dir)
        let times = [0.5, 1.5, 2.5, 3.5, 4.5, 5.5]
        let (stats, shots, logs) = try Harness.play(try Harness.manifest(in: dir), catalog: dir, duration: 6.2, snapshots: times)
        for (t, rgb) in zip(times, [0xFF0000, 0x00FF00, 0x0000FF, 0xFF0000, 0x00FF00, 0x0000FF] as [UInt32]) {
            #expect(shots[t]!.isColor(x: 160, y: 90, rgb), "\(String(rgb, radix: 16)) on screen at \(t) s")
        }
        // Each pass logs the skip; the engine logs a repeated failure at debug level.
        let skips = logs.filter { $0.message.hasPrefix("skipping ") }
        let vorbis = skips.filter { $0.message.contains("media/vorbis.mkv") }
        let theora = skips.filter { $0.message.contains("media/theora.ogv") }
        #expect(vorbis.map(\.level) == [.error, .debug] && theora.map(\.level) == [.error, .debug], "\(skips.map(\.message))")
        #expect(vorbis.allSatisfy { $0.message.hasSuffix("cannot decode its audio stream 1 (vorbis): avcodec_open2: Invalid data found when processing input") })
        #expect(theora.allSatisfy { $0.message.hasSuffix("cannot decode its video stream 0 (theora): avcodec_open2: corrupt codec headers") })
        // (A bad item can be "now playing" for an instant when its start comes before its decoder failed.)
        let started = logs.filter { $0.message.hasPrefix("now playing ") }.map { $0.message.split(separator: " ")[2] }
        #expect(started.filter { $0 != "vorbis" && $0 != "theora" } == ["red", "green", "blue", "red", "green", "blue", "red"])
        #expect(stats.itemsFailed == 4)
    }

    @Test("a video whose sound cannot be decoded plays silent, with one warning naming the stream")
    func silentVideo() throws {
        let dir = try Harness.newFolder("undecodable-audio")
        try FileManager.default.copyItem(atPath: try Harness.colorClip("red", seconds: 1), toPath: dir + "/media/red.mp4")
        // The first 256 KiB of video-demo.mkv hold about 2 s of H.264; its Vorbis setup header is corrupt.
        try Data(try UndecodableMedia.corrupted("video-demo.mkv", length: 256 << 10, offset: 3784, from: 0x25, to: 0x7f))
            .write(to: URL(fileURLWithPath: dir + "/media/silent.mkv"))
        try Harness.writeManifest("""
            { "schema": "vitrine.manifest/1", "version": 1, "display": { "mode": "320x180@30" },
              "playlist": [ { "id": "red", "type": "video", "src": "media/red.mp4" },
                            { "id": "silent", "type": "video", "src": "media/silent.mkv" } ] }
            """, in: dir)
        let (_, shots, logs) = try Harness.play(try Harness.manifest(in: dir), catalog: dir, duration: 2.5, snapshots: [0.5, 2.0])
        #expect(shots[0.5]!.isColor(x: 160, y: 90, 0xFF0000))
        #expect(!shots[2.0]!.isColor(x: 160, y: 90, 0xFF0000), "the mkv's pictures are on screen at 2 s")
        let warnings = logs.filter { $0.level == .warning && $0.message.contains("playing without") }.map(\.message)
        #expect(warnings == ["silent: playing without its audio stream 1 (vorbis): avcodec_open2: Invalid data found when processing input"])
        let played = logs.filter { $0.message.hasPrefix("played silent: ") }.map(\.message)
        // 1.5 s of a 24 fps video.
        #expect(played.count == 1 && played[0].hasPrefix("played silent: 36 video frames presented, 0 dropped"), "\(played)")
        #expect(!logs.contains { $0.message.hasPrefix("skipping silent") })
    }
}
