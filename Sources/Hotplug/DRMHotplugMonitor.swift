// The udev monitor for DRM hot-plug uevents, on the run loop. The only code that touches libudev.
internal import CUdev
import RunLoop
@_exported import SystemSupport
#if canImport(Glibc)
internal import Glibc
#endif

/// A libudev call that failed, with its errno.
public struct HotplugError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The C function: `udev_new`, `udev_monitor_new_from_netlink`,
    /// `udev_monitor_filter_add_match_subsystem_devtype`, `udev_monitor_enable_receiving` or
    /// `udev_monitor_get_fd`.
    public let function: String
    public let errno: Errno

    public init(function: String, errno: Errno) {
        self.function = function
        self.errno = errno
    }

    /// `udev_monitor_new_from_netlink: Permission denied (EACCES)`.
    public var description: String { "\(function): \(errno)" }
}

/// Watches DRM hot-plug uevents through a udev netlink monitor registered on an `EventLoop`.
///
/// The monitor listens on the `"udev"` netlink group (events after udevd processed them, so the
/// device node exists and rules have run), filtered in the kernel socket to subsystem `drm`,
/// devtype `drm_minor` (`udev_monitor_filter_add_match_subsystem_devtype`). Each `change` uevent
/// with `HOTPLUG=1` becomes a `DRMHotplugEvent`; other uevents of the filter (a card's `add` or
/// `remove`, a `change` without `HOTPLUG`) are read and dropped. Without udevd (no
/// `/run/udev/control`: a container, the initramfs) libudev still creates the monitor, but no
/// event arrives.
///
/// Owns its `struct udev` and `struct udev_monitor` (and so the netlink socket) and releases them
/// in `deinit` (`udev_monitor_unref`, `udev_unref`), after cancelling its registration. Confined to
/// one thread: the loop's, once registered.
///
/// Source: libudev(3), udev_monitor_new_from_netlink(3), udev_monitor_receive_device(3); the
/// uevents: drivers/gpu/drm/drm_sysfs.c.
public final class DRMHotplugMonitor {
    /// The netlink group listened to (`udev_monitor_new_from_netlink`'s `name`).
    public static let netlinkGroup = "udev"
    /// The filter: uevents of this subsystem and devtype only.
    public static let subsystem = "drm", devtype = "drm_minor"
    /// What `vitrine probe` prints about the monitor.
    public static let summary = "udev monitor on drm (change, HOTPLUG=1)"

    private let udev: OpaquePointer
    private let monitor: OpaquePointer
    /// The monitor's netlink socket (non-blocking, close-on-exec; owned by the monitor): readable
    /// when uevents are queued.
    public let fileDescriptor: Int32
    private var registration: IORegistration?
    /// Uevents read and dropped since creation (not `change` with `HOTPLUG=1`).
    public private(set) var otherUevents = 0

