// The Linux calls of the loop, one caseless enum per kernel object: epoll(7), timerfd_create(2),
// eventfd(2), signalfd(2). Every call goes through `Syscall` (SystemSupport's gateway: EINTR,
// bugs, and the fault seam in debug builds). Descriptors are always created non-blocking and
// close-on-exec.
internal import CRunLoop
import SystemSupport
#if canImport(Glibc)
internal import Glibc
#endif

enum Epoll {
    static let readable = UInt32(EPOLLIN.rawValue)
    static let writable = UInt32(EPOLLOUT.rawValue)
    static let readHangup = UInt32(EPOLLRDHUP.rawValue)
    static let hangup = UInt32(EPOLLHUP.rawValue)
    static let error = UInt32(EPOLLERR.rawValue)

    /// The corresponding C function is `epoll_create1(EPOLL_CLOEXEC)`.
    static func create() throws(RunLoopError) -> Int32 {
        try Syscall.check(SystemCall("epoll_create1")) { epoll_create1(Int32(EPOLL_CLOEXEC)) }
    }

    /// Starts watching `fd` (level-triggered) for `events`; `data` comes back with each event.
    /// The corresponding C function is `epoll_ctl(EPOLL_CTL_ADD)`.
    static func add(epoll: Int32, fd: Int32, events: UInt32, data: UInt64) throws(RunLoopError) {
        var event = epoll_event()
        event.events = events
        event.data.u64 = data
        try Syscall.check(SystemCall("epoll_ctl", "ADD, fd \(fd)")) { epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event) }
    }

    /// The corresponding C function is `epoll_ctl(EPOLL_CTL_MOD)`.
    static func modify(epoll: Int32, fd: Int32, events: UInt32, data: UInt64) throws(RunLoopError) {
        var event = epoll_event()
        event.events = events
        event.data.u64 = data
        try Syscall.check(SystemCall("epoll_ctl", "MOD, fd \(fd)")) { epoll_ctl(epoll, EPOLL_CTL_MOD, fd, &event) }
    }

    /// Stops watching `fd`. It must still be open: `ENOENT` here means the descriptor was closed
    /// (which drops it from epoll) and its number reused, so a registration outlived its descriptor.
    /// The corresponding C function is `epoll_ctl(EPOLL_CTL_DEL)`.
    static func remove(epoll: Int32, fd: Int32) {
        var event = epoll_event()
        do {
            try Syscall.check(SystemCall("epoll_ctl", "DEL, fd \(fd)")) { epoll_ctl(epoll, EPOLL_CTL_DEL, fd, &event) }
        } catch {
            preconditionFailure("\(error): a descriptor was closed before its registration was cancelled")
        }
    }

    /// Waits for events, up to `timeout` milliseconds (-1: no limit, 0: do not wait).
    /// A signal that interrupts the wait (`EINTR`) counts as a wake-up with no events.
    ///
    /// - Returns: how many entries of `events` were filled in.
    /// The corresponding C function is `epoll_wait`.
    static func wait(epoll: Int32, events: UnsafeMutablePointer<epoll_event>, capacity: Int32,
                     timeout: Int32) throws(RunLoopError) -> Int {
        do throws(RunLoopError) {
            return Int(try Syscall.check(SystemCall("epoll_wait"), retryOnInterrupt: false) {
                epoll_wait(epoll, events, capacity, timeout)
            })
        } catch where error.errno == .interrupted {
            return 0
        }
    }
}

enum TimerFd {
    /// The corresponding C function is `timerfd_create(clock, TFD_NONBLOCK | TFD_CLOEXEC)`.
    static func create(clock: clockid_t) throws(RunLoopError) -> Int32 {
        try Syscall.check(SystemCall("timerfd_create", clock == CLOCK_REALTIME ? "CLOCK_REALTIME" : "CLOCK_MONOTONIC")) {
            timerfd_create(clock, Int32(TFD_NONBLOCK | TFD_CLOEXEC))
        }
    }

    /// Arms `fd` to expire once at the absolute time `nanoseconds` on its clock, or disarms it (`nil`).
    /// With `cancelOnSet` (CLOCK_REALTIME only) a step of the clock makes the next read fail with
    /// `ECANCELED`.
    ///
    /// - Returns: true when the clock was stepped since the timer was last armed or read: the call
    ///   then fails with `ECANCELED`, yet arms the timer all the same (timerfd_create(2), NOTES).
    /// The corresponding C function is `timerfd_settime(TFD_TIMER_ABSTIME [| TFD_TIMER_CANCEL_ON_SET])`.
    @discardableResult
    static func set(_ fd: Int32, absolute nanoseconds: Int64?, cancelOnSet: Bool) throws(RunLoopError) -> Bool {
        var value = itimerspec()
        if let nanoseconds {
            // 0 would disarm: the earliest expressible time is 1 ns.
            let clamped = max(nanoseconds, 1)
            value.it_value = timespec(tv_sec: Int(clamped / 1_000_000_000), tv_nsec: Int(clamped % 1_000_000_000))
        }
        let flags = Int32(TFD_TIMER_ABSTIME) | (cancelOnSet ? Int32(TFD_TIMER_CANCEL_ON_SET) : 0)
        do throws(RunLoopError) {
            try Syscall.check(SystemCall("timerfd_settime", "fd \(fd)")) { timerfd_settime(fd, flags, &value, nil) }
            return false
        } catch where error.errno == .canceled {
            return true
        }
    }

