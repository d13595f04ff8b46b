import Foundation
import Testing
import SystemSupport
import Media
@testable import Vitrine
import VitrineCore
import CatalogStore

/// The status banner with a popup up: legible over the popup's dimming, under its panel. And its
/// text after a catalog switch.
@Suite("Status banner over a popup's dimming, and after a switch", .serialized)
struct BannerOverPopupTests {
    /// The red rig with popup `p` (black dimming at `alpha`, a tall body) shown and the banner up.
    static func rigWithPopup(alpha: Double, body: String = "Mon–Fri 9–18") throws -> EngineRig {
        let rig = try BannerRenderingTests.rig()
        let popup = Overlay(title: "Opening hours", body: body, duration: 0.1, dimming: OverlayDimming(color: .black, alpha: alpha))
        rig.engine.overlays = OverlayLayer(overlays: ["p": popup], catalogDirectory: "/", log: Logger(label: "t", sink: LogSink.memory().0))
        #expect(rig.engine.overlays!.presenter.perform(.showOverlay("p"), at: rig.engine.lastHostTime) == true)
        rig.engine.showBanner(Banner(title: "Updating catalog…", detail: "37 %", progress: 0.37))
        try rig.step(10)   // past the popup's 0.1 s animation
        return rig
    }

    @Test("under a popup dimming the screen to 10 %, the banner keeps its own colours: panel, white title, blue fill")
    func legibleOverDimming() throws {
        let rig = try Self.rigWithPopup(alpha: 0.9)
        let img = BannerRenderingTests.screen(rig)
        let g = try BannerRenderingTests.geometry(rig)
        #expect(img.isColor(x: 4, y: 4, 0x1A0000, tolerance: 6), "the video is dimmed: \(img.rgb(x: 4, y: 4))")
        let probe = (x: g.panel.x + 3, y: g.panel.y + g.panel.height / 2)
        // The panel over the dimmed red: #141C24 at 0xE0 over (26, 0, 0) is (21, 25, 32); the panel
        // itself dimmed would be (5, 3, 3).
        #expect(img.isColor(x: probe.x, y: probe.y, 0x15_1920, tolerance: 6), "\(img.rgb(x: probe.x, y: probe.y))")
        // White title ink where no popup panel is (the panel is light too).
        let panel = try #require(rig.engine.overlays?.geometry("p", canvasWidth: 320, canvasHeight: 180)).panel
        var ink = 0
        for y in g.title.y..<(g.title.y + g.title.height) { for x in g.title.x..<(g.title.x + g.title.width) {
            let inPanel = x >= panel.x && x < panel.x + panel.width && y >= panel.y && y < panel.y + panel.height
            let p = img.rgb(x: x, y: y)
            if !inPanel && p.r > 200 && p.g > 200 && p.b > 200 { ink += 1 }
        } }
        #expect(ink > 30, "the title is white, not dimmed grey: \(ink) white pixels")
        let bar = try #require(g.bar)
        #expect(img.isColor(x: bar.x + Int(Double(bar.width) * 0.2), y: bar.y + bar.height / 2, 0x388BFD, tolerance: 3))
    }