    /// Creates the monitor and starts receiving (uevents sent before this are not seen).
    ///
    /// - Throws: `HotplugError` naming the libudev call: `udev_new` (`ENOMEM`),
    ///   `udev_monitor_new_from_netlink` (`EMFILE`, `ENFILE`, `ENOMEM`; `EPROTONOSUPPORT` or
    ///   `EAFNOSUPPORT` where netlink uevent sockets are not available, `EACCES`/`EPERM` under a
    ///   seccomp or LSM policy that denies them), the filter (`ENOMEM`),
    ///   `udev_monitor_enable_receiving` (`EPERM`, `EADDRINUSE` from its `bind`).
    /// The corresponding C functions are `udev_new`, `udev_monitor_new_from_netlink`,
    /// `udev_monitor_filter_add_match_subsystem_devtype`, `udev_monitor_enable_receiving` and
    /// `udev_monitor_get_fd`.
    public init() throws(HotplugError) {
        Glibc.errno = 0
        guard let udev = udev_new() else {
            throw HotplugError(function: "udev_new", errno: Self.lastErrno(default: ENOMEM))
        }
        Glibc.errno = 0
        guard let monitor = udev_monitor_new_from_netlink(udev, Self.netlinkGroup) else {
            let errno = Self.lastErrno(default: ENOMEM)
            udev_unref(udev)
            throw HotplugError(function: "udev_monitor_new_from_netlink", errno: errno)
        }
        func fail(_ function: String, _ result: Int32) -> HotplugError {
            // libudev returns a negative errno here (systemd's sd-device convention).
            let errno = Errno(result < 0 ? -result : Self.lastErrno(default: EIO).rawValue)
            udev_monitor_unref(monitor)
            udev_unref(udev)
            return HotplugError(function: function, errno: errno)
        }
        let filtered = udev_monitor_filter_add_match_subsystem_devtype(monitor, Self.subsystem, Self.devtype)
        if filtered < 0 { throw fail("udev_monitor_filter_add_match_subsystem_devtype", filtered) }
        let enabled = udev_monitor_enable_receiving(monitor)
        if enabled < 0 { throw fail("udev_monitor_enable_receiving", enabled) }
        let fd = udev_monitor_get_fd(monitor)
        if fd < 0 { throw fail("udev_monitor_get_fd", fd) }
        self.udev = udev
        self.monitor = monitor
        self.fileDescriptor = fd
    }

    deinit {
        registration?.cancel()
        udev_monitor_unref(monitor)
        udev_unref(udev)
    }

    /// Watches the monitor's socket on `loop`: when it is readable, reads every queued uevent
    /// (`receive()`) and calls `handler` with each hot-plug event, in order, on the loop's thread.
    ///
    /// - Returns: the registration (also cancelled by the monitor's `deinit`); `cancel()` it to stop.
    /// - Throws: `RunLoopError` from `epoll_ctl(ADD)` (`ENOMEM`, `ENOSPC`). Registering the same
    ///   monitor twice on one loop is a programming error (the loop's precondition).
    /// The corresponding C function is `epoll_ctl(EPOLL_CTL_ADD)` (through `EventLoop.register`).
    @discardableResult
    public func register(on loop: EventLoop, _ handler: @escaping (DRMHotplugEvent) -> Void) throws(RunLoopError) -> IORegistration {
        let registration = try loop.register(fileDescriptor, for: .readable) { [unowned self] _ in
            for event in self.receive() { handler(event) }
        }
        self.registration = registration
        return registration
    }

    /// Reads every uevent queued on the socket without blocking (`udev_monitor_receive_device`
    /// until it returns NULL: `EAGAIN`, or a message it dropped), and returns the hot-plug ones,
    /// in order. Empty when nothing is queued.
    /// The corresponding C functions are `udev_monitor_receive_device`,
    /// `udev_device_get_properties_list_entry`, `udev_list_entry_get_next`/`_name`/`_value` and
    /// `udev_device_unref`.
    public func receive() -> [DRMHotplugEvent] {
        var events: [DRMHotplugEvent] = []
        // Bounded: a socket flooded faster than it is read must not hold the loop forever.
        for _ in 0..<256 {
            guard let device = udev_monitor_receive_device(monitor) else { break }
            defer { udev_device_unref(device) }
            var properties: [String: String] = [:]
            var entry = udev_device_get_properties_list_entry(device)
            while let current = entry {
                if let name = udev_list_entry_get_name(current) {
                    properties[String(cString: name)] = udev_list_entry_get_value(current).map { String(cString: $0) } ?? ""
                }
                entry = udev_list_entry_get_next(current)
            }
            if let event = DRMHotplugEvent(properties: properties) {
                events.append(event)
            } else {
                otherUevents += 1
            }
        }
        return events
    }

    private static func lastErrno(default value: Int32) -> Errno {
        Errno(Glibc.errno != 0 ? Glibc.errno : value)
    }
}

/// A monitor belongs to one thread.
@available(*, unavailable)
extension DRMHotplugMonitor: Sendable {}
