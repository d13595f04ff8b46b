// The one error type of the KMS module, and the one place where C return codes become it.
#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#endif
@_exported import SystemSupport

/// A failed DRM/KMS operation: which call failed and the `errno` it reported.
///
/// Every C call in this module goes through `DRMCall`, which fills in `operation` with the
/// C function's name (and sometimes its arguments) and `errno` with the kernel's error code.
/// Failures that are not system calls (no connected connector, a missing property) use the
/// closest `errno` (`ENODEV`, `ENOENT`, ...) and explain themselves in `detail`.
public struct DRMError: Error, CustomStringConvertible, Equatable, Sendable {
    /// The operation that failed, usually the C function's name, e.g. `"drmModeAtomicCommit"`.
    public var operation: String
    /// The error code, such as `.invalidArgument` (`EINVAL`) or `.busy` (`EBUSY`).
    public var errno: Errno
    /// An optional human explanation that replaces the generic `strerror` text.
    public var detail: String?

    /// Creates an error for `operation` that failed with `errno`.
    public init(operation: String, errno: Errno, detail: String? = nil) {
        self.operation = operation
        self.errno = errno
        self.detail = detail
    }

    /// Creates an error for `operation` that failed with the positive error code `errno` (`EINVAL`).
    public init(operation: String, errno: Int32, detail: String? = nil) {
        self.init(operation: operation, errno: Errno(errno), detail: detail)
    }

    /// The symbolic name of `errno` (`"EINVAL"`), or `nil` for codes without one.
    public var errnoName: String? { errno.name }

    /// One line: `drmModeAtomicCommit: Invalid argument (EINVAL)`, or with a detail
    /// `find a connected connector: no display is connected (…) (ENODEV)`.
    public var description: String {
        guard let detail else { return "\(operation): \(errno)" }
        return "\(operation): \(detail) (\(errno.symbol))"
    }
}

/// This module's side of the gateway (`valueOrErrno`, `pointerOrErrno` in SystemSupport): runs a
/// call, turns its result into a value or a `DRMError` named after the operation. `EINTR` is
/// retried there, `EBADF`/`EFAULT` stop the program there, and in debug builds a test's
/// `FaultPlan` sees each call as `SystemCall(function, subject)`, split from the operation text
/// (`"drmModeGetConnector(42)"` → `drmModeGetConnector`, `42`).
///
/// libdrm mixes two conventions: `drmIoctl` and libc return `-1` and set `errno`, while most
/// `drmMode*` functions return `-errno`. `check` accepts both: `errno` is cleared before the call,
/// a result of `-1` means "look at errno" (`EIO` if it is still 0), any other negative value is
/// `-errno`. (A `drmMode*` call that returns `-EPERM` also leaves `errno` at `EPERM`.)
enum DRMCall {
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
        switch valueOrErrno(SystemCall(operation: operation()), convention: .minusOneSetsErrnoOrNegativeErrno,
                            retryOnInterrupt: retryOnInterrupt, body) {
        case .success(let value): return value
        case .failure(let errno): throw DRMError(operation: operation(), errno: errno)
        }
    }

    /// Runs a call returning a pointer that is `NULL` on failure, with `errno` set.
    ///
    /// - Throws: `DRMError` with the call's `errno` (or `ENOMEM` if libdrm left it at 0).
    static func pointer<T>(
        _ operation: @autoclosure () -> String,
        _ body: () -> UnsafeMutablePointer<T>?
    ) throws(DRMError) -> UnsafeMutablePointer<T> {
        switch pointerOrErrno(SystemCall(operation: operation()), unknown: .noMemory, body) {
        case .success(let value): return value
        case .failure(let errno): throw DRMError(operation: operation(), errno: errno)
        }
    }

    /// Runs a call returning an opaque pointer that is `NULL` on failure, with `errno` set.
    static func pointer(
        _ operation: @autoclosure () -> String,
        _ body: () -> OpaquePointer?
    ) throws(DRMError) -> OpaquePointer {
        switch pointerOrErrno(SystemCall(operation: operation()), unknown: .noMemory, body) {
        case .success(let value): return value
        case .failure(let errno): throw DRMError(operation: operation(), errno: errno)
        }
    }
}

extension SystemCall {
    /// The call an operation text names: the C function up to the first `(` or space, and the rest
    /// (without the parentheses) as the subject. `"open /dev/dri/card0"` → `open`, `/dev/dri/card0`.
    init(operation: String) {
        guard let split = operation.firstIndex(where: { $0 == "(" || $0 == " " }) else {
            self.init(operation)
            return
        }
        var rest = operation[operation.index(after: split)...]
        if operation[split] == "(", rest.hasSuffix(")") { rest = rest.dropLast() }
        self.init(String(operation[..<split]), String(rest))
    }
}
