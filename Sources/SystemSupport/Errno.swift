// The error codes of C calls, and the one place they become text.
#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#endif

/// A POSIX `errno` value, as a C call reports it (always positive: `-EINVAL` from alsa-lib or
/// libinput is `Errno.invalidArgument`). An open set: codes without a static member still fit.
///
/// `description` is the one errno-to-text renderer of the bindings: `strerror` text and the
/// symbolic name, `No space left on device (ENOSPC)`.
public struct Errno: RawRepresentable, Error, Hashable, Sendable, CustomStringConvertible {
    /// The C value, e.g. 28 for `ENOSPC`.
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }
    /// The same as `init(rawValue:)`.
    public init(_ rawValue: Int32) { self.rawValue = rawValue }

    public static let notPermitted = Errno(EPERM)
    public static let noSuchFile = Errno(ENOENT)
    public static let interrupted = Errno(EINTR)
    public static let ioError = Errno(EIO)
    public static let noDevice = Errno(ENXIO)
    public static let badFileDescriptor = Errno(EBADF)
    /// `EAGAIN`, which is `EWOULDBLOCK` on Linux.
    public static let wouldBlock = Errno(EWOULDBLOCK)
    public static let noMemory = Errno(ENOMEM)
    /// `EMFILE`: the process has as many descriptors open as its limit allows.
    public static let tooManyOpenFiles = Errno(EMFILE)
    public static let permissionDenied = Errno(EACCES)
    public static let badAddress = Errno(EFAULT)
    public static let busy = Errno(EBUSY)
    public static let fileExists = Errno(EEXIST)
    public static let crossDevice = Errno(EXDEV)
    public static let noSuchDevice = Errno(ENODEV)
    public static let notDirectory = Errno(ENOTDIR)
    public static let isDirectory = Errno(EISDIR)
    public static let invalidArgument = Errno(EINVAL)
    public static let notTerminal = Errno(ENOTTY)
    public static let fileTooLarge = Errno(EFBIG)
    public static let noSpace = Errno(ENOSPC)
    public static let readOnlyFileSystem = Errno(EROFS)
    public static let brokenPipe = Errno(EPIPE)
    public static let outOfRange = Errno(ERANGE)
    public static let nameTooLong = Errno(ENAMETOOLONG)
    public static let notImplemented = Errno(ENOSYS)
    public static let directoryNotEmpty = Errno(ENOTEMPTY)
    public static let tooManySymbolicLinks = Errno(ELOOP)
    /// `ESTRPIPE`: a PCM was suspended (alsa-lib).
    public static let streamPipe = Errno(ESTRPIPE)
    /// `EBADFD`: a PCM in a state the call cannot work in (alsa-lib).
    public static let badState = Errno(EBADFD)
    /// `EOPNOTSUPP`, which is `ENOTSUP` on Linux.
    public static let notSupported = Errno(EOPNOTSUPP)
    public static let timedOut = Errno(ETIMEDOUT)
    public static let staleHandle = Errno(ESTALE)
    public static let quotaExceeded = Errno(EDQUOT)
    public static let noMedium = Errno(ENOMEDIUM)
    /// `ECANCELED`: a `TFD_TIMER_CANCEL_ON_SET` timerfd saw a step of the wall clock.
    public static let canceled = Errno(ECANCELED)
    /// `ECONNREFUSED`: nothing listens on the socket (a Unix socket file left by a dead process).
    public static let connectionRefused = Errno(ECONNREFUSED)
    /// `ECONNRESET`: the peer closed with data of ours unread.
    public static let connectionReset = Errno(ECONNRESET)
    /// `ECONNABORTED`: a connection gave up before `accept` took it.
    public static let connectionAborted = Errno(ECONNABORTED)
    /// `EADDRINUSE`: the address (a socket path) is bound already.
    public static let addressInUse = Errno(EADDRINUSE)

    /// The calling thread's `errno`.
    package static var current: Errno {
        get { Errno(errno) }
        set { errno = newValue.rawValue }
    }

    /// The symbolic name (`"ENOSPC"`), or nil for codes this module does not name.
    public var name: String? { Self.names[rawValue] }

    /// `strerror` text and the symbolic name: `No space left on device (ENOSPC)`; a code without a
    /// name shows its number: `Unknown error 999 (errno 999)`.
    public var description: String { "\(message) (\(symbol))" }

    /// The symbolic name, or `errno <n>` for a code without one: `ENOSPC`, `errno 999`.
    public var symbol: String { name ?? "errno \(rawValue)" }

    /// The `strerror` text alone: `No space left on device`.
    public var message: String {
        strerror(rawValue).map { String(cString: $0) } ?? "error \(rawValue)"
    }

    /// Whether the device is out of room (`ENOSPC`, `EDQUOT`, `EFBIG`).
    public var isOutOfSpace: Bool { self == .noSpace || self == .quotaExceeded || self == .fileTooLarge }

    private static let names: [Int32: String] = [
        EPERM: "EPERM", ENOENT: "ENOENT", EINTR: "EINTR", EIO: "EIO", ENXIO: "ENXIO", EBADF: "EBADF",
        EAGAIN: "EAGAIN", ENOMEM: "ENOMEM", EMFILE: "EMFILE", EACCES: "EACCES", EFAULT: "EFAULT", EBUSY: "EBUSY", EEXIST: "EEXIST",
        EXDEV: "EXDEV", ENODEV: "ENODEV", ENOTDIR: "ENOTDIR", EISDIR: "EISDIR", EINVAL: "EINVAL", ENOTTY: "ENOTTY",
        EFBIG: "EFBIG", ENOSPC: "ENOSPC", EROFS: "EROFS", EPIPE: "EPIPE", ERANGE: "ERANGE",
        ENAMETOOLONG: "ENAMETOOLONG", ENOSYS: "ENOSYS", ENOTEMPTY: "ENOTEMPTY", ELOOP: "ELOOP",
        ESTRPIPE: "ESTRPIPE", EBADFD: "EBADFD", EOPNOTSUPP: "EOPNOTSUPP", ETIMEDOUT: "ETIMEDOUT",
        ESTALE: "ESTALE", EDQUOT: "EDQUOT", ENOMEDIUM: "ENOMEDIUM", ECANCELED: "ECANCELED",
        ECONNREFUSED: "ECONNREFUSED", ECONNRESET: "ECONNRESET", ECONNABORTED: "ECONNABORTED", EADDRINUSE: "EADDRINUSE",
    ]
}

extension Errno {
    /// Compares with a C constant, so `error.errno == EACCES` reads as it does in C.
    public static func == (lhs: Errno, rhs: Int32) -> Bool { lhs.rawValue == rhs }
    public static func == (lhs: Int32, rhs: Errno) -> Bool { lhs == rhs.rawValue }
    public static func != (lhs: Errno, rhs: Int32) -> Bool { lhs.rawValue != rhs }
    public static func != (lhs: Int32, rhs: Errno) -> Bool { lhs != rhs.rawValue }
}
