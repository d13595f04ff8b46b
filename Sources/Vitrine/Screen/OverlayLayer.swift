import Foundation
import Canvas
import Media
import VitrineCore

/// The popups over the video: a `ModalPresenter` (the QMUI semantics), their layout, their pictures
/// drawn with Cairo and Pango, and their composition onto the logical canvas at each vblank
/// (software blend into the scanout buffer; the VM's devices have no overlay plane).
///
/// Confined to the run loop's thread. Times are `CLOCK_MONOTONIC` seconds of the vblank being drawn.
final class OverlayLayer {
    let presenter: ModalPresenter
    private let log: Logger
    private let catalogDirectory: String
    private typealias Rendered = (width: Int, height: Int, geometry: OverlayGeometry, panel: Canvas)
    /// Panels as drawn with no button pressed, by popup id.
    private var cache: [String: Rendered] = [:]
    /// The panel with its pressed button (a copy of the cached one with that button redrawn), so a
    /// press and its release never lay the whole panel out again.
    private var pressedPanel: (id: String, index: Int, from: Canvas, rendered: Rendered)?
    /// The most bytes of panel pictures kept for popups that are not on the stack. A manifest may define
    /// hundreds of popups, each a canvas-wide picture (8 MB at 1080p, 32 MB at 4K): past this, `prepare`
    /// stops and panels off the stack are dropped, to be drawn again when shown.
    static let cacheBudget = 96 << 20
    /// Bytes of panel pictures kept now.
    var cachedBytes: Int { cache.values.reduce(0) { $0 + $1.panel.width * $1.panel.height * 4 } }
    /// The button under a finger that is down, for press feedback.
    var pressed: (id: String, index: Int)?
    /// Whether the last drawn picture had a popup animating (so the next vblank must redraw).
    private(set) var lastDrawKey: String = ""

    static let titleFont = "DejaVu Sans Bold"
    static let bodyFont = "DejaVu Sans"

    init(overlays: [String: Overlay], catalogDirectory: String, log: Logger) {
        presenter = ModalPresenter(overlays: overlays)
        self.catalogDirectory = catalogDirectory
        self.log = log
    }

    /// A key that changes whenever the composed popups look different (phase, progress, pressed state).
    func drawKey(at time: Double) -> String {
        presenter.update(at: time)
        var key = ""
        for p in presenter.stack {
            key += "\(p.id):\(p.phase):\(String(format: "%.3f", p.progress(at: time)));"
        }
        if let pressed { key += "pressed:\(pressed.id)/\(pressed.index)" }
        return key
    }

    /// Font sizes scale with the canvas: title 1/18 of the shorter side, body 1/28, at least 12/10 px.
    private func fonts(_ w: Int, _ h: Int) -> (title: String, body: String, label: String, size: Double) {
        let side = Double(min(w, h))
        let t = max(12, side / 18), b = max(10, side / 28)
        return ("\(Self.titleFont) \(Int(t))px", "\(Self.bodyFont) \(Int(b))px", "\(Self.titleFont) \(Int(b))px", b)
    }

    /// Padding, button height and gaps: the defaults up to a 1080 px shorter side, then growing with it
    /// as the fonts do, so a label (1/28 of the side) keeps fitting its button on 1440p and 4K screens.
    static func metrics(_ w: Int, _ h: Int) -> OverlayLayoutMetrics {
        let scale = max(1, Double(min(w, h)) / 1080)
        let d = OverlayLayoutMetrics()
        func s(_ v: Int) -> Int { Int((Double(v) * scale).rounded()) }
        return OverlayLayoutMetrics(padding: s(d.padding), buttonHeight: s(d.buttonHeight), spacing: s(d.spacing),
                                    labelPadding: s(d.labelPadding))
    }

    /// Lays out and draws the popup `id` for a `w`×`h` canvas (cached).
    func geometry(_ id: String, canvasWidth w: Int, canvasHeight h: Int) -> OverlayGeometry? {
        render(id, w, h)?.geometry
    }

