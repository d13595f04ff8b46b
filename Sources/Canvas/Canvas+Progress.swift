internal import CCairo

/// A determinate progress bar: a rounded track (a pill of the bar's height) and, from its left end,
/// a fill covering `fraction` of its width, clipped to the track's shape.
///
/// Colours are `0xAARRGGBB`, not premultiplied.
public struct ProgressBar: Sendable, Equatable {
    private var storedFraction: Double

    /// How much is done, 0…1. Values outside are clamped; NaN counts as 0.
    public var fraction: Double {
        get { storedFraction }
        set { storedFraction = Self.clamped(newValue) }
    }
    /// The colour of the whole track, under the fill.
    public var trackColor: UInt32
    /// The colour of the done part.
    public var fillColor: UInt32

    /// The default track: a dark grey, #3A4450.
    public static let defaultTrackColor: UInt32 = 0xFF3A_4450
    /// The default fill: a blue, #388BFD.
    public static let defaultFillColor: UInt32 = 0xFF38_8BFD

    public init(fraction: Double, trackColor: UInt32 = ProgressBar.defaultTrackColor,
                fillColor: UInt32 = ProgressBar.defaultFillColor) {
        storedFraction = Self.clamped(fraction)
        self.trackColor = trackColor
        self.fillColor = fillColor
    }

    /// `fraction` clamped to 0…1, with NaN as 0.
    public static func clamped(_ fraction: Double) -> Double {
        fraction.isNaN ? 0 : min(1, max(0, fraction))
    }

    /// The width of the fill, in pixels, for a bar `width` pixels wide.
    public func fillWidth(forWidth width: Double) -> Double { max(0, width) * fraction }
}

/// An indeterminate activity spinner: `segments` short arcs around a circle, each fainter than the
/// one ahead of it. The brightest (the head) moves clockwise one segment at a time, so the picture
/// changes `segments` times per `secondsPerTurn` and stays the same in between: a screen needs
/// redrawing only when `step(at:)` changes, not on every vblank.
///
/// Colours are `0xAARRGGBB`, not premultiplied.
public struct Spinner: Sendable, Equatable {
    /// The head's colour; the other segments use it with less alpha (down to 15 % for the last).
    public var color: UInt32
    /// How many arcs make the circle, at least 3.
    public var segments: Int
    /// Seconds for the head to go once around; not positive or not finite freezes the spinner.
    public var secondsPerTurn: Double

    public init(color: UInt32 = 0xFFFF_FFFF, segments: Int = 12, secondsPerTurn: Double = 1) {
        self.color = color
        self.segments = max(3, segments)
        self.secondsPerTurn = secondsPerTurn
    }

    /// The segment the head is on at `time` seconds, in `0..<segments`; 0 for a time that is not finite.
    ///
    /// Any clock works (the presentation time of a vblank, for one): only differences matter.
    public func step(at time: Double) -> Int {
        let n = max(3, segments)
        guard time.isFinite, secondsPerTurn.isFinite, secondsPerTurn > 0 else { return 0 }
        var t = time.truncatingRemainder(dividingBy: secondsPerTurn)
        if t < 0 { t += secondsPerTurn }
        return min(n - 1, Int(t / secondsPerTurn * Double(n)))
    }

    /// The head's angle at `time` seconds, in radians clockwise from 12 o'clock: `step(at:)` × 2π / `segments`.
    public func rotation(at time: Double) -> Double {
        Double(step(at: time)) * 2 * .pi / Double(max(3, segments))
    }
}

extension Canvas {
    /// Draws `bar` with its top-left corner at (`x`, `y`), `width` × `height` pixels: the track with
    /// corner radius `height` / 2, then the fill over its left `bar.fillWidth(forWidth: width)`
    /// pixels. Both blend over what is there. Nothing is drawn for an empty size.
    ///
    /// The corresponding C functions are `cairo_clip` and `cairo_fill`.
    public func draw(_ bar: ProgressBar, x: Double, y: Double, width: Double, height: Double) {
        guard width > 0, height > 0 else { return }
        cairo_save(cairo)
        roundedRectPath(x: x, y: y, width: width, height: height, radius: height / 2)
        setSource(bar.trackColor)
        cairo_fill_preserve(cairo)
        cairo_clip(cairo)
        let fill = bar.fillWidth(forWidth: width)
        if fill > 0 {
            cairo_new_path(cairo)
            cairo_rectangle(cairo, x, y, fill, height)
            setSource(bar.fillColor)
            cairo_fill(cairo)
        }
        cairo_restore(cairo)
    }

    /// Draws `spinner` as it looks at `time` seconds, centred on (`centerX`, `centerY`), within a
    /// circle of `radius` pixels (the arcs are `radius` × 0.22 thick, with round ends). Blends over
    /// what is there. Nothing is drawn for a radius that is not positive.
    ///
    /// The corresponding C functions are `cairo_arc` and `cairo_stroke`.
    public func draw(_ spinner: Spinner, centerX: Double, centerY: Double, radius: Double, at time: Double) {
        guard radius > 0, radius.isFinite else { return }
        let n = max(3, spinner.segments)
        let pitch = 2 * Double.pi / Double(n)
        let lineWidth = radius * 0.22
        let arcRadius = radius - lineWidth / 2
        // Each segment, round ends included, covers 70 % of its pitch; the ends add lineWidth / 2 each.
        let halfSpan = max(0.001, (0.7 * pitch - lineWidth / arcRadius) / 2)
        let head = spinner.rotation(at: time) - .pi / 2   // Cairo's angle 0 is 3 o'clock, clockwise
        let alpha = Double(spinner.color >> 24) / 255
        cairo_save(cairo)
        cairo_set_line_width(cairo, lineWidth)
        cairo_set_line_cap(cairo, CAIRO_LINE_CAP_ROUND)
        for i in 0..<n {
            let fade = 1 - 0.85 * Double(i) / Double(n - 1)
            let a = UInt32((alpha * fade * 255).rounded())
            let centre = head - Double(i) * pitch
            cairo_new_path(cairo)
            cairo_arc(cairo, centerX, centerY, arcRadius, centre - halfSpan, centre + halfSpan)
            setSource(a << 24 | spinner.color & 0x00FF_FFFF)
            cairo_stroke(cairo)
        }
        cairo_restore(cairo)
    }
}
