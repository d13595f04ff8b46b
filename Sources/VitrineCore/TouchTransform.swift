// Touch input, as pure maths: from a touchscreen's normalized coordinates to panel pixels and to the
// logical (rotated) canvas the popups are laid out on, and telling taps from drags.

/// libinput's calibration matrix (`LIBINPUT_CALIBRATION_MATRIX`, `libinput_device_config_calibration_set_matrix`):
/// the top two rows [a b c; d e f] of a 3×3 affine matrix applied to normalized coordinates,
/// x′ = a·x + b·y + c, y′ = d·x + e·y + f. For example a touchscreen mounted upside down needs
/// `-1 0 1 0 -1 1`; one turned 90° clockwise needs `0 -1 1 1 0 0`.
public struct CalibrationMatrix: Sendable, Equatable, CustomStringConvertible {
    public var a: Double, b: Double, c: Double, d: Double, e: Double, f: Double

    public init(a: Double, b: Double, c: Double, d: Double, e: Double, f: Double) {
        self.a = a; self.b = b; self.c = c; self.d = d; self.e = e; self.f = f
    }

    public static let identity = CalibrationMatrix(a: 1, b: 0, c: 0, d: 0, e: 1, f: 0)

    /// Six values in libinput's order a, b, c, d, e, f; nil unless there are exactly six finite values.
    public init?(_ values: [Double]) {
        guard values.count == 6, values.allSatisfy(\.isFinite) else { return nil }
        self.init(a: values[0], b: values[1], c: values[2], d: values[3], e: values[4], f: values[5])
    }

    /// The udev property's text: six numbers separated by spaces or tabs, e.g. `"0 -1 1 1 0 0"`.
    public init?(parsing text: String) {
        let fields = text.split(whereSeparator: { $0 == " " || $0 == "\t" })
        let values = fields.compactMap { Double($0) }
        guard values.count == fields.count else { return nil }
        self.init(values)
    }

    public var values: [Double] { [a, b, c, d, e, f] }

    /// The matrix applied to normalized (`x`, `y`).
    public func apply(x: Double, y: Double) -> (x: Double, y: Double) { (a * x + b * y + c, d * x + e * y + f) }

    public var description: String { values.map { String($0) }.joined(separator: " ") }
}

/// Maps a touchscreen bonded to the panel onto the panel's pixels and the logical canvas.
///
/// The touchscreen reports normalized coordinates (0…1 across the glass: libinput's
/// `libinput_event_touch_get_x_transformed(event, 1)` and `…_y_transformed(event, 1)`). `calibration` is
/// applied to them first, then they are scaled to the panel's scan-out size (`screenWidth`×`screenHeight`,
/// before rotation), then turned back by `rotation` into the canvas that `Layout` and `OverlayLayout` use
/// (the inverse of `Layout.screenPoint`). Coordinates are continuous: pixel (i, j) covers [i, i+1)×[j, j+1).
/// Points are not clamped; a point off the canvas hits the dimming.
///
/// If libinput already applies a calibration (a udev `LIBINPUT_CALIBRATION_MATRIX`), leave `calibration`
/// at identity so it is not applied twice.
public struct TouchTransform: Sendable, Equatable {
    public var screenWidth: Int, screenHeight: Int
    public var rotation: Rotation
    public var calibration: CalibrationMatrix

    public init(screenWidth: Int, screenHeight: Int, rotation: Rotation = .none, calibration: CalibrationMatrix = .identity) {
        self.screenWidth = screenWidth; self.screenHeight = screenHeight; self.rotation = rotation; self.calibration = calibration
    }

    /// The logical canvas size (width and height swapped for 90° and 270°).
    public var canvasSize: (width: Int, height: Int) {
        Layout.canvasSize(screenWidth: screenWidth, screenHeight: screenHeight, rotation: rotation)
    }

    /// Panel pixels of a normalized touch point, after calibration.
    public func screenPoint(normalizedX x: Double, normalizedY y: Double) -> (x: Double, y: Double) {
        let p = calibration.apply(x: x, y: y)
        return (p.x * Double(screenWidth), p.y * Double(screenHeight))
    }

    /// Canvas pixels of a normalized touch point: what popups are hit-tested with.
    public func canvasPoint(normalizedX x: Double, normalizedY y: Double) -> (x: Double, y: Double) {
        let s = screenPoint(normalizedX: x, normalizedY: y)
        return canvasPoint(screenX: s.x, screenY: s.y)
    }

    /// Canvas point of a panel point: the continuous inverse of `Layout.screenPoint`.
    public func canvasPoint(screenX x: Double, screenY y: Double) -> (x: Double, y: Double) {
        let w = Double(screenWidth), h = Double(screenHeight)
        switch rotation {
        case .none: return (x, y)
        case .clockwise90: return (y, w - x)
        case .upsideDown: return (w - x, h - y)
        case .clockwise270: return (h - y, x)
        }
    }

