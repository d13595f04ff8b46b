// From libinput's events to `InputEvent`, in two steps: `RawInputEvent.read` copies the numbers out
// of a `struct libinput_event` (C, only the accessors valid for its type); `InputEvent.init?(_:)` turns
// them into a Swift event (pure, so tests drive it without libinput or devices).
internal import CInput

/// libinput's event type (`enum libinput_event_type`).
///
/// An open set: libinput adds types (gestures, tablets, switches, scroll events), and those this
/// module does not convert are skipped.
struct InputEventType: RawRepresentable, Hashable, Sendable {
    /// The `enum libinput_event_type` value.
    var rawValue: UInt32

    init(rawValue: UInt32) { self.rawValue = rawValue }
    init(_ type: libinput_event_type) { self.rawValue = type.rawValue }

    static let deviceAdded = InputEventType(LIBINPUT_EVENT_DEVICE_ADDED)
    static let deviceRemoved = InputEventType(LIBINPUT_EVENT_DEVICE_REMOVED)
    static let keyboardKey = InputEventType(LIBINPUT_EVENT_KEYBOARD_KEY)
    static let pointerMotion = InputEventType(LIBINPUT_EVENT_POINTER_MOTION)
    static let pointerMotionAbsolute = InputEventType(LIBINPUT_EVENT_POINTER_MOTION_ABSOLUTE)
    static let pointerButton = InputEventType(LIBINPUT_EVENT_POINTER_BUTTON)
    static let touchDown = InputEventType(LIBINPUT_EVENT_TOUCH_DOWN)
    static let touchUp = InputEventType(LIBINPUT_EVENT_TOUCH_UP)
    static let touchMotion = InputEventType(LIBINPUT_EVENT_TOUCH_MOTION)
    static let touchCancel = InputEventType(LIBINPUT_EVENT_TOUCH_CANCEL)
    static let touchFrame = InputEventType(LIBINPUT_EVENT_TOUCH_FRAME)
}

/// The numbers one libinput event carries; which fields mean something depends on `type`.
struct RawInputEvent: Sendable, Equatable {
    var type: InputEventType
    /// Microseconds on `CLOCK_MONOTONIC` (`libinput_event_*_get_time_usec`); 0 for device events.
    var timeMicroseconds: UInt64 = 0
    /// Touch: the seat slot; -1 when libinput has none.
    var slot: Int32 = -1
    /// Touch and absolute pointer: normalized position. Relative pointer: accelerated motion.
    var x = 0.0, y = 0.0
    /// Pointer button or key code.
    var code: UInt32 = 0
    /// `LIBINPUT_BUTTON_STATE_PRESSED` / `LIBINPUT_KEY_STATE_PRESSED` (1) or released (0).
    var state: UInt32 = 0
    /// Device events: the device.
    var device: InputDeviceInfo?
}

extension InputEvent {
    /// The event for `raw`, or `nil` for a type this module does not convert (gestures, tablet
    /// tools, switches, scrolling) or a device event without its device.
    init?(_ raw: RawInputEvent) {
        let time = Double(raw.timeMicroseconds) / 1_000_000
        let slot = Int(raw.slot)
        switch raw.type {
        case .deviceAdded:
            guard let device = raw.device else { return nil }
            self = .deviceAdded(device)
        case .deviceRemoved:
            guard let device = raw.device else { return nil }
            self = .deviceRemoved(device)
        case .touchDown: self = .touchDown(slot: slot, x: raw.x, y: raw.y, time: time)
        case .touchMotion: self = .touchMotion(slot: slot, x: raw.x, y: raw.y, time: time)
        case .touchUp: self = .touchUp(slot: slot, time: time)
        case .touchCancel: self = .touchCancel(slot: slot, time: time)
        case .touchFrame: self = .touchFrame(time: time)
        case .pointerMotionAbsolute: self = .pointerMotionAbsolute(x: raw.x, y: raw.y, time: time)
        case .pointerMotion: self = .pointerMotion(dx: raw.x, dy: raw.y, time: time)
        case .pointerButton: self = .pointerButton(button: raw.code, pressed: raw.state != 0, time: time)
        case .keyboardKey: self = .key(code: raw.code, pressed: raw.state != 0, time: time)
        default: return nil
        }
    }
}

