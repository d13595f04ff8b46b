// The one error type of the Touch module, and the one place where libinput's and libudev's
// return codes become it.
internal import CInput
internal import Glibc
@_exported import SystemSupport

/// A failed libinput or libudev call: which call failed and the `errno` it reported.
///
/// libinput reports most failures as a negative `errno` (`libinput_dispatch`), a `NULL` device
/// (`libinput_path_add_device`) or a bare `-1` (`libinput_udev_assign_seat`). Every call in this
/// module goes through `InputCall`, which turns all three into this error with a positive
/// `errno`: the one libinput returned, the one our `open_restricted` saw when opening the device
/// node failed, the one left in `errno`, or `ENODEV` when libinput gave no reason (it then says
/// why on stderr, for example "not tagged as input device").
public struct InputError: Error, CustomStringConvertible, Equatable, Sendable {
    /// The C function that failed, for example `"libinput_path_add_device"`.
    public var operation: String
    /// The error, for example `.noSuchFile` (`ENOENT`) for a device node that does not exist.
    public var errno: Errno
    /// The device node, seat or device the operation was about, when there is one.
    public var subject: String?

    public init(operation: String, errno: Errno, subject: String? = nil) {
        self.operation = operation
        self.errno = errno
        self.subject = subject
    }

    /// The same, with the positive C code (`ENOENT`).
    public init(operation: String, code: Int32, subject: String? = nil) {
        self.init(operation: operation, errno: Errno(code), subject: subject)
    }

    /// The positive C code, for example `ENOENT` (2).
    public var code: Int32 { errno.rawValue }

    /// One line: `libinput_path_add_device("/dev/input/event9"): No such file or directory (ENOENT)`.
    public var description: String {
        let call = subject.map { "\(operation)(\"\($0)\")" } ?? operation
        return "\(call): \(errno)"
    }
}

/// This module's side of the gateway (`valueOrErrno`, `pointerOrErrno` in SystemSupport): runs a
/// call, turns its result into a value or an `InputError` named after the operation. `EINTR` is
/// retried there, `EBADF`/`EFAULT` stop the program there, and in debug builds a test's
/// `FaultPlan` sees each call as `SystemCall(operation, subject)`.
enum InputCall {
    /// Runs a call that returns a non-negative value on success and `-errno` (or `-1` with
    /// `errno` set) on failure.
    ///
    /// - Returns: the call's non-negative result.
    /// - Throws: `InputError` named `operation`.
    @discardableResult
    static func check(_ operation: String, subject: String? = nil, _ body: () -> Int32) throws(InputError) -> Int32 {
        switch valueOrErrno(SystemCall(operation, subject), convention: .minusOneSetsErrnoOrNegativeErrno, body) {
        case .success(let value): return value
        case .failure(let errno): throw InputError(operation: operation, errno: errno, subject: subject)
        }
    }

    /// Runs a call that returns `NULL` on failure. Not retried on `EINTR`: libinput has done its
    /// own opening and closing by then.
    ///
    /// - Parameter reason: the errno to report, when the caller knows better than `errno` (our
    ///   `open_restricted`'s failure during this call). Otherwise `errno`, else `ENODEV`.
    /// - Throws: `InputError` named `operation`.
    static func pointer(_ operation: String, subject: String? = nil, reason: () -> Int32? = { nil },
                        _ body: () -> OpaquePointer?) throws(InputError) -> OpaquePointer {
        switch pointerOrErrno(SystemCall(operation, subject), retryOnInterrupt: false, reason: { reason().map { Errno($0) } },
                              unknown: .noSuchDevice, body) {
        case .success(let value): return value
        case .failure(let errno): throw InputError(operation: operation, errno: errno, subject: subject)
        }
    }

    static func currentErrno() -> Int32 { errno }
}
