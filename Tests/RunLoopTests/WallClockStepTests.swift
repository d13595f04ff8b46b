import Foundation
import Testing
import RunLoop

/// The real `ECANCELED` path needs a real step of `CLOCK_REALTIME`, which is not namespaced: it is
/// the whole machine's clock, and stepping it needs `CAP_SYS_TIME` and clears NTP's state. So this
/// test is opt-in (`VITRINE_TEST_STEP_WALL_CLOCK=1`, as root on a machine of your own) and steps
/// the clock by about zero: it sets it to its own current time. The re-arm logic itself is
/// tested on every run through the manual clock (`ManualClockTests.wallClockStep`).
@Suite("wall-clock steps")
struct WallClockStepTests {
    static let enabled = ProcessInfo.processInfo.environment["VITRINE_TEST_STEP_WALL_CLOCK"] == "1"

    @Test("a real step of CLOCK_REALTIME ends the wait with a clock-change call, and the timerfd is re-armed for the next one",
          .enabled(if: enabled, "steps the machine's wall clock: set VITRINE_TEST_STEP_WALL_CLOCK=1 (needs CAP_SYS_TIME)"))
    func realStep() throws {
        let loop = try EventLoop()
        var changes = 0
        loop.onWallClockChange { changes += 1 }
        let edge = loop.scheduleTimer(atWallClock: loop.wallClockNow + .seconds(3600)) {}
        try loop.runOnce(timeout: .zero)  // Arms the CLOCK_REALTIME timerfd with CANCEL_ON_SET.

        for expected in 1...2 {
            try Self.stepWallClockByZero()
            try loop.run(until: { changes == expected }, limit: .seconds(5))
            #expect(changes == expected)
        }
        #expect(edge.isScheduled)  // An hour away still: the step moved nothing.
    }

    /// Sets CLOCK_REALTIME to what it reads now (plus the nanoseconds between the two calls).
    static func stepWallClockByZero() throws {
        var wall = timespec(), before = timespec(), after = timespec()
        clock_gettime(CLOCK_MONOTONIC, &before)
        clock_gettime(CLOCK_REALTIME, &wall)
        clock_gettime(CLOCK_MONOTONIC, &after)
        var nanoseconds = Int(wall.tv_nsec) + (Int(after.tv_sec - before.tv_sec) * 1_000_000_000 + Int(after.tv_nsec - before.tv_nsec))
        wall.tv_sec += nanoseconds / 1_000_000_000
        nanoseconds %= 1_000_000_000
        wall.tv_nsec = nanoseconds
        guard clock_settime(CLOCK_REALTIME, &wall) == 0 else {
            throw Errno(errno)
        }
    }
}
