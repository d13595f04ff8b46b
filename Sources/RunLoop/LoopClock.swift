// Where an event loop's time comes from.

/// The time source of an `EventLoop`.
public enum LoopClock: Sendable {
    /// The kernel's clocks: timers are armed on a `CLOCK_MONOTONIC` timerfd and a `CLOCK_REALTIME`
    /// timerfd, and `runOnce()` sleeps in `epoll_wait` until the earliest one (or a descriptor, or
    /// a wake-up).
    case system
    /// Time that passes only when a test says so: `advanceTime(by:)` moves both clocks and fires
    /// the timers due on the way, in order; `setWallClock(to:)` steps the wall clock as an
    /// administrator or NTP would. The same timer queues, firing code and clock-step handling as
    /// `system` run; only the timerfds are missing. Descriptors and wake-ups work as on `system`
    /// (real epoll and eventfd), so `runOnce()` waits for those, never for a timer.
    ///
    /// - Parameters:
    ///   - start: the monotonic time the loop starts at.
    ///   - wallClock: the wall-clock time it starts at (default 2026-01-01 00:00:00 UTC).
    case manual(start: Deadline = Deadline(nanoseconds: 0),
                wallClock: WallClockTime = WallClockTime(nanosecondsSinceEpoch: 1_767_225_600_000_000_000))
}
