// What the run loop gets from libinput: touches, pointer motion and buttons, keys, hot-plug.

/// One input event, converted from libinput's.
///
/// Times are libinput's event times in seconds on `CLOCK_MONOTONIC` (the kernel's evdev timestamp,
/// `libinput_event_*_get_time_usec` / 1e6), so they compare with vblank and page-flip times.
///
/// Coordinates: touch and absolute-pointer positions are normalized, 0…1 across the device
/// (`libinput_event_touch_get_x_transformed(event, 1)`), with any calibration matrix already
/// applied by libinput; feed them to `TouchTransform`. `slot` is the seat slot
/// (`libinput_event_touch_get_seat_slot`), unique across every touch device of the seat.
public enum InputEvent: Sendable, Equatable {
    /// A device appeared: present at start-up, hot-plugged, or added with `InputContext.addDevice`.
    case deviceAdded(InputDeviceInfo)
    /// A device went away (unplugged). Touches on it were cancelled first.
    case deviceRemoved(InputDeviceInfo)
    /// A finger went down at normalized (`x`, `y`).
    case touchDown(slot: Int, x: Double, y: Double, time: Double)
    /// The finger in `slot` moved to normalized (`x`, `y`).
    case touchMotion(slot: Int, x: Double, y: Double, time: Double)
    /// The finger in `slot` lifted.
    case touchUp(slot: Int, time: Double)
    /// The touch in `slot` was cancelled (the device went away, or palm detection): not a tap.
    case touchCancel(slot: Int, time: Double)
    /// The end of one hardware report: every touch change since the previous frame happened at once.
    case touchFrame(time: Double)
    /// An absolute pointer (a USB tablet, QEMU's usb-tablet) moved to normalized (`x`, `y`).
    case pointerMotionAbsolute(x: Double, y: Double, time: Double)
    /// A relative pointer (a mouse) moved by (`dx`, `dy`): libinput's accelerated motion, in pixels
    /// of a 1000 dpi device (`libinput_event_pointer_get_dx`).
    case pointerMotion(dx: Double, dy: Double, time: Double)
    /// A pointer button changed: a Linux button code (`BTN_LEFT` = 0x110 = 272).
    case pointerButton(button: UInt32, pressed: Bool, time: Double)
    /// A key changed: a Linux key code (`KEY_ESC` = 1, `KEY_ENTER` = 28), before any keymap.
    case key(code: UInt32, pressed: Bool, time: Double)
}

extension InputEvent {
    /// `BTN_LEFT`, the primary button of a mouse or tablet.
    public static let buttonLeft: UInt32 = 0x110
    /// `BTN_RIGHT`.
    public static let buttonRight: UInt32 = 0x111
    /// `KEY_ESC`.
    public static let keyEscape: UInt32 = 1

    /// The event's name as the case is spelled, e.g. `"touchDown"`; what `touch-probe --until` matches.
    public var name: String {
        switch self {
        case .deviceAdded: "deviceAdded"
        case .deviceRemoved: "deviceRemoved"
        case .touchDown: "touchDown"
        case .touchMotion: "touchMotion"
        case .touchUp: "touchUp"
        case .touchCancel: "touchCancel"
        case .touchFrame: "touchFrame"
        case .pointerMotionAbsolute: "pointerMotionAbsolute"
        case .pointerMotion: "pointerMotion"
        case .pointerButton: "pointerButton"
        case .key: "key"
        }
    }

    /// The event time in seconds, `nil` for device events (libinput gives those no time).
    public var time: Double? {
        switch self {
        case .deviceAdded, .deviceRemoved: nil
        case .touchDown(_, _, _, let t), .touchMotion(_, _, _, let t), .touchUp(_, let t), .touchCancel(_, let t),
             .touchFrame(let t), .pointerMotionAbsolute(_, _, let t), .pointerMotion(_, _, let t),
             .pointerButton(_, _, let t), .key(_, _, let t):
            t
        }
    }
}

extension InputEvent: CustomStringConvertible {
    /// One line, `name key=value ...`, with fixed decimals so logs and test scripts can read it:
    /// `touchDown slot=0 x=0.2500 y=0.7500 time=12.345678`,
    /// `deviceAdded sysname=event3 name="Vitrine touch" touch=1 pointer=0 keyboard=0 size=320.0x180.0mm`.
    public var description: String {
        func t(_ time: Double) -> String { "time=\(fixed(time, 6))" }
        func xy(_ x: Double, _ y: Double) -> String { "x=\(fixed(x, 4)) y=\(fixed(y, 4))" }
        switch self {
        case .deviceAdded(let d), .deviceRemoved(let d):
            return "\(name) \(d)"
        case .touchDown(let slot, let x, let y, let time), .touchMotion(let slot, let x, let y, let time):
            return "\(name) slot=\(slot) \(xy(x, y)) \(t(time))"
        case .touchUp(let slot, let time), .touchCancel(let slot, let time):
            return "\(name) slot=\(slot) \(t(time))"
        case .touchFrame(let time):
            return "\(name) \(t(time))"
        case .pointerMotionAbsolute(let x, let y, let time):
            return "\(name) \(xy(x, y)) \(t(time))"
        case .pointerMotion(let dx, let dy, let time):
            return "\(name) dx=\(fixed(dx, 3)) dy=\(fixed(dy, 3)) \(t(time))"
        case .pointerButton(let button, let pressed, let time):
            return "\(name) button=\(button) pressed=\(pressed ? 1 : 0) \(t(time))"
        case .key(let code, let pressed, let time):
            return "\(name) code=\(code) pressed=\(pressed ? 1 : 0) \(t(time))"
        }
    }
}

/// `value` with exactly `digits` decimals, rounded half away from zero: `fixed(0.24992, 4)` is `"0.2499"`.
/// (No Foundation in the binding modules, so no `String(format:)`.)
func fixed(_ value: Double, _ digits: Int) -> String {
    guard value.isFinite else { return "\(value)" }
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    let scaled = (abs(value) * scale).rounded()
    guard scaled < 9e15 else { return "\(value)" }
    let units = Int64(scaled)
    let whole = units / Int64(scale), fraction = units % Int64(scale)
    let sign = value < 0 && units != 0 ? "-" : ""
    guard digits > 0 else { return "\(sign)\(whole)" }
    let fractionText = String(fraction)
    return "\(sign)\(whole).\(String(repeating: "0", count: digits - fractionText.count))\(fractionText)"
}
