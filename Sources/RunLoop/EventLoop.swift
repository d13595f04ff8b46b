// The event loop: one thread, one epoll descriptor, every source of work registered on it.
import SystemSupport
internal import CRunLoop
#if canImport(Glibc)
internal import Glibc
#endif

/// An event loop on `epoll(7)`, confined to the thread that creates it.
///
/// Everything the thread waits for is one registration on one epoll descriptor: descriptors
/// (`register(_:for:_:)`: the DRM device for page flips, libinput, inotify, later sockets and a
/// udev monitor), timers (`scheduleTimer…`, on two timerfds), wake-ups from other threads
/// (`waker`, `makeWaker(onWake:)`, on an eventfd) and signals (`handleSignals(_:_:)`, on a
/// signalfd). `run()` sleeps in `epoll_wait` until one of them is ready, calls its handler, and
/// sleeps again: nothing on the loop's thread sleeps or polls otherwise, and an idle loop costs
/// no CPU.
///
/// **Timers.** One timerfd per clock carries the earliest deadline of a heap (`TimerQueue`), as in
/// swift-nio's `SelectorEpoll`, rather than one timerfd per timer: scheduling, moving and
/// cancelling a timer (an idle timeout moves on every touch) is then a heap operation plus at most
/// one `timerfd_settime`, the descriptor count stays fixed whatever the engine schedules, and the
/// heap, which decides which timer fires when, is plain Swift that the manual clock
/// (`LoopClock.manual`) drives in tests without any timerfd. The timerfds are armed with
/// `TFD_TIMER_ABSTIME` at the deadline itself, in nanoseconds, which `epoll_wait`'s millisecond
/// timeout could not carry (a 60 Hz virtual vblank would jitter by up to 1 ms). The
/// `CLOCK_REALTIME` one also has `TFD_TIMER_CANCEL_ON_SET`: when the wall clock is stepped its
/// read fails with `ECANCELED`, and the loop calls the `onWallClockChange(_:)` handlers, fires the
/// wall-clock timers now due and re-arms it.
///
/// **Thread.** The loop and its `LoopTimer`s, `IORegistration`s and `LoopSubscription`s are not
/// `Sendable`: create the loop on the thread that will run it, and use them there. Debug builds
/// check that each call comes from that thread (`assertInLoop()`). Other threads reach the loop
/// only through a `LoopWaker`.
///
/// **Ownership.** The loop owns its epoll, timer, event and signal descriptors and closes them in
/// `close()` (or `deinit`). Registered descriptors stay their owners'; cancel a registration
/// before closing its descriptor.
///
/// ```swift
/// let loop = try EventLoop()
/// let watch = try loop.register(watcher.fileDescriptor, for: .readable) { _ in handle(watcher.changes()) }
/// let vblank = loop.scheduleRepeatingTimer(every: .seconds(1) / 60) { tick in present(at: tick.deadline) }
/// let frames = loop.makeWaker { presenter.framesArrived() }   // hand `frames` to a decoder thread
/// try loop.handleSignals([.interrupt, .terminate]) { _ in loop.stop() }
/// try loop.run()
/// ```
public final class EventLoop {
    /// The thread the loop belongs to.
    private let thread: pthread_t
    private var epollFD: Int32
    /// nil on a manual clock.
    private(set) var monotonicTimerFD: Int32?
    private(set) var wallTimerFD: Int32?
    private var signalFD: Int32?
    private let channel: WakeChannel
    private let events: UnsafeMutablePointer<epoll_event>
    private static let eventCapacity = 64

    private var registrations: [Int32: IORegistration] = [:]
    private var nextRegistrationID: UInt32 = 1
    private var signalRegistration: IORegistration?
    private var signalHandlers: [Signal: (Signal) -> Void] = [:]
    private var wakeHandlers: [Int: () -> Void] = [:]
    private var nextWakeHandlerID = 1
    private var stopRequested = false
    private(set) var isClosed = false

