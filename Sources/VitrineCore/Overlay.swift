// `overlays`: touch popups drawn over the video (a port of QMUIModalPresentationViewController's model).
// The manifest holds them by id; `ModalPresenter` presents them, `OverlayLayout` places them and
// `OverlayAnimation` animates them. Lengths are pixels of the logical (rotated) canvas.

/// One popup of `overlays`: a panel with a title, a body, an optional image and buttons, centred over
/// a dimming layer that covers the whole canvas.
public struct Overlay: Sendable, Equatable {
    /// Drawn in bold at the top of the panel. Default "".
    public var title: String
    /// UTF-8 text below the title, wrapped to the panel width when drawn. Default "".
    public var body: String
    /// Picture above the title: a path relative to the catalog folder, as written (`/`-separated).
    public var image: String?
    /// Laid out at the bottom of the panel, in order.
    public var buttons: [OverlayButton]
    /// How the popup appears and disappears. Default `fade`.
    public var style: OverlayStyle
    /// Seconds the show and the hide animations take, > 0. Default 0.25.
    public var duration: Double
    /// When true, tapping the dimming and pressing Escape do not hide the popup. Default false.
    public var modal: Bool
    /// The layer between the video and the panel.
    public var dimming: OverlayDimming
    /// Space kept free around the panel, in canvas pixels. Default 20 on each side.
    public var margins: OverlayMargins
    /// Largest panel width in canvas pixels; nil (the default) for no limit beyond the margins.
    public var maxWidth: Int?
    /// Seconds after which the popup hides itself (reason `.autoHide`); nil (the default) for never.
    public var autoHide: Double?

    public static let defaultDuration = 0.25

    public init(title: String = "", body: String = "", image: String? = nil, buttons: [OverlayButton] = [],
                style: OverlayStyle = .fade, duration: Double = Overlay.defaultDuration, modal: Bool = false,
                dimming: OverlayDimming = .init(), margins: OverlayMargins = .init(),
                maxWidth: Int? = nil, autoHide: Double? = nil) {
        self.title = title; self.body = body; self.image = image; self.buttons = buttons
        self.style = style; self.duration = duration; self.modal = modal; self.dimming = dimming
        self.margins = margins; self.maxWidth = maxWidth; self.autoHide = autoHide
    }
}

/// A button of an overlay: a label and the action a tap on it posts.
public struct OverlayButton: Sendable, Equatable {
    public var label: String
    public var action: Action
    public init(label: String, action: Action) { self.label = label; self.action = action }
}

/// How a popup appears (and, reversed, disappears). QMUIModalPresentationAnimationStyle.
public enum OverlayStyle: String, Sendable, Equatable, CaseIterable {
    /// The panel and the dimming fade in.
    case fade
    /// The panel grows from its centre while fading in.
    case popup
    /// The panel rises from below the bottom of the canvas to its place.
    case slide
}

/// The dimming layer: a colour at an opacity, covering the canvas while a popup is up.
public struct OverlayDimming: Sendable, Equatable {
    /// Default black.
    public var color: RGBColor
    /// Opacity 0…1 when the popup is fully shown. Default 0.5.
    public var alpha: Double
    public init(color: RGBColor = .black, alpha: Double = 0.5) { self.color = color; self.alpha = alpha }
}

/// Space around a popup's panel, in whole canvas pixels (≥ 0). QMUI's `contentViewMargins`.
public struct OverlayMargins: Sendable, Equatable {
    public var top: Int, left: Int, bottom: Int, right: Int
    public static let defaultMargin = 20
    public init(top: Int = OverlayMargins.defaultMargin, left: Int = OverlayMargins.defaultMargin,
                bottom: Int = OverlayMargins.defaultMargin, right: Int = OverlayMargins.defaultMargin) {
        self.top = top; self.left = left; self.bottom = bottom; self.right = right
    }
    /// The same margin on all four sides.
    public init(all: Int) { self.init(top: all, left: all, bottom: all, right: all) }
    public var horizontal: Int { left + right }
    public var vertical: Int { top + bottom }
}
