// What stat(2) says about a file, in Swift terms.
#if canImport(Glibc)
internal import Glibc
#endif

/// The parts of `struct stat` the catalog library and the player need.
public struct FileStatus: Sendable, Equatable {
    public enum Kind: Sendable, Equatable { case regular, directory, symbolicLink, other }
    public var kind: Kind
    /// Size in bytes.
    public var size: Int64
    /// Permission bits (`st_mode & 0o7777`).
    public var permissions: UInt32
    /// The owning user and group IDs (`st_uid`, `st_gid`).
    public var owner: UInt32
    public var group: UInt32
    /// Device and inode: the file's identity.
    public var device: UInt64
    public var inode: UInt64
    /// Last status change (`st_ctim`), in nanoseconds since the epoch: changes when the file is
    /// written, renamed over or has its attributes changed.
    public var changeTime: Int64

    /// Whether it is a regular file (`S_ISREG`): not a folder, a device node or a FIFO, which
    /// could block a reader forever.
    public var isRegularFile: Bool { kind == .regular }

    init(_ st: stat) {
        switch st.st_mode & S_IFMT {
        case S_IFREG: kind = .regular
        case S_IFDIR: kind = .directory
        case S_IFLNK: kind = .symbolicLink
        default: kind = .other
        }
        size = Int64(st.st_size)
        permissions = UInt32(st.st_mode & 0o7777)
        owner = UInt32(st.st_uid)
        group = UInt32(st.st_gid)
        device = UInt64(st.st_dev)
        inode = UInt64(st.st_ino)
        changeTime = Int64(st.st_ctim.tv_sec) * 1_000_000_000 + Int64(st.st_ctim.tv_nsec)
    }
}