    /// The popup `id`'s panel for a `w`×`h` canvas, with its button pressed if one is.
    @discardableResult
    private func render(_ id: String, _ w: Int, _ h: Int, trim: Bool = true) -> Rendered? {
        guard let base = renderPanel(id, w, h, trim: trim) else { return nil }
        guard let p = pressed, p.id == id, let overlay = presenter.overlays[id], p.index < overlay.buttons.count,
              p.index < base.geometry.buttons.count else { return base }
        if let c = pressedPanel, c.id == id, c.index == p.index, c.from === base.panel { return c.rendered }
        do {
            let panel = try base.panel.copy()
            drawButton(overlay.buttons[p.index], in: base.geometry.buttons[p.index], pressed: true, on: panel,
                       panelFrame: base.geometry.panel, font: fonts(w, h).label)
            let rendered = (w, h, base.geometry, panel)
            pressedPanel = (id, p.index, base.panel, rendered)
            return rendered
        } catch {
            log.error("overlay \(id): \(error)")
            return base
        }
    }

    /// Draws one button (its rounded rectangle and centred label) onto `panel`, whose top left is at
    /// `panelFrame`'s origin on the canvas.
    private func drawButton(_ b: OverlayButton, in r: VitrineCore.Rect, pressed: Bool, on panel: Canvas,
                            panelFrame p: VitrineCore.Rect, font: String) {
        panel.fillRoundedRect(x: Double(r.x - p.x), y: Double(r.y - p.y), width: Double(r.width), height: Double(r.height),
                              radius: Double(r.height) * 0.25, color: pressed ? Self.buttonPressedColor : Self.buttonColor)
        let size = panel.measureText(b.label, width: Double(r.width), maxHeight: Double(r.height), font: font)
        panel.drawText(b.label, x: Double(r.x - p.x), y: Double(r.y - p.y) + (Double(r.height) - size.height) / 2,
                       width: Double(r.width), maxHeight: Double(r.height), font: font, color: 0xFFFF_FFFF, alignment: .center)
    }