    /// Panel point of a canvas point: the continuous form of `Layout.screenPoint`.
    public func screenPoint(canvasX x: Double, canvasY y: Double) -> (x: Double, y: Double) {
        let w = Double(screenWidth), h = Double(screenHeight)
        switch rotation {
        case .none: return (x, y)
        case .clockwise90: return (w - y, x)
        case .upsideDown: return (w - x, h - y)
        case .clockwise270: return (y, h - x)
        }
    }

    /// The canvas pixel shown at panel pixel (`x`, `y`): the exact inverse of `Layout.screenPoint`.
    public func canvasPixel(screenX x: Int, screenY y: Int) -> (x: Int, y: Int) {
        switch rotation {
        case .none: return (x, y)
        case .clockwise90: return (y, screenWidth - 1 - x)
        case .upsideDown: return (screenWidth - 1 - x, screenHeight - 1 - y)
        case .clockwise270: return (screenHeight - 1 - y, x)
        }
    }
}

/// A recognised tap: where the finger went down (in the coordinates it was reported in) and when it lifted.
public struct Tap: Sendable, Equatable {
    public var x: Double, y: Double
    public var time: Double
    public init(x: Double, y: Double, time: Double) { self.x = x; self.y = y; self.time = time }
}

/// Tells taps from drags on a touchscreen. A touch is a tap when it lifts within `maxDuration` seconds of
/// going down and never strays more than `maxDistance` millimetres from where it went down (a finger that
/// drags away and comes back is still a drag). A second finger makes the gesture neither.
///
/// Feed it normalized coordinates (0…1 across the device) with the device's size in millimetres
/// (`libinput_device_get_size`); times in seconds (libinput's event time, or vblank time).
public struct TapRecognizer: Sendable, Equatable {
    public var deviceWidthMM: Double, deviceHeightMM: Double
    public var maxDistance: Double, maxDuration: Double
    public static let defaultMaxDistance = 10.0
    public static let defaultMaxDuration = 0.3

    private struct Touch: Sendable, Equatable {
        var slot: Int, x: Double, y: Double, time: Double
        var lastX: Double, lastY: Double
        var valid = true
    }
    /// Rounding allowance on both limits, so 1.3 − 1.0 counts as 300 ms.
    private static let slack = 1e-9
    private var touch: Touch?
    private var fingers: Set<Int> = []

    public init(deviceWidthMM: Double, deviceHeightMM: Double,
                maxDistance: Double = TapRecognizer.defaultMaxDistance, maxDuration: Double = TapRecognizer.defaultMaxDuration) {
        self.deviceWidthMM = deviceWidthMM; self.deviceHeightMM = deviceHeightMM
        self.maxDistance = maxDistance; self.maxDuration = maxDuration
    }

    /// Millimetres between two normalized points.
    public func distance(fromX x0: Double, y y0: Double, toX x1: Double, y y1: Double) -> Double {
        let dx = (x1 - x0) * deviceWidthMM, dy = (y1 - y0) * deviceHeightMM
        return (dx * dx + dy * dy).squareRoot()
    }

    /// Whether a finger is down.
    public var isTracking: Bool { !fingers.isEmpty }

    /// Whether the touch in progress can still become a tap: one finger, not moved beyond the tap
    /// radius. False when no finger is down.
    public var isTapCandidate: Bool { touch?.valid ?? false }

    /// A finger went down in `slot` at (`x`, `y`).
    public mutating func touchDown(slot: Int, x: Double, y: Double, at time: Double) {
        fingers.insert(slot)
        if fingers.count == 1 {
            touch = Touch(slot: slot, x: x, y: y, time: time, lastX: x, lastY: y)
        } else {
            touch?.valid = false
        }
    }

    /// The finger in `slot` moved to (`x`, `y`).
    public mutating func touchMotion(slot: Int, x: Double, y: Double, at time: Double) {
        guard var t = touch, t.slot == slot else { return }
        t.lastX = x; t.lastY = y
        if distance(fromX: t.x, y: t.y, toX: x, y: y) > maxDistance + Self.slack { t.valid = false }
        touch = t
    }

    /// The finger in `slot` lifted; returns the tap if the touch was one.
    public mutating func touchUp(slot: Int, at time: Double) -> Tap? {
        fingers.remove(slot)
        guard let t = touch, t.slot == slot else { return nil }
        touch = nil
        guard t.valid, time - t.time <= maxDuration + Self.slack,
              distance(fromX: t.x, y: t.y, toX: t.lastX, y: t.lastY) <= maxDistance + Self.slack else { return nil }
        return Tap(x: t.x, y: t.y, time: time)
    }

    /// The touch sequence was cancelled (libinput's `TOUCH_CANCEL`): no tap.
    public mutating func touchCancel() {
        touch = nil
        fingers.removeAll()
    }
}
