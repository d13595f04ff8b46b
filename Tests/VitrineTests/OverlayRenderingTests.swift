import Foundation
import Testing
import Media
@testable import Vitrine
import VitrineCore

@Suite("Overlays drawn over the video", .serialized)
struct OverlayRenderingTests {
    static func catalog(modal: Bool = false, dimming: String = ##"{ "color": "#000000", "alpha": 0.5 }"##, style: String = "fade") throws -> String {
        let dir = try Harness.newFolder("overlay")
        try FileManager.default.copyItem(atPath: try Harness.colorClip("red", seconds: 3, size: "320x180"), toPath: dir + "/media/red.mp4")
        try Harness.writeManifest("""
            { "schema": "vitrine.manifest/1", "version": 1, "display": { "mode": "320x180@30" },
              "playlist": [ { "id": "r", "type": "video", "src": "media/red.mp4",
                              "cuePoints": [ { "time": 0.2, "id": "show", "action": { "type": "showOverlay", "overlay": "promo" } },
                                             { "time": 2.0, "id": "hide", "action": { "type": "hideOverlays" } } ] } ],
              "overlays": { "promo": { "title": "Winter hours", "body": "Mon–Fri 9–18", "style": "\(style)", "duration": 0.25,
                                       "modal": \(modal), "dimming": \(dimming),
                                       "buttons": [ { "label": "Close", "action": { "type": "hideOverlays" } } ] } } }
            """, in: dir)
        return dir
    }

    @Test("the dimming darkens the video by its alpha; the panel and the button's label are drawn; the popup goes away on hideOverlays")
    func dimmingPanelAndLabel() throws {
        let dir = try Self.catalog()
        let manifest = try Harness.manifest(in: dir)
        let (_, shots, _) = try Harness.play(manifest, catalog: dir, duration: 2.6, snapshots: [0.1, 1.0, 2.5])
        let before = shots[0.1]!, open = shots[1.0]!, after = shots[2.5]!
        #expect(before.isColor(x: 4, y: 4, 0xFF0000))
        // Black at alpha 0.5 over pure red: (127, 0, 0).
        #expect(open.isColor(x: 4, y: 4, 0x7F0000, tolerance: 6), "\(open.rgb(x: 4, y: 4))")
        let layer = OverlayLayer(overlays: manifest.overlays, catalogDirectory: dir, log: Logger(label: "t", sink: LogSink.memory().0))
        let g = try #require(layer.geometry("promo", canvasWidth: 320, canvasHeight: 180))
        // The panel's own colour inside its left padding, halfway down.
        #expect(open.isColor(x: g.panel.x + 4, y: g.panel.y + g.panel.height / 2, 0xF4F6F8, tolerance: 6))
        // The button: blue, with white label pixels in it.
        let b = g.buttons[0]
        #expect(open.isColor(x: b.x + 3, y: b.y + b.height / 2, 0x1F6FEB, tolerance: 8))
        var ink = 0
        for y in b.y..<(b.y + b.height) { for x in b.x..<(b.x + b.width) where open.rgb(x: x, y: y).r > 200 { ink += 1 } }
        #expect(ink > 20, "label pixels in the button: \(ink)")
        #expect(after.isColor(x: 4, y: 4, 0xFF0000) && after.isColor(x: 160, y: 90, 0xFF0000))
    }

    @Test("halfway through a fade the dimming is at half its alpha")
    func fadeMidway() throws {
        let dir = try Self.catalog(dimming: ##"{ "color": "#000000", "alpha": 1.0 }"##)
        // The cue fires on the frame at 0.2 s; the 0.25 s fade is half done 0.125 s later, and eases out.
        let (_, shots, _) = try Harness.play(try Harness.manifest(in: dir), catalog: dir, duration: 1, snapshots: [0.2 + 1.0 / 30, 0.9])
        let early = shots[0.2 + 1.0 / 30]!.rgb(x: 4, y: 4).r
        #expect(early > 60 && early < 250, "dimming has started but not finished: red \(early)")
        #expect(shots[0.9]!.isColor(x: 4, y: 4, 0x000000, tolerance: 4))
    }
}
