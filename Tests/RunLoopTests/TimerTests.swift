import Foundation
import Testing
@testable import RunLoop

/// Timers on the system clock: real timerfds, real `epoll_wait`.
@Suite("timerfd timers")
struct TimerTests {
    @Test("one-shot timers fire once each, in deadline order (ties in scheduling order), never before their deadline")
    func oneShotOrder() throws {
        let loop = try EventLoop()
        let start = loop.now
        var fired: [(name: String, at: Deadline, due: Deadline)] = []
        for (name, milliseconds) in [("c", 30), ("a", 10), ("b", 20), ("b2", 20)] {
            let due = start + .milliseconds(milliseconds)
            loop.scheduleTimer(at: due) { fired.append((name, loop.now, due)) }
        }
        // A later timer: when it has fired, any second firing of the others would have come first.
        var later = false
        loop.scheduleTimer(at: start + .milliseconds(60)) { later = true }
        try loop.run(until: { later })

        #expect(fired.map(\.name) == ["a", "b", "b2", "c"])
        for entry in fired { #expect(entry.at >= entry.due, "\(entry.name) fired early") }
    }

    @Test("a repeating 1/60 s timer's ticks stay on first + n × interval; a slow handler's missed ticks come as expirations")
    func repeatingDoesNotDrift() throws {
        let loop = try EventLoop()
        let interval = Duration.seconds(1) / 60
        let first = loop.now + .milliseconds(5)
        var ticks: [TimerTick] = []
        let timer = loop.scheduleRepeatingTimer(every: interval, startingAt: first) { tick in
            #expect(loop.now >= tick.deadline)
            ticks.append(tick)
            // One handler 60 ms late (over three intervals): the loop must catch up, not shift the grid.
            if ticks.count == 3 { usleep(60_000) }
        }
        try loop.run(until: { ticks.count == 10 })
        timer.cancel()

        // Tick n is due at first + n/60 s, to the nearest nanosecond (computed here independently).
        var index = 0
        for tick in ticks {
            index += tick.expirations
            let n = index - 1
            #expect(tick.deadline.nanoseconds == first.nanoseconds + Int64((Double(n) * 1_000_000_000 / 60).rounded()))
        }
        #expect(ticks[3].expirations >= 3, "the call after the 60 ms stall reports the ticks it missed")
        #expect(Set(ticks.map(\.deadline)).count == ticks.count)
    }

    @Test("a cancelled timer never fires; a later one does, and cancelling releases the handler")
    func cancelBeforeFire() throws {
        let loop = try EventLoop()
        final class Token {}
        var token: Token? = Token()
        weak let released = token
        var cancelledFired = false, laterFired = false
        let cancelled = loop.scheduleTimer(after: .milliseconds(10)) { [token] in _ = token; cancelledFired = true }
        token = nil
        loop.scheduleTimer(after: .milliseconds(30)) { laterFired = true }
        #expect(cancelled.isScheduled)
        cancelled.cancel()
        #expect(!cancelled.isScheduled)
        #expect(released == nil)
        // Timers fire in deadline order, so by the time the 30 ms one fires the 10 ms one would have.
        try loop.run(until: { laterFired })
        #expect(!cancelledFired)
    }

    @Test("rescheduling an idle timeout pushes it back: it fires once, a full delay after the last move")
    func rescheduleIdleTimeout() throws {
        let loop = try EventLoop()
        var firedAt: [Deadline] = []
        let idle = loop.scheduleTimer(after: .milliseconds(20)) { firedAt.append(loop.now) }
        var moved = loop.now
        // Three "touches", 10 ms apart, each pushing the timeout 20 ms past itself.
        var touches = 0
        loop.scheduleRepeatingTimer(every: .milliseconds(10)) { _ in
            guard touches < 3 else { return }
            touches += 1
            moved = loop.now
            idle.reschedule(after: .milliseconds(20))
        }
        try loop.run(until: { firedAt.count == 1 })
        #expect(touches == 3)
        #expect(firedAt[0] >= moved + .milliseconds(20))
        #expect(!idle.isScheduled)
    }

    @Test("a wall-clock timer fires once the wall clock reaches its time")
    func wallClockTimer() throws {
        let loop = try EventLoop()
        let due = loop.wallClockNow + .milliseconds(20)
        var firedAt: WallClockTime?
        let timer = loop.scheduleTimer(atWallClock: due) { firedAt = loop.wallClockNow }
        #expect(timer.wallClockDeadline == due)
        #expect(timer.deadline == nil)
        try loop.run(until: { firedAt != nil })
        #expect(try #require(firedAt) >= due)
    }

    @Test("a late repeating timer's latest due tick is found exactly, counted from the tick it was due at")
    func latestTickArithmetic() {
        let interval = Duration.seconds(1) / 60   // 16 666 666.67 ns
        // Tick 0 at 1000 ns; at 50 ms ticks 0, 1, 2 are due (1000, 16 667 666, 33 334 333), 3 is not (50 001 000).
        #expect(EventLoop.latestTick(first: 1000, interval: interval, from: 0, notAfter: 50_000_000) == 2)
        #expect(EventLoop.latestTick(first: 1000, interval: interval, from: 0, notAfter: 50_001_000) == 3)
        #expect(EventLoop.latestTick(first: 1000, interval: interval, from: 2, notAfter: 33_334_333) == 2)
        // Four months of vblanks (10 368 000 s) land on the nanosecond; a year is 1 ns short (1/60 s
        // is 0.67 attoseconds more than Duration holds).
        #expect(EventLoop.tickDeadline(first: 0, interval: interval, 622_080_000) == 10_368_000_000_000_000)
        #expect(EventLoop.tickDeadline(first: 0, interval: interval, 1_892_160_000) == 31_535_999_999_999_999)
    }
}
