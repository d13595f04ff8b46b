import Foundation
import Testing
@testable import Vitrine

@Suite("Decoder queues")
struct QueueTests {
    @Test("a video push waiting for room goes through when the audio consumer's take leaves the audio short (the queues share one condition)")
    func growthFollowsTheAudio() throws {
        let shared = NSCondition()
        let video = FrameQueue<Int>(capacity: 2, condition: shared)
        let audio = SampleQueue(channels: 1, capacityFrames: 48000, condition: shared)
        audio.push([Int16](repeating: 1, count: 20000))
        let growth = FrameQueue<Int>.Growth(audio: audio, lowFrames: 12000, limit: 4)
        #expect(video.push(1, growth: growth) && video.push(2, growth: growth))
        let pushed = DispatchSemaphore(value: 0)
        let t = Thread {
            _ = video.push(3, growth: growth)   // full: 2 frames, and the audio is not short
            pushed.signal()
        }
        t.start()
        var sink: [Int16] = []
        #expect(audio.take(maxFrames: 10000, into: &sink, timeout: 0) == 10000)   // 10000 left: short
        #expect(pushed.wait(timeout: .now() + 10) == .success, "the take woke the push")
        #expect(video.buffered == 3)
        // No growth beyond the limit: a fifth push waits until the consumer pops.
        #expect(video.push(4, growth: growth))
        let fifth = DispatchSemaphore(value: 0)
        Thread { _ = video.push(5, growth: growth); fifth.signal() }.start()
        #expect(video.pop() == 1)
        #expect(fifth.wait(timeout: .now() + 10) == .success)
        #expect(video.buffered == 4)
        video.close()
        #expect(!video.push(6), "a closed queue refuses pushes")
    }
}