    // Timers (EventLoop+Timers.swift).
    var monotonicTimers = TimerQueue()
    var wallTimers = TimerQueue()
    /// The deadline the monotonic timerfd is armed for (nil: disarmed or expired).
    var armedMonotonic: Int64?
    /// The time the wall-clock timerfd is armed for (nil: disarmed, expired or cancelled by a step).
    var armedWall: Int64?
    var wallClockObservers: [Int: () -> Void] = [:]
    var nextWallClockObserverID = 1

    // Manual clock (EventLoop+ManualClock.swift).
    let isManual: Bool
    var manualNow: Int64
    var manualWall: Int64

    /// Wakes the loop from other threads and runs work on it (no handler of its own).
    public let waker: LoopWaker

    /// Creates a loop belonging to the calling thread.
    ///
    /// - Parameter clock: `.system` for the kernel's clocks; `.manual()` for tests that advance time.
    /// - Throws: `RunLoopError` from `epoll_create1`, `eventfd` or `timerfd_create` (`EMFILE`,
    ///   `ENFILE`: out of descriptors; `ENOMEM`).
    /// The corresponding C functions are `epoll_create1`, `eventfd`, `timerfd_create` and `epoll_ctl`.
    public init(clock: LoopClock = .system) throws(RunLoopError) {
        thread = pthread_self()
        events = .allocate(capacity: Self.eventCapacity)
        switch clock {
        case .system:
            isManual = false
            manualNow = 0
            manualWall = 0
        case let .manual(start, wallClock):
            isManual = true
            manualNow = start.nanoseconds
            manualWall = wallClock.nanosecondsSinceEpoch
        }
        // Every descriptor is created before `self` is complete; on a failure the ones made are closed.
        var made: [Int32] = []
        do throws(RunLoopError) {
            epollFD = try Epoll.create()
            made.append(epollFD)
            let eventFD = try EventFd.create()
            made.append(eventFD)
            channel = WakeChannel(fd: eventFD)
            made.removeLast()  // The channel owns it now.
            if !isManual {
                monotonicTimerFD = try TimerFd.create(clock: CLOCK_MONOTONIC)
                made.append(monotonicTimerFD!)
                wallTimerFD = try TimerFd.create(clock: CLOCK_REALTIME)
                made.append(wallTimerFD!)
            }
        } catch {
            made.forEach(Descriptor.close)
            events.deallocate()
            throw error
        }
        waker = LoopWaker(channel: channel, handlerID: nil)

        // From here on `deinit` runs if a registration fails, and closes everything.
        try addInternal(channel.fileDescriptor) { [unowned self] _ in drainWakeChannel() }
        if let fd = monotonicTimerFD {
            try addInternal(fd) { [unowned self] _ in monotonicTimerFired() }
        }
        if let fd = wallTimerFD {
            try addInternal(fd) { [unowned self] _ in wallTimerFired() }
        }
    }

    deinit {
        close()
        events.deallocate()
    }

    // MARK: - Thread

    /// Whether the calling thread is the loop's.
    public var isInLoop: Bool { pthread_equal(thread, pthread_self()) != 0 }

    /// Stops the program, in debug builds, when called off the loop's thread. Every loop-confined
    /// call checks this; types the engine confines to the loop's thread can call it too.
    public func assertInLoop(file: StaticString = #fileID, line: UInt = #line) {
        assert(isInLoop, "called off the event loop's thread", file: file, line: line)
    }

    /// Stops the program, in every build, when called off the loop's thread.
    public func preconditionInLoop(file: StaticString = #fileID, line: UInt = #line) {
        precondition(isInLoop, "called off the event loop's thread", file: file, line: line)
    }

    // MARK: - Descriptors

