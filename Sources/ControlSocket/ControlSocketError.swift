// The one error type of the ControlSocket module: setting up the server, and the client's calls.
@_exported import SystemSupport

/// Why the control socket could not be set up, or a client's request could not be made.
///
/// `description` is one line naming the path: `another player is listening on
/// /run/vitrine/control.sock`, `bind /run/vitrine/control.sock: Permission denied (EACCES)`.
public enum ControlSocketError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A C call failed: the function and its subject (`bind /run/vitrine/control.sock`,
    /// `listen fd 7`, `send fd 9`) and the `errno` it reported.
    case system(operation: String, errno: Errno)
    /// The path is empty or longer than a Unix socket address holds (`limit`, 107 bytes on Linux).
    case pathTooLong(path: String, limit: Int)
    /// Something that is not a socket is at the path (a file, a folder, a link): it is left alone.
    case notASocket(path: String)
    /// A connect to the socket file at the path succeeded: a player is serving it. Two players
    /// never share a control socket; the stale file of a dead one is replaced instead.
    case anotherListener(path: String)
    /// No group of this name (`getgrnam_r` found none), for the socket file's group.
    case unknownGroup(String)
    /// Client: nothing listens at the path (`ENOENT`: no socket file; `ECONNREFUSED`: the file of
    /// a player that is gone). `vitrine ctl` exits 69 (EX_UNAVAILABLE) for this.
    case noListener(path: String, errno: Errno)
    /// Client: no whole reply line came within the timeout, in seconds.
    case timedOut(path: String, seconds: Double)
    /// Client: the server closed the connection before the reply came.
    case closedByServer(path: String)
    /// Client: a line from the server that is not a reply object (`reason` says what is wrong).
    case invalidReply(reason: String)

    public var description: String {
        switch self {
        case let .system(operation, errno): return "\(operation): \(errno)"
        case let .pathTooLong(path, limit):
            return path.isEmpty ? "the control socket path is empty"
                : "\(path): \(path.utf8.count) bytes, longer than the \(limit) a Unix socket path holds"
        case let .notASocket(path): return "\(path) exists and is not a socket; it is left alone"
        case let .anotherListener(path): return "another player is listening on \(path)"
        case let .unknownGroup(name): return "no group named \(name) (getgrnam_r)"
        case let .noListener(path, errno):
            return errno == .noSuchFile ? "nothing listens on \(path): no such socket (is the player running?)"
                : "nothing listens on \(path): \(errno.message) (is the player running?)"
        case let .timedOut(path, seconds): return "no reply from \(path) within \(seconds) s"
        case let .closedByServer(path): return "\(path) closed the connection before replying"
        case let .invalidReply(reason): return "invalid reply: \(reason)"
        }
    }
}
