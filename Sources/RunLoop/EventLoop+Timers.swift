// Timers: scheduling, firing in deadline order, and keeping the two timerfds armed at the
// earliest deadline of each clock. The manual clock runs the same code without the timerfds.
internal import CRunLoop
import SystemSupport

extension EventLoop {
    /// Now on `CLOCK_MONOTONIC` (on a manual clock: the time tests advanced to).
    /// The corresponding C function is `clock_gettime(CLOCK_MONOTONIC)`.
    public var now: Deadline {
        Deadline(nanoseconds: isManual ? manualNow : Int64(bitPattern: MonotonicClock.nanoseconds()))
    }

    /// Now on the wall clock, `CLOCK_REALTIME` (on a manual clock: the time tests set).
    /// The corresponding C function is `clock_gettime(CLOCK_REALTIME)`.
    public var wallClockNow: WallClockTime {
        WallClockTime(nanosecondsSinceEpoch: isManual ? manualWall : WallClock.nanosecondsSinceEpoch())
    }

    // MARK: - Scheduling

    /// Calls `handler` once on the loop's thread at `deadline` (at once, on the next iteration,
    /// if it has passed). Timers due at the same time fire in the order they were scheduled.
    /// - Returns: the timer, to cancel or move it.
    @discardableResult
    public func scheduleTimer(at deadline: Deadline, _ handler: @escaping () -> Void) -> LoopTimer {
        add(LoopTimer(loop: self, clock: .monotonic, due: deadline.nanoseconds, action: .once(handler)))
    }

    /// Calls `handler` once on the loop's thread `delay` from now (banner hide after 10 s, slate
    /// retry after 10 s, the importer's 2 s rescan).
    @discardableResult
    public func scheduleTimer(after delay: Duration, _ handler: @escaping () -> Void) -> LoopTimer {
        scheduleTimer(at: now + delay, handler)
    }

    /// Calls `handler` every `interval` on `CLOCK_MONOTONIC` (the headless output's virtual vblank).
    ///
    /// The n-th tick is due at `first + n × interval` (`now + n × interval` for n ≥ 1 without
    /// `first`), computed from the start each time (in
    /// `Duration`'s attoseconds, to the nearest nanosecond), never from when the previous handler ran, so ticks do not drift
    /// however late the loop gets to them. When the loop is later than a whole interval, the
    /// missed ticks are reported as one call with `expirations > 1` (as a timerfd's count does).
    ///
    /// - Parameters:
    ///   - interval: the period, more than zero.
    ///   - first: the due time of the first tick; `now + interval` when nil.
    @discardableResult
    public func scheduleRepeatingTimer(every interval: Duration, startingAt first: Deadline? = nil,
                                       _ handler: @escaping (TimerTick) -> Void) -> LoopTimer {
        precondition(interval > .zero, "EventLoop.scheduleRepeatingTimer: the interval must be more than zero")
        // Without `first`, the grid is anchored at now and its tick 1 comes first (so the n-th tick
        // is now + n × interval exactly, not a rounded first deadline plus (n − 1) intervals).
        let (anchor, firstTick) = first.map { ($0.nanoseconds, 0) } ?? (now.nanoseconds, 1)
        return add(LoopTimer(loop: self, clock: .monotonic, due: Self.tickDeadline(first: anchor, interval: interval, firstTick),
                             action: .repeating(first: anchor, interval: interval, ticks: firstTick, handler: handler)))
    }

    /// Calls `handler` once on the loop's thread when the wall clock reaches `time` (a schedule
    /// edge: "at 08:00"). A step of the wall clock is taken into account: stepped past `time`, the
    /// timer fires at once; stepped back, it waits for `time` again.
    /// The timerfd is `CLOCK_REALTIME` with `TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET`.
    @discardableResult
    public func scheduleTimer(atWallClock time: WallClockTime, _ handler: @escaping () -> Void) -> LoopTimer {
        add(LoopTimer(loop: self, clock: .wall, due: time.nanosecondsSinceEpoch, action: .once(handler)))
    }

    /// Calls `handler` on the loop's thread after each step of the wall clock (`settimeofday`,
    /// `clock_settime`, NTP stepping, `date -s`), before the wall-clock timers the step made due.
    /// Monotonic timers are not affected by steps.
    ///
    /// On the system clock this is the `ECANCELED` read of the `CLOCK_REALTIME` timerfd, which is
    /// kept armed (far in the future if no wall-clock timer is scheduled) while a handler is
    /// installed. On a manual clock it is `setWallClock(to:)`.
    @discardableResult
    public func onWallClockChange(_ handler: @escaping () -> Void) -> LoopSubscription {
        assertInLoop()
        precondition(!isClosed, "EventLoop.onWallClockChange: the loop is closed")
        let id = nextWallClockObserverID
        nextWallClockObserverID += 1
        wallClockObservers[id] = handler
        armedWall = nil  // Re-arm with CANCEL_ON_SET even when no wall-clock timer is due.
        return subscription { [weak self] in self?.wallClockObservers[id] = nil }
    }

    private func add(_ timer: LoopTimer) -> LoopTimer {
        assertInLoop()
        precondition(!isClosed, "EventLoop: scheduling a timer on a closed loop")
        schedule(timer)
        return timer
    }

    func schedule(_ timer: LoopTimer) {
        guard !isClosed else { return }
        switch timer.clock {
        case .monotonic: monotonicTimers.insert(timer)
        case .wall: wallTimers.insert(timer)
        }
    }

    func unschedule(_ timer: LoopTimer) {
        switch timer.clock {
        case .monotonic: monotonicTimers.remove(timer)
        case .wall: wallTimers.remove(timer)
        }
    }

