// A libinput context: the devices of a seat (udev backend) or a fixed list of event nodes (path
// backend), one descriptor to poll, and the events converted to `InputEvent`.
internal import CInput
internal import Glibc

/// An open libinput context. Owns the `struct libinput` (and the `struct udev` of the udev backend)
/// and the references it keeps on present devices, and releases them in `deinit`.
///
/// Not thread-safe, like libinput: create it, poll `fileDescriptor`, and call `dispatch()` on one
/// thread (the run loop's).
///
/// libinput only uses devices udev has initialised (they carry `ID_INPUT*` properties), with either
/// backend: without a running udev daemon the udev backend sees no devices, and the path backend
/// waits about 2 s for each node and then fails. Touchscreens need `ID_INPUT_TOUCHSCREEN`, which
/// udev's `input_id` builtin sets for a device with `INPUT_PROP_DIRECT` and absolute axes.
public final class InputContext {
    /// Where the devices come from.
    public enum Backend: Sendable, Equatable {
        /// Every input device of a udev seat, hot-plug included.
        case udev(seat: String)
        /// The event nodes added by path; no hot-plug.
        case path
    }

    /// The `struct libinput`.
    let handle: OpaquePointer
    /// The `struct udev` of the udev backend.
    private let udev: OpaquePointer?
    /// The user data of `open_restricted` and the log handler; must outlive `handle`.
    private let callbacks: ContextCallbacks
    /// Present devices, in the order they were added, each with a reference (`libinput_device_ref`).
    private var present: [(info: InputDeviceInfo, device: OpaquePointer)] = []

    /// The backend this context was created with.
    public let backend: Backend
    /// libinput's epoll descriptor: readable when `dispatch()` has work. For the run loop's `poll()`;
    /// do not read it or close it.
    ///
    /// The corresponding C function is `libinput_get_fd`.
    public let fileDescriptor: Int32

    private init(handle: OpaquePointer, udev: OpaquePointer?, callbacks: ContextCallbacks, backend: Backend) {
        self.handle = handle
        self.udev = udev
        self.callbacks = callbacks
        self.backend = backend
        self.fileDescriptor = libinput_get_fd(handle)
    }

    deinit {
        // Device references first: after libinput_unref they would point at freed memory.
        for entry in present { libinput_device_unref(entry.device) }
        libinput_unref(handle)
        if let udev { udev_unref(udev) }
    }

    /// Opens the udev backend on `seat`: every input device of the seat, now and hot-plugged later.
    ///
    /// The devices present now arrive as `deviceAdded` from the first `dispatch()`, hot-plugged ones
    /// from a later one. With no devices, or no udev daemon, this still succeeds, with no devices.
    ///
    /// - Parameters:
    ///   - seat: the udev seat, `"seat0"` unless udev rules set `ID_SEAT`.
    ///   - log: where libinput's messages go, from this call on; `nil` leaves them on stderr.
    ///   - logPriority: the least important messages `log` receives.
    /// - Throws: `InputError` from `udev_new`, `libinput_udev_create_context` or
    ///   `libinput_udev_assign_seat` (it fails when the udev monitor cannot be opened).
    ///
    /// The corresponding C functions are `udev_new`, `libinput_udev_create_context` and
    /// `libinput_udev_assign_seat`.
    public static func udev(seat: String = "seat0", log: InputLogHandler? = nil,
                            logPriority: InputLogPriority = .error) throws(InputError) -> InputContext {
        let callbacks = ContextCallbacks(log: log)
        let udev = try InputCall.pointer("udev_new") { udev_new() }
        let handle: OpaquePointer
        do throws(InputError) {
            handle = try InputCall.pointer("libinput_udev_create_context") {
                libinput_udev_create_context(ContextCallbacks.interface, callbacks.userData, udev)
            }
        } catch {
            udev_unref(udev)
            throw error
        }
        let context = InputContext(handle: handle, udev: udev, callbacks: callbacks, backend: .udev(seat: seat))
        if log != nil { ContextCallbacks.installLog(on: handle, priority: logPriority) }
        try InputCall.check("libinput_udev_assign_seat", subject: seat) { libinput_udev_assign_seat(handle, seat) }
        return context
    }

