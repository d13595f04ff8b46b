import Foundation
import Canvas
import Media
import VitrineCore

/// Draws the built-in slate (`SlateMessage`): a calm dark screen a passer-by may see, with the
/// public headline large and centred, and under it, smaller and dimmer, the installer's summary and
/// as many detail lines as fit (one line each, cut with "…"), the last one `and N more` when some
/// are left out. Laid out with Pango and drawn with Cairo into an XRGB8888 canvas of the target's
/// size (cached until the message or the size changes), then copied into the output buffer.
final class SlateRenderer {
    private let log: Logger
    private var cached: (message: SlateMessage, width: Int, height: Int, canvas: Canvas)?
    /// Where the last picture's text blocks are, in pixels (for tests and the log).
    private(set) var lastLayout: SlateLayout?

    init(log: Logger) { self.log = log }

    /// The slate's background: a dark slate blue, #1E2A38.
    static let slateColor: UInt32 = 0xFF1E_2A38
    /// The headline: near-white #F0F4F8; the summary: #C0CAD4; the details: #8A9AAA.
    static let headlineColor: UInt32 = 0xFFF0_F4F8
    static let summaryColor: UInt32 = 0xFFC0_CAD4
    static let detailColor: UInt32 = 0xFF8A_9AAA
    /// At most this many detail lines, whatever the screen's height.
    static let maximumDetailLines = 8

    func draw(_ message: SlateMessage, into target: PixelTarget) {
        if cached == nil || cached!.message != message || cached!.width != target.width || cached!.height != target.height {
            do {
                let c = try Canvas(width: target.width, height: target.height)
                c.clear(Self.slateColor)
                lastLayout = Self.layOut(message, on: c)
                cached = (message, target.width, target.height, c)
            } catch {
                log.error("slate: \(error)")
                target.fill(PixelRect(x: 0, y: 0, width: target.width, height: target.height), with: Self.slateColor)
                return
            }
        }
        cached!.canvas.withPixels { raw, stride in
            for y in 0..<target.height {
                (target.base + y * target.stride).copyMemory(from: raw.baseAddress! + y * stride, byteCount: target.width * 4)
            }
        }
    }

    /// Sizes scale with the screen's shorter side s (a portrait screen gets the same letters as a
    /// landscape one): headline s/9, summary s/28, details s/36 (at least 16, 10 and 9 px); the text
    /// is at most 84 % of the width, the block centred both ways.
    static func layOut(_ m: SlateMessage, on c: Canvas) -> SlateLayout {
        let w = Double(c.width), h = Double(c.height), side = min(w, h)
        let width = (w * 0.84).rounded(.down), x = ((w - width) / 2).rounded(.down)
        let headlineFont = "DejaVu Sans Bold \(max(16, Int(side / 9)))px"
        let summaryFont = "DejaVu Sans \(max(10, Int(side / 28)))px"
        let detailFont = "DejaVu Sans \(max(9, Int(side / 36)))px"
        let headlineLine = c.measureText("Ag", width: width, font: headlineFont).height
        let summaryLine = c.measureText("Ag", width: width, font: summaryFont).height
        let detailLine = c.measureText("Ag", width: width, font: detailFont).height
        let gap = (side / 30).rounded()
        // Everything fits in 90 % of the height: the headline and the summary (two lines at most) first.
        let summaryHeight = m.summary.isEmpty ? 0
            : c.measureText(m.summary, width: width, maxHeight: summaryLine * 2.5, font: summaryFont).height
        let room = h * 0.9 - headlineLine - gap - summaryHeight - gap
        let fitting = max(0, min(maximumDetailLines, Int((room / detailLine).rounded(.down))))
        let lines = m.detailLines(fitting: fitting)
        let detailsHeight = Double(lines.count) * detailLine
        let total = headlineLine + (summaryHeight > 0 ? gap + summaryHeight : 0) + (lines.isEmpty ? 0 : gap + detailsHeight)
        var y = ((h - total) / 2).rounded(.down)
        var layout = SlateLayout(headline: Rect(x: Int(x), y: Int(y), width: Int(width), height: Int(headlineLine.rounded(.up))),
                                 summary: nil, details: [])
        c.drawText(m.headline, x: x, y: y, width: width, maxHeight: headlineLine, font: headlineFont,
                   color: headlineColor, alignment: .center)
        y += headlineLine + gap
        if summaryHeight > 0 {
            c.drawText(m.summary, x: x, y: y, width: width, maxHeight: summaryLine * 2.5, font: summaryFont,
                       color: summaryColor, alignment: .center)
            layout.summary = Rect(x: Int(x), y: Int(y), width: Int(width), height: Int(summaryHeight.rounded(.up)))
            y += summaryHeight + gap
        }
        for line in lines {
            // One line each: a newline in a detail must not push the others down.
            let flat = line.replacingOccurrences(of: "\n", with: " ")
            c.drawText(flat, x: x, y: y, width: width, maxHeight: detailLine, font: detailFont, color: detailColor, alignment: .center)
            layout.details.append(Rect(x: Int(x), y: Int(y), width: Int(width), height: Int(detailLine.rounded(.up))))
            y += detailLine
        }
        layout.detailLines = lines
        return layout
    }
}

/// Where `SlateRenderer` put the slate's text: the rectangle of each block, in canvas pixels, and
/// the detail lines drawn.
struct SlateLayout: Equatable {
    var headline: Rect
    var summary: Rect?
    var details: [Rect]
    var detailLines: [String] = []
}
