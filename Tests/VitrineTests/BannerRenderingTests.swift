import Foundation
import Testing
import Media
@testable import Vitrine
import VitrineCore

@Suite("Status banner drawn over the video", .serialized)
struct BannerRenderingTests {
    static let red: UInt32 = 0xFF0000
    /// The panel, #141C24 at alpha 0xE0, over pure red: (48, 25, 32).
    static let panelOverRed: UInt32 = 0x30_1920

    /// A 320×180 engine playing 3 s of red, stepped to 0.5 s.
    static func rig(display: DisplaySettings = DisplaySettings()) throws -> EngineRig {
        let dir = try Harness.newFolder("banner")
        try FileManager.default.copyItem(atPath: try Harness.colorClip("red", seconds: 3, size: "320x180"), toPath: dir + "/media/red.mp4")
        let rig = EngineRig(catalog: dir, width: 320, height: 180, display: display)
        rig.engine.play(PlaylistItem(id: "r", type: .video, src: "media/red.mp4"))
        try rig.run(until: 0.5)
        return rig
    }

    static func screen(_ rig: EngineRig) -> ImageBuffer {
        let copy = ImageBuffer(width: rig.output.width, height: rig.output.height)
        rig.output.withFrontBuffer { front in copy.withTarget { $0.copyRotated(from: front, quarterTurns: 0, x: 0, y: 0) } }
        return copy
    }

    static func geometry(_ rig: EngineRig) throws -> BannerGeometry {
        try #require(rig.engine.bannerLayer.geometry(canvasWidth: 320, canvasHeight: 180))
    }

    /// Pixels in `r` brighter than 200 on every channel: the white title's ink.
    static func whiteInk(_ img: ImageBuffer, in r: Rect) -> Int {
        var n = 0
        for y in r.y..<(r.y + r.height) {
            for x in r.x..<(r.x + r.width) {
                let p = img.rgb(x: x, y: y)
                if p.r > 200 && p.g > 200 && p.b > 200 { n += 1 }
            }
        }
        return n
    }

    @Test("without a banner the frame is the video's pixel, where the banner would be too")
    func noBanner() throws {
        let rig = try Self.rig()
        let img = Self.screen(rig)
        let g = BannerLayout.layout(canvasWidth: 320, canvasHeight: 180, titleHeight: 14, detailHeight: 12, hasBar: true)
        for (x, y) in [(4, 4), (160, 90), (g.panel.x + 4, g.panel.y + g.panel.height / 2), (160, g.panel.y + g.panel.height - 3)] {
            #expect(img.isColor(x: x, y: y, Self.red, tolerance: 6), "(\(x), \(y)): \(img.rgb(x: x, y: y))")
        }
        #expect(rig.engine.bannerLayer.drawKey(at: rig.engine.lastHostTime, canvasWidth: 320, canvasHeight: 180) == "")
    }

