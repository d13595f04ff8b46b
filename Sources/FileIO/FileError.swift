// The one error type of this module, and the gateway its calls go through.
// `Errno` comes from SystemSupport, re-exported so `import FileIO` is enough to name it.
@_exported import SystemSupport

/// A failed file operation: the call, the path it was about and the `errno` it reported.
///
/// `description` reads `write /var/lib/vitrine/staging.3/media/a.mp4: No space left on device (ENOSPC)`.
public struct FileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The C function, e.g. `"open"`, `"write"`, `"fsync"`, `"rename"`.
    public var operation: String
    /// The path the call was about (the first one, for two-path calls such as `rename`).
    public var path: String
    public var errno: Errno

    public init(operation: String, path: String, errno: Errno) {
        self.operation = operation; self.path = path; self.errno = errno
    }

    public var description: String { "\(operation) \(path): \(errno)" }
}

/// This module's side of the gateway (`valueOrErrno`): names each call for the fault seam and
/// turns a failure into a `FileError`. Every C call of FileIO goes through here.
enum Syscall {
    /// Runs a call that returns `-1` and sets `errno` on failure; retries `EINTR` unless told not to.
    /// - Parameter target: the second path of a two-path call (`rename`'s new name), for the seam.
    @discardableResult
    @inline(__always)
    static func check<I: FixedWidthInteger>(_ operation: String, _ path: String, target: String? = nil,
                                            retryOnInterrupt: Bool = true, _ body: () -> I) throws(FileError) -> I {
        switch valueOrErrno(SystemCall(operation, path, target: target), retryOnInterrupt: retryOnInterrupt, body) {
        case .success(let value): return value
        case .failure(let errno): throw FileError(operation: operation, path: path, errno: errno)
        }
    }

    /// Runs a call that returns `NULL` and sets `errno` on failure.
    @inline(__always)
    static func pointer<T>(_ operation: String, _ path: String, _ body: () -> T?) throws(FileError) -> T {
        switch pointerOrErrno(SystemCall(operation, path), unknown: .ioError, body) {
        case .success(let value): return value
        case .failure(let errno): throw FileError(operation: operation, path: path, errno: errno)
        }
    }
}
