import Foundation
import Canvas
import Media

/// Draws the built-in slate: a dark screen with the product name and why nothing plays, laid out
/// with Pango and drawn with Cairo, then copied into the output buffer.
final class SlateRenderer {
    private let log: Logger
    private var cached: (message: String, width: Int, height: Int, canvas: Canvas)?

    init(log: Logger) { self.log = log }

    /// The slate's background: a dark slate blue, #1E2A38.
    static let slateColor: UInt32 = 0xFF1E_2A38

    func draw(_ message: String, into target: PixelTarget) {
        if cached == nil || cached!.message != message || cached!.width != target.width || cached!.height != target.height {
            do {
                let c = try Canvas(width: target.width, height: target.height)
                c.clear(Self.slateColor)
                let margin = Double(target.width) * 0.06
                let titleSize = max(12, target.height / 14)
                let bodySize = max(10, target.height / 28)
                var y = Double(target.height) * 0.12
                let title = c.drawText("Vitrine", x: margin, y: y, width: Double(target.width) - 2 * margin,
                                       font: "DejaVu Sans Bold \(titleSize)px", color: 0xFFFF_FFFF)
                y += title.height + Double(bodySize)
                c.drawText(message, x: margin, y: y, width: Double(target.width) - 2 * margin,
                           maxHeight: Double(target.height) - y - margin, font: "DejaVu Sans \(bodySize)px", color: 0xFFD0_D8E0)
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
}