    /// Watches `fileDescriptor` and calls `handler` on the loop's thread with what it is ready for.
    ///
    /// Adding a source of events (a socket, a udev monitor, the DRM device) is this one call.
    /// The watch is level-triggered: `handler` must read (or write) until the descriptor would
    /// block, else it is called again on the next iteration; on `.hangup` it should cancel.
    ///
    /// - Parameters:
    ///   - fileDescriptor: an open descriptor epoll can watch (a pipe, socket, character device,
    ///     inotify, eventfd, another epoll such as libinput's), not yet registered on this loop.
    ///     Non-blocking, so that the handler's reads cannot stall the loop.
    ///   - events: what to wait for, usually `.readable`.
    ///   - handler: called with the events that are ready (a subset of `events`, plus `hangup`/`error`).
    /// - Returns: the registration, to modify or cancel (the loop keeps it alive until then).
    /// - Throws: `RunLoopError` from `epoll_ctl(ADD)`: `EPERM` for a regular file or folder,
    ///   which epoll cannot watch; `ENOMEM`, `ENOSPC` (the user's epoll watch limit).
    /// The corresponding C function is `epoll_ctl(EPOLL_CTL_ADD)`.
    @discardableResult
    public func register(_ fileDescriptor: Int32, for events: IOEvents,
                         _ handler: @escaping (IOEvents) -> Void) throws(RunLoopError) -> IORegistration {
        assertInLoop()
        precondition(!isClosed, "EventLoop.register: the loop is closed")
        precondition(registrations[fileDescriptor] == nil,
                     "EventLoop.register: fd \(fileDescriptor) is already registered (cancel the earlier registration first)")
        let registration = IORegistration(loop: self, fileDescriptor: fileDescriptor, events: events,
                                          id: nextRegistrationID, handler: handler)
        nextRegistrationID = nextRegistrationID == .max ? 1 : nextRegistrationID + 1
        try Epoll.add(epoll: epollFD, fd: fileDescriptor, events: events.rawValue, data: registration.epollData)
        registrations[fileDescriptor] = registration
        return registration
    }

    /// The loop's own descriptors (eventfd, timerfds, signalfd) take the same path as any other.
    @discardableResult
    private func addInternal(_ fd: Int32, _ handler: @escaping (IOEvents) -> Void) throws(RunLoopError) -> IORegistration {
        try register(fd, for: .readable, handler)
    }

    func modify(_ registration: IORegistration, _ events: IOEvents) throws(RunLoopError) {
        assertInLoop()
        try Epoll.modify(epoll: epollFD, fd: registration.fileDescriptor, events: events.rawValue,
                         data: registration.epollData)
    }

    func deregister(_ registration: IORegistration) {
        assertInLoop()
        guard !isClosed, registrations[registration.fileDescriptor] === registration else { return }
        Epoll.remove(epoll: epollFD, fd: registration.fileDescriptor)
        registrations[registration.fileDescriptor] = nil
    }

    // MARK: - Running

    /// Runs until `stop()` (or a waker's `requestStop()`), then returns; it can be run again.
    ///
    /// - Throws: `RunLoopError` from `epoll_wait` or `timerfd_settime`; neither fails in normal
    ///   operation (both only with bugs, which stop the program instead).
    public func run() throws(RunLoopError) {
        preconditionInLoop()
        defer { stopRequested = false }
        while !stopRequested && !isClosed {
            try runOnce()
        }
    }

    /// Makes `run()` return after the current handler and the rest of this iteration.
    public func stop() {
        assertInLoop()
        stopRequested = true
    }

