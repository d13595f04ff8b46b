// The status banner: a panel near the bottom of the screen that says what the appliance itself is
// doing (a catalog import from a USB stick, say) while the video plays on behind it.

/// What the status banner shows. Pass one to `PlaybackEngine.showBanner(_:)`; show another to
/// update it (each progress step is a new `Banner`).
public struct Banner: Sendable, Equatable {
    /// What the banner reports, which sets its accent colour (the indicator and the progress fill).
    public enum Style: String, Sendable, Equatable, CaseIterable {
        /// Work under way: a spinner without a `progress` fraction, a bar with one. Accent blue, #388BFD.
        case progress
        /// The work succeeded. Accent green, #2EA043.
        case success
        /// The work failed or was refused (the detail says why). Accent red, #F85149.
        case failure
    }

    /// The first line, in bold, for example `"Updating catalog…"`. One line, ellipsized at the end.
    public var title: String
    /// The line under the title, for example `"37 % · about 12 s left"` or a refusal reason. Wraps to
    /// at most two lines, ellipsized at the end; empty shows no detail line.
    public var detail: String
    /// How much is done, 0…1 (clamped; NaN counts as 0), drawn as a progress bar under the text.
    /// nil: no bar; a `.progress` banner then shows a spinner.
    public var progress: Double?
    public var style: Style
    /// Seconds the banner stays up, counted from the vblank that first shows it; then it disappears
    /// by itself. nil or not finite: it stays until `hideBanner()` or another banner replaces it.
    /// Zero or less: it is never drawn (and takes down the one that was up).
    public var hideAfter: Double?

    public init(title: String, detail: String = "", progress: Double? = nil, style: Style = .progress,
                hideAfter: Double? = nil) {
        self.title = title
        self.detail = detail
        self.progress = progress
        self.style = style
        self.hideAfter = hideAfter
    }

    /// Whether the indicator is a spinner: a `.progress` banner without a fraction. Results show a
    /// still dot in their accent colour instead.
    public var showsSpinner: Bool { style == .progress && progress == nil }
}

/// A status banner laid out on the logical canvas: every rectangle is in canvas pixels.
public struct BannerGeometry: Sendable, Equatable {
    /// The panel, centred horizontally, `margin` above the canvas's bottom edge.
    public var panel: Rect
    /// The square at the left of the text that holds the spinner or the status dot.
    public var indicator: Rect
    /// The title line.
    public var title: Rect
    /// The detail lines under the title (zero height without a detail).
    public var detail: Rect
    /// The progress bar across the panel under the text, for a banner with a fraction.
    public var bar: Rect?

    public init(panel: Rect, indicator: Rect, title: Rect, detail: Rect, bar: Rect?) {
        self.panel = panel; self.indicator = indicator; self.title = title; self.detail = detail; self.bar = bar
    }
}

/// Sizes of the banner for one canvas, in pixels; they scale with the canvas's shorter side.
public struct BannerMetrics: Sendable, Equatable {
    /// Space between the panel and the canvas's bottom edge (and its sides on a narrow canvas).
    public var margin: Int
    /// Space between the panel's edge and everything inside it.
    public var padding: Int
    /// Space between the indicator and the text, and between the text and the bar.
    public var gap: Int
    /// The indicator's side.
    public var indicator: Int
    /// The progress bar's height.
    public var barHeight: Int
    /// The panel's width.
    public var panelWidth: Int
    /// Font sizes in pixels: the title's and the detail's.
    public var titleSize: Int, detailSize: Int

    /// The metrics for a `canvasWidth` × `canvasHeight` logical canvas (so a rotated screen gets a
    /// banner sized for its portrait canvas). With s the shorter side: margin 4 % of s, padding 3 %,
    /// title s / 24 (at least 12 px), detail s / 32 (at least 10 px), and the panel 130 % of s wide,
    /// at most the canvas minus the margins.
    public init(canvasWidth: Int, canvasHeight: Int) {
        let side = Double(max(1, min(canvasWidth, canvasHeight)))
        margin = max(4, Int((side * 0.04).rounded()))
        padding = max(6, Int((side * 0.03).rounded()))
        gap = max(4, Int((side * 0.02).rounded()))
        titleSize = max(12, Int(side / 24))
        detailSize = max(10, Int(side / 32))
        indicator = Int((Double(titleSize) * 1.5).rounded())
        barHeight = max(4, Int((side * 0.018).rounded()))
        panelWidth = max(1, min(canvasWidth - 2 * margin, Int((side * 1.3).rounded())))
    }

    /// The width the title and detail may take.
    public var textWidth: Int { max(1, panelWidth - 2 * padding - indicator - gap) }
}

public enum BannerLayout {
    /// Lays out the banner on a `canvasWidth` × `canvasHeight` logical canvas, given the measured
    /// height of the title and of the detail (0 for none) at `BannerMetrics.textWidth`.
    ///
    /// The text block (title, a quarter of the title size, detail) sits right of the indicator, which
    /// is centred on it vertically; the bar, when `hasBar`, spans the panel's inner width under both.
    /// A panel taller than the canvas minus the margins keeps its size and is clipped by the canvas.
    public static func layout(canvasWidth: Int, canvasHeight: Int, titleHeight: Int, detailHeight: Int,
                              hasBar: Bool) -> BannerGeometry {
        let m = BannerMetrics(canvasWidth: canvasWidth, canvasHeight: canvasHeight)
        let between = detailHeight > 0 ? max(1, m.titleSize / 4) : 0
        let textHeight = max(0, titleHeight) + between + max(0, detailHeight)
        let rowHeight = max(m.indicator, textHeight)
        let barBlock = hasBar ? m.gap + m.barHeight : 0
        let height = m.padding + rowHeight + barBlock + m.padding
        let panel = Rect(x: (canvasWidth - m.panelWidth) / 2, y: canvasHeight - m.margin - height,
                         width: m.panelWidth, height: height)
        let rowTop = panel.y + m.padding
        let indicator = Rect(x: panel.x + m.padding, y: rowTop + (rowHeight - m.indicator) / 2,
                             width: m.indicator, height: m.indicator)
        let textX = indicator.x + m.indicator + m.gap
        let textTop = rowTop + (rowHeight - textHeight) / 2
        let title = Rect(x: textX, y: textTop, width: m.textWidth, height: max(0, titleHeight))
        let detail = Rect(x: textX, y: title.y + title.height + between, width: m.textWidth, height: max(0, detailHeight))
        let bar = hasBar ? Rect(x: panel.x + m.padding, y: rowTop + rowHeight + m.gap,
                                width: panel.width - 2 * m.padding, height: m.barHeight) : nil
        return BannerGeometry(panel: panel, indicator: indicator, title: title, detail: detail, bar: bar)
    }
}