    @Test("a progress banner: dark panel near the bottom, white title ink in its rect, blue fill at 37 %, track after it")
    func progressBanner() throws {
        let rig = try Self.rig()
        rig.engine.showBanner(Banner(title: "Updating catalog…", detail: "37 % · about 12 s left", progress: 0.37))
        try rig.step(2)
        let img = Self.screen(rig)
        let g = try Self.geometry(rig)
        let m = BannerMetrics(canvasWidth: 320, canvasHeight: 180)
        #expect(g.panel.y + g.panel.height == 180 - m.margin, "\(g.panel)")
        #expect(g.panel.x == (320 - g.panel.width) / 2)
        #expect(img.isColor(x: g.panel.x + m.padding / 2, y: g.panel.y + g.panel.height / 2, Self.panelOverRed, tolerance: 8),
                "\(img.rgb(x: g.panel.x + m.padding / 2, y: g.panel.y + g.panel.height / 2))")
        let ink = Self.whiteInk(img, in: g.title)
        #expect(ink > 30, "title ink in \(g.title): \(ink)")
        #expect(Self.whiteInk(img, in: Rect(x: g.panel.x, y: 0, width: g.panel.width, height: g.panel.y)) == 0, "no ink above the panel")
        let bar = try #require(g.bar)
        let mid = bar.y + bar.height / 2
        #expect(img.isColor(x: bar.x + Int(Double(bar.width) * 0.2), y: mid, 0x388BFD, tolerance: 3))
        #expect(img.isColor(x: bar.x + Int(Double(bar.width) * 0.6), y: mid, 0x3A4450, tolerance: 3))
        #expect(img.isColor(x: 4, y: 4, Self.red, tolerance: 6), "the video elsewhere is untouched")
    }

    @Test("a spinner banner: the indicator's pixels differ between two times, and only spinner steps cost redraws")
    func spinnerBanner() throws {
        let rig = try Self.rig()
        rig.engine.showBanner(Banner(title: "Reading the USB stick…"))
        try rig.step(1)
        let g = try Self.geometry(rig)
        func indicator() -> [UInt32] {
            let img = Self.screen(rig)
            return (g.indicator.y..<(g.indicator.y + g.indicator.height)).flatMap { y in
                (g.indicator.x..<(g.indicator.x + g.indicator.width)).map { img.pixel(x: $0, y: y) & 0xFF_FFFF }
            }
        }
        let first = indicator()
        #expect(first.contains { $0 & 0xFF > 0xC0 }, "blue spinner pixels in \(g.indicator)")
        try rig.step(8)   // 0.27 s at 30 Hz: three spinner steps
        #expect(indicator() != first)

        // The key follows the spinner's step: equal within a twelfth of a second, different across it.
        let layer = rig.engine.bannerLayer
        let t = rig.engine.lastHostTime.rounded(.down) + 1   // a whole second: a step boundary
        let key = layer.drawKey(at: t + 0.01, canvasWidth: 320, canvasHeight: 180)
        #expect(layer.drawKey(at: t + 0.07, canvasWidth: 320, canvasHeight: 180) == key)
        #expect(layer.drawKey(at: t + 0.09, canvasWidth: 320, canvasHeight: 180) != key)
    }

    @Test("a determinate banner's key stays the same over time, and changes with each pixel of progress or new text")
    func progressKey() throws {
        let board = StatusBanner()
        let layer = BannerLayer(board: board, log: Logger(label: "t", sink: LogSink.memory().0))
        board.show(Banner(title: "Copying", detail: "10 %", progress: 0.1))
        let key = layer.drawKey(at: 100, canvasWidth: 320, canvasHeight: 180)
        #expect(layer.drawKey(at: 107.3, canvasWidth: 320, canvasHeight: 180) == key)
        board.show(Banner(title: "Copying", detail: "10 %", progress: 0.1001))   // under a pixel of a 222-pixel bar
        #expect(layer.drawKey(at: 108, canvasWidth: 320, canvasHeight: 180) == key)
        board.show(Banner(title: "Copying", detail: "10 %", progress: 0.2))
        let more = layer.drawKey(at: 108, canvasWidth: 320, canvasHeight: 180)
        #expect(more != key)
        board.show(Banner(title: "Copying", detail: "20 %", progress: 0.2))
        #expect(layer.drawKey(at: 108, canvasWidth: 320, canvasHeight: 180) != more)
    }

    @Test("a result banner with hideAfter 1 s is up at 0.5 s and gone after 1 s, back to the video's pixel")
    func hideAfter() throws {
        let rig = try Self.rig()
        rig.engine.showBanner(Banner(title: "Catalog updated", detail: "12 items", style: .success, hideAfter: 1))
        try rig.step(1)
        let g = try Self.geometry(rig)
        let probe = (x: g.panel.x + 4, y: g.panel.y + g.panel.height / 2)
        try rig.step(14)   // 0.5 s after the vblank that showed it
        let up = Self.screen(rig)
        #expect(up.isColor(x: probe.x, y: probe.y, Self.panelOverRed, tolerance: 8), "\(up.rgb(x: probe.x, y: probe.y))")
        #expect(up.isColor(x: g.indicator.x + g.indicator.width / 2, y: g.indicator.y + g.indicator.height / 2, 0x2EA043, tolerance: 3),
                "the success dot is green")
        #expect(rig.engine.statusBanner.current != nil)
        try rig.step(16)   // 1.03 s
        let gone = Self.screen(rig)
        #expect(gone.isColor(x: probe.x, y: probe.y, Self.red, tolerance: 6), "\(gone.rgb(x: probe.x, y: probe.y))")
        #expect(Self.whiteInk(gone, in: g.title) == 0)
        #expect(rig.engine.statusBanner.current == nil)
    }

    @Test("hideBanner takes it away at the next vblank; showBanner from another thread shows at the next vblank")
    func hideAndOtherThread() throws {
        let rig = try Self.rig()
        let board = rig.engine.statusBanner
        // Another thread shows it; the engine stays on this one (it is confined to the thread that made it).
        let shown = DispatchSemaphore(value: 0)
        Thread { board.show(Banner(title: "Import refused", detail: "The stick holds no manifest.json", style: .failure)); shown.signal() }.start()
        shown.wait()
        try rig.step(1)
        let g = try Self.geometry(rig)
        #expect(Self.screen(rig).isColor(x: g.indicator.x + g.indicator.width / 2, y: g.indicator.y + g.indicator.height / 2, 0xF85149, tolerance: 3))
        rig.engine.hideBanner()
        try rig.step(1)
        #expect(Self.screen(rig).isColor(x: g.panel.x + 4, y: g.panel.y + g.panel.height / 2, Self.red, tolerance: 6))
        #expect(rig.engine.bannerLayer.geometry(canvasWidth: 320, canvasHeight: 180) == nil)
    }

    @Test("rotated 90° the banner sits at the bottom of the portrait canvas: the screen's left edge")
    func rotated() throws {
        let rig = try Self.rig(display: DisplaySettings(rotation: .clockwise90))
        rig.engine.showBanner(Banner(title: "Updating catalog…", progress: 0.5))
        try rig.step(2)
        // Logical canvas 180×320; logical (x, y) shows at screen (319 − y, x).
        let g = try #require(rig.engine.bannerLayer.geometry(canvasWidth: 180, canvasHeight: 320))
        let m = BannerMetrics(canvasWidth: 180, canvasHeight: 320)
        #expect(g.panel.y + g.panel.height == 320 - m.margin)
        let img = Self.screen(rig)
        // The 16:9 video is letterboxed on the portrait canvas: the banner is over the black bar.
        let p = (x: g.panel.x + 3, y: g.panel.y + g.panel.height / 2)
        #expect(img.isColor(x: 319 - p.y, y: p.x, 0x12_1920, tolerance: 8), "\(img.rgb(x: 319 - p.y, y: p.x))")
        #expect(img.isColor(x: 159, y: 90, Self.red, tolerance: 6), "the middle of the screen is video")
        #expect(img.isColor(x: 319 - 2, y: 90, 0x000000, tolerance: 4), "the top of the canvas (the screen's right edge) is bar")
    }
}
