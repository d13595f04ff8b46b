// The error codes of POSIX file calls, and the one error type of this module.
#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#endif

/// A POSIX `errno` value. An open set: codes this module does not name still fit.
public struct Errno: RawRepresentable, Error, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static let notPermitted = Errno(rawValue: EPERM)
    public static let noSuchFile = Errno(rawValue: ENOENT)
    public static let interrupted = Errno(rawValue: EINTR)
    public static let ioError = Errno(rawValue: EIO)
    public static let noDevice = Errno(rawValue: ENXIO)
    public static let noSuchDevice = Errno(rawValue: ENODEV)
    public static let badFileDescriptor = Errno(rawValue: EBADF)
    public static let wouldBlock = Errno(rawValue: EWOULDBLOCK)
    public static let noMemory = Errno(rawValue: ENOMEM)
    public static let permissionDenied = Errno(rawValue: EACCES)
    public static let badAddress = Errno(rawValue: EFAULT)
    public static let busy = Errno(rawValue: EBUSY)
    public static let fileExists = Errno(rawValue: EEXIST)
    public static let notDirectory = Errno(rawValue: ENOTDIR)
    public static let isDirectory = Errno(rawValue: EISDIR)
    public static let invalidArgument = Errno(rawValue: EINVAL)
    public static let fileTooLarge = Errno(rawValue: EFBIG)
    public static let noSpace = Errno(rawValue: ENOSPC)
    public static let readOnlyFileSystem = Errno(rawValue: EROFS)
    public static let nameTooLong = Errno(rawValue: ENAMETOOLONG)
    public static let directoryNotEmpty = Errno(rawValue: ENOTEMPTY)
    public static let tooManySymbolicLinks = Errno(rawValue: ELOOP)
    public static let quotaExceeded = Errno(rawValue: EDQUOT)
    public static let noMedium = Errno(rawValue: ENOMEDIUM)
    public static let staleHandle = Errno(rawValue: ESTALE)
    public static let notSupported = Errno(rawValue: EOPNOTSUPP)

    /// The symbolic name (`"ENOSPC"`), or nil for codes this module does not name.
    public var name: String? { Self.names[rawValue] }

    /// `strerror` text and the symbolic name: `No space left on device (ENOSPC)`.
    public var description: String {
        let text = strerror(rawValue).map { String(cString: $0) } ?? "error \(rawValue)"
        return "\(text) (\(name ?? "errno \(rawValue)"))"
    }

    /// Whether the device is out of room (`ENOSPC`, `EDQUOT`, `EFBIG`).
    public var isOutOfSpace: Bool { self == .noSpace || self == .quotaExceeded || self == .fileTooLarge }

    private static let names: [Int32: String] = [
        EPERM: "EPERM", ENOENT: "ENOENT", EINTR: "EINTR", EIO: "EIO", ENXIO: "ENXIO", EBADF: "EBADF",
        EAGAIN: "EAGAIN", ENOMEM: "ENOMEM", EACCES: "EACCES", EFAULT: "EFAULT", EBUSY: "EBUSY", EEXIST: "EEXIST",
        ENOTDIR: "ENOTDIR", EISDIR: "EISDIR", EINVAL: "EINVAL", EFBIG: "EFBIG", ENOSPC: "ENOSPC", EROFS: "EROFS",
        ENAMETOOLONG: "ENAMETOOLONG", ENOTEMPTY: "ENOTEMPTY", ELOOP: "ELOOP", EDQUOT: "EDQUOT",
        ENOMEDIUM: "ENOMEDIUM", ESTALE: "ESTALE", EOPNOTSUPP: "EOPNOTSUPP", ENODEV: "ENODEV", EXDEV: "EXDEV",
    ]
}

/// A failed file operation: the call, the path it was about and the `errno` it reported.
///
/// `description` reads `write /var/lib/vitrine/staging.3/media/a.mp4: No space left on device (ENOSPC)`.
public struct FileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The C function, e.g. `"open"`, `"write"`, `"fsync"`, `"rename"`.
    public var operation: String
    /// The path the call was about (the first one, for two-path calls such as `rename`).
    public var path: String
    public var errno: Errno

    public init(operation: String, path: String, errno: Errno) {
        self.operation = operation; self.path = path; self.errno = errno
    }

    public var description: String { "\(operation) \(path): \(errno)" }
}

/// The single gateway between this module and libc: runs a call, retries it on `EINTR`, and turns
/// `-1` into a `FileError`. `EBADF` and `EFAULT` can only come from a bug here (the descriptors and
/// buffers are ours), so they stop the program, as swift-nio does.
enum Syscall {
    @discardableResult
    static func check(_ operation: String, _ path: String, _ body: () -> Int32) throws(FileError) -> Int32 {
        while true {
            let result = body()
            if result != -1 { return result }
            let code = currentErrno()
            if code == EINTR { continue }
            preconditionNotABug(code, operation, path)
            throw FileError(operation: operation, path: path, errno: Errno(rawValue: code))
        }
    }

    /// Like `check`, for calls that return a byte count (`read`, `write`).
    static func count(_ operation: String, _ path: String, _ body: () -> Int) throws(FileError) -> Int {
        while true {
            let result = body()
            if result >= 0 { return result }
            let code = currentErrno()
            if code == EINTR { continue }
            preconditionNotABug(code, operation, path)
            throw FileError(operation: operation, path: path, errno: Errno(rawValue: code))
        }
    }

    static func error(_ operation: String, _ path: String) -> FileError {
        FileError(operation: operation, path: path, errno: Errno(rawValue: currentErrno()))
    }

    private static func preconditionNotABug(_ code: Int32, _ operation: String, _ path: String) {
        precondition(code != EBADF && code != EFAULT, "\(operation) \(path): \(Errno(rawValue: code)); a bug in FileIO")
    }
}

/// The calling thread's `errno`.
func currentErrno() -> Int32 { errno }
