// The one error type of the RunLoop module.
// `Errno` comes from SystemSupport, re-exported so `import RunLoop` is enough to name it.
@_exported import SystemSupport

/// A failed event-loop call: the C function (with the descriptor it was about) and the `errno` it
/// reported.
///
/// Only the environment causes these: running out of descriptors (`EMFILE`, `ENFILE`) or memory
/// (`ENOMEM`) when the loop creates its epoll, timerfd, eventfd or signalfd descriptors, or a
/// descriptor that epoll cannot watch (`EPERM` for a regular file). Misuse (`EBADF`, `EFAULT`, a
/// descriptor registered twice) stops the program instead. In debug builds a test's `FaultPlan`
/// can make any of these calls fail (`SystemCall("epoll_ctl", "ADD, fd 9")`).
///
/// `description` reads `epoll_ctl(ADD, fd 9): Operation not permitted (EPERM)`.
public struct RunLoopError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The C function and its subject, e.g. `"epoll_create1"`, `"epoll_ctl(ADD, fd 9)"`.
    public var operation: String
    /// The code the call reported.
    public var errno: Errno

    public init(operation: String, errno: Errno) {
        self.operation = operation
        self.errno = errno
    }

    public var description: String { "\(operation): \(errno)" }
}
