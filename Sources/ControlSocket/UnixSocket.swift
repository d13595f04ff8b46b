// The Unix-socket calls of the control socket, the only file of the module that touches C or
// pointers: socket, bind, listen, accept4, connect, send, recv, poll, SO_PEERCRED, lstat, chmod,
// lchown, unlink and getgrnam_r. Every call goes through SystemSupport's gateway (`valueOrErrno`:
// EINTR retried, EBADF and EFAULT stop the program, the fault seam in debug builds).
internal import CControlSocket
import SystemSupport
#if canImport(Glibc)
internal import Glibc
#endif

enum UnixSocket {
    /// The longest socket path, in bytes (`sizeof(sun_path) - 1`: 107 on Linux).
    static let pathCapacity = Int(vt_unix_path_capacity())

    /// Sleeps `milliseconds` (a `poll` on no descriptor; a signal ends it early).
    /// The corresponding C function is `poll`.
    static func sleep(milliseconds: Int32) {
        var ready: Int16 = 0
        _ = vt_poll_one(-1, 0, milliseconds, &ready)
    }

    /// What `lstat` finds at a socket path.
    enum FileAtPath: Equatable {
        case nothing
        /// A socket, with its device and inode (to tell our own file from a later one).
        case socket(device: UInt64, inode: UInt64)
        /// A regular file, folder, link…: never removed.
        case other
    }

    /// The credentials of the process at the other end, as they were when it connected.
    struct Credentials: Equatable {
        var pid: Int32
        var uid: UInt32
        var gid: UInt32
    }

    /// A new stream socket, non-blocking and close-on-exec.
    /// The corresponding C function is `socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)`.
    static func stream() -> Result<Int32, Errno> {
        valueOrErrno(SystemCall("socket", "AF_UNIX, SOCK_STREAM")) { vt_unix_stream_socket() }
    }

    /// The corresponding C function is `bind`.
    static func bind(_ fd: Int32, path: String) -> Result<Void, Errno> {
        valueOrErrno(SystemCall("bind", path)) { vt_unix_bind(fd, path) }.map { _ in }
    }

    /// The corresponding C function is `listen`.
    static func listen(_ fd: Int32, backlog: Int32) -> Result<Void, Errno> {
        valueOrErrno(SystemCall("listen", "fd \(fd)")) { Glibc.listen(fd, backlog) }.map { _ in }
    }

    /// Connects `fd` (non-blocking) to `path`: `EAGAIN` when the listener's backlog is full,
    /// `ECONNREFUSED` when nothing listens on a socket file, `ENOENT` when there is none.
    /// The corresponding C function is `connect`.
    static func connect(_ fd: Int32, path: String) -> Result<Void, Errno> {
        valueOrErrno(SystemCall("connect", path)) { vt_unix_connect(fd, path) }.map { _ in }
    }

    /// A waiting connection, non-blocking and close-on-exec; nil when none waits (`EAGAIN`).
    /// The corresponding C function is `accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)`.
    static func accept(_ fd: Int32) -> Result<Int32?, Errno> {
        switch valueOrErrno(SystemCall("accept4", "fd \(fd)"), { vt_accept(fd) }) {
        case .success(let client): return .success(client)
        case .failure(.wouldBlock): return .success(nil)
        // The peer gave up between the poll and the accept (accept(2): handle like EAGAIN).
        case .failure(let errno) where errno == .connectionAborted: return .success(nil)
        case .failure(let errno): return .failure(errno)
        }
    }

    /// The corresponding C function is `getsockopt(SOL_SOCKET, SO_PEERCRED)`.
    static func peerCredentials(_ fd: Int32) -> Credentials? {
        var pid: Int32 = 0, uid: UInt32 = 0, gid: UInt32 = 0
        guard case .success = valueOrErrno(SystemCall("getsockopt", "SO_PEERCRED, fd \(fd)"), {
            vt_peer_credentials(fd, &pid, &uid, &gid)
        }) else { return nil }
        return Credentials(pid: pid, uid: uid, gid: gid)
    }

    /// Writes what the socket takes of `bytes[offset...]` without blocking.
    /// - Returns: the count written, or nil when the socket has no room (`EAGAIN`).
    /// The corresponding C function is `send(fd, …, MSG_NOSIGNAL | MSG_DONTWAIT)`: a reader that
    /// went away is `EPIPE`, never `SIGPIPE`.
    static func send(_ fd: Int32, _ bytes: [UInt8], from offset: Int) -> Result<Int?, Errno> {
        guard offset < bytes.count else { return .success(0) }
        let result = bytes.withUnsafeBytes { buffer in
            valueOrErrno(SystemCall("send", "fd \(fd)")) {
                vt_send(fd, buffer.baseAddress! + offset, buffer.count - offset)
            }
        }
        switch result {
        case .success(let count): return .success(count)
        case .failure(.wouldBlock): return .success(nil)
        case .failure(let errno): return .failure(errno)
        }
    }

