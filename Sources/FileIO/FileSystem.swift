// Path-level POSIX calls: stat, links, folders, renames, free space.
#if canImport(Glibc)
internal import Glibc
#endif
internal import CFileIO

/// File-system calls on paths. Each goes through the gateway (`EINTR` retried, faults injectable in
/// debug builds) and throws `FileError` naming the call and path.
public enum FileSystem {
    /// The status of `path`, or nil when nothing is there (`ENOENT`, or `ENOTDIR` for a path through a file).
    /// - Parameter followLinks: `stat` when true, `lstat` (the link itself) when false.
    /// - Throws: `FileError` for other errors (`EACCES`, `EIO`, `ELOOP`).
    public static func status(_ path: String, followLinks: Bool) throws(FileError) -> FileStatus? {
        do {
            return try status(of: path, followLinks: followLinks)
        } catch where error.errno == .noSuchFile || error.errno == .notDirectory {
            return nil
        }
    }

    /// The status of `path`; nothing there is an error too.
    ///
    /// A reader that must not block on a FIFO or a device node checks `isRegularFile` first:
    /// `try FileSystem.status(of: path).isRegularFile`, and `size` for the length in bytes.
    /// - Parameter followLinks: `stat` when true (the default), `lstat` (the link itself) when false.
    /// - Throws: `FileError` from `stat` or `lstat`: `ENOENT` when nothing is there, `ENOTDIR` for a
    ///   path through a file, `EACCES`, `EIO`, `ELOOP`.
    /// The corresponding C functions are `stat` and `lstat`.
    public static func status(of path: String, followLinks: Bool = true) throws(FileError) -> FileStatus {
        var st = stat()
        try Syscall.check(followLinks ? "stat" : "lstat", path) { vt_stat(path, &st, followLinks ? 1 : 0) }
        return FileStatus(st)
    }

