// Where a popup goes on the logical canvas: QMUIModalPresentationViewController's default layout
// (`contentViewFrameForShowing`), plus the panel's own content and button rows, and hit testing.
// Text is measured elsewhere (Pango); this file takes the measured sizes as inputs.

/// Fixed sizes inside a popup's panel, in canvas pixels.
public struct OverlayLayoutMetrics: Sendable, Equatable {
    /// Space between the panel's edge and everything inside it.
    public var padding: Int
    /// Height of one button.
    public var buttonHeight: Int
    /// Gap between two buttons, and between the content block and the buttons.
    public var spacing: Int
    /// Space left and right of a label inside its button.
    public var labelPadding: Int

    public init(padding: Int = 24, buttonHeight: Int = 56, spacing: Int = 16, labelPadding: Int = 16) {
        self.padding = padding; self.buttonHeight = buttonHeight; self.spacing = spacing; self.labelPadding = labelPadding
    }
}

/// How a panel's buttons are arranged.
public enum OverlayButtonAxis: Sendable, Equatable {
    /// Side by side, equal widths, one row at the bottom of the panel.
    case row
    /// Stacked, each the panel's inner width, at the bottom of the panel.
    case column
}

/// What a point of the canvas hits while a popup is up.
public enum OverlayHit: Sendable, Equatable {
    /// The button at this index of `Overlay.buttons`.
    case button(Int)
    /// The panel, outside every button.
    case content
    /// Outside the panel: the dimming layer (which covers the whole canvas, and beyond).
    case dimming
}

/// A popup laid out on a canvas: every rectangle is in canvas pixels.
public struct OverlayGeometry: Sendable, Equatable {
    /// The whole canvas; the dimming layer covers it.
    public var canvas: Rect
    /// The panel (QMUI's content view frame).
    public var panel: Rect
    /// The block for the image, title and body: the panel's inner width, the measured height.
    public var content: Rect
    /// One rectangle per button, in the order of `Overlay.buttons`.
    public var buttons: [Rect]
    public var buttonAxis: OverlayButtonAxis

    public init(canvas: Rect, panel: Rect, content: Rect, buttons: [Rect], buttonAxis: OverlayButtonAxis) {
        self.canvas = canvas; self.panel = panel; self.content = content; self.buttons = buttons; self.buttonAxis = buttonAxis
    }

    /// What (`x`, `y`) hits: a button first, then the panel, else the dimming. Rectangles are
    /// half-open: a point on the right or bottom edge is outside. Only the part of a button inside the
    /// panel is drawn, so only that part is hit (a column of more buttons than fit runs past the panel).
    public func hitTest(x: Double, y: Double) -> OverlayHit {
        guard panel.contains(x: x, y: y) else { return .dimming }
        if let index = buttons.firstIndex(where: { $0.contains(x: x, y: y) }) { return .button(index) }
        return .content
    }
}

extension Rect {
    /// Whether (`x`, `y`) lies in [x, x + width) × [y, y + height).
    public func contains(x px: Double, y py: Double) -> Bool {
        px >= Double(x) && px < Double(x + width) && py >= Double(y) && py < Double(y + height)
    }
}

public enum OverlayLayout {
    /// The room a panel may take: the canvas minus `margins`, its width capped at `maxWidth`
    /// (QMUI's `contentViewLimitSize`). Never negative.
    public static func limitSize(canvasWidth: Int, canvasHeight: Int, margins: OverlayMargins,
                                 maxWidth: Int?) -> (width: Int, height: Int) {
        let margins = clamped(margins, canvasWidth: canvasWidth, canvasHeight: canvasHeight)
        let width = max(0, canvasWidth - margins.horizontal)
        return (min(width, maxWidth ?? width), max(0, canvasHeight - margins.vertical))
    }

    /// QMUI's default frame: `preferredSize` is asked for a size within the limit (see `limitSize`), the
    /// answer is clamped to the limit, and the panel is centred in the canvas minus the margins (so uneven
    /// margins move the centre). Half pixels of centring go to the right and bottom.
    public static func panelFrame(canvasWidth: Int, canvasHeight: Int, margins: OverlayMargins, maxWidth: Int?,
                                  preferredSize: (_ limitWidth: Int, _ limitHeight: Int) -> (width: Int, height: Int)) -> Rect {
        let margins = clamped(margins, canvasWidth: canvasWidth, canvasHeight: canvasHeight)
        let limit = limitSize(canvasWidth: canvasWidth, canvasHeight: canvasHeight, margins: margins, maxWidth: maxWidth)
        let wanted = preferredSize(limit.width, limit.height)
        let width = min(limit.width, max(0, wanted.width)), height = min(limit.height, max(0, wanted.height))
        let containerWidth = max(0, canvasWidth - margins.horizontal), containerHeight = limit.height
        return Rect(x: margins.left + (containerWidth - width) / 2, y: margins.top + (containerHeight - height) / 2,
                    width: width, height: height)
    }