extension RawInputEvent {
    /// Copies what `event` carries, calling only the accessors libinput allows for its type
    /// (others log "client bug" and return 0). `nil` for types `InputEvent` does not convert.
    ///
    /// The corresponding C functions are `libinput_event_get_type` and the
    /// `libinput_event_{touch,pointer,keyboard}_get_*` accessors.
    static func read(_ event: OpaquePointer) -> RawInputEvent? {
        var raw = RawInputEvent(type: InputEventType(libinput_event_get_type(event)))
        switch raw.type {
        case .deviceAdded, .deviceRemoved:
            raw.device = InputDeviceInfo(device: libinput_event_get_device(event))
        case .touchDown, .touchMotion, .touchUp, .touchCancel, .touchFrame:
            let touch = libinput_event_get_touch_event(event)
            raw.timeMicroseconds = libinput_event_touch_get_time_usec(touch)
            if raw.type != .touchFrame { raw.slot = libinput_event_touch_get_seat_slot(touch) }
            if raw.type == .touchDown || raw.type == .touchMotion {
                raw.x = libinput_event_touch_get_x_transformed(touch, 1)
                raw.y = libinput_event_touch_get_y_transformed(touch, 1)
            }
        case .pointerMotion, .pointerMotionAbsolute, .pointerButton:
            let pointer = libinput_event_get_pointer_event(event)
            raw.timeMicroseconds = libinput_event_pointer_get_time_usec(pointer)
            if raw.type == .pointerMotion {
                raw.x = libinput_event_pointer_get_dx(pointer)
                raw.y = libinput_event_pointer_get_dy(pointer)
            } else if raw.type == .pointerMotionAbsolute {
                raw.x = libinput_event_pointer_get_absolute_x_transformed(pointer, 1)
                raw.y = libinput_event_pointer_get_absolute_y_transformed(pointer, 1)
            } else {
                raw.code = libinput_event_pointer_get_button(pointer)
                raw.state = libinput_event_pointer_get_button_state(pointer).rawValue
            }
        case .keyboardKey:
            let keyboard = libinput_event_get_keyboard_event(event)
            raw.timeMicroseconds = libinput_event_keyboard_get_time_usec(keyboard)
            raw.code = libinput_event_keyboard_get_key(keyboard)
            raw.state = libinput_event_keyboard_get_key_state(keyboard).rawValue
        default:
            return nil
        }
        return raw
    }
}

extension InputDeviceInfo {
    /// Copies a device's name, node, capabilities and size.
    ///
    /// The corresponding C functions are `libinput_device_get_name`, `libinput_device_get_sysname`,
    /// `libinput_device_has_capability` and `libinput_device_get_size`.
    init(device: OpaquePointer?) {
        guard let device else {
            self.init(name: "", sysname: "")
            return
        }
        var width = 0.0, height = 0.0
        let sized = libinput_device_get_size(device, &width, &height) == 0
        self.init(name: libinput_device_get_name(device).map { String(cString: $0) } ?? "",
                  sysname: libinput_device_get_sysname(device).map { String(cString: $0) } ?? "",
                  hasTouch: libinput_device_has_capability(device, LIBINPUT_DEVICE_CAP_TOUCH) != 0,
                  hasPointer: libinput_device_has_capability(device, LIBINPUT_DEVICE_CAP_POINTER) != 0,
                  hasKeyboard: libinput_device_has_capability(device, LIBINPUT_DEVICE_CAP_KEYBOARD) != 0,
                  widthMM: sized ? width : nil, heightMM: sized ? height : nil)
    }
}