    /// Lays out and draws the popup `id` for a `w`×`h` canvas with no button pressed (cached).
    private func renderPanel(_ id: String, _ w: Int, _ h: Int, trim: Bool) -> Rendered? {
        if let c = cache[id], c.width == w, c.height == h { return c }
        guard let overlay = presenter.overlays[id] else { return nil }
        let f = fonts(w, h)
        do {
            let measure = try Canvas(width: 1, height: 1)
            let labels = overlay.buttons.map { Int(measure.measureText($0.label, width: Double(w), font: f.label).width.rounded(.up)) }
            // The title and the body are each cut (ending in "…") to the room left for them, and left out
            // when not even one line fits: Pango always shows a first line, which would run over the buttons.
            let titleLine = measure.measureText("Ag", width: Double(w), font: f.title).height
            let bodyLine = measure.measureText("Ag", width: Double(w), font: f.body).height
            let gap = f.size * 0.6
            // The image (`image`), above the title: fitted to the content width and to 40 % of the canvas
            // height (at most half the room), aspect kept, never enlarged.
            let photo = overlay.image.flatMap { self.picture($0) }
            var pictureSize = (width: 0, height: 0)
            let geometry = OverlayLayout.layout(overlay, canvasWidth: w, canvasHeight: h, metrics: Self.metrics(w, h),
                                                buttonLabelWidths: labels) { (lw: Int, lh: Int) -> (width: Int, height: Int) in
                var room = Double(max(0, lh))
                pictureSize = Self.fit(photo, width: lw, height: min(room / 2, Double(h) * 0.4))
                if pictureSize.height > 0 { room -= Double(pictureSize.height) + gap }
                let pictureBlock: Double = pictureSize.height > 0 ? Double(pictureSize.height) + gap : 0
                let title = overlay.title.isEmpty || room < titleLine ? (width: 0.0, height: 0.0)
                    : measure.measureText(overlay.title, width: Double(lw), maxHeight: room, font: f.title)
                let left = room - title.height - (title.height > 0 ? gap : 0)
                let body = overlay.body.isEmpty || left < bodyLine ? (width: 0.0, height: 0.0)
                    : measure.measureText(overlay.body, width: Double(lw), maxHeight: left, font: f.body)
                let between = title.height > 0 && body.height > 0 ? gap : 0
                let textHeight: Double = title.height + between + body.height
                let block: Double = textHeight > 0 ? pictureBlock + textHeight : Double(pictureSize.height)
                let widest: Double = max(title.width, body.width, Double(pictureSize.width))
                return (Int(widest.rounded(.up)), Int(block.rounded(.up)))
            }
            let p = geometry.panel
            let panel = try Canvas(width: max(1, p.width), height: max(1, p.height))
            panel.clear(0)
            let radius = Double(min(p.width, p.height)) * 0.06
            panel.fillRoundedRect(x: 0, y: 0, width: Double(p.width), height: Double(p.height), radius: radius, color: Self.panelColor)
            let cx = Double(geometry.content.x - p.x), cy = Double(geometry.content.y - p.y)
            var y = cy
            let bottom = cy + Double(geometry.content.height)
            if let photo, pictureSize.height > 0, bottom - y >= Double(pictureSize.height) {
                let image = ImageBuffer(width: pictureSize.width, height: pictureSize.height)
                do {
                    try image.withTarget { t in
                        try Scaler().scale(photo, into: t, rect: PixelRect(x: 0, y: 0, width: t.width, height: t.height))
                        panel.drawImage(pixels: t.base, width: t.width, height: t.height, stride: t.stride,
                                        x: (cx + (Double(geometry.content.width) - Double(t.width)) / 2).rounded(), y: y)
                    }
                    y += Double(pictureSize.height) + gap
                } catch {
                    log.error("overlay \(id): image \(overlay.image ?? ""): \(error)")
                }
            }
            if !overlay.title.isEmpty, bottom - y >= titleLine {
                y += panel.drawText(overlay.title, x: cx, y: y, width: Double(geometry.content.width), maxHeight: bottom - y,
                                    font: f.title, color: Self.titleColor).height
                y += gap
            }
            if !overlay.body.isEmpty, bottom - y >= bodyLine {
                panel.drawText(overlay.body, x: cx, y: y, width: Double(geometry.content.width), maxHeight: bottom - y,
                               font: f.body, color: Self.bodyColor)
            }
            for (b, r) in zip(overlay.buttons, geometry.buttons) {
                drawButton(b, in: r, pressed: false, on: panel, panelFrame: p, font: f.label)
            }
            let entry = (w, h, geometry, panel)
            cache[id] = entry
            if trim { trimCache(keeping: id) }
            return entry
        } catch {
            log.error("overlay \(id): \(error)")
            return nil
        }
    }

    /// The size of `picture` fitted into `width` × `height` pixels, aspect kept, never enlarged;
    /// (0, 0) when there is none or it would be under 8 pixels on a side.
    static func fit(_ picture: VideoFrame?, width: Int, height: Double) -> (width: Int, height: Int) {
        guard let picture, picture.width > 0, picture.height > 0 else { return (0, 0) }
        let pw = Double(picture.width), ph = Double(picture.height)
        let scale = min(1, Double(width) / pw, height / ph)
        let w = Int((pw * scale).rounded(.down)), h = Int((ph * scale).rounded(.down))
        return w >= 8 && h >= 8 ? (w, h) : (0, 0)
    }

    /// Decoded `image` files by path (nil: could not be read; logged once).
    private var pictures: [String: VideoFrame?] = [:]

    /// The first picture of `path` (relative to the catalog), decoded once (PNG, JPEG or any format
    /// FFmpeg reads); nil when it cannot be read (logged once, and the popup is drawn without it).
    private func picture(_ path: String) -> VideoFrame? {
        if let known = pictures[path] { return known }
        let full = path.hasPrefix("/") ? path : FileNames.path(path, in: catalogDirectory)
        var frame: VideoFrame?
        do {
            let file = try MediaFile(path: full)
            while let packet = try file.read() {
                if case .video(let f) = packet { frame = f; break }
            }
            if frame == nil { log.error("overlay image \(full): no picture in it; the popup is drawn without it") }
        } catch {
            log.error("overlay image \(full): \(error); the popup is drawn without it")
        }
        pictures[path] = .some(frame)
        return frame
    }