    /// Lays out a whole popup.
    ///
    /// - The panel is `padding` + content + `spacing` + buttons + `padding` high and as wide as the wider
    ///   of the content and the buttons (plus padding), within `panelFrame`'s limit and centring.
    /// - Buttons share one row, at equal widths, when each label (plus `labelPadding` either side) fits
    ///   its share of the widest possible panel; otherwise they are stacked in a column.
    /// - The content block is the panel's inner width; a panel taller than the limit is clamped and the
    ///   content block loses the difference (the drawing clips it).
    ///
    /// - Parameters:
    ///   - buttonLabelWidths: the measured width of each button's label, in `Overlay.buttons` order.
    ///   - measureContent: the size of the image, title and body laid out at most `limitWidth` wide (and,
    ///     preferably, `limitHeight` high); a width beyond the limit is clamped.
    public static func layout(canvasWidth: Int, canvasHeight: Int, margins: OverlayMargins = .init(),
                              maxWidth: Int? = nil, metrics: OverlayLayoutMetrics = .init(),
                              buttonLabelWidths: [Int],
                              measureContent: (_ limitWidth: Int, _ limitHeight: Int) -> (width: Int, height: Int))
        -> OverlayGeometry {
        let margins = clamped(margins, canvasWidth: canvasWidth, canvasHeight: canvasHeight)
        let limit = limitSize(canvasWidth: canvasWidth, canvasHeight: canvasHeight, margins: margins, maxWidth: maxWidth)
        let pad = metrics.padding, gap = metrics.spacing
        let innerLimit = max(0, limit.width - 2 * pad)
        let count = buttonLabelWidths.count

        // Buttons: one equal-width row if it fits the widest panel, else a column.
        let buttonWidth = (buttonLabelWidths.max() ?? 0) + 2 * metrics.labelPadding
        let rowWidth = count * buttonWidth + max(0, count - 1) * gap
        let axis: OverlayButtonAxis = rowWidth <= innerLimit ? .row : .column
        let buttonsWidth = count == 0 ? 0 : (axis == .row ? rowWidth : min(buttonWidth, innerLimit))
        let buttonsHeight = count == 0 ? 0
            : (axis == .row ? metrics.buttonHeight : count * metrics.buttonHeight + (count - 1) * gap)

        let measured = measureContent(innerLimit, max(0, limit.height - 2 * pad - buttonsHeight - (count > 0 ? gap : 0)))
        let contentWidth = min(innerLimit, max(0, measured.width)), contentHeight = max(0, measured.height)
        let between = count > 0 && contentHeight > 0 ? gap : 0
        let innerWidth = min(innerLimit, max(contentWidth, buttonsWidth))

        let panel = panelFrame(canvasWidth: canvasWidth, canvasHeight: canvasHeight, margins: margins, maxWidth: maxWidth) { _, _ in
            (innerWidth + 2 * pad, pad + contentHeight + between + buttonsHeight + pad)
        }
        let innerX = panel.x + pad
        let buttonsTop = panel.y + panel.height - pad - buttonsHeight
        let content = Rect(x: innerX, y: panel.y + pad, width: innerWidth,
                           height: max(0, min(contentHeight, buttonsTop - between - (panel.y + pad))))

        var buttons: [Rect] = []
        switch axis {
        case .row:
            // Equal shares of the inner width; the last button takes the rounding remainder.
            let share = count == 0 ? 0 : (innerWidth - (count - 1) * gap) / count
            for i in 0..<count {
                let x = innerX + i * (share + gap)
                let width = i == count - 1 ? innerX + innerWidth - x : share
                buttons.append(Rect(x: x, y: buttonsTop, width: width, height: metrics.buttonHeight))
            }
        case .column:
            for i in 0..<count {
                buttons.append(Rect(x: innerX, y: buttonsTop + i * (metrics.buttonHeight + gap),
                                    width: innerWidth, height: metrics.buttonHeight))
            }
        }
        return OverlayGeometry(canvas: Rect(x: 0, y: 0, width: canvasWidth, height: canvasHeight),
                               panel: panel, content: content, buttons: buttons, buttonAxis: axis)
    }

    /// `margins` with each side kept within 0…the canvas's extent on its axis: a larger margin leaves no
    /// room all the same, and any value the manifest allows (up to 2⁶³ − 1) is then safe to add up.
    static func clamped(_ margins: OverlayMargins, canvasWidth: Int, canvasHeight: Int) -> OverlayMargins {
        let w = max(0, canvasWidth), h = max(0, canvasHeight)
        return OverlayMargins(top: min(max(0, margins.top), h), left: min(max(0, margins.left), w),
                              bottom: min(max(0, margins.bottom), h), right: min(max(0, margins.right), w))
    }

    /// `layout` with the margins and maximum width of `overlay`.
    public static func layout(_ overlay: Overlay, canvasWidth: Int, canvasHeight: Int,
                              metrics: OverlayLayoutMetrics = .init(), buttonLabelWidths: [Int],
                              measureContent: (_ limitWidth: Int, _ limitHeight: Int) -> (width: Int, height: Int))
        -> OverlayGeometry {
        layout(canvasWidth: canvasWidth, canvasHeight: canvasHeight, margins: overlay.margins, maxWidth: overlay.maxWidth,
               metrics: metrics, buttonLabelWidths: buttonLabelWidths, measureContent: measureContent)
    }
}