    /// Opens the path backend with the given event nodes (more can be added with `addDevice(path:)`).
    ///
    /// Each device arrives as `deviceAdded` from the first `dispatch()`.
    ///
    /// - Parameters:
    ///   - devices: event nodes such as `/dev/input/event3`; may be empty.
    ///   - log: where libinput's messages go, from this call on; `nil` leaves them on stderr.
    ///   - logPriority: the least important messages `log` receives.
    /// - Throws: `InputError` from `libinput_path_create_context`, or from `libinput_path_add_device`
    ///   for the first node that cannot be added (see `addDevice(path:)`).
    ///
    /// The corresponding C functions are `libinput_path_create_context` and `libinput_path_add_device`.
    public static func path(_ devices: [String], log: InputLogHandler? = nil,
                            logPriority: InputLogPriority = .error) throws(InputError) -> InputContext {
        let callbacks = ContextCallbacks(log: log)
        let handle = try InputCall.pointer("libinput_path_create_context") {
            libinput_path_create_context(ContextCallbacks.interface, callbacks.userData)
        }
        let context = InputContext(handle: handle, udev: nil, callbacks: callbacks, backend: .path)
        if log != nil { ContextCallbacks.installLog(on: handle, priority: logPriority) }
        for device in devices { try context.addDevice(path: device) }
        return context
    }

    /// Adds an event node to a path-backend context.
    ///
    /// - Parameter path: an event node such as `/dev/input/event3`.
    /// - Returns: the device. It also arrives as `deviceAdded` from the next `dispatch()`.
    /// - Throws: `InputError` with operation `libinput_path_add_device` and the node as subject:
    ///   `ENOENT` when the node does not exist, `EACCES` when we may not open it, `ENODEV` when
    ///   libinput refused it (not initialised by udev, or not an input device: libinput says which on
    ///   stderr), `EINVAL` on a udev-backend context.
    ///
    /// The corresponding C function is `libinput_path_add_device`.
    @discardableResult
    public func addDevice(path: String) throws(InputError) -> InputDeviceInfo {
        let operation = "libinput_path_add_device"
        guard backend == .path else { throw InputError(operation: operation, code: EINVAL, subject: path) }
        callbacks.lastFailure = nil
        let device = try InputCall.pointer(operation, subject: path, reason: { [callbacks] in
            // Not errno: libinput leaves whatever its last syscall or log write set there.
            callbacks.lastFailure?.code ?? Self.statError(path) ?? ENODEV
        }) { libinput_path_add_device(handle, path) }
        return track(device)
    }

    /// libinput_dispatch, then every pending event converted, in order.
    ///
    /// Call it when `fileDescriptor` is readable, and once after creating the context. Device events
    /// also update `devices`. Event types this module does not convert (gestures, tablet tools,
    /// switches, scrolling) are dropped.
    ///
    /// - Returns: the events, oldest first; empty when nothing happened.
    /// - Throws: `InputError` with operation `libinput_dispatch` and its `errno`.
    ///
    /// The corresponding C functions are `libinput_dispatch`, `libinput_get_event` and
    /// `libinput_event_destroy`.
    public func dispatch() throws(InputError) -> [InputEvent] {
        try InputCall.check("libinput_dispatch") { libinput_dispatch(handle) }
        var events: [InputEvent] = []
        while let event = libinput_get_event(handle) {
            defer { libinput_event_destroy(event) }
            let raw = RawInputEvent.read(event)
            if let type = raw?.type, type == .deviceAdded || type == .deviceRemoved,
               let device = libinput_event_get_device(event) {
                if type == .deviceAdded { track(device) } else { untrack(device) }
            }
            if let raw, let converted = InputEvent(raw) { events.append(converted) }
        }
        return events
    }

    /// The devices present now, in the order they were added.
    public var devices: [InputDeviceInfo] { present.map(\.info) }

