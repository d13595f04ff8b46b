// The single gateway between the bindings and C, as in swift-system's `Internals/Syscalls.swift`:
// every call goes through one function that asks the fault seam, retries EINTR and stops on bugs.

/// How a C function reports that it failed.
package enum FailureConvention: Sendable {
    /// `-1`, with the code in `errno` (POSIX calls: `open`, `read`, `fsync`, `poll`, `ioctl`).
    case minusOneSetsErrno
    /// Any negative result is `-errno` (alsa-lib, most of libinput).
    case negativeErrno
    /// libdrm's mix: `-1` means "look at `errno`" (cleared before the call; `EIO` if it is still 0,
    /// a libdrm failure that is no system call), any other negative result is `-errno`.
    case minusOneSetsErrnoOrNegativeErrno
}

/// Runs a C call that returns an integer, and turns a failure into its `Errno`.
///
/// In debug builds the fault seam is asked first (`FaultInjection`): an injected `.fail` is
/// reported as if the call had failed, an injected `.result` is returned as if it had succeeded,
/// and the call is not made. `EINTR` is retried here, and only here, unless `retryOnInterrupt` is
/// false (a `poll` that recomputes its timeout). `EBADF` and `EFAULT` can only come from a bug in
/// the binding (the descriptors and buffers are its own), so they stop the program, as swift-nio does.
///
/// - Parameters:
///   - call: the function and its subject, for the seam and the precondition's message.
///   - convention: how `body`'s result says it failed.
/// - Returns: the non-failing result, or the `errno` of the failure.
@inline(__always)
package func valueOrErrno<I: FixedWidthInteger>(
    _ call: @autoclosure () -> SystemCall, convention: FailureConvention = .minusOneSetsErrno,
    retryOnInterrupt: Bool = true, _ body: () -> I
) -> Result<I, Errno> {
    while true {
        let code: Errno
        #if DEBUG
        switch FaultInjection.fault(for: call()) {
        case .fail(let injected)?:
            if injected == .interrupted && retryOnInterrupt { continue }
            preconditionNotABug(injected, call())
            return .failure(injected)
        case .result(let value)?:
            return .success(I(truncatingIfNeeded: value))
        case nil:
            break
        }
        #endif
        switch convention {
        case .minusOneSetsErrno:
            let result = body()
            if result != -1 { return .success(result) }
            code = Errno.current
        case .negativeErrno:
            let result = body()
            if result >= 0 { return .success(result) }
            code = Errno(Int32(truncatingIfNeeded: 0 &- result))
        case .minusOneSetsErrnoOrNegativeErrno:
            Errno.current = Errno(0)
            let result = body()
            if result >= 0 { return .success(result) }
            if result == -1 {
                let current = Errno.current
                code = current.rawValue != 0 ? current : .ioError
            } else {
                code = Errno(Int32(truncatingIfNeeded: 0 &- result))
            }
        }
        if code == .interrupted && retryOnInterrupt { continue }
        preconditionNotABug(code, call())
        return .failure(code)
    }
}

/// Runs a C call that returns `NULL` on failure, and turns the failure into its `Errno`.
///
/// The seam, `EINTR` and the bug check work as in `valueOrErrno`; an injected `.result` is
/// ignored (there is no pointer to return), and the call runs.
///
/// - Parameters:
///   - reason: the code to report instead of `errno`, when the binding knows better (libinput
///     leaves `errno` at whatever its last log write set; its `open_restricted` saw the real one).
///   - unknown: the code when `errno` is 0 (the library gave no reason), e.g. `ENOMEM` or `ENODEV`.
@inline(__always)
package func pointerOrErrno<T>(
    _ call: @autoclosure () -> SystemCall, retryOnInterrupt: Bool = true, reason: () -> Errno? = { nil },
    unknown: Errno, _ body: () -> T?
) -> Result<T, Errno> {
    while true {
        #if DEBUG
        if case .fail(let injected)? = FaultInjection.fault(for: call()) {
            if injected == .interrupted && retryOnInterrupt { continue }
            preconditionNotABug(injected, call())
            return .failure(injected)
        }
        #endif
        Errno.current = Errno(0)
        if let result = body() { return .success(result) }
        let current = Errno.current
        let code = reason() ?? (current.rawValue != 0 ? current : unknown)
        if code == .interrupted && retryOnInterrupt { continue }
        preconditionNotABug(code, call())
        return .failure(code)
    }
}

/// Stops the program on `EBADF` and `EFAULT`: a descriptor or buffer the binding got wrong.
package func preconditionNotABug(_ code: Errno, _ call: @autoclosure () -> SystemCall) {
    precondition(code != .badFileDescriptor && code != .badAddress,
                 "\(call()): \(code); a bug in the binding that made this call")
}
