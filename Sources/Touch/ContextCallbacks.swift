// What libinput calls back into: `open_restricted` / `close_restricted` (`struct libinput_interface`)
// to open /dev/input/event* nodes, and the log handler. We run as root or a user in the `input`
// group, with no logind session to hand out descriptors, so the callbacks call open(2) directly.
internal import CInput
internal import Glibc

/// How important a libinput log message is (`enum libinput_log_priority`). An open set.
public struct InputLogPriority: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The `enum libinput_log_priority` value.
    public var rawValue: UInt32

    public init(rawValue: UInt32) { self.rawValue = rawValue }
    init(_ priority: libinput_log_priority) { self.rawValue = priority.rawValue }

    /// Device probing details, quirks applied.
    public static let debug = InputLogPriority(LIBINPUT_LOG_PRIORITY_DEBUG)
    /// Notable changes.
    public static let info = InputLogPriority(LIBINPUT_LOG_PRIORITY_INFO)
    /// Failures: a device it could not open or use, a kernel bug, a client bug. libinput's default level.
    public static let error = InputLogPriority(LIBINPUT_LOG_PRIORITY_ERROR)

    public static func < (a: InputLogPriority, b: InputLogPriority) -> Bool { a.rawValue < b.rawValue }

    /// `"debug"`, `"info"`, `"error"`, or `"priority N"`.
    public var description: String {
        switch self {
        case .debug: "debug"
        case .info: "info"
        case .error: "error"
        default: "priority \(rawValue)"
        }
    }
}

/// Receives libinput's log messages, one line each without the trailing newline.
public typealias InputLogHandler = (_ priority: InputLogPriority, _ message: String) -> Void

/// The user data behind a context: remembers why the last open failed, so an `InputError` can say
/// `ENOENT` or `EACCES` where libinput only returns `NULL`, and holds the log handler.
///
/// Owned by its `InputContext`, which destroys the libinput context before releasing it.
/// Used on the context's thread only, from inside libinput calls.
final class ContextCallbacks {
    /// The positive `errno` of the last failed open, with the path; `nil` after a successful one.
    var lastFailure: (path: String, code: Int32)?
    /// Where libinput's messages go; `nil` leaves libinput's own handler (stderr).
    let log: InputLogHandler?

    init(log: InputLogHandler?) { self.log = log }

    /// The `user_data` pointer libinput hands back. Unretained: the context keeps this object alive
    /// for as long as the libinput context lives.
    var userData: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    static func from(_ userData: UnsafeMutableRawPointer?) -> ContextCallbacks? {
        userData.map { Unmanaged<ContextCallbacks>.fromOpaque($0).takeUnretainedValue() }
    }

    /// The interface, allocated once and never freed: libinput keeps the pointer, not a copy.
    nonisolated(unsafe) static let interface: UnsafePointer<libinput_interface> = {
        let pointer = UnsafeMutablePointer<libinput_interface>.allocate(capacity: 1)
        pointer.initialize(to: libinput_interface(
            open_restricted: { path, flags, userData in ContextCallbacks.open(path, flags, userData) },
            close_restricted: { fd, _ in _ = Glibc.close(fd) }))
        return UnsafePointer(pointer)
    }()

    /// Opens a device node for libinput: its `flags` (normally `O_RDWR`) plus `O_NONBLOCK` and
    /// `O_CLOEXEC`, retrying on `EINTR`.
    ///
    /// - Returns: the descriptor, or `-errno` on failure (what libinput expects).
    ///
    /// The corresponding C function is `open`.
    private static func open(_ path: UnsafePointer<CChar>?, _ flags: Int32, _ userData: UnsafeMutableRawPointer?) -> Int32 {
        guard let path else { return -EINVAL }
        let callbacks = from(userData)
        do throws(InputError) {
            let fd = try InputCall.check("open", subject: String(cString: path)) {
                Glibc.open(path, flags | O_NONBLOCK | O_CLOEXEC)
            }
            callbacks?.lastFailure = nil
            return fd
        } catch {
            callbacks?.lastFailure = (String(cString: path), error.code)
            return -error.code
        }
    }

    /// Sends libinput's messages at `priority` and above to this context's handler.
    ///
    /// The corresponding C functions are `libinput_log_set_handler` and `libinput_log_set_priority`.
    static func installLog(on handle: OpaquePointer, priority: InputLogPriority) {
        libinput_log_set_priority(handle, libinput_log_priority(rawValue: priority.rawValue))
        libinput_log_set_handler(handle) { libinput, priority, format, arguments in
            guard let libinput, let format, let arguments,
                  let callbacks = ContextCallbacks.from(libinput_get_user_data(libinput)), let log = callbacks.log else { return }
            var buffer = [CChar](repeating: 0, count: 1024)
            _ = vsnprintf(&buffer, buffer.count, format, arguments)
            var message = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            while message.last == "\n" { message.removeLast() }
            log(InputLogPriority(priority), message)
        }
    }
}