    /// One iteration: waits until something is ready or `timeout` passes, then calls the handlers
    /// of the ready descriptors and wake-ups, and of the timers now due (earliest first).
    ///
    /// For an existing loop that is not yet built on this one (call it with `timeout: .zero` once
    /// per pass to dispatch what is ready without waiting), and for tests.
    ///
    /// - Parameter timeout: the longest wait (rounded up to whole milliseconds); `nil` waits
    ///   until the next timer on a system clock, and until a descriptor or wake-up on a manual
    ///   clock (whose timers fire only through `advanceTime(by:)`). Never waits while a timer is
    ///   already due.
    /// - Throws: `RunLoopError` from `epoll_wait` or `timerfd_settime` (see `run()`).
    /// The corresponding C functions are `epoll_wait` and `timerfd_settime`.
    public func runOnce(timeout: Duration? = nil) throws(RunLoopError) {
        preconditionInLoop()
        precondition(!isClosed, "EventLoop.runOnce: the loop is closed")
        if !isManual { try armTimerFDs() }
        if isClosed { return }  // An observer of a clock step closed the loop.
        let wait = hasDueTimers() ? 0 : timeout.map(Self.milliseconds) ?? -1
        let count = try Epoll.wait(epoll: epollFD, events: events, capacity: Int32(Self.eventCapacity), timeout: wait)
        for index in 0..<count {
            let event = events[index]
            let fd = Int32(bitPattern: UInt32(truncatingIfNeeded: event.data.u64))
            let id = UInt32(truncatingIfNeeded: event.data.u64 >> 32)
            // Cancelled (or replaced) by an earlier handler of this iteration: skip.
            guard let registration = registrations[fd], registration.id == id,
                  let handler = registration.handler else { continue }
            let ready = IOEvents(rawValue: event.events).intersection(registration.events.union([.hangup, .error]))
            if !ready.isEmpty { handler(ready) }
            if isClosed { return }
        }
        fireDueTimers()
    }

    /// Milliseconds for `epoll_wait`, rounded up so that a wait never ends before `duration`.
    private static func milliseconds(_ duration: Duration) -> Int32 {
        let nanoseconds = max(duration.wholeNanoseconds, 0)
        return Int32(clamping: nanoseconds / 1_000_000 + (nanoseconds % 1_000_000 == 0 ? 0 : 1))
    }

    /// Closes the loop: cancels every registration, timer and subscription (releasing their
    /// handlers), makes wakers return false, and closes the loop's descriptors. Registered
    /// descriptors are left open for their owners. Doing it twice does nothing.
    /// The corresponding C function is `close`.
    public func close() {
        guard !isClosed else { return }
        isClosed = true
        // The epoll descriptor goes first: closing it ends every watch at once.
        Descriptor.close(epollFD)
        epollFD = -1
        for registration in registrations.values { registration.handler = nil }
        registrations.removeAll()
        for timer in monotonicTimers.removeAll() + wallTimers.removeAll() { timer.action = nil }
        signalHandlers.removeAll()
        wallClockObservers.removeAll()
        wakeHandlers.removeAll()
        for entry in subscriptions.values { entry.value?.invalidate() }
        subscriptions.removeAll()
        channel.close()
        for fd in [monotonicTimerFD, wallTimerFD, signalFD].compactMap({ $0 }) { Descriptor.close(fd) }
        monotonicTimerFD = nil
        wallTimerFD = nil
        signalFD = nil
    }

    /// Subscriptions handed out, so `close()` can mark them inactive.
    var subscriptions: [Int: Weak<LoopSubscription>] = [:]
    private var nextSubscriptionID = 0

    func subscription(_ onCancel: @escaping () -> Void) -> LoopSubscription {
        let id = nextSubscriptionID
        nextSubscriptionID += 1
        let subscription = LoopSubscription { [weak self] in
            self?.assertInLoop()
            self?.subscriptions[id] = nil
            onCancel()
        }
        subscriptions[id] = Weak(subscription)
        return subscription
    }

    // MARK: - Wake-ups

    /// A waker whose `wake()` runs `onWake` on the loop's thread, once for all the wake-ups made
    /// before the loop got to them: a decoder calls `wake()` after queueing a frame, and the
    /// presenter looks at its queues once.
    ///
    /// `onWake` is kept while the waker (any copy of the reference) lives, and until `close()`.
    public func makeWaker(onWake: @escaping () -> Void) -> LoopWaker {
        assertInLoop()
        let id = nextWakeHandlerID
        nextWakeHandlerID += 1
        if !isClosed { wakeHandlers[id] = onWake }
        return LoopWaker(channel: channel, handlerID: id)
    }