    /// Reads what is waiting, up to `buffer.count` bytes, without blocking.
    /// - Returns: the count read (0 at end of stream), or nil when nothing waits (`EAGAIN`).
    /// The corresponding C function is `recv(fd, …, MSG_DONTWAIT)`.
    static func receive(_ fd: Int32, into buffer: inout [UInt8], atMost limit: Int = .max) -> Result<Int?, Errno> {
        precondition(!buffer.isEmpty && limit >= 1, "UnixSocket.receive: an empty buffer")
        let result = buffer.withUnsafeMutableBytes { raw in
            valueOrErrno(SystemCall("recv", "fd \(fd)")) { vt_receive(fd, raw.baseAddress!, min(raw.count, limit)) }
        }
        switch result {
        case .success(let count): return .success(count)
        case .failure(.wouldBlock): return .success(nil)
        case .failure(let errno): return .failure(errno)
        }
    }

    /// Ends the writing half: the peer reads the end of the stream, replies still come.
    /// The corresponding C function is `shutdown(fd, SHUT_WR)`.
    static func shutdownWriting(_ fd: Int32) -> Result<Void, Errno> {
        valueOrErrno(SystemCall("shutdown", "SHUT_WR, fd \(fd)")) { vt_shutdown_write(fd) }.map { _ in }
    }

    /// Waits until `fd` is readable (or writable), at most `milliseconds` (-1: no limit).
    /// - Returns: whether it became ready (a hang-up or error counts: the next call tells which).
    /// The corresponding C function is `poll`.
    static func wait(_ fd: Int32, writable: Bool, milliseconds: Int32) -> Result<Bool, Errno> {
        var ready: Int16 = 0
        let events = writable ? vt_poll_out() : vt_poll_in()
        return valueOrErrno(SystemCall("poll", "fd \(fd)"), retryOnInterrupt: true) {
            vt_poll_one(fd, events, milliseconds, &ready)
        }.map { $0 > 0 }
    }

    /// What is at `path` (without following a symbolic link).
    /// The corresponding C function is `lstat`.
    static func fileAt(_ path: String) -> Result<FileAtPath, Errno> {
        var device: UInt64 = 0, inode: UInt64 = 0
        switch valueOrErrno(SystemCall("lstat", path), { vt_socket_file(path, &device, &inode) }) {
        case .success(1): return .success(.socket(device: device, inode: inode))
        case .success: return .success(.other)
        case .failure(.noSuchFile): return .success(.nothing)
        case .failure(let errno): return .failure(errno)
        }
    }

    /// The corresponding C function is `chmod`.
    static func chmod(_ path: String, mode: UInt32) -> Result<Void, Errno> {
        valueOrErrno(SystemCall("chmod", path)) { Glibc.chmod(path, mode_t(mode)) }.map { _ in }
    }

    /// Gives `path` (not what a link points to) the group `gid`, keeping its owner.
    /// The corresponding C function is `lchown(path, -1, gid)`.
    static func changeGroup(_ path: String, gid: UInt32) -> Result<Void, Errno> {
        valueOrErrno(SystemCall("lchown", path)) { Glibc.lchown(path, uid_t.max, gid_t(gid)) }.map { _ in }
    }

    /// The corresponding C function is `unlink`.
    static func unlink(_ path: String) -> Result<Void, Errno> {
        valueOrErrno(SystemCall("unlink", path)) { Glibc.unlink(path) }.map { _ in }
    }

    /// The id of the group `name`; nil when there is none.
    /// The corresponding C function is `getgrnam_r`.
    static func groupID(named name: String) -> Result<UInt32?, Errno> {
        var gid: UInt32 = 0
        return valueOrErrno(SystemCall("getgrnam_r", name), convention: .negativeErrno) { vt_group_id(name, &gid) }
            .map { $0 == 0 ? gid : nil }
    }

    /// Closes a descriptor this module owns; not retried on `EINTR` (Linux frees it even then).
    /// The corresponding C function is `close`.
    static func close(_ fd: Int32) {
        _ = valueOrErrno(SystemCall("close", "fd \(fd)"), retryOnInterrupt: false) { Glibc.close(fd) }
    }
}
