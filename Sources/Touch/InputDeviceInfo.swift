// What the program needs to know about an input device: what it is, what it can do, how big it is.

/// An input device as libinput sees it, copied out when it was added.
public struct InputDeviceInfo: Sendable, Equatable, CustomStringConvertible {
    /// The kernel's device name, e.g. `"ILITEK ILITEK-TP"` or `"QEMU QEMU USB Tablet"`
    /// (`libinput_device_get_name`).
    public var name: String
    /// The event node's name, e.g. `"event3"` for `/dev/input/event3` (`libinput_device_get_sysname`);
    /// unique while the device is present, and what `InputContext.setCalibration` takes.
    public var sysname: String
    /// It sends touch events: a touchscreen (`LIBINPUT_DEVICE_CAP_TOUCH`).
    public var hasTouch: Bool
    /// It sends pointer events: a mouse, touchpad or tablet (`LIBINPUT_DEVICE_CAP_POINTER`).
    public var hasPointer: Bool
    /// It sends key events: a keyboard, or the power and volume buttons (`LIBINPUT_DEVICE_CAP_KEYBOARD`).
    public var hasKeyboard: Bool
    /// The physical width of an absolute device in millimetres, `nil` when the kernel does not say
    /// (no axis resolution) or the device is relative (`libinput_device_get_size`).
    public var widthMM: Double?
    /// The physical height in millimetres, `nil` when unknown.
    public var heightMM: Double?

    public init(name: String, sysname: String, hasTouch: Bool = false, hasPointer: Bool = false, hasKeyboard: Bool = false,
                widthMM: Double? = nil, heightMM: Double? = nil) {
        self.name = name
        self.sysname = sysname
        self.hasTouch = hasTouch
        self.hasPointer = hasPointer
        self.hasKeyboard = hasKeyboard
        self.widthMM = widthMM
        self.heightMM = heightMM
    }

    /// `sysname=event3 name="Vitrine touch" touch=1 pointer=0 keyboard=0 size=320.0x180.0mm`
    /// (`size=unknown` when the device has no size).
    public var description: String {
        let size = widthMM.flatMap { w in heightMM.map { h in "\(fixed(w, 1))x\(fixed(h, 1))mm" } } ?? "unknown"
        return "sysname=\(sysname) name=\"\(name)\" touch=\(hasTouch ? 1 : 0) pointer=\(hasPointer ? 1 : 0) "
            + "keyboard=\(hasKeyboard ? 1 : 0) size=\(size)"
    }
}