    @Test("where a popup's panel covers the banner, the panel is on top (it takes the taps)")
    func panelOnTop() throws {
        let rig = try Self.rigWithPopup(alpha: 0.5, body: String(repeating: "A long notice that fills the popup. ", count: 12))
        let img = BannerRenderingTests.screen(rig)
        let banner = try BannerRenderingTests.geometry(rig).panel
        let layer = try #require(rig.engine.overlays)
        let panel = try #require(layer.geometry("p", canvasWidth: 320, canvasHeight: 180)).panel
        let top = max(banner.y, panel.y), bottom = min(banner.y + banner.height, panel.y + panel.height)
        let left = max(banner.x, panel.x) + 6, right = min(banner.x + banner.width, panel.x + panel.width) - 6
        #expect(top < bottom && left < right, "the panel (\(panel)) overlaps the banner (\(banner))")
        // Inside the overlap: the panel's light colour and its text, never the banner's dark panel
        // (#141C24 at 0xE0 over the dimmed red: (24, 25, 32)).
        var light = 0, bannerDark = 0, total = 0
        for y in top..<bottom { for x in stride(from: left, to: right, by: 3) {
            total += 1
            if img.isColor(x: x, y: y, 0xF4F6F8, tolerance: 4) { light += 1 }
            if img.isColor(x: x, y: y, 0x18_1920, tolerance: 10) { bannerDark += 1 }
        } }
        #expect(bannerDark == 0, "\(bannerDark) banner pixels over the panel")
        #expect(Double(light) / Double(total) > 0.6, "\(light) of \(total) are the panel's colour")
        // Outside the panel, the banner shows: its dark colour at its left padding.
        let outside = (x: banner.x + 3, y: banner.y + banner.height / 2)
        if outside.x < panel.x { #expect(img.isColor(x: outside.x, y: outside.y, 0x18_1920, tolerance: 10), "\(img.rgb(x: outside.x, y: outside.y))") }
    }

    @Test("an import's 'Playing it after the current item' says 'Playing now' once the new catalog is on screen, for the rest of its 10 s")
    func textAfterSwitch() throws {
        let service = try PlayerImportTests.serviceWithStick("banner-switch")
        // A red catalog playing, as `vitrine run` wires the import service into it.
        let (redDir, red) = try CatalogSwitchTests.catalog("red", seconds: 3)
        var o = RunOptions()
        o.output = .headless; o.duration = 5; o.realtime = true
        let player = Player(manifest: red, catalogDirectory: redDir, options: o, log: Logger(label: "t", sink: LogSink.memory().0))
        let seen = BannerLog()
        player.configureEngine = { engine in
            service.banner = engine.statusBanner
            player.onVblank = { now in
                service.poll(now: now)
                seen.note(engine.nowPlaying?.id, engine.statusBanner.current?.detail)
            }
            player.nextCatalog = { service.takeSwitchedCatalog().map { CatalogSwitch(manifest: $0.manifest, directory: $0.directory, immediate: false) } }
        }
        player.catalogStarted = { service.catalogStarted() }
        _ = try player.run()
        let red_ = seen.details(while: "red"), blue = seen.details(while: "blue")
        #expect(red_.contains("Playing it after the current item"), "\(red_)")
        #expect(!blue.isEmpty, "blue played")
        // The vblank blue first shows on was drawn with the banner as it was; from the next one, "Playing now".
        #expect(seen.count(item: "blue", detail: "Playing it after the current item") <= 1, "\(blue)")
        #expect(blue.contains(ImportService.playingNowDetail))
        // Carried to the next engine (a display restart, the slate left for it) once taken: "Playing now" too.
        let next = StatusBanner()
        service.banner = next
        #expect(next.current == nil || next.current?.detail == ImportService.playingNowDetail)
    }

    @Test("the result carried to a new engine after its catalog was taken says 'Playing now'")
    func carriedAfterTaken() throws {
        let service = try PlayerImportTests.serviceWithStick("banner-carry")
        let slate = StatusBanner()
        service.banner = slate
        var taken: LibraryCatalog?
        #expect(PlayerImportTests.waitFor(20) { service.poll(now: monotonicNow()); taken = service.takeSwitchedCatalog(); return taken != nil })
        #expect(slate.current?.detail == "Playing it after the current item")
        let next = StatusBanner()
        service.banner = next
        #expect(next.current?.title == "Updated to version 1: 1 item")
        #expect(next.current?.detail == ImportService.playingNowDetail)
    }
}

/// The banner's detail at each vblank, with the item on screen.
final class BannerLog: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [(item: String?, detail: String?)] = []
    func note(_ item: String?, _ detail: String?) { lock.lock(); list.append((item, detail)); lock.unlock() }
    func count(item: String, detail: String) -> Int {
        lock.lock(); defer { lock.unlock() }
        return list.filter { $0.item == item && $0.detail == detail }.count
    }
    func details(while item: String) -> Set<String> {
        lock.lock(); defer { lock.unlock() }
        return Set(list.filter { $0.item == item }.compactMap(\.detail))
    }
}
