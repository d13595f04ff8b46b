// The eventfd wake-up: how other threads reach the loop.
import Synchronization

/// A handle other threads use to wake an `EventLoop` and run work on it. `Sendable`: hand it to
/// decoder threads, the import worker, later socket threads.
///
/// Every call is non-blocking and cheap: at most one `write` to the loop's eventfd per loop
/// iteration however many threads call (wake-ups coalesce: ten `wake()`s before the loop runs
/// call its `onWake` handler once). Work and wake-ups run on the loop's thread, in the order
/// they were posted, before the loop waits again.
///
/// After the loop closes, calls do nothing and return `false` (the work is dropped).
public final class LoopWaker: Sendable {
    let channel: WakeChannel
    /// The loop-side handler `wake()` runs; nil for the loop's plain `waker`.
    let handlerID: Int?

    init(channel: WakeChannel, handlerID: Int?) {
        self.channel = channel
        self.handlerID = handlerID
    }

    deinit {
        if let handlerID { channel.retire(handlerID) }
    }

    /// Wakes the loop. For a waker from `makeWaker(onWake:)`, its handler runs once on the loop
    /// for all the `wake()`s made before the loop got to it.
    /// - Returns: false if the loop has closed.
    /// The corresponding C function is `write` to an eventfd (once per loop iteration at most).
    @discardableResult
    public func wake() -> Bool {
        channel.post(handlerID.map(WakeChannel.Item.wake) ?? .nothing)
    }

    /// Runs `work` on the loop's thread, after the work posted before it.
    /// - Returns: false if the loop has closed (`work` will not run).
    @discardableResult
    public func execute(_ work: @escaping @Sendable () -> Void) -> Bool {
        channel.post(.work(work))
    }

    /// Makes the loop's `run()` return once the work posted before this has run.
    /// - Returns: false if the loop has closed.
    @discardableResult
    public func requestStop() -> Bool {
        channel.post(.stop)
    }
}

/// The eventfd and what was posted through it, shared by the loop and its wakers: it lives (and
/// keeps the descriptor open) while any of them does, and the loop's `close()` closes the
/// descriptor under the lock, so a waker never writes to a closed or reused descriptor number.
final class WakeChannel: Sendable {
    enum Item: Sendable {
        case nothing
        case wake(Int)
        case work(@Sendable () -> Void)
        case stop
    }

    private struct State: Sendable {
        var fd: Int32
        /// The eventfd was written and the loop has not taken the items yet.
        var signalled = false
        var items: [Item] = []
        /// Handler ids with a `.wake` item queued (for coalescing).
        var wakesQueued: Set<Int> = []
        /// Handler ids whose wakers are gone.
        var retired: [Int] = []
    }

    private let state: Mutex<State>

    init(fd: Int32) { state = Mutex(State(fd: fd)) }

    deinit {
        state.withLock { if $0.fd >= 0 { Descriptor.close($0.fd) } }
    }

    /// The eventfd, for the loop's registration.
    var fileDescriptor: Int32 { state.withLock { $0.fd } }

    /// Queues `item` and makes the eventfd readable if it is not already. Any thread.
    func post(_ item: Item) -> Bool {
        state.withLock { state in
            guard state.fd >= 0 else { return false }
            switch item {
            case .nothing: break
            case let .wake(id): if state.wakesQueued.insert(id).inserted { state.items.append(item) }
            case .work, .stop: state.items.append(item)
            }
            if !state.signalled {
                state.signalled = true
                EventFd.signal(state.fd)
            }
            return true
        }
    }

    /// A waker with a handler went away; the loop drops the handler when it next drains.
    func retire(_ id: Int) {
        state.withLock { $0.retired.append(id) }
    }

    /// The loop's side: resets the eventfd and takes what was posted. Loop thread only.
    func drain() -> (items: [Item], retired: [Int]) {
        state.withLock { state in
            guard state.fd >= 0 else { return ([], []) }
            EventFd.reset(state.fd)
            state.signalled = false
            defer {
                state.items.removeAll()
                state.wakesQueued.removeAll()
                state.retired.removeAll()
            }
            return (state.items, state.retired)
        }
    }

    /// The loop closed: later posts return false; queued work is dropped.
    func close() {
        let dropped: [Item] = state.withLock { state in
            if state.fd >= 0 { Descriptor.close(state.fd) }
            state.fd = -1
            defer { state.items.removeAll() }
            return state.items
        }
        _ = dropped  // Released outside the lock: a closure's captures may run deinit code.
    }
}
