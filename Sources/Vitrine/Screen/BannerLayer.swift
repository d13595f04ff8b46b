import Foundation
import Canvas
import Media
import VitrineCore

/// The status banner over the video: a dark rounded panel near the bottom of the logical canvas with
/// an indicator (a spinner, or a dot in the style's accent colour), a bold title, a detail of up to
/// two lines and, with a fraction, a progress bar. Drawn with Cairo and Pango in RAM and blended
/// into the logical canvas at each redraw, under the popups (see `PlaybackEngine.showBanner(_:)`).
///
/// The picture is cached in three parts, each redrawn only when it changes: the panel with its text,
/// the spinner (`Spinner.step(at:)`: 12 changes a second), the bar (its fill's width in whole pixels).
///
/// Confined to the run loop's thread. Times are `CLOCK_MONOTONIC` seconds of the vblank being drawn.
final class BannerLayer {
    let board: StatusBanner
    private let log: Logger
    /// The board's revision last taken, and the banner up (nil once hidden or expired).
    private var revision = 0
    private(set) var banner: Banner?
    /// Whether a banner is up (as of the last `update(at:)` or `drawKey`).
    var isShowing: Bool { banner != nil }
    private var shownAt = 0.0
    /// Grows whenever the panel's picture changes (title, detail, style, bar or not, shown or hidden).
    private var look = 0
    private var panel: (look: Int, width: Int, height: Int, geometry: BannerGeometry, canvas: Canvas)?
    private var indicator: (step: Int, size: Int, canvas: Canvas)?
    private var bar: (fill: Int, width: Int, height: Int, style: Banner.Style, canvas: Canvas)?

    static let titleFont = "DejaVu Sans Bold"
    static let detailFont = "DejaVu Sans"
    /// The panel: #141C24 at 88 % opacity. Title white, detail #C9D1D9.
    static let panelColor: UInt32 = 0xE014_1C24
    static let titleColor: UInt32 = 0xFFFF_FFFF
    static let detailColor: UInt32 = 0xFFC9_D1D9
    /// The bar's track, under the fill: #3A4450.
    static let trackColor: UInt32 = ProgressBar.defaultTrackColor
    static let spinner = Spinner(color: accentColor(.progress), segments: 12, secondsPerTurn: 1)

    /// The indicator's and the fill's colour: blue #388BFD, green #2EA043, red #F85149.
    static func accentColor(_ style: Banner.Style) -> UInt32 {
        switch style {
        case .progress: return 0xFF38_8BFD
        case .success: return 0xFF2E_A043
        case .failure: return 0xFFF8_5149
        }
    }

    init(board: StatusBanner, log: Logger) {
        self.board = board
        self.log = log
    }

    /// Takes a new banner from the board and hides one whose `hideAfter` has passed at `time`.
    func update(at time: Double) {
        let (wanted, r) = board.snapshot()
        if r != revision {
            revision = r
            if !Self.sameLook(banner, wanted) {
                look += 1
                if let wanted, wanted.title != banner?.title || wanted.style != banner?.style {
                    log.info("banner: \(wanted.title)", ["style": wanted.style.rawValue])
                } else if wanted == nil {
                    log.info("banner hidden")
                }
            }
            banner = wanted
            shownAt = time
        }
        if let b = banner, let after = b.hideAfter, after.isFinite, time >= shownAt + after {
            banner = nil
            look += 1
            board.expire(revision: r)
            log.info("banner hidden after \(after) s")
        }
    }

    /// When the banner up goes by itself (its `hideAfter`), host seconds; nil when none is up or it stays.
    var hideTime: Double? {
        guard let after = banner?.hideAfter, after.isFinite else { return nil }
        return shownAt + after
    }

    /// A key that changes whenever the banner looks different on a `canvasWidth` × `canvasHeight`
    /// logical canvas at `time`: "" with no banner up.
    func drawKey(at time: Double, canvasWidth: Int, canvasHeight: Int) -> String {
        update(at: time)
        guard let b = banner else { return "" }
        let m = BannerMetrics(canvasWidth: canvasWidth, canvasHeight: canvasHeight)
        var key = "banner \(look)"
        if b.showsSpinner { key += " spin \(Self.spinner.step(at: time))" }
        if let p = b.progress { key += " fill \(Self.fillPixels(p, barWidth: Self.barWidth(m)))" }
        return key
    }

    /// The banner's rectangles on a `canvasWidth` × `canvasHeight` logical canvas; nil with none up.
    func geometry(canvasWidth: Int, canvasHeight: Int) -> BannerGeometry? {
        guard let b = banner else { return nil }
        return renderPanel(b, canvasWidth, canvasHeight)?.geometry
    }

    /// Composes the banner, if one is up at `time`, over `target` (the logical canvas).
    func draw(into target: PixelTarget, at time: Double) {
        update(at: time)
        guard let b = banner, let p = renderPanel(b, target.width, target.height) else { return }
        let g = p.geometry
        blend(p.canvas, into: target, x: g.panel.x, y: g.panel.y)
        if b.showsSpinner, let c = renderSpinner(size: g.indicator.width, at: time) {
            blend(c, into: target, x: g.indicator.x, y: g.indicator.y)
        }
        if let p = b.progress, let r = g.bar, let c = renderBar(p, style: b.style, r.width, r.height) {
            blend(c, into: target, x: r.x, y: r.y)
        }
    }

