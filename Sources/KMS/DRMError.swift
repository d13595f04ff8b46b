// The one error type of the KMS module, and the one place where C return codes become it.
#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#endif

/// A failed DRM/KMS operation: which call failed and the `errno` it reported.
///
/// Every C call in this module goes through `DRMCall`, which fills in `operation` with the
/// C function's name (and sometimes its arguments) and `errno` with the kernel's error code.
/// Failures that are not system calls (no connected connector, a missing property) use the
/// closest `errno` (`ENODEV`, `ENOENT`, ...) and explain themselves in `detail`.
public struct DRMError: Error, CustomStringConvertible, Equatable, Sendable {
    /// The operation that failed, usually the C function's name, e.g. `"drmModeAtomicCommit"`.
    public var operation: String
    /// The error code, a positive `errno` value such as `EINVAL` (22) or `EBUSY` (16).
    public var errno: Int32
    /// An optional human explanation that replaces the generic `strerror` text.
    public var detail: String?

    /// Creates an error for `operation` that failed with the positive error code `errno`.
    public init(operation: String, errno: Int32, detail: String? = nil) {
        self.operation = operation
        self.errno = errno
        self.detail = detail
    }

    /// The symbolic name of `errno` (`"EINVAL"`), or `nil` for codes this module does not name.
    public var errnoName: String? { Self.names[errno] }

    /// One line: `drmModeAtomicCommit: Invalid argument (EINVAL, errno 22)`.
    public var description: String {
        let text = detail ?? Self.message(for: errno)
        let code = errnoName.map { "\($0), errno \(errno)" } ?? "errno \(errno)"
        return "\(operation): \(text) (\(code))"
    }

    /// `strerror(code)` as a Swift string.
    static func message(for code: Int32) -> String {
        guard let text = strerror(code) else { return "error \(code)" }
        return String(cString: text)
    }

    private static let names: [Int32: String] = [
        EPERM: "EPERM", ENOENT: "ENOENT", EINTR: "EINTR", EIO: "EIO", ENXIO: "ENXIO",
        EBADF: "EBADF", EAGAIN: "EAGAIN", ENOMEM: "ENOMEM", EACCES: "EACCES", EFAULT: "EFAULT",
        EBUSY: "EBUSY", EEXIST: "EEXIST", ENODEV: "ENODEV", EINVAL: "EINVAL", ENOSPC: "ENOSPC",
        ERANGE: "ERANGE", ENOSYS: "ENOSYS", EOPNOTSUPP: "EOPNOTSUPP", ETIMEDOUT: "ETIMEDOUT",
        ENOTTY: "ENOTTY",
    ]
}

/// The single gateway between this module and C: runs a call, turns its result into a value
/// or a `DRMError` named after the operation, and retries on `EINTR`.
///
/// libdrm mixes two conventions: `drmIoctl` and libc return `-1` and set `errno`, while most
/// `drmMode*` functions return `-errno`. `check` accepts both: `errno` is cleared before the call,
/// a result of `-1` means "look at errno" (`EIO` if it is still 0), any other negative value is
/// `-errno`. (A `drmMode*` call that returns `-EPERM` also leaves `errno` at `EPERM`.)
/// `EBADF` and `EFAULT` can only come from a bug in this module (the descriptor and the pointers
/// are ours), so they stop the program, as swift-nio does.
enum DRMCall {
    #if DEBUG
    /// Test hook (debug builds only): return an errno to make the named operation fail
    /// without calling C, or `nil` to run it.
    nonisolated(unsafe) static var failureInjection: (@Sendable (String) -> Int32?)?
    #endif

    /// Runs a call returning an `Int32` status (`0`/non-negative = success).
    ///
    /// - Returns: the call's non-negative result (a count, a file descriptor, or 0).
    /// - Throws: `DRMError(operation:errno:)` when the result is negative.
    @discardableResult
    static func check(
        _ operation: @autoclosure () -> String,
        retryOnInterrupt: Bool = true,
        _ body: () -> Int32
    ) throws(DRMError) -> Int32 {
        while true {
            #if DEBUG
            if let hook = failureInjection, let code = hook(operation()) {
                throw DRMError(operation: operation(), errno: code)
            }
            #endif
            Self.setErrno(0)
            let result = body()
            if result >= 0 { return result }
            let current = Self.currentErrno()
            // -1 with errno 0: a libdrm failure that is not a system call (drmHandleEvent's short read).
            let code = result == -1 ? (current != 0 ? current : EIO) : -result
            if code == EINTR && retryOnInterrupt { continue }
            Self.preconditionNotABug(code, operation())
            throw DRMError(operation: operation(), errno: code)
        }
    }

    /// Runs a call returning a pointer that is `NULL` on failure, with `errno` set.
    ///
    /// - Throws: `DRMError` with the call's `errno` (or `ENOMEM` if libdrm left it at 0).
    static func pointer<T>(
        _ operation: @autoclosure () -> String,
        _ body: () -> UnsafeMutablePointer<T>?
    ) throws(DRMError) -> UnsafeMutablePointer<T> {
        while true {
            #if DEBUG
            if let hook = failureInjection, let code = hook(operation()) {
                throw DRMError(operation: operation(), errno: code)
            }
            #endif
            Self.setErrno(0)
            if let result = body() { return result }
            let current = Self.currentErrno()
            let code = current != 0 ? current : ENOMEM
            if code == EINTR { continue }
            Self.preconditionNotABug(code, operation())
            throw DRMError(operation: operation(), errno: code)
        }
    }

    /// Runs a call returning an opaque pointer that is `NULL` on failure, with `errno` set.
    static func pointer(
        _ operation: @autoclosure () -> String,
        _ body: () -> OpaquePointer?
    ) throws(DRMError) -> OpaquePointer {
        let result = try pointer(operation()) { () -> UnsafeMutablePointer<UInt8>? in
            body().map { UnsafeMutablePointer<UInt8>($0) }
        }
        return OpaquePointer(result)
    }

    private static func preconditionNotABug(_ code: Int32, _ operation: String) {
        precondition(code != EBADF && code != EFAULT,
                     "\(operation): \(DRMError.message(for: code)); this is a bug in the KMS module")
    }

    private static func currentErrno() -> Int32 { errno }
    private static func setErrno(_ value: Int32) { errno = value }
}
