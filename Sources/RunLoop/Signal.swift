// POSIX signals, and the calling thread's signal mask.
#if canImport(Glibc)
internal import Glibc
#endif

/// A POSIX signal number. An open set: the signals this module does not name still fit.
public struct Signal: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// `SIGHUP`: the controlling terminal went away; by convention, "reload".
    public static let hangup = Signal(rawValue: SIGHUP)
    /// `SIGINT`: Ctrl-C.
    public static let interrupt = Signal(rawValue: SIGINT)
    /// `SIGTERM`: asked to stop (systemd's `stop`, `kill`).
    public static let terminate = Signal(rawValue: SIGTERM)
    /// `SIGUSR1`.
    public static let user1 = Signal(rawValue: SIGUSR1)
    /// `SIGUSR2`.
    public static let user2 = Signal(rawValue: SIGUSR2)
    /// A write to a pipe or socket with no reader.
    public static let pipe = Signal(rawValue: SIGPIPE)

    /// `"SIGHUP"`, or `"signal 34"` for a number without a name here.
    public var description: String {
        switch rawValue {
        case SIGHUP: "SIGHUP"
        case SIGINT: "SIGINT"
        case SIGTERM: "SIGTERM"
        case SIGUSR1: "SIGUSR1"
        case SIGUSR2: "SIGUSR2"
        case SIGQUIT: "SIGQUIT"
        case SIGPIPE: "SIGPIPE"
        case SIGCHLD: "SIGCHLD"
        default: "signal \(rawValue)"
        }
    }
}

/// The calling thread's signal mask (`pthread_sigmask(3)`).
///
/// A signal that a `signalfd` is to read must be blocked in every thread of the process: the
/// kernel delivers a process-directed signal (`kill`, systemd's `SIGTERM`) to any one thread that
/// does not block it, where its default action (end the process, for `SIGINT`, `SIGTERM`,
/// `SIGHUP`) runs instead. There is no process-wide mask: each thread has its own, and a new
/// thread starts with a copy of its creator's. So block the signals on the main thread *before*
/// any other thread exists (before Foundation's `Thread`, Dispatch, or a decoder starts), and
/// every thread inherits the block.
///
/// The mask also survives `fork` and `exec`: a child process spawned from a thread with these
/// signals blocked starts with them blocked, unless the spawner resets its mask.
public enum SignalMask {
    /// Adds `signals` to the calling thread's mask (threads it starts afterwards inherit it).
    /// The corresponding C function is `pthread_sigmask(SIG_BLOCK)`.
    public static func block(_ signals: [Signal]) { change(SIG_BLOCK, signals) }

    /// Removes `signals` from the calling thread's mask. A blocked signal that is pending is
    /// delivered at once (and its default action may end the process).
    /// The corresponding C function is `pthread_sigmask(SIG_UNBLOCK)`.
    public static func unblock(_ signals: [Signal]) { change(SIG_UNBLOCK, signals) }

    /// Sets `signals` to be ignored by the whole process (their disposition, not the mask): a write to
    /// a closed pipe then fails with `EPIPE` instead of ending the process, for `.pipe`.
    /// The corresponding C function is `signal(_, SIG_IGN)`.
    public static func ignore(_ signals: [Signal]) {
        for signal in signals { _ = Glibc.signal(signal.rawValue, SIG_IGN) }
    }

    /// Whether `signal` is blocked on the calling thread.
    /// The corresponding C functions are `pthread_sigmask` and `sigismember`.
    public static func isBlocked(_ signal: Signal) -> Bool {
        var current = sigset_t()
        pthread_sigmask(SIG_BLOCK, nil, &current)
        return sigismember(&current, signal.rawValue) == 1
    }

    private static func change(_ how: Int32, _ signals: [Signal]) {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in signals { sigaddset(&set, signal.rawValue) }
        // Fails only with EINVAL for a bad `how`: a bug here.
        let code = pthread_sigmask(how, &set, nil)
        precondition(code == 0, "pthread_sigmask: error \(code)")
    }
}
