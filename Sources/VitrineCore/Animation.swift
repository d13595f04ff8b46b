// Show and hide animations of popups: QMUIModalPresentationAnimationStyle's fade, popup and slide as
// pure functions of a timeline position, so any frame can be computed from a vblank timestamp.

/// An easing curve: maps linear time 0…1 to animation progress 0…1 (inputs outside 0…1 are clamped).
public enum Easing: Sendable, Equatable, CaseIterable {
    case linear
    /// Cubic, slow start: t³.
    case easeIn
    /// Cubic, slow end: 1 − (1 − t)³. The default for popups (UIKit's `CurveEaseOut` family).
    case easeOut
    /// Cubic, slow at both ends.
    case easeInOut

    public func callAsFunction(_ t: Double) -> Double {
        let t = min(1, max(0, t.isNaN ? 0 : t))
        switch self {
        case .linear: return t
        case .easeIn: return t * t * t
        case .easeOut: let u = 1 - t; return 1 - u * u * u
        case .easeInOut:
            if t < 0.5 { return 4 * t * t * t }
            let u = -2 * t + 2
            return 1 - u * u * u / 2
        }
    }
}

/// How a popup looks at one moment of its show or hide animation.
public struct OverlayAppearance: Sendable, Equatable {
    /// Opacity of the panel, 0…1.
    public var alpha: Double
    /// Opacity of the dimming layer: the overlay's `dimming.alpha` scaled by the progress.
    public var dimmingAlpha: Double
    /// Scale of the panel about its centre (1 = its laid-out size).
    public var scale: Double
    /// Vertical offset of the panel from its laid-out place, in canvas pixels (positive is down).
    public var offsetY: Double

    public init(alpha: Double, dimmingAlpha: Double, scale: Double = 1, offsetY: Double = 0) {
        self.alpha = alpha; self.dimmingAlpha = dimmingAlpha; self.scale = scale; self.offsetY = offsetY
    }

    /// Where the panel laid out at `frame` is drawn: scaled about its centre, then moved by `offsetY`.
    public func drawnFrame(_ frame: Rect) -> (x: Double, y: Double, width: Double, height: Double) {
        let width = Double(frame.width) * scale, height = Double(frame.height) * scale
        let cx = Double(frame.x) + Double(frame.width) / 2, cy = Double(frame.y) + Double(frame.height) / 2
        return (cx - width / 2, cy - height / 2 + offsetY, width, height)
    }
}

public enum OverlayAnimation {
    /// The scale a `popup` panel starts from.
    public static let popupStartScale = 0.8

    /// The linear timeline position (0 = hidden, 1 = fully shown) `elapsed` seconds into an animation of
    /// `duration` seconds that starts at `from` and runs towards 1 (showing) or towards 0 (hiding).
    /// Hiding is the show played backwards, so an interrupted show reverses from where it was.
    public static func progress(elapsed: Double, duration: Double, from start: Double = 0, hiding: Bool = false) -> Double {
        let step = duration > 0 ? max(0, elapsed) / duration : 1
        return min(1, max(0, hiding ? start - step : start + step))
    }

    /// The appearance at timeline position `progress` (0 = hidden, 1 = fully shown), eased by `easing`:
    /// - `fade`: panel alpha 0 → 1.
    /// - `popup`: panel alpha 0 → 1 and scale `popupStartScale` → 1 about the panel's centre.
    /// - `slide`: the panel, opaque, rises from just below the canvas (its top edge on the bottom edge)
    ///   to `frame`.
    /// In every style the dimming goes from 0 to `dimmingAlpha`.
    public static func appearance(style: OverlayStyle, progress: Double, frame: Rect, canvasHeight: Int,
                                  dimmingAlpha: Double, easing: Easing = .easeOut) -> OverlayAppearance {
        let e = easing(progress)
        switch style {
        case .fade:
            return OverlayAppearance(alpha: e, dimmingAlpha: dimmingAlpha * e)
        case .popup:
            return OverlayAppearance(alpha: e, dimmingAlpha: dimmingAlpha * e,
                                     scale: popupStartScale + (1 - popupStartScale) * e)
        case .slide:
            return OverlayAppearance(alpha: 1, dimmingAlpha: dimmingAlpha * e,
                                     offsetY: Double(canvasHeight - frame.y) * (1 - e))
        }
    }

    /// `appearance` with the style and dimming of `overlay`.
    public static func appearance(of overlay: Overlay, progress: Double, frame: Rect, canvasHeight: Int,
                                  easing: Easing = .easeOut) -> OverlayAppearance {
        appearance(style: overlay.style, progress: progress, frame: frame, canvasHeight: canvasHeight,
                   dimmingAlpha: overlay.dimming.alpha, easing: easing)
    }
}
