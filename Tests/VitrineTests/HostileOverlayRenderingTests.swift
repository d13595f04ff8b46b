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

    @Test("on a large screen a button's label stays inside its button", arguments: [(1920, 1080), (2560, 1440), (3840, 2160), (2160, 3840)])
    func labelsFitOnLargeScreens(w: Int, h: Int) throws {
        let layer = Self.layer(Overlay(title: "Opening hours", body: "Mon–Fri 9:00–18:00",
                                       buttons: [OverlayButton(label: "Close", action: .hideOverlays)]))
        let image = Self.draw(layer, w, h)
        let b = try #require(layer.geometry("o", canvasWidth: w, canvasHeight: h)).buttons[0]
        // The middle third of the button, away from its rounded corners: its top and bottom rows are
        // the button's blue only, and the label's white is in between.
        var edgeInk = 0, label = 0
        for y in b.y..<(b.y + b.height) {
            for x in (b.x + b.width / 3)..<(b.x + 2 * b.width / 3) {
                let blue = image.isColor(x: x, y: y, 0x1F6FEB, tolerance: 8)
                if y < b.y + 6 || y >= b.y + b.height - 6 { if !blue { edgeInk += 1 } } else if image.rgb(x: x, y: y).r > 200 { label += 1 }
            }
        }
        #expect(edgeInk == 0, "label pixels on the button's top or bottom rows: \(edgeInk)")
        #expect(label > 100, "label pixels: \(label)")
    }

    @Test("hundreds of large popups keep a bounded cache of pictures; the ones on screen are always kept")
    func manyPopupsBoundedMemory() throws {
        var overlays: [String: Overlay] = [:]
        let body = String(repeating: "Lorem ipsum dolor sit amet, consectetur adipiscing elit. ", count: 40)
        for i in 0..<300 { overlays["o\(i)"] = Overlay(title: "Popup \(i)", body: body, buttons: [OverlayButton(label: "Close", action: .hideOverlays)]) }
        let layer = OverlayLayer(overlays: overlays, catalogDirectory: "/nonexistent", log: Logger(label: "t", sink: LogSink.memory().0))
        let (w, h) = (1920, 1080)
        let onePanel = w * h * 4
        layer.prepare(canvasWidth: w, canvasHeight: h)
        #expect(layer.cachedBytes <= OverlayLayer.cacheBudget + onePanel, "after prepare: \(layer.cachedBytes) bytes")
        let image = ImageBuffer(width: w, height: h)
        // One popup after another, then 20 at once: all drawn, memory bounded by the budget or the stack.
        for i in stride(from: 299, to: 200, by: -3) {
            layer.presenter.hideAllVisible(at: 0, animated: false)
            layer.presenter.show("o\(i)", at: 0, animated: false)
            image.withTarget { layer.draw(into: $0, at: 0) }
            #expect(layer.cachedBytes <= OverlayLayer.cacheBudget + onePanel)
        }
        layer.presenter.hideAllVisible(at: 0, animated: false)
        for i in 100..<120 { layer.presenter.show("o\(i)", at: 0, animated: false) }
        image.withTarget { layer.draw(into: $0, at: 0) }
        let g = try #require(layer.geometry("o100", canvasWidth: w, canvasHeight: h))
        #expect(layer.cachedBytes >= 20 * g.panel.width * g.panel.height * 4, "every popup on the stack keeps its picture")
    }
}