    /// Sets a device's calibration matrix: the top two rows [a b c; d e f] of the affine transform
    /// libinput applies to normalized touch (and absolute pointer) positions, x′ = a·x + b·y + c,
    /// y′ = d·x + e·y + f. It replaces any udev `LIBINPUT_CALIBRATION_MATRIX` and applies to the
    /// events that follow. `[1, 0, 0, 0, 1, 0]` is the identity.
    ///
    /// - Parameters:
    ///   - matrix: six finite values a, b, c, d, e, f.
    ///   - sysname: the device's `InputDeviceInfo.sysname`, such as `"event3"`.
    /// - Throws: `InputError` with operation `libinput_device_config_calibration_set_matrix` and the
    ///   sysname as subject: `ENODEV` when no such device is present, `EOPNOTSUPP` when the device
    ///   takes no calibration (relative pointers, keyboards), `EINVAL` for a matrix that is not six
    ///   finite values.
    ///
    /// The corresponding C function is `libinput_device_config_calibration_set_matrix`.
    public func setCalibration(_ matrix: [Float], sysname: String) throws(InputError) {
        let operation = "libinput_device_config_calibration_set_matrix"
        guard matrix.count == 6, matrix.allSatisfy(\.isFinite) else {
            throw InputError(operation: operation, code: EINVAL, subject: sysname)
        }
        let device = try device(named: sysname, operation: operation)
        try InputCall.check(operation, subject: sysname) {
            guard libinput_device_config_calibration_has_matrix(device) != 0 else { return -EOPNOTSUPP }
            let status = matrix.withUnsafeBufferPointer {
                libinput_device_config_calibration_set_matrix(device, $0.baseAddress)
            }
            switch status {
            case LIBINPUT_CONFIG_STATUS_SUCCESS: return 0
            case LIBINPUT_CONFIG_STATUS_UNSUPPORTED: return -EOPNOTSUPP
            default: return -EINVAL
            }
        }
    }

    /// A device's current calibration matrix (a, b, c, d, e, f), or `nil` when the device takes none.
    ///
    /// - Throws: `InputError` with `ENODEV` when no device `sysname` is present.
    ///
    /// The corresponding C function is `libinput_device_config_calibration_get_matrix`.
    public func calibration(sysname: String) throws(InputError) -> [Float]? {
        let device = try device(named: sysname, operation: "libinput_device_config_calibration_get_matrix")
        guard libinput_device_config_calibration_has_matrix(device) != 0 else { return nil }
        var matrix = [Float](repeating: 0, count: 6)
        matrix.withUnsafeMutableBufferPointer { _ = libinput_device_config_calibration_get_matrix(device, $0.baseAddress) }
        return matrix
    }

    // MARK: - Present devices

    /// Keeps a reference on `device` and records it, unless it is already recorded.
    @discardableResult
    private func track(_ device: OpaquePointer) -> InputDeviceInfo {
        if let entry = present.first(where: { $0.device == device }) { return entry.info }
        let info = InputDeviceInfo(device: device)
        present.append((info, libinput_device_ref(device)))
        return info
    }

    /// Forgets `device` and drops our reference.
    private func untrack(_ device: OpaquePointer) {
        guard let index = present.firstIndex(where: { $0.device == device }) else { return }
        libinput_device_unref(present.remove(at: index).device)
    }

    private func device(named sysname: String, operation: String) throws(InputError) -> OpaquePointer {
        guard let entry = present.first(where: { $0.info.sysname == sysname }) else {
            throw InputError(operation: operation, code: ENODEV, subject: sysname)
        }
        return entry.device
    }

    /// The errno `stat(path)` fails with, or `nil` when the node exists.
    private static func statError(_ path: String) -> Int32? {
        var status = stat()
        return stat(path, &status) == 0 ? nil : InputCall.currentErrno()
    }
}

/// libinput is single-threaded: a context stays on the thread that uses it.
@available(*, unavailable)
extension InputContext: Sendable {}
