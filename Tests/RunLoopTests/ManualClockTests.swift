import Foundation
import Testing
import RunLoop

/// Deterministic time: `LoopClock.manual`, advanced by the test. The timer queues, the firing
/// order, repeating ticks and the wall-clock step path are the ones the system clock runs.
@Suite("manual clock")
struct ManualClockTests {
    @Test("advanceTime fires due timers in deadline order, each with the clock at its deadline, and no others")
    func firesInOrder() throws {
        let loop = try EventLoop(clock: .manual(start: Deadline(seconds: 100)))
        var fired: [(String, Double)] = []
        loop.scheduleTimer(after: .seconds(10)) { fired.append(("banner hide", loop.now.seconds)) }
        loop.scheduleTimer(after: .seconds(2)) { fired.append(("rescan", loop.now.seconds)) }
        loop.scheduleTimer(after: .seconds(10)) { fired.append(("slate retry", loop.now.seconds)) }
        let idle = loop.scheduleTimer(after: .seconds(30)) { fired.append(("idle", loop.now.seconds)) }

        loop.advanceTime(by: .seconds(9))
        #expect(fired.map(\.0) == ["rescan"])
        #expect(fired.map(\.1) == [102])
        #expect(loop.now == Deadline(seconds: 109))

        loop.advanceTime(by: .seconds(1))
        #expect(fired.map(\.0) == ["rescan", "banner hide", "slate retry"])
        #expect(fired.map(\.1) == [102, 110, 110])
        #expect(idle.isScheduled)

        loop.advanceTime(by: .seconds(20))
        #expect(fired.map(\.0).last == "idle")
        #expect(fired.count == 4)
        #expect(!idle.isScheduled)
    }

    @Test("a timer a handler schedules inside the advanced window fires at its own deadline: the importer's 2 s rescan")
    func handlerSchedulesInWindow() throws {
        let loop = try EventLoop(clock: .manual())
        let start = loop.now
        var rescans: [Duration] = []
        func rescan() {
            rescans.append(loop.now - start)
            loop.scheduleTimer(after: .seconds(2), rescan)
        }
        loop.scheduleTimer(after: .seconds(2), rescan)
        loop.advanceTime(by: .seconds(7))
        #expect(rescans == [.seconds(2), .seconds(4), .seconds(6)])
        loop.advanceTime(by: .seconds(1))
        #expect(rescans.count == 4)
    }

    @Test("a repeating timer ticks on its grid as time advances; cancel inside its handler stops it")
    func repeatingTicks() throws {
        let loop = try EventLoop(clock: .manual())
        let interval = Duration.seconds(1) / 60
        var ticks: [TimerTick] = []
        var timer: LoopTimer?
        timer = loop.scheduleRepeatingTimer(every: interval) { tick in
            ticks.append(tick)
            if ticks.count == 5 { timer?.cancel() }
        }
        loop.advanceTime(by: .milliseconds(50))  // Ticks at 16.67, 33.33 and 50.00 ms.
        #expect(ticks.map(\.deadline.nanoseconds) == [16_666_667, 33_333_333, 50_000_000])
        #expect(ticks.allSatisfy { $0.expirations == 1 })
        loop.advanceTime(by: .seconds(1))
        #expect(ticks.count == 5)
        #expect(timer?.isScheduled == false)
    }

    @Test("moving an idle timeout on each touch: it fires only a full timeout after the last touch")
    func idleTimeoutPushedBack() throws {
        let loop = try EventLoop(clock: .manual())
        var idleAt: [Deadline] = []
        let idle = loop.scheduleTimer(after: .seconds(30)) { idleAt.append(loop.now) }
        loop.advanceTime(by: .seconds(20))
        idle.reschedule(after: .seconds(30))  // A touch at 20 s.
        loop.advanceTime(by: .seconds(29))
        #expect(idleAt.isEmpty)
        loop.advanceTime(by: .seconds(1))
        #expect(idleAt == [Deadline(seconds: 50)])
    }

    @Test("a wall-clock step runs the change handlers, then fires the wall-clock timers it passed; monotonic timers stay")
    func wallClockStep() throws {
        let wall = WallClockTime(secondsSinceEpoch: 1_767_254_400)  // 2026-01-01 08:00 UTC
        let loop = try EventLoop(clock: .manual(wallClock: wall))
        var log: [String] = []
        loop.onWallClockChange { log.append("clock changed to \(Int(loop.wallClockNow.secondsSinceEpoch))") }
        loop.scheduleTimer(atWallClock: wall + .seconds(3600)) { log.append("09:00 edge") }
        let tenOClock = loop.scheduleTimer(atWallClock: wall + .seconds(7200)) { log.append("10:00 edge") }
        loop.scheduleTimer(after: .seconds(5400)) { log.append("monotonic 90 min") }

        // Stepped forward 1.5 h: the 09:00 edge is now in the past.
        loop.setWallClock(to: wall + .seconds(5400))
        #expect(log == ["clock changed to 1767259800", "09:00 edge"])
        #expect(tenOClock.isScheduled)

        // Stepped back to 08:00: the 10:00 edge is two hours away again, on the new wall time.
        loop.setWallClock(to: wall)
        loop.advanceTime(by: .seconds(5400))
        #expect(log == ["clock changed to 1767259800", "09:00 edge", "clock changed to 1767254400", "monotonic 90 min"])
        loop.advanceTime(by: .seconds(1800))
        #expect(log.last == "10:00 edge")
        #expect(loop.wallClockNow == wall + .seconds(7200))
    }

    @Test("work another thread posts runs in advanceTime, on the loop's thread")
    func postedWorkRuns() throws {
        let loop = try EventLoop(clock: .manual())
        let ran = Recorder<UInt>()
        let waker = loop.waker
        onAnotherThread { waker.execute { ran.append(currentThread()) } }
        loop.advanceTime(by: .zero)
        #expect(ran.all == [currentThread()])
    }

    @Test("a manual loop waits for a real descriptor while its timers stay put")
    func descriptorsOnManualLoop() throws {
        let loop = try EventLoop(clock: .manual())
        let pipe = try TestPipe()
        var read = "", timerFired = false
        let registration = try loop.register(pipe.readEnd, for: .readable) { _ in read += pipe.readAll() }
        loop.scheduleTimer(after: .milliseconds(1)) { timerFired = true }
        let writeEnd = pipe.writeEnd
        onAnotherThread { writeText("stick inserted", to: writeEnd) }
        try loop.runOnce(timeout: .seconds(5))
        #expect(read == "stick inserted")
        #expect(!timerFired)  // Its time has not come: the manual clock did not move.
        loop.advanceTime(by: .milliseconds(1))
        #expect(timerFired)
        registration.cancel()
    }
}
