// The one error type of the Touch module, and the one place where libinput's and libudev's
// return codes become it.
internal import CInput
internal import Glibc

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
    /// A positive `errno` value, for example `ENOENT` (2) for a device node that does not exist.
    public var code: Int32
    /// The device node, seat or device the operation was about, when there is one.
    public var subject: String?

    public init(operation: String, code: Int32, subject: String? = nil) {
        self.operation = operation
        self.code = code
        self.subject = subject
    }

    /// One line: `libinput_path_add_device("/dev/input/event9"): No such file or directory (errno 2)`.
    ///
    /// This is the only place the module turns codes into text (`strerror`).
    public var description: String {
        let call = subject.map { "\(operation)(\"\($0)\")" } ?? operation
        let text = strerror(code).map { String(cString: $0) } ?? "error"
        return "\(call): \(text) (errno \(code))"
    }
}

/// The single gateway between this module and C: runs a call, turns its result into a value or an
/// `InputError` named after the operation, and retries on `EINTR`.
///
/// `EBADF` and `EFAULT` can only come from a bug in this module (the descriptors and pointers are
/// ours), so they stop the program, as swift-nio does.
enum InputCall {
    #if DEBUG
    /// Test hook (debug builds only): return an errno to make the named operation fail without
    /// calling C, or `nil` to run it. Task-local, so a test's hook never reaches another test.
    @TaskLocal static var failureInjection: (@Sendable (String) -> Int32?)?
    #endif

    /// Runs a call that returns a non-negative value on success and `-errno` (or `-1` with
    /// `errno` set) on failure.
    ///
    /// - Returns: the call's non-negative result.
    /// - Throws: `InputError` named `operation`.
    @discardableResult
    static func check(_ operation: String, subject: String? = nil, _ body: () -> Int32) throws(InputError) -> Int32 {
        while true {
            try injectedFailure(operation, subject)
            setErrno(0)
            let result = body()
            if result >= 0 { return result }
            let current = currentErrno()
            let code = result == -1 ? (current != 0 ? current : EIO) : -result
            if code == EINTR { continue }
            preconditionNotABug(code, operation)
            throw InputError(operation: operation, code: code, subject: subject)
        }
    }

    /// Runs a call that returns `NULL` on failure.
    ///
    /// - Parameter reason: the errno to report, when the caller knows better than `errno` (our
    ///   `open_restricted`'s failure during this call). Otherwise `errno`, else `ENODEV`.
    /// - Throws: `InputError` named `operation`.
    static func pointer(_ operation: String, subject: String? = nil, reason: () -> Int32? = { nil },
                        _ body: () -> OpaquePointer?) throws(InputError) -> OpaquePointer {
        try injectedFailure(operation, subject)
        setErrno(0)
        if let result = body() { return result }
        let current = currentErrno()
        let code = reason() ?? (current != 0 ? current : ENODEV)
        preconditionNotABug(code, operation)
        throw InputError(operation: operation, code: code, subject: subject)
    }

    private static func injectedFailure(_ operation: String, _ subject: String?) throws(InputError) {
        #if DEBUG
        if let hook = failureInjection, let code = hook(operation) {
            throw InputError(operation: operation, code: code, subject: subject)
        }
        #endif
    }

    private static func preconditionNotABug(_ code: Int32, _ operation: String) {
        precondition(code != EBADF && code != EFAULT,
                     "\(operation): errno \(code); this is a bug in the Touch module")
    }

    static func currentErrno() -> Int32 { errno }
    static func setErrno(_ value: Int32) { errno = value }
}