    /// The target text of the symbolic link at `path`. The corresponding C function is `readlink`.
    public static func readLink(_ path: String) throws(FileError) -> String {
        var buffer = [UInt8](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = try Syscall.check("readlink", path) {
            buffer.withUnsafeMutableBytes { raw in
                Glibc.readlink(path, raw.baseAddress!.assumingMemoryBound(to: CChar.self), raw.count - 1)
            }
        }
        return String(decoding: buffer[0..<n], as: UTF8.self)
    }

    /// The absolute path with every symbolic link, `.` and `..` resolved.
    /// The corresponding C function is `realpath`.
    public static func realPath(_ path: String) throws(FileError) -> String {
        let resolved = try Syscall.pointer("realpath", path) { Glibc.realpath(path, nil) }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Creates the folder `path`. The corresponding C function is `mkdir`.
    public static func makeDirectory(_ path: String, permissions: UInt32 = 0o755) throws(FileError) {
        try Syscall.check("mkdir", path) { Glibc.mkdir(path, mode_t(permissions)) }
    }

    /// Creates `path` and any missing parents (as `mkdir -p`); an existing folder is fine.
    public static func makeDirectories(_ path: String, permissions: UInt32 = 0o755) throws(FileError) {
        if let st = try status(path, followLinks: true) {
            if st.kind == .directory { return }
            throw FileError(operation: "mkdir", path: path, errno: .fileExists)
        }
        let parent = parentPath(path)
        if parent != path, !parent.isEmpty { try makeDirectories(parent, permissions: permissions) }
        do { try makeDirectory(path, permissions: permissions) } catch where error.errno == .fileExists {}
    }

    /// Renames `from` to `to`, atomically replacing `to` if it exists (a file or a link; a folder only
    /// if empty). The corresponding C function is `rename`.
    /// - Throws: `FileError` from `rename` naming `from` (`EXDEV` across file systems, `ENOENT`,
    ///   `EACCES`, `EIO`, `ENOSPC`).
    public static func rename(_ from: String, to: String) throws(FileError) {
        try Syscall.check("rename", from, target: to) { Glibc.rename(from, to) }
    }

    /// Creates a symbolic link at `path` whose target text is `target`.
    /// The corresponding C function is `symlink`.
    public static func symbolicLink(at path: String, to target: String) throws(FileError) {
        try Syscall.check("symlink", path, target: target) { Glibc.symlink(target, path) }
    }

    /// Makes `path` a new name of the existing file `existing` (a hard link: one inode, two names;
    /// `existing` is not followed if it is a symbolic link). Both must be on one file system.
    /// The corresponding C function is `link`.
    /// - Throws: `FileError` from `link` naming `existing` (`EXDEV` across file systems, `EEXIST`
    ///   when `path` exists, `ENOENT`, `EPERM` on a file system without hard links, `ENOSPC`, `EMLINK`).
    public static func hardLink(at path: String, to existing: String) throws(FileError) {
        try Syscall.check("link", existing, target: path) { Glibc.link(existing, path) }
    }

    /// Removes the file or link `path`. The corresponding C function is `unlink`.
    public static func unlink(_ path: String) throws(FileError) {
        try Syscall.check("unlink", path) { Glibc.unlink(path) }
    }

    /// Removes the empty folder `path`. The corresponding C function is `rmdir`.
    public static func removeDirectory(_ path: String) throws(FileError) {
        try Syscall.check("rmdir", path) { Glibc.rmdir(path) }
    }

    /// Removes `path` and, if it is a folder, everything in it, never following symbolic links.
    /// Nothing there is not an error.
    public static func removeTree(_ path: String) throws(FileError) {
        guard let st = try status(path, followLinks: false) else { return }
        if st.kind == .directory {
            for name in try contentsOfDirectory(path) { try removeTree(path + "/" + name) }
            try removeDirectory(path)
        } else {
            try unlink(path)
        }
    }

    /// The names in folder `path`, without `.` and `..`, in no particular order.
    /// The corresponding C functions are `opendir`, `readdir` and `closedir`.
    public static func contentsOfDirectory(_ path: String) throws(FileError) -> [String] {
        let dir = try Syscall.pointer("opendir", path) { Glibc.opendir(path) }
        defer { Glibc.closedir(dir) }
        var names: [String] = []
        while true {
            // NULL with errno unchanged is the end of the folder, so readdir cannot use the gateway.
            Errno.current = Errno(0)
            guard let entry = Glibc.readdir(dir) else {
                let code = Errno.current
                if code.rawValue != 0 { throw FileError(operation: "readdir", path: path, errno: code) }
                return names
            }
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
    }

    /// Flushes the folder `path` itself (its entries: new names, renames, removals) to the device.
    /// The corresponding C functions are `open(O_DIRECTORY)` and `fsync`.
    public static func syncDirectory(_ path: String) throws(FileError) {
        let dir = try FileDescriptor(opening: path, .readOnly, options: [.directory])
        try dir.sync()
        try dir.close()
    }

    /// Free and total space of the file system holding `path`.
    public struct Space: Sendable, Equatable {
        /// Bytes an unprivileged user may still write (`f_bavail × f_frsize`).
        public var available: Int64
        /// Size of the file system in bytes (`f_blocks × f_frsize`).
        public var total: Int64
    }

    /// The space on the file system holding `path`. The corresponding C function is `statvfs`.
    /// (A test's `FaultPlan.availableSpace` replaces `available`, in debug builds.)
    public static func space(_ path: String) throws(FileError) -> Space {
        var st = statvfs()
        try Syscall.check("statvfs", path) { vt_statvfs(path, &st) }
        var space = Space(available: Int64(st.f_bavail) * Int64(st.f_frsize), total: Int64(st.f_blocks) * Int64(st.f_frsize))
        #if DEBUG
        if let available = FaultInjection.current?.availableSpace { space.available = available }
        #endif
        return space
    }

    /// `path` without its last component (`"a/b/c"` → `"a/b"`, `"/a"` → `"/"`, `"a"` → `""`).
    public static func parentPath(_ path: String) -> String {
        var p = Substring(path)
        while p.count > 1, p.hasSuffix("/") { p.removeLast() }
        guard let slash = p.lastIndex(of: "/") else { return "" }
        if slash == p.startIndex { return "/" }
        return String(p[..<slash])
    }
}