    /// What reading a timerfd found.
    enum Reading: Equatable {
        /// Nothing (the timer was re-armed after it became readable).
        case none
        /// It expired this many times since the last read.
        case expired(UInt64)
        /// The clock was stepped (a `TFD_TIMER_CANCEL_ON_SET` timer); the timer must be re-armed.
        case clockChanged
    }

    /// The corresponding C function is `read` of a `uint64_t` expiration count.
    static func read(_ fd: Int32) throws(RunLoopError) -> Reading {
        var count: UInt64 = 0
        let n: Int?
        do throws(RunLoopError) {
            n = try Syscall.transfer(SystemCall("read", "timerfd \(fd)")) { Glibc.read(fd, &count, MemoryLayout<UInt64>.size) }
        } catch where error.errno == .canceled {
            return .clockChanged
        }
        return n == MemoryLayout<UInt64>.size ? .expired(count) : .none
    }
}

enum EventFd {
    /// The corresponding C function is `eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)`.
    static func create() throws(RunLoopError) -> Int32 {
        try Syscall.check(SystemCall("eventfd")) { eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC)) }
    }

    /// Adds 1 to the counter, making `fd` readable. Cannot fail: the counter only overflows after
    /// 2⁶⁴ − 2 writes without a read, and the waker writes once per read.
    /// The corresponding C function is `write` of a `uint64_t`.
    static func signal(_ fd: Int32) {
        var one: UInt64 = 1
        transferCounter(SystemCall("write", "eventfd \(fd)")) { Glibc.write(fd, &one, MemoryLayout<UInt64>.size) }
    }

    /// Resets the counter to 0 (`fd` is no longer readable).
    /// The corresponding C function is `read` of a `uint64_t`.
    static func reset(_ fd: Int32) {
        var value: UInt64 = 0
        transferCounter(SystemCall("read", "eventfd \(fd)")) { Glibc.read(fd, &value, MemoryLayout<UInt64>.size) }
    }

    /// Reads or writes the counter; on our own non-blocking eventfd only a bug can make that fail.
    private static func transferCounter(_ call: @autoclosure () -> SystemCall, _ body: () -> Int) {
        do {
            _ = try Syscall.transfer(call(), body)
        } catch {
            preconditionFailure("\(error)")
        }
    }
}

enum SignalFd {
    /// Creates a signalfd for `signals` (`fd` = -1), or changes the set of an existing one.
    /// The corresponding C function is `signalfd(fd, mask, SFD_NONBLOCK | SFD_CLOEXEC)`.
    static func set(_ fd: Int32, signals: [Int32]) throws(RunLoopError) -> Int32 {
        var mask = sigset_t()
        sigemptyset(&mask)
        for signal in signals { sigaddset(&mask, signal) }
        return try Syscall.check(SystemCall("signalfd")) { signalfd(fd, &mask, Int32(SFD_NONBLOCK | SFD_CLOEXEC)) }
    }

    /// Takes the signals waiting for the calling thread and the process, oldest first.
    /// The corresponding C function is `read` of `struct signalfd_siginfo` records.
    static func read(_ fd: Int32) throws(RunLoopError) -> [Int32] {
        var signals: [Int32] = []
        var info = signalfd_siginfo()
        let size = MemoryLayout<signalfd_siginfo>.size
        while let n = try Syscall.transfer(SystemCall("read", "signalfd \(fd)"), { Glibc.read(fd, &info, size) }), n == size {
            signals.append(Int32(bitPattern: info.ssi_signo))
        }
        return signals
    }
}

enum Descriptor {
    /// Closes a descriptor this module owns. Not retried on `EINTR` (Linux frees the descriptor
    /// even then); no other error is possible for epoll, timer, event and signal descriptors
    /// (`EBADF` stops the program in the gateway).
    /// The corresponding C function is `close`.
    static func close(_ fd: Int32) {
        _ = try? Syscall.check(SystemCall("close", "fd \(fd)"), retryOnInterrupt: false) { Glibc.close(fd) }
    }
}
