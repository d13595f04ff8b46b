import Testing
import VitrineCore

@Suite("Banner layout")
struct BannerLayoutTests {
    @Test("1920×1080: a 1404-pixel panel centred 43 pixels above the bottom; text right of the indicator; bar under both")
    func landscape() {
        let m = BannerMetrics(canvasWidth: 1920, canvasHeight: 1080)
        #expect(m.margin == 43 && m.padding == 32 && m.gap == 22 && m.panelWidth == 1404)
        #expect(m.titleSize == 45 && m.detailSize == 33 && m.indicator == 68)
        let g = BannerLayout.layout(canvasWidth: 1920, canvasHeight: 1080, titleHeight: 53, detailHeight: 39, hasBar: true)
        #expect(g.panel.x == 258 && g.panel.width == 1404)
        #expect(g.panel.y + g.panel.height == 1080 - 43)
        // padding + text (53 + 11 + 39) + gap + bar + padding
        #expect(g.panel.height == 32 + 103 + 22 + 19 + 32)
        #expect(g.title.x == g.indicator.x + 68 + 22 && g.title.width == m.textWidth)
        #expect(g.detail.y == g.title.y + 53 + 11)
        #expect(g.indicator.y + g.indicator.height / 2 == g.title.y + 103 / 2)
        #expect(g.bar == Rect(x: 290, y: g.title.y + 103 + 22, width: 1340, height: 19))
    }

    @Test("a portrait canvas gets a panel its width minus the margins; no detail, no bar: indicator-high row")
    func portraitNoBar() {
        let g = BannerLayout.layout(canvasWidth: 1080, canvasHeight: 1920, titleHeight: 40, detailHeight: 0, hasBar: false)
        let m = BannerMetrics(canvasWidth: 1080, canvasHeight: 1920)
        #expect(g.panel.width == 1080 - 2 * m.margin && g.panel.x == m.margin)
        #expect(g.bar == nil && g.detail.height == 0)
        #expect(g.panel.height == 2 * m.padding + m.indicator)
    }
}