    // MARK: - Firing

    /// Whether a timer is due now, so the loop must not wait.
    func hasDueTimers() -> Bool {
        if let due = monotonicTimers.earliest, due <= now.nanoseconds { return true }
        if let due = wallTimers.earliest, due <= wallClockNow.nanosecondsSinceEpoch { return true }
        return false
    }

    /// Fires the timers due now, earliest first: monotonic ones, then wall-clock ones. Only timers
    /// scheduled before this pass began fire in it; one that a handler schedules already due fires
    /// on the next iteration, which does not wait.
    func fireDueTimers() {
        fire(.monotonic, now: now.nanoseconds)
        fire(.wall, now: wallClockNow.nanosecondsSinceEpoch)
    }

    /// The queue is reached afresh for each timer (never held `inout` across a handler, which
    /// may schedule and cancel timers of its own).
    private func fire(_ clock: LoopTimer.Clock, now: Int64) {
        let mark = clock == .monotonic ? monotonicTimers.sequenceMark : wallTimers.sequenceMark
        while !isClosed, let timer = popDue(clock, at: now, scheduledBefore: mark) {
            switch timer.action {
            case let .once(handler):
                handler()
            case let .repeating(first, interval, ticks, handler):
                let latest = Self.latestTick(first: first, interval: interval, from: ticks, notAfter: now)
                timer.due = Self.tickDeadline(first: first, interval: interval, latest + 1)
                timer.action = .repeating(first: first, interval: interval, ticks: latest + 1, handler: handler)
                schedule(timer)  // Before the handler, so that it can cancel or move the timer.
                handler(TimerTick(deadline: Deadline(nanoseconds: Self.tickDeadline(first: first, interval: interval, latest)),
                                  expirations: latest - ticks + 1))
            case nil:
                break
            }
        }
    }

    private func popDue(_ clock: LoopTimer.Clock, at now: Int64, scheduledBefore mark: UInt64) -> LoopTimer? {
        switch clock {
        case .monotonic: monotonicTimers.popDue(at: now, scheduledBefore: mark)
        case .wall: wallTimers.popDue(at: now, scheduledBefore: mark)
        }
    }

    /// `first + index × interval`, to the nearest nanosecond. The product is exact in `Duration`'s
    /// attoseconds, so the only error is the interval's own rounding to attoseconds: for 1/60 s,
    /// under 1 ns after four months of ticks.
    static func tickDeadline(first: Int64, interval: Duration, _ index: Int) -> Int64 {
        first.saturatingAdd((interval * index).wholeNanoseconds)
    }

    /// The index of the latest tick due at `now`, counting from `from` (which is due).
    static func latestTick(first: Int64, interval: Duration, from: Int, notAfter now: Int64) -> Int {
        let step = max(interval.wholeNanoseconds, 1)
        // An estimate from integer nanoseconds, then corrected against the exact deadlines.
        var index = from + Int(max(0, now - tickDeadline(first: first, interval: interval, from)) / step)
        while tickDeadline(first: first, interval: interval, index + 1) <= now { index += 1 }
        while index > from && tickDeadline(first: first, interval: interval, index) > now { index -= 1 }
        return index
    }

    // MARK: - The timerfds

    /// Arms each timerfd at its clock's earliest deadline, if it is not armed early enough already.
    /// Runs the wall-clock observers when re-arming finds the clock stepped.
    /// A timerfd armed for a deadline that has since been cancelled is left alone: it wakes the
    /// loop once for nothing, which is cheaper than a `timerfd_settime` on every cancel.
    func armTimerFDs() throws(RunLoopError) {
        if let fd = monotonicTimerFD, let due = monotonicTimers.earliest, armedMonotonic.map({ due < $0 }) ?? true {
            try TimerFd.set(fd, absolute: due, cancelOnSet: false)
            armedMonotonic = due
        }
        if let fd = wallTimerFD {
            let due = wallTimers.earliest ?? (wallClockObservers.isEmpty ? nil : Self.farFuture)
            if let due, armedWall.map({ due < $0 }) ?? true {
                let stepped = try TimerFd.set(fd, absolute: due, cancelOnSet: true)
                armedWall = due
                // A step since the last read (a second step right after the first, as NTP may do
                // after the RTC at boot) is reported here instead of by the next read.
                if stepped { wallClockStepped() }
            }
        }
    }

    /// The deadline the wall-clock timerfd is armed at when only clock steps are watched: year 2200.
    static let farFuture: Int64 = 7_258_118_400 * 1_000_000_000

    func monotonicTimerFired() {
        guard let fd = monotonicTimerFD else { return }
        if case .expired = readTimer(fd) { armedMonotonic = nil }
    }

    func wallTimerFired() {
        guard let fd = wallTimerFD else { return }
        switch readTimer(fd) {
        case .none: break
        case .expired: armedWall = nil
        case .clockChanged:
            armedWall = nil
            wallClockStepped()
        }
    }

    /// The wall clock was stepped: tell the observers; the wall-clock timers it made due fire
    /// after them, in this iteration; the timerfd is re-armed before the next wait.
    func wallClockStepped() {
        for observer in wallClockObservers.sorted(by: { $0.key < $1.key }).map(\.value) {
            observer()
            if isClosed { return }
        }
    }

    private func readTimer(_ fd: Int32) -> TimerFd.Reading {
        do {
            return try TimerFd.read(fd)
        } catch {
            preconditionFailure("\(error)")  // A non-blocking read of a timerfd fails only with a bug.
        }
    }
}
