import Foundation
import Testing
import Media
@testable import Vitrine
import VitrineCore

/// Popups with hostile content drawn straight from `OverlayLayer` onto a canvas: text that cannot fit,
/// screens much larger than the layout metrics were tuned for.
@Suite("Overlays with hostile content")
struct HostileOverlayRenderingTests {
    static func layer(_ overlay: Overlay) -> OverlayLayer {
        OverlayLayer(overlays: ["o": overlay], catalogDirectory: "/nonexistent", log: Logger(label: "t", sink: LogSink.memory().0))
    }

    /// The popup `o`, fully shown, over black on a `w`×`h` canvas.
    static func draw(_ layer: OverlayLayer, _ w: Int, _ h: Int) -> ImageBuffer {
        layer.presenter.show("o", at: 0, animated: false)
        let image = ImageBuffer(width: w, height: h)
        image.withTarget { t in
            t.fill(PixelRect(x: 0, y: 0, width: w, height: h), with: 0)
            layer.draw(into: t, at: 0)
        }
        return image
    }

    /// Pixels of `r` that are not the panel's colour.
    static func ink(_ image: ImageBuffer, _ r: Rect) -> Int {
        var n = 0
        for y in max(0, r.y)..<min(image.height, r.y + r.height) {
            for x in max(0, r.x)..<min(image.width, r.x + r.width) where !image.isColor(x: x, y: y, 0xF4F6F8, tolerance: 6) { n += 1 }
        }
        return n
    }

    @Test("a title or body too long for the panel is cut to the content block: nothing is drawn between it and the buttons or below them",
          arguments: [("title", String(repeating: "Title ", count: 2000)), ("title", String(repeating: "W", count: 3000)),
                      ("title", String(repeating: "Line\n", count: 200)), ("body", String(repeating: "Body text ", count: 5000))])
    func longTextIsCut(field: String, text: String) throws {
        let overlay = Overlay(title: field == "title" ? text : "Title", body: field == "body" ? text : "Body",
                              buttons: [OverlayButton(label: "OK", action: .hideOverlays)])
        let layer = Self.layer(overlay)
        let image = Self.draw(layer, 640, 360)
        let g = try #require(layer.geometry("o", canvasWidth: 640, canvasHeight: 360))
        let button = g.buttons[0]
        // The spacing between the content block and the button, and the padding under the button.
        let gap = Rect(x: g.content.x, y: g.content.y + g.content.height, width: g.content.width,
                       height: button.y - (g.content.y + g.content.height))
        let under = Rect(x: g.content.x, y: button.y + button.height, width: g.content.width,
                         height: g.panel.y + g.panel.height - (button.y + button.height) - 12)
        #expect(gap.height > 0 && under.height > 0)
        #expect(Self.ink(image, gap) == 0, "text drawn between the content block and the button")
        #expect(Self.ink(image, under) == 0, "text drawn under the button")
        #expect(Self.ink(image, g.content) > 100, "the text is there")
    }
}
