// An open file or folder: the descriptor, closed when the value goes away.
#if canImport(Glibc)
internal import Glibc
#endif
internal import CFileIO

/// An open file descriptor. Owns it: `deinit` closes it; `close()` closes it and reports the error.
///
/// Every call goes through the gateway (`EINTR` retried, faults injectable in debug builds) and throws
/// `FileError` naming the call and the path it was opened with. Not thread-safe: use it from one
/// thread at a time.
public final class FileDescriptor {
    /// How to open a file.
    public struct Options: OptionSet, Sendable {
        public let rawValue: Int32
        public init(rawValue: Int32) { self.rawValue = rawValue }
        /// `O_CREAT`.
        public static let create = Options(rawValue: O_CREAT)
        /// `O_EXCL`: with `create`, fail with `EEXIST` if the name exists.
        public static let exclusive = Options(rawValue: O_EXCL)
        /// `O_TRUNC`.
        public static let truncate = Options(rawValue: O_TRUNC)
        /// `O_NOFOLLOW`: fail with `ELOOP` if the last component is a symbolic link.
        public static let noFollow = Options(rawValue: O_NOFOLLOW)
        /// `O_DIRECTORY`: fail with `ENOTDIR` unless it is a folder.
        public static let directory = Options(rawValue: O_DIRECTORY)
    }

    public enum Access: Sendable { case readOnly, writeOnly, readWrite }

    /// The path the file was opened with (for error messages).
    public let path: String
    /// The descriptor; -1 once closed.
    private var fd: Int32

    /// Opens `path` (always with `O_CLOEXEC`).
    /// - Parameter permissions: the mode of a file that `create` makes (before the umask).
    /// - Throws: `FileError` from `open`.
    /// The corresponding C function is `open`.
    public init(opening path: String, _ access: Access, options: Options = [], permissions: UInt32 = 0o644) throws(FileError) {
        let flags: Int32
        switch access {
        case .readOnly: flags = O_RDONLY
        case .writeOnly: flags = O_WRONLY
        case .readWrite: flags = O_RDWR
        }
        fd = try Syscall.check("open", path) { Glibc.open(path, flags | options.rawValue | O_CLOEXEC, mode_t(permissions)) }
        self.path = path
    }

    deinit { if fd >= 0 { _ = Glibc.close(fd) } }

    /// Closes the descriptor now; later calls on this value are bugs. An error here (from NFS or a
    /// failing device) means earlier writes may be lost.
    /// The corresponding C function is `close` (not retried: the descriptor is gone either way).
    public func close() throws(FileError) {
        precondition(fd >= 0, "FileDescriptor.close: already closed")
        let descriptor = fd
        fd = -1
        try Syscall.check("close", path, retryOnInterrupt: false) { Glibc.close(descriptor) }
    }

    /// Reads until `count` bytes are in `buffer[0..<count]` or the file ends.
    /// - Returns: the bytes read; fewer than `count` only at the end of the file (0 at the end).
    /// - Throws: `FileError` from `read` (`EIO` from a failing or unplugged device).
    /// The corresponding C function is `read`.
    public func read(into buffer: inout [UInt8], count: Int) throws(FileError) -> Int {
        precondition(count <= buffer.count, "read: buffer too small")
        var done = 0
        while done < count {
            let n = try Syscall.check("read", path) {
                buffer.withUnsafeMutableBytes { raw in Glibc.read(fd, raw.baseAddress! + done, count - done) }
            }
            if n == 0 { break }
            done += n
        }
        return done
    }

    /// Writes `buffer[0..<count]` completely, continuing after short writes.
    /// - Throws: `FileError` from `write` (`ENOSPC` when the disk is full; a write that makes no
    ///   progress is reported as `ENOSPC`, as POSIX allows).
    /// The corresponding C function is `write`.
    public func write(_ buffer: [UInt8], count: Int) throws(FileError) {
        precondition(count <= buffer.count, "write: count beyond the buffer")
        var done = 0
        while done < count {
            let n = try Syscall.check("write", path) {
                buffer.withUnsafeBytes { raw in Glibc.write(fd, raw.baseAddress! + done, count - done) }
            }
            if n == 0 { throw FileError(operation: "write", path: path, errno: .noSpace) }
            done += n
        }
    }

    /// Flushes the file's data and metadata to the device. The corresponding C function is `fsync`.
    public func sync() throws(FileError) {
        try Syscall.check("fsync", path) { Glibc.fsync(fd) }
    }

    /// Starts writing back the dirty pages of `offset..<offset+length` without waiting, so that a later
    /// `sync()` has less to do. Errors are ignored (it is only a hint; `sync()` reports them).
    /// The corresponding C function is `sync_file_range(…, SYNC_FILE_RANGE_WRITE)`.
    public func startWriteback(offset: Int64, length: Int64) {
        _ = try? Syscall.check("sync_file_range", path) { vt_start_writeback(fd, offset, length) }
    }

    /// Tells the kernel the file will be read once from start to end (larger read-ahead).
    /// The corresponding C function is `posix_fadvise(…, POSIX_FADV_SEQUENTIAL)`.
    public func adviseSequential() {
        _ = Glibc.posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL)
    }

    /// The file's status. The corresponding C function is `fstat`.
    public func status() throws(FileError) -> FileStatus {
        var st = stat()
        try Syscall.check("fstat", path) { Glibc.fstat(fd, &st) }
        return FileStatus(st)
    }

    /// Drops this open file description's `flock` lock now. Closing is not enough while a copy of the
    /// descriptor lives on elsewhere: a child process between `fork` and `exec` (even with
    /// `O_CLOEXEC`) shares the description, and with it the lock.
    /// The corresponding C function is `flock` with `LOCK_UN`.
    public func unlock() throws(FileError) {
        try Syscall.check("flock", path) { vt_flock_unlock(fd) }
    }

    /// Takes `flock(LOCK_EX | LOCK_NB)`: returns false when another open file description holds it.
    /// The corresponding C function is `flock`.
    public func tryLockExclusive() throws(FileError) -> Bool {
        do {
            try Syscall.check("flock", path) { vt_flock_exclusive_nonblocking(fd) }
            return true
        } catch where error.errno == .wouldBlock {
            return false
        }
    }
}
