// Deterministic time: a loop on `LoopClock.manual` whose clocks move only when a test moves them,
// firing timers through the same queues and handlers as the system clock.

extension EventLoop {
    /// Moves a manual clock forward by `duration`, firing on the way, in deadline order, every
    /// timer that falls due: the clocks stand at each timer's deadline while its handler runs, so
    /// timers its handler schedules inside the window fire too, at their own deadlines. Then runs
    /// the work and wake-ups other threads posted. Nothing sleeps; both clocks (monotonic and
    /// wall) move together.
    ///
    /// `loop.scheduleTimer(after: .seconds(10)) { banner.hide() }; loop.advanceTime(by: .seconds(10))`
    /// hides the banner at once, with `loop.now` 10 s later.
    public func advanceTime(by duration: Duration) {
        precondition(duration >= .zero, "EventLoop.advanceTime(by:): time does not go backwards")
        advanceTime(to: now + duration)
    }

    /// Moves a manual clock forward to `deadline` (see `advanceTime(by:)`).
    public func advanceTime(to deadline: Deadline) {
        assertInLoop()
        precondition(isManual, "EventLoop.advanceTime: only a loop on LoopClock.manual has time that tests move")
        precondition(!isClosed, "EventLoop.advanceTime: the loop is closed")
        let target = deadline.nanoseconds
        while !isClosed, let next = nextManualDeadline(), next <= target {
            moveManualClocks(to: max(next, manualNow))
            fireDueTimers()
        }
        if isClosed { return }
        moveManualClocks(to: max(target, manualNow))
        fireDueTimers()
        // Work posted from other threads (and the eventfd it made readable).
        try? runOnce(timeout: .zero)
    }

    /// Steps a manual wall clock to `time`, as `date -s` or NTP would: the `onWallClockChange(_:)`
    /// handlers run, then the wall-clock timers now due fire. The monotonic clock does not move.
    /// This is the code the system clock runs when its `CLOCK_REALTIME` timerfd reports `ECANCELED`.
    public func setWallClock(to time: WallClockTime) {
        assertInLoop()
        precondition(isManual, "EventLoop.setWallClock: only a loop on LoopClock.manual has a wall clock tests can step")
        precondition(!isClosed, "EventLoop.setWallClock: the loop is closed")
        manualWall = time.nanosecondsSinceEpoch
        wallClockStepped()
        fireDueTimers()
    }

    /// The earliest due time of either queue, on the monotonic clock (a wall-clock deadline is
    /// converted with the current offset between the two manual clocks).
    private func nextManualDeadline() -> Int64? {
        let wall = wallTimers.earliest.map { $0.saturatingAdd(manualNow &- manualWall) }
        switch (monotonicTimers.earliest, wall) {
        case let (m?, w?): return min(m, w)
        case let (m?, nil): return m
        case let (nil, w?): return w
        case (nil, nil): return nil
        }
    }

    private func moveManualClocks(to monotonic: Int64) {
        manualWall = manualWall.saturatingAdd(monotonic &- manualNow)
        manualNow = monotonic
    }
}