    // MARK: - Pictures

    private func renderPanel(_ b: Banner, _ w: Int, _ h: Int) -> (geometry: BannerGeometry, canvas: Canvas)? {
        if let p = panel, p.look == look, p.width == w, p.height == h { return (p.geometry, p.canvas) }
        let m = BannerMetrics(canvasWidth: w, canvasHeight: h)
        let titleFont = "\(Self.titleFont) \(m.titleSize)px", detailFont = "\(Self.detailFont) \(m.detailSize)px"
        do {
            let measure = try Canvas(width: 1, height: 1)
            let width = Double(m.textWidth)
            let titleLine = measure.measureText("Ag", width: width, font: titleFont).height
            let detailLine = measure.measureText("Ag", width: width, font: detailFont).height
            // One title line; two detail lines (a third would not fit in 2.5).
            let titleMax = titleLine, detailMax = detailLine * 2.5
            let titleHeight = b.title.isEmpty ? 0 : measure.measureText(b.title, width: width, maxHeight: titleMax, font: titleFont).height
            let detailHeight = b.detail.isEmpty ? 0 : measure.measureText(b.detail, width: width, maxHeight: detailMax, font: detailFont).height
            let g = BannerLayout.layout(canvasWidth: w, canvasHeight: h, titleHeight: Int(titleHeight.rounded(.up)),
                                        detailHeight: Int(detailHeight.rounded(.up)), hasBar: b.progress != nil)
            let canvas = try Canvas(width: max(1, g.panel.width), height: max(1, g.panel.height))
            canvas.clear(0)
            canvas.fillRoundedRect(x: 0, y: 0, width: Double(g.panel.width), height: Double(g.panel.height),
                                   radius: Double(m.padding), color: Self.panelColor)
            let ox = Double(g.panel.x), oy = Double(g.panel.y)
            if !b.title.isEmpty {
                canvas.drawText(b.title, x: Double(g.title.x) - ox, y: Double(g.title.y) - oy, width: width,
                                maxHeight: titleMax, font: titleFont, color: Self.titleColor)
            }
            if !b.detail.isEmpty {
                canvas.drawText(b.detail, x: Double(g.detail.x) - ox, y: Double(g.detail.y) - oy, width: width,
                                maxHeight: detailMax, font: detailFont, color: Self.detailColor)
            }
            if !b.showsSpinner {
                let d = Double(g.indicator.width) * 0.5
                canvas.fillRoundedRect(x: Double(g.indicator.x) - ox + d / 2, y: Double(g.indicator.y) - oy + d / 2,
                                       width: d, height: d, radius: d / 2, color: Self.accentColor(b.style))
            }
            panel = (look, w, h, g, canvas)
            return (g, canvas)
        } catch {
            log.error("banner: \(error)")
            return nil
        }
    }

    private func renderSpinner(size: Int, at time: Double) -> Canvas? {
        let step = Self.spinner.step(at: time)
        if let s = indicator, s.step == step, s.size == size { return s.canvas }
        do {
            let canvas = try Canvas(width: max(1, size), height: max(1, size))
            canvas.clear(0)
            let r = Double(size) / 2
            canvas.draw(Self.spinner, centerX: r, centerY: r, radius: r, at: time)
            indicator = (step, size, canvas)
            return canvas
        } catch {
            log.error("banner spinner: \(error)")
            return nil
        }
    }

    private func renderBar(_ fraction: Double, style: Banner.Style, _ w: Int, _ h: Int) -> Canvas? {
        let fill = Self.fillPixels(fraction, barWidth: w)
        if let b = bar, b.fill == fill, b.width == w, b.height == h, b.style == style { return b.canvas }
        do {
            let canvas = try Canvas(width: max(1, w), height: max(1, h))
            canvas.clear(0)
            // The fill is drawn at whole pixels, so the picture changes exactly when the draw key does.
            let quantized = ProgressBar(fraction: Double(fill) / Double(max(1, w)), trackColor: Self.trackColor,
                                        fillColor: Self.accentColor(style))
            canvas.draw(quantized, x: 0, y: 0, width: Double(w), height: Double(h))
            bar = (fill, w, h, style, canvas)
            return canvas
        } catch {
            log.error("banner bar: \(error)")
            return nil
        }
    }

    private func blend(_ canvas: Canvas, into target: PixelTarget, x: Int, y: Int) {
        canvas.withPixels { raw, stride in
            let src = PixelTarget(base: UnsafeMutableRawPointer(mutating: raw.baseAddress!), width: canvas.width,
                                  height: canvas.height, stride: stride)
            target.blend(premultiplied: src, x: x, y: y)
        }
    }

    // MARK: - Keys

    private static func barWidth(_ m: BannerMetrics) -> Int { m.panelWidth - 2 * m.padding }

    private static func fillPixels(_ fraction: Double, barWidth: Int) -> Int {
        Int(ProgressBar(fraction: fraction).fillWidth(forWidth: Double(max(0, barWidth))).rounded())
    }

    /// Whether the panel (without the spinner's step or the fill's width) looks the same.
    private static func sameLook(_ a: Banner?, _ b: Banner?) -> Bool {
        guard let a, let b else { return a == nil && b == nil }
        return a.title == b.title && a.detail == b.detail && a.style == b.style
            && (a.progress == nil) == (b.progress == nil) && a.showsSpinner == b.showsSpinner
    }
}
