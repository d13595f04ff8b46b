import Testing
@testable import VitrineCore

@Suite("Overlay layout and hit testing")
struct OverlayLayoutTests {
    // MARK: QMUI's default frame

    @Test("the panel is centred in the canvas minus the margins")
    func centred() {
        var asked: [(Int, Int)] = []
        let frame = OverlayLayout.panelFrame(canvasWidth: 1920, canvasHeight: 1080, margins: .init(), maxWidth: nil) { w, h in
            asked.append((w, h)); return (600, 300)
        }
        #expect(asked.count == 1 && asked[0] == (1880, 1040))
        #expect(frame == Rect(x: 660, y: 390, width: 600, height: 300))
    }

    @Test("maxWidth caps the width and is the limit offered to the content")
    func maxWidthCaps() {
        var asked: [(Int, Int)] = []
        let frame = OverlayLayout.panelFrame(canvasWidth: 1920, canvasHeight: 1080, margins: .init(), maxWidth: 720) { w, h in
            asked.append((w, h)); return (2000, 400)
        }
        #expect(asked.count == 1 && asked[0] == (720, 1040))
        #expect(frame == Rect(x: 600, y: 340, width: 720, height: 400))
        // A maxWidth wider than the room left by the margins changes nothing.
        #expect(OverlayLayout.limitSize(canvasWidth: 1280, canvasHeight: 720, margins: .init(), maxWidth: 5000) == (1240, 680))
    }

    @Test("uneven margins move the centre")
    func unevenMargins() {
        let margins = OverlayMargins(top: 100, left: 0, bottom: 0, right: 200)
        let frame = OverlayLayout.panelFrame(canvasWidth: 1920, canvasHeight: 1080, margins: margins, maxWidth: nil) { _, _ in (400, 200) }
        #expect(frame == Rect(x: 660, y: 490, width: 400, height: 200))
    }

    @Test("content taller than the room is clamped to it (portrait canvas)")
    func tallContentClamped() {
        let frame = OverlayLayout.panelFrame(canvasWidth: 1080, canvasHeight: 1920, margins: .init(), maxWidth: nil) { _, _ in (500, 5000) }
        #expect(frame == Rect(x: 290, y: 20, width: 500, height: 1880))
    }

    @Test("an odd leftover pixel goes to the right and bottom")
    func oddRemainder() {
        let frame = OverlayLayout.panelFrame(canvasWidth: 1001, canvasHeight: 601, margins: OverlayMargins(all: 0), maxWidth: nil) { _, _ in (100, 100) }
        #expect(frame == Rect(x: 450, y: 250, width: 100, height: 100))
    }

    @Test("margins larger than the canvas leave an empty panel, never a negative one")
    func marginsEatEverything() {
        #expect(OverlayLayout.limitSize(canvasWidth: 100, canvasHeight: 100, margins: OverlayMargins(all: 80), maxWidth: nil) == (0, 0))
        let frame = OverlayLayout.panelFrame(canvasWidth: 100, canvasHeight: 100, margins: OverlayMargins(all: 80), maxWidth: nil) { _, _ in (50, 50) }
        #expect(frame.width == 0 && frame.height == 0)
    }

