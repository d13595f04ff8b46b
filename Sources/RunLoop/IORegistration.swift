// A descriptor watched by the loop: the handle to change what it waits for, or to stop.

/// A descriptor registered on an `EventLoop` with `register(_:for:_:)`.
///
/// The registration does not own the descriptor: whoever opened it (a `DirectoryWatcher`, an
/// `InputContext`, a socket) keeps it and closes it, and must `cancel()` the registration
/// *before* closing it. (A closed descriptor leaves epoll by itself, but its number can be reused
/// at once by the next `open`; cancelling after the close would then stop the wrong descriptor,
/// or crash on `EBADF`.) Confined to the loop's thread.
public final class IORegistration {
    /// The watched descriptor.
    public let fileDescriptor: Int32
    /// What the handler is called for (`hangup` and `error` come regardless).
    public private(set) var events: IOEvents
    /// Distinguishes this registration from an earlier one of the same descriptor number, whose
    /// events may still sit in the loop's buffer.
    let id: UInt32
    var handler: ((IOEvents) -> Void)?
    weak var loop: EventLoop?

    init(loop: EventLoop, fileDescriptor: Int32, events: IOEvents, id: UInt32, handler: @escaping (IOEvents) -> Void) {
        self.loop = loop
        self.fileDescriptor = fileDescriptor
        self.events = events
        self.id = id
        self.handler = handler
    }

    /// Whether the handler can still be called (not cancelled, loop not closed).
    public var isActive: Bool { handler != nil }

    /// epoll's `data` for this registration: the id in the high half, the descriptor in the low.
    var epollData: UInt64 { UInt64(id) << 32 | UInt64(UInt32(bitPattern: fileDescriptor)) }

    /// Waits for `events` from now on (e.g. add `writable` while output is queued, drop it after).
    /// - Throws: `RunLoopError` from `epoll_ctl(MOD)` (`ENOMEM`).
    /// The corresponding C function is `epoll_ctl(EPOLL_CTL_MOD)`.
    public func modify(_ events: IOEvents) throws(RunLoopError) {
        guard let loop, isActive else { preconditionFailure("IORegistration.modify: the registration was cancelled") }
        try loop.modify(self, events)
        self.events = events
    }

    /// Stops watching the descriptor (it is removed from epoll now, so it may be closed right
    /// after) and releases the handler. Doing it twice or after the loop closed does nothing.
    /// The corresponding C function is `epoll_ctl(EPOLL_CTL_DEL)`.
    public func cancel() {
        guard isActive else { return }
        loop?.deregister(self)
        handler = nil
    }
}

/// A registration belongs to its loop's thread.
@available(*, unavailable)
extension IORegistration: Sendable {}

/// A handler the loop calls for something other than a descriptor (signals, wall-clock steps):
/// the handle to remove it. Confined to the loop's thread.
public final class LoopSubscription {
    private var onCancel: (() -> Void)?

    init(onCancel: @escaping () -> Void) { self.onCancel = onCancel }

    /// Whether the handler is still installed.
    public var isActive: Bool { onCancel != nil }

    /// Removes the handler. Doing it twice or after the loop closed does nothing.
    public func cancel() {
        let cancel = onCancel
        onCancel = nil
        cancel?()
    }

    /// The loop closed: nothing left to remove.
    func invalidate() { onCancel = nil }
}

@available(*, unavailable)
extension LoopSubscription: Sendable {}
