import Glibc
@_exported import SystemSupport

/// What happened to an entry of a watched folder (inotify(7) event masks).
public enum DirectoryChange: Sendable, Equatable {
    /// `IN_CREATE` or `IN_MOVED_TO`: `name` appeared in the folder.
    case added(name: String)
    /// `IN_DELETE` or `IN_MOVED_FROM`: `name` left the folder.
    case removed(name: String)
    /// `IN_CLOSE_WRITE`: a file called `name` was written and closed.
    case written(name: String)
    /// `IN_DELETE_SELF`, `IN_MOVE_SELF` or `IN_IGNORED`: the folder itself went away; the watch is over.
    case folderGone
    /// `IN_Q_OVERFLOW`: events were lost; rescan the folder.
    case overflow
}

/// Errors from `DirectoryWatcher`, with the errno of the failing call.
public struct DirectoryWatchError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The C function that failed: `inotify_init1` or `inotify_add_watch`.
    public let function: String
    public let path: String
    public let errno: Errno
    /// `inotify_add_watch(/run/vitrine/media): No such file or directory (ENOENT)`.
    public var description: String { "\(function)(\(path)): \(errno)" }
}

/// Watches one folder with inotify(7), without blocking: `changes()` returns what happened since the
/// last call. Owns its inotify descriptor (closed on deinit). Not thread-safe: one owner thread.
///
/// Source: inotify(7); `inotify_init1(IN_NONBLOCK | IN_CLOEXEC)`, `inotify_add_watch`, `read` of
/// `struct inotify_event` records (each followed by `len` bytes of NUL-padded name).
public final class DirectoryWatcher {
    /// The watched folder.
    public let path: String
    /// The inotify descriptor, readable when events are waiting (for `poll(2)`).
    public let fileDescriptor: Int32
    private var buffer = [UInt8](repeating: 0, count: 16 * 1024)

    /// - Throws: `DirectoryWatchError` when inotify is unavailable or `path` cannot be watched
    ///   (ENOENT when it does not exist, ENOTDIR when it is not a folder).
    /// The corresponding C functions are `inotify_init1` and `inotify_add_watch`.
    public init(path: String) throws {
        self.path = path
        let fd: Int32
        switch valueOrErrno(SystemCall("inotify_init1", path), { inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC)) }) {
        case .success(let value): fd = value
        case .failure(let errno): throw DirectoryWatchError(function: "inotify_init1", path: path, errno: errno)
        }
        let mask = UInt32(IN_CREATE | IN_DELETE | IN_MOVED_TO | IN_MOVED_FROM | IN_CLOSE_WRITE
                          | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)
        if case .failure(let errno) = valueOrErrno(SystemCall("inotify_add_watch", path), { inotify_add_watch(fd, path, mask) }) {
            close(fd)
            throw DirectoryWatchError(function: "inotify_add_watch", path: path, errno: errno)
        }
        fileDescriptor = fd
    }

    deinit { close(fileDescriptor) }

    /// The changes queued since the last call, in order; empty when there are none. Never blocks.
    public func changes() -> [DirectoryChange] {
        var out: [DirectoryChange] = []
        while true {
            // EAGAIN: nothing more queued. Other errors cannot be acted on here; the next call tries again.
            let result = valueOrErrno(SystemCall("read", path)) {
                buffer.withUnsafeMutableBytes { read(fileDescriptor, $0.baseAddress, $0.count) }
            }
            guard case .success(let n) = result, n > 0 else { break }
            buffer.withUnsafeBytes { raw in
                var offset = 0
                let header = MemoryLayout<inotify_event>.size
                while offset + header <= n {
                    let mask = raw.load(fromByteOffset: offset + MemoryLayout<inotify_event>.offset(of: \.mask)!, as: UInt32.self)
                    let len = Int(raw.load(fromByteOffset: offset + MemoryLayout<inotify_event>.offset(of: \.len)!, as: UInt32.self))
                    let nameBytes = raw[(offset + header)..<min(n, offset + header + len)]
                    let name = String(decoding: nameBytes.prefix { $0 != 0 }, as: UTF8.self)
                    offset += header + len
                    if mask & UInt32(IN_Q_OVERFLOW) != 0 { out.append(.overflow); continue }
                    if mask & UInt32(IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED) != 0 { out.append(.folderGone); continue }
                    if mask & UInt32(IN_CREATE | IN_MOVED_TO) != 0 { out.append(.added(name: name)) }
                    if mask & UInt32(IN_DELETE | IN_MOVED_FROM) != 0 { out.append(.removed(name: name)) }
                    if mask & UInt32(IN_CLOSE_WRITE) != 0 { out.append(.written(name: name)) }
                }
            }
        }
        return out
    }
}