    @Test("margins of any size the manifest accepts never overflow")
    func hugeMargins() {
        for margins in [OverlayMargins(top: 0, left: .max, bottom: 0, right: 1), OverlayMargins(all: .max),
                        OverlayMargins(top: .max, left: 20, bottom: .max, right: 20)] {
            #expect(OverlayLayout.limitSize(canvasWidth: 640, canvasHeight: 360, margins: margins, maxWidth: nil).width
                    <= 600)
            let g = OverlayLayout.layout(canvasWidth: 640, canvasHeight: 360, margins: margins, buttonLabelWidths: [40, 40]) { w, h in
                (min(w, 300), min(h, 80))
            }
            #expect(g.panel.width >= 0 && g.panel.height >= 0)
            #expect(g.panel.x <= 640 && g.panel.y <= 360)
            #expect(g.hitTest(x: 320, y: 180) == .dimming, "no room for a panel")
        }
    }

    // MARK: Whole popups

    /// Text that is 900 px wide on one line, wrapping to the limit; 120 px high.
    static func wrappingText(_ w: Int, _ h: Int) -> (width: Int, height: Int) { (min(w, 900), 120) }

    @Test("landscape, maxWidth 720, two buttons in a row")
    func rowOfTwo() {
        var asked: [(Int, Int)] = []
        let g = OverlayLayout.layout(canvasWidth: 1920, canvasHeight: 1080, maxWidth: 720, buttonLabelWidths: [180, 60]) { w, h in
            asked.append((w, h)); return Self.wrappingText(w, h)
        }
        #expect(asked.count == 1 && asked[0] == (672, 920))  // 720 − 2×24; 1040 − 2×24 − 56 − 16
        #expect(g.canvas == Rect(x: 0, y: 0, width: 1920, height: 1080))
        #expect(g.panel == Rect(x: 600, y: 420, width: 720, height: 240))
        #expect(g.content == Rect(x: 624, y: 444, width: 672, height: 120))
        #expect(g.buttonAxis == .row)
        #expect(g.buttons == [Rect(x: 624, y: 580, width: 328, height: 56), Rect(x: 968, y: 580, width: 328, height: 56)])

        // The same from an Overlay's own margins and maxWidth.
        let overlay = Overlay(maxWidth: 720)
        #expect(OverlayLayout.layout(overlay, canvasWidth: 1920, canvasHeight: 1080, buttonLabelWidths: [180, 60],
                                     measureContent: Self.wrappingText) == g)
    }

    @Test("hit testing: buttons, the panel around them, the dimming; right and bottom edges are outside")
    func hitTesting() {
        let g = OverlayLayout.layout(canvasWidth: 1920, canvasHeight: 1080, maxWidth: 720, buttonLabelWidths: [180, 60],
                                     measureContent: Self.wrappingText)
        #expect(g.hitTest(x: 700, y: 600) == .button(0))
        #expect(g.hitTest(x: 624, y: 580) == .button(0))       // top-left corner is inside
        #expect(g.hitTest(x: 1000, y: 600) == .button(1))
        #expect(g.hitTest(x: 1295.9, y: 635.9) == .button(1))
        #expect(g.hitTest(x: 960, y: 600) == .content)         // the gap between the buttons
        #expect(g.hitTest(x: 700, y: 450) == .content)         // the text
        #expect(g.hitTest(x: 700, y: 636) == .content)         // just below the buttons, in the padding
        #expect(g.hitTest(x: 100, y: 100) == .dimming)
        #expect(g.hitTest(x: 1320, y: 500) == .dimming)        // the panel is [600, 1320)
        #expect(g.hitTest(x: 1319.5, y: 500) == .content)
        #expect(g.hitTest(x: 700, y: 660) == .dimming)         // and [420, 660)
        #expect(g.hitTest(x: -5, y: 2000) == .dimming)         // off the canvas
    }

    @Test("portrait, three long labels: a column at the inner width")
    func column() {
        let g = OverlayLayout.layout(canvasWidth: 1080, canvasHeight: 1920, buttonLabelWidths: [400, 700, 300]) { _, _ in (500, 300) }
        #expect(g.buttonAxis == .column)
        #expect(g.panel == Rect(x: 150, y: 678, width: 780, height: 564))
        #expect(g.content == Rect(x: 174, y: 702, width: 732, height: 300))
        #expect(g.buttons == [Rect(x: 174, y: 1018, width: 732, height: 56),
                              Rect(x: 174, y: 1090, width: 732, height: 56),
                              Rect(x: 174, y: 1162, width: 732, height: 56)])
        #expect(g.hitTest(x: 500, y: 1100) == .button(1))
        #expect(g.hitTest(x: 500, y: 1150) == .content)        // between buttons 1 and 2
    }

    @Test("three buttons share a row; the last takes the rounding remainder")
    func rowOfThree() {
        let g = OverlayLayout.layout(canvasWidth: 1920, canvasHeight: 1080, maxWidth: 720, buttonLabelWidths: [50, 50, 50],
                                     measureContent: Self.wrappingText)
        #expect(g.buttonAxis == .row)
        #expect(g.buttons.map(\.x) == [624, 853, 1082])
        #expect(g.buttons.map(\.width) == [213, 213, 214])
        #expect(g.buttons.last.map { $0.x + $0.width } == g.panel.x + g.panel.width - 24)
    }

    @Test("no buttons: the panel is the content plus padding")
    func noButtons() {
        let g = OverlayLayout.layout(canvasWidth: 1280, canvasHeight: 720, margins: OverlayMargins(all: 0),
                                     buttonLabelWidths: []) { _, _ in (300, 100) }
        #expect(g.panel == Rect(x: 466, y: 286, width: 348, height: 148))
        #expect(g.content == Rect(x: 490, y: 310, width: 300, height: 100))
        #expect(g.buttons == [])
    }

    @Test("buttons wider than the content widen the panel")
    func buttonsWidenThePanel() {
        let g = OverlayLayout.layout(canvasWidth: 800, canvasHeight: 600, buttonLabelWidths: [200]) { _, _ in (100, 50) }
        #expect(g.panel == Rect(x: 260, y: 215, width: 280, height: 170))
        #expect(g.content == Rect(x: 284, y: 239, width: 232, height: 50))
        #expect(g.buttons == [Rect(x: 284, y: 305, width: 232, height: 56)])
    }

    @Test("an overlong body is clamped: the buttons stay at the bottom, the content loses the rest")
    func overflow() {
        let g = OverlayLayout.layout(canvasWidth: 1920, canvasHeight: 1080, buttonLabelWidths: [100]) { _, _ in (400, 2000) }
        #expect(g.panel == Rect(x: 736, y: 20, width: 448, height: 1040))
        #expect(g.content == Rect(x: 760, y: 44, width: 400, height: 920))
        #expect(g.buttons == [Rect(x: 760, y: 980, width: 400, height: 56)])
    }

    @Test("buttons that do not fit the panel are hit only where they are inside it")
    func buttonsPastThePanel() {
        // 50 stacked buttons on a 640x360 canvas: the column runs far above the panel.
        let g = OverlayLayout.layout(canvasWidth: 640, canvasHeight: 360, buttonLabelWidths: Array(repeating: 80, count: 50)) { _, _ in
            (100, 20)
        }
        #expect(g.buttonAxis == .column)
        let above = g.buttons.firstIndex { $0.y < g.panel.y && $0.y + $0.height > g.panel.y }
        let b = g.buttons[above!]
        let x = Double(b.x + b.width / 2)
        #expect(g.hitTest(x: x, y: Double(g.panel.y) - 1) == .dimming, "above the panel is the dimming, not button \(above!)")
        #expect(g.hitTest(x: x, y: Double(g.panel.y)) == .button(above!))
        #expect(g.hitTest(x: x, y: -1000) == .dimming)
    }

    @Test("custom metrics")
    func customMetrics() {
        let metrics = OverlayLayoutMetrics(padding: 10, buttonHeight: 40, spacing: 8, labelPadding: 5)
        let g = OverlayLayout.layout(canvasWidth: 640, canvasHeight: 480, margins: OverlayMargins(all: 0), metrics: metrics,
                                     buttonLabelWidths: [30, 30]) { _, _ in (200, 100) }
        // 200 + 20 wide; 10 + 100 + 8 + 40 + 10 high.
        #expect(g.panel == Rect(x: 210, y: 156, width: 220, height: 168))
        #expect(g.buttons == [Rect(x: 220, y: 274, width: 96, height: 40), Rect(x: 324, y: 274, width: 96, height: 40)])
    }
}