    /// Whether any popup is on the stack (drawn, even while it hides).
    var isDrawing: Bool { !presenter.stack.isEmpty }

    /// Renders every popup's panel for a `width`×`height` canvas now (Pango's font set-up and the text
    /// layout), so the first one shown does not stall the vblank it appears on.
    /// About `cacheBudget` bytes of them (the first one sets Pango up, which is the slow part).
    func prepare(canvasWidth width: Int, canvasHeight height: Int) {
        for id in presenter.overlays.keys.sorted() {
            if cachedBytes >= Self.cacheBudget { break }
            render(id, width, height, trim: false)
        }
    }

    /// Drops panels of popups that are not on the stack (other than `id`, just drawn) while the cache
    /// is over its budget.
    private func trimCache(keeping id: String) {
        var total = cachedBytes
        guard total > Self.cacheBudget else { return }
        let onStack = Set(presenter.stack.map(\.id))
        for (key, entry) in cache where key != id && !onStack.contains(key) {
            cache[key] = nil
            total -= entry.panel.width * entry.panel.height * 4
            if total <= Self.cacheBudget { break }
        }
    }

    /// Composes every popup on the stack over `target` (the logical canvas). With `base` (the picture
    /// under the popups, the size of `target`), `target` is written from it in one pass with every
    /// popup's dimming combined (`PixelTarget.Tint.combined`), and each panel is blended with the
    /// dimmings of the popups above it: the target is written once and read back only under panels.
    /// Without `base`, each popup's dimming is applied over the target in turn.
    ///
    /// `aboveDimming` draws between the dimming and the panels (the status banner: legible over a
    /// dimmed screen, and under every panel, which take the taps).
    func draw(into target: PixelTarget, at time: Double, base: PixelTarget? = nil, aboveDimming: ((PixelTarget) -> Void)? = nil) {
        presenter.update(at: time)
        let full = PixelRect(x: 0, y: 0, width: target.width, height: target.height)
        var layers: [(frame: (x: Double, y: Double, width: Double, height: Double), alpha: Double, dim: PixelTarget.Tint, panel: Canvas)] = []
        for popup in presenter.stack {
            guard let r = render(popup.id, target.width, target.height) else { continue }
            let look = popup.appearance(at: time, frame: r.geometry.panel, canvasHeight: target.height)
            let dim = PixelTarget.Tint(color: popup.overlay.dimming.color.xrgb8888 & 0x00FF_FFFF, alpha: look.dimmingAlpha)
            let f = look.drawnFrame(r.geometry.panel)
            layers.append(((f.x, f.y, f.width, f.height), look.alpha, dim, r.panel))
        }
        if let base {
            if let all = PixelTarget.Tint.combined(layers.map(\.dim)) {
                target.copyDimmed(from: base, color: all.color, alpha: all.alpha)
            } else {
                target.copy(from: base)
            }
        } else {
            for layer in layers { target.dim(full, color: layer.dim.color, alpha: layer.dim.alpha) }
        }
        aboveDimming?(target)
        for (i, layer) in layers.enumerated() {
            // Each panel under the dimmings of the popups above it.
            let above = PixelTarget.Tint.combined(layers[(i + 1)...].map(\.dim))
            layer.panel.withPixels { raw, stride in
                let src = PixelTarget(base: UnsafeMutableRawPointer(mutating: raw.baseAddress!), width: layer.panel.width,
                                      height: layer.panel.height, stride: stride)
                target.blend(premultiplied: src, x: layer.frame.x, y: layer.frame.y, width: layer.frame.width,
                             height: layer.frame.height, opacity: layer.alpha, tint: above)
            }
        }
        lastDrawKey = drawKey(at: time)
    }

    /// Panel colours (ARGB, opaque): a light card with dark text and blue buttons.
    static let panelColor: UInt32 = 0xFFF4_F6F8
    static let titleColor: UInt32 = 0xFF10_1820
    static let bodyColor: UInt32 = 0xFF30_3A44
    static let buttonColor: UInt32 = 0xFF1F_6FEB
    static let buttonPressedColor: UInt32 = 0xFF0B_3D91
}
