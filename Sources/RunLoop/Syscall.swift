// This module's side of the C-call gateway (`valueOrErrno` in SystemSupport): names each call for
// the fault seam and turns a failure into a `RunLoopError`. EINTR is retried there, and EBADF and
// EFAULT stop the program there, as for every binding.
import SystemSupport

enum Syscall {
    /// Runs a call that returns `-1` and sets `errno` on failure; retries `EINTR` unless told not to.
    ///
    /// - Returns: the call's result (a descriptor, a count or 0).
    /// - Throws: `RunLoopError` naming `call` for any code but `EINTR` (when retried), `EBADF` and `EFAULT`.
    @discardableResult
    @inline(__always)
    static func check<I: FixedWidthInteger>(_ call: @autoclosure () -> SystemCall, retryOnInterrupt: Bool = true,
                                            _ body: () -> I) throws(RunLoopError) -> I {
        switch valueOrErrno(call(), retryOnInterrupt: retryOnInterrupt, body) {
        case .success(let value): return value
        case .failure(let errno): throw RunLoopError(call(), errno: errno)
        }
    }

    /// Like `check`, for `read`/`write` on a non-blocking descriptor: `EAGAIN` (nothing to read,
    /// or no room) returns `nil`.
    @inline(__always)
    static func transfer(_ call: @autoclosure () -> SystemCall, _ body: () -> Int) throws(RunLoopError) -> Int? {
        switch valueOrErrno(call(), body) {
        case .success(let count): return count
        case .failure(.wouldBlock): return nil
        case .failure(let errno): throw RunLoopError(call(), errno: errno)
        }
    }
}

extension RunLoopError {
    /// The error of `call`: `epoll_ctl(ADD, fd 9)` from `SystemCall("epoll_ctl", "ADD, fd 9")`.
    init(_ call: SystemCall, errno: Errno) {
        self.init(operation: call.subject.map { "\(call.function)(\($0))" } ?? call.function, errno: errno)
    }
}
