// A scheduled deadline on the loop: one-shot or repeating, on the monotonic or the wall clock.

/// One tick of a repeating timer.
public struct TimerTick: Sendable, Equatable {
    /// The tick's due time: `first + n × interval` for the n-th tick, whatever time the loop got
    /// to it, so a repeating timer does not drift (a 1/60 s vblank stays exact for months).
    public var deadline: Deadline
    /// How many ticks fell due since the last call: 1 normally, more when the loop was late (the
    /// ticks in between are not delivered one by one; `deadline` is the latest of them).
    public var expirations: Int
}

/// A timer scheduled on an `EventLoop`: a handle to cancel or move it.
///
/// Confined to the loop's thread, like the loop. The loop keeps a scheduled timer alive; dropping
/// the handle does not cancel it. `cancel()` releases the handler (and what it captured).
public final class LoopTimer {
    enum Clock { case monotonic, wall }

    enum Action {
        case once(() -> Void)
        /// The grid: tick n is due at `first + n × interval`; `ticks` is the index of the next tick due.
        case repeating(first: Int64, interval: Duration, ticks: Int, handler: (TimerTick) -> Void)
    }

    let clock: Clock
    /// nil once cancelled.
    var action: Action?
    /// The next due time, in nanoseconds on `clock`.
    var due: Int64
    /// The position in the loop's `TimerQueue`; nil when not queued.
    var heapIndex: Int?
    /// Scheduling order, for ties and for each pass's cut-off.
    var sequence: UInt64 = 0
    weak var loop: EventLoop?

    init(loop: EventLoop, clock: Clock, due: Int64, action: Action) {
        self.loop = loop
        self.clock = clock
        self.due = due
        self.action = action
    }

    /// Whether it will fire again: scheduled and neither fired (one-shot) nor cancelled.
    public var isScheduled: Bool { heapIndex != nil }

    /// When it fires next on `CLOCK_MONOTONIC`; nil for a wall-clock timer or when not scheduled.
    public var deadline: Deadline? { clock == .monotonic && isScheduled ? Deadline(nanoseconds: due) : nil }

    /// When it fires next on the wall clock; nil for a monotonic timer or when not scheduled.
    public var wallClockDeadline: WallClockTime? {
        clock == .wall && isScheduled ? WallClockTime(nanosecondsSinceEpoch: due) : nil
    }

    /// Stops it from firing and releases its handler. Doing it twice, after it fired, or after the
    /// loop closed, does nothing.
    public func cancel() {
        loop?.assertInLoop()
        loop?.unschedule(self)
        action = nil
    }

    /// Moves a monotonic timer (scheduled, or a one-shot that fired) to fire at `deadline` instead.
    /// A repeating timer's ticks then count from `deadline`. Cheap enough to call on every touch
    /// (an idle timeout): O(log n) and at most one `timerfd_settime`.
    public func reschedule(at deadline: Deadline) {
        precondition(clock == .monotonic, "LoopTimer.reschedule(at:): a wall-clock timer takes reschedule(atWallClock:)")
        move(to: deadline.nanoseconds)
    }

    /// Moves a monotonic timer to fire `delay` from now.
    public func reschedule(after delay: Duration) {
        precondition(clock == .monotonic, "LoopTimer.reschedule(after:): a wall-clock timer takes reschedule(atWallClock:)")
        guard let loop else { return }
        move(to: (loop.now + delay).nanoseconds)
    }

    /// Moves a wall-clock timer to fire at `time`.
    public func reschedule(atWallClock time: WallClockTime) {
        precondition(clock == .wall, "LoopTimer.reschedule(atWallClock:): a monotonic timer takes reschedule(at:)")
        move(to: time.nanosecondsSinceEpoch)
    }

    private func move(to due: Int64) {
        guard let loop else { return }
        loop.assertInLoop()
        precondition(action != nil, "LoopTimer.reschedule: the timer was cancelled")
        loop.unschedule(self)
        self.due = due
        if case let .repeating(_, interval, _, handler) = action {
            action = .repeating(first: due, interval: interval, ticks: 0, handler: handler)
        }
        loop.schedule(self)
    }
}

/// A timer belongs to its loop's thread.
@available(*, unavailable)
extension LoopTimer: Sendable {}
