// Who the process is: its user and group IDs, and giving up root for a file owner's identity.
#if canImport(Glibc)
internal import Glibc
#endif

/// A failed call on the process itself: the C function and the `errno` it reported.
///
/// `description` reads `setuid(1000): Operation not permitted (EPERM)`.
public struct ProcessError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The C function with its argument, e.g. `"setuid(1000)"`.
    public var operation: String
    public var errno: Errno

    public init(operation: String, errno: Errno) {
        self.operation = operation; self.errno = errno
    }

    public var description: String { "\(operation): \(errno)" }
}

/// The process's user and group identity.
public enum ProcessIdentity {
    /// The real user ID (0 for root). The corresponding C function is `getuid`.
    public static var userID: UInt32 { UInt32(getuid()) }

    /// Gives up the current identity for `user` and `group` for good: no supplementary groups,
    /// then the group, then the user (in that order: once the user is not root, the groups can no
    /// longer change).
    /// - Throws: `ProcessError` from `setgroups` (`EPERM` when not root), `setgid` or `setuid`.
    /// The corresponding C functions are `setgroups(0, NULL)`, `setgid` and `setuid`.
    public static func become(user: UInt32, group: UInt32) throws(ProcessError) {
        try check("setgroups", "0") { setgroups(0, nil) }
        try check("setgid", "\(group)") { setgid(gid_t(group)) }
        try check("setuid", "\(user)") { setuid(uid_t(user)) }
    }

    private static func check(_ function: String, _ argument: String, _ body: () -> Int32) throws(ProcessError) {
        if case .failure(let errno) = valueOrErrno(SystemCall(function, argument), body) {
            throw ProcessError(operation: "\(function)(\(argument))", errno: errno)
        }
    }
}
