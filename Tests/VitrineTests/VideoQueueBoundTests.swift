import Foundation
import Testing
import Media
@testable import Vitrine
import VitrineCore

/// The video queue may grow while audio is short (interleaving skew), bounded in bytes by the decoded
/// pictures' real buffer sizes: at most 128 MiB, which is 10 frames of 4K, not 24 (about 300 MB).
@Suite("Video queue: bounded in bytes", .serialized)
struct VideoQueueBoundTests {
    @Test("4K video stored 2 s ahead of its audio: the queue stops at 128 MiB of pictures")
    func fourK() throws {
        let clip = try Harness.clip("late-audio-4k.mp4", [
            "-f", "lavfi", "-i", "color=c=gray:s=3840x2160:r=30:d=3", "-itsoffset", "2",
            "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=1",
            "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac"])
        let item = PlaylistItem(id: "late", type: .video, src: clip)
        let (sink, _) = LogSink.memory()
        // Timed (not untimed): the growth for short audio is on. Nobody takes pictures, so the decoder
        // fills the queue as far as its bound lets it, then waits.
        let source = ItemSource(item: item, path: clip, generation: 1, audioFormat: AudioFormat(sampleRate: 48000, channels: 2),
                                untimed: false, log: Logger(label: "test", sink: sink))
        source.start()
        defer { source.cancel() }
        var last = -1, stableSince = Date()
        let deadline = Date(timeIntervalSinceNow: 60)
        while Date() < deadline {
            let n = source.video.buffered
            if n != last { last = n; stableSince = Date() } else if Date().timeIntervalSince(stableSince) > 1.5 { break }
            Thread.sleep(forTimeInterval: 0.05)
        }
        let bytes = source.video.bufferedBytes
        let frame = try #require(source.video.peek())
        #expect(frame.width == 3840 && frame.height == 2160)
        let perFrame = frame.bufferBytes
        #expect(perFrame >= 3840 * 2160 * 3 / 2, "a 4K 4:2:0 picture holds at least 12.4 MB (\(perFrame))")
        #expect(source.audio.frames == 0, "no audio decoded yet: the queue is in its grown state")
        #expect(bytes <= 128 << 20, "\(last) frames hold \(bytes >> 20) MiB")
        #expect(last == (128 << 20) / perFrame, "\(last) frames of \(perFrame) bytes")
        #expect(last > source.video.capacity, "the queue still grows past its \(source.video.capacity) frames")
    }
}