    private func drainWakeChannel() {
        let (items, retired) = channel.drain()
        for item in items {
            switch item {
            case .nothing: break
            case let .wake(id): wakeHandlers[id]?()
            case let .work(work): work()
            case .stop: stopRequested = true
            }
            if isClosed { return }
        }
        for id in retired { wakeHandlers[id] = nil }
    }

    // MARK: - Signals

    /// Calls `handler` on the loop's thread when one of `signals` arrives, read from a signalfd.
    ///
    /// The signals must already be blocked on this thread and on every other thread of the
    /// process (see `SignalMask`): call `SignalMask.block(_:)` on the main thread before any other
    /// thread starts. A signal that is not blocked stops the program here.
    ///
    /// - Parameters:
    ///   - signals: signals no other handler of this loop handles.
    ///   - handler: called once per delivery; several identical signals that arrive before the loop
    ///     reads them count once (the kernel does not queue standard signals).
    /// - Returns: the subscription; cancelling it stops reading these signals (they stay blocked
    ///   and pending).
    /// - Throws: `RunLoopError` from `signalfd` or `epoll_ctl` (`EMFILE`, `ENOMEM`).
    /// The corresponding C functions are `signalfd` and `read` of `struct signalfd_siginfo`.
    @discardableResult
    public func handleSignals(_ signals: [Signal], _ handler: @escaping (Signal) -> Void) throws(RunLoopError) -> LoopSubscription {
        assertInLoop()
        precondition(!isClosed, "EventLoop.handleSignals: the loop is closed")
        for signal in signals {
            precondition(SignalMask.isBlocked(signal),
                         "EventLoop.handleSignals: \(signal) is not blocked; call SignalMask.block(_:) on the main thread before other threads start")
            precondition(signalHandlers[signal] == nil, "EventLoop.handleSignals: \(signal) already has a handler")
        }
        let wanted = Array(signalHandlers.keys) + signals
        let fd = try SignalFd.set(signalFD ?? -1, signals: wanted.map(\.rawValue))
        if signalFD == nil {
            do throws(RunLoopError) {
                signalRegistration = try addInternal(fd) { [unowned self] _ in readSignals() }
            } catch {
                Descriptor.close(fd)
                throw error
            }
            signalFD = fd
        }
        for signal in signals { signalHandlers[signal] = handler }
        return subscription { [weak self] in self?.stopHandling(signals) }
    }

    private func stopHandling(_ signals: [Signal]) {
        guard let fd = signalFD else { return }
        for signal in signals { signalHandlers[signal] = nil }
        if signalHandlers.isEmpty {
            signalRegistration?.cancel()
            signalRegistration = nil
            Descriptor.close(fd)
            signalFD = nil
        } else {
            // Shrinking the set of an existing signalfd cannot fail (no allocation).
            _ = try? SignalFd.set(fd, signals: signalHandlers.keys.map(\.rawValue))
        }
    }

    private func readSignals() {
        guard let fd = signalFD else { return }
        let numbers: [Int32]
        do {
            numbers = try SignalFd.read(fd)
        } catch {
            preconditionFailure("\(error)")  // A non-blocking read of a signalfd fails only with a bug.
        }
        for number in numbers {
            let signal = Signal(rawValue: number)
            signalHandlers[signal]?(signal)
            if isClosed { return }
        }
    }
}

/// The loop belongs to its thread: other threads use a `LoopWaker`.
@available(*, unavailable)
extension EventLoop: Sendable {}

/// A weak reference, for the loop's list of subscriptions.
struct Weak<Object: AnyObject> {
    weak var value: Object?
    init(_ value: Object) { self.value = value }
}
