// The single gateway between this module and the kernel: EINTR is retried here, EBADF and EFAULT
// stop the program here, every other failure becomes a `RunLoopError`.
import FileIO
#if canImport(Glibc)
internal import Glibc
#endif

enum Syscall {
    /// Runs a call that returns `-1` and sets `errno` on failure, retrying it on `EINTR`.
    ///
    /// - Returns: the call's result (a descriptor, a count or 0).
    /// - Throws: `RunLoopError` naming `operation` for any code but `EINTR`, `EBADF` and `EFAULT`.
    @discardableResult
    static func check(_ operation: @autoclosure () -> String, _ body: () -> Int32) throws(RunLoopError) -> Int32 {
        while true {
            let result = body()
            if result != -1 { return result }
            let code = errno
            if code == EINTR { continue }
            throw failure(operation(), code)
        }
    }

    /// Like `check`, for `read`/`write` on a non-blocking descriptor: `EAGAIN` (nothing to read,
    /// or no room) returns `nil`.
    static func transfer(_ operation: @autoclosure () -> String, _ body: () -> Int) throws(RunLoopError) -> Int? {
        while true {
            let result = body()
            if result >= 0 { return result }
            let code = errno
            if code == EINTR { continue }
            if code == EAGAIN || code == EWOULDBLOCK { return nil }
            throw failure(operation(), code)
        }
    }

    /// The error for `code`, after stopping the program if it can only be a bug: the descriptors
    /// and buffers handed to the kernel are this module's own (or a registration's, which must be
    /// cancelled before its descriptor closes).
    static func failure(_ operation: String, _ code: Int32) -> RunLoopError {
        precondition(code != EBADF, "\(operation): \(Errno(rawValue: code)); a descriptor was closed while still in use")
        precondition(code != EFAULT, "\(operation): \(Errno(rawValue: code)); a bug in RunLoop")
        return RunLoopError(operation: operation, errno: Errno(rawValue: code))
    }
}
