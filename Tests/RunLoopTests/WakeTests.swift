import Foundation
import Testing
import RunLoop
import SystemSupport

/// The eventfd wake-up: other threads reaching the loop.
@Suite("eventfd wake-ups")
struct WakeTests {
    @Test("work posted from another thread runs on the loop's thread, in the order it was posted")
    func workRunsOnLoopThread() throws {
        let loop = try EventLoop()
        let loopThread = currentThread()
        let ran = Recorder<(Int, UInt)>()
        let poster = Recorder<UInt>()
        let waker = loop.waker
        onAnotherThread {
            poster.append(currentThread())
            for index in 0..<3 { #expect(waker.execute { ran.append((index, currentThread())) }) }
            waker.requestStop()
        }
        try loop.run()  // Returns on the stop, after the three items.
        #expect(ran.all.map(\.0) == [0, 1, 2])
        #expect(ran.all.allSatisfy { $0.1 == loopThread })
        #expect(poster.all.first != loopThread)
    }

    @Test("a hundred wake() calls before the loop runs call the waker's handler once, on the loop's thread")
    func wakeUpsCoalesce() throws {
        let loop = try EventLoop()
        let loopThread = currentThread()
        var calls: [UInt] = []
        let frames = loop.makeWaker { calls.append(currentThread()) }
        onAnotherThread { for _ in 0..<100 { frames.wake() } }
        // All hundred were made (the thread has finished); the eventfd is readable.
        try loop.runOnce(timeout: .seconds(5))
        #expect(calls == [loopThread])
        try loop.runOnce(timeout: .zero)
        #expect(calls.count == 1)
        onAnotherThread { frames.wake() }
        try loop.runOnce(timeout: .seconds(5))
        #expect(calls.count == 2)
    }

    @Test("a stop requested from another thread ends a run() that is waiting with nothing scheduled")
    func requestStopEndsRun() throws {
        let loop = try EventLoop()
        let waker = loop.waker
        let accepted = Recorder<Bool>()
        let thread = Thread { accepted.append(waker.requestStop()) }
        thread.start()
        try loop.run()
        // run() may return before the other thread has recorded what requestStop() returned.
        let deadline = MonotonicClock.seconds() + 5
        while accepted.all.isEmpty && MonotonicClock.seconds() < deadline { usleep(1000) }
        #expect(accepted.all == [true], "the stop from another thread was accepted and ended run()")
        // run() can be entered again, and returns on the next stop.
        #expect(waker.requestStop())
        try loop.run()
    }

    @Test("after close a waker returns false and its work does not run")
    func closedLoop() throws {
        let loop = try EventLoop()
        let waker = loop.waker
        let handled = loop.makeWaker {}
        loop.close()
        let ran = Recorder<Int>()
        #expect(!waker.execute { ran.append(1) })
        #expect(!handled.wake())
        #expect(!waker.requestStop())
        #expect(ran.all.isEmpty)
    }
}
