import Foundation
import Testing
import Media
@testable import Vitrine
import VitrineCore

/// Hostile input sequences through `PlaybackEngine.handleInput`, the handler libinput events reach:
/// several fingers, cancelled touches, taps while popups animate, Escape spam, edges, off-screen
/// points and NaN.
@Suite("Touch input: hostile sequences", .serialized)
struct HostileInputTests {
    static let w = 320.0, h = 180.0

    /// A playing 320x180 video with `overlays` (default: `menu` with Pause and Close buttons) and, when
    /// `open` is set, that popup shown and settled.
    static func rig(overlays: [String: Overlay]? = nil, open: String? = "menu", tap: Action? = nil,
                    idle: IdleRule? = nil) throws -> (EngineRig, OverlayLayer) {
        let dir = try Harness.newFolder("hostile")
        try FileManager.default.copyItem(atPath: try Harness.colorClip("red", seconds: 4, size: "320x180"), toPath: dir + "/media/red.mp4")
        let rig = EngineRig(catalog: dir, width: 320, height: 180)
        let menu = Overlay(title: "Menu", body: "Tap a button", buttons: [
            OverlayButton(label: "Pause", action: .pause), OverlayButton(label: "Close", action: .hideOverlays)])
        let layer = OverlayLayer(overlays: overlays ?? ["menu": menu], catalogDirectory: dir,
                                 log: Logger(label: "t", sink: LogSink.memory().0))
        rig.engine.overlays = layer
        rig.engine.input = InputRouter(transform: TouchTransform(screenWidth: 320, screenHeight: 180), idle: idle, tap: tap,
                                       log: Logger(label: "t", sink: LogSink.memory().0))
        rig.engine.play(PlaylistItem(id: "r", type: .video, src: "media/red.mp4"))
        try rig.run(until: 0.2)
        if let open {
            layer.presenter.show(open, at: rig.engine.lastHostTime)
            for _ in 0..<60 where layer.presenter.popup(open)?.phase != .shown { try rig.step(1) }
            #expect(layer.presenter.popup(open)?.phase == .shown)
        }
        return (rig, layer)
    }

    static func geometry(_ layer: OverlayLayer, _ id: String = "menu") throws -> OverlayGeometry {
        try #require(layer.geometry(id, canvasWidth: 320, canvasHeight: 180))
    }

    static func down(_ rig: EngineRig, slot: Int = 0, _ x: Double, _ y: Double, dt: Double = 0) {
        rig.engine.handleInput(.touchDown(slot: slot, x: x / w, y: y / h, time: rig.engine.lastHostTime + dt))
    }

    static func up(_ rig: EngineRig, slot: Int = 0, dt: Double = 0.05) {
        rig.engine.handleInput(.touchUp(slot: slot, time: rig.engine.lastHostTime + dt))
    }

    /// Down and up 50 ms apart at canvas point (x, y), then one vblank so the action applies.
    static func tap(_ rig: EngineRig, _ x: Double, _ y: Double) throws {
        down(rig, x, y)
        up(rig)
        try rig.step(1)
    }

    static func center(_ r: Rect) -> (Double, Double) { (Double(r.x) + Double(r.width) / 2, Double(r.y) + Double(r.height) / 2) }

    @Test("two fingers make no tap, whichever lifts first; a clean tap afterwards still works")
    func multiTouch() throws {
        let (rig, layer) = try Self.rig()
        let pause = Self.center(try Self.geometry(layer).buttons[0])
        for order in [[0, 1], [1, 0]] {
            Self.down(rig, slot: 0, pause.0, pause.1)
            Self.down(rig, slot: 1, 3, 3)                 // a second finger on the dimming
            for slot in order { Self.up(rig, slot: slot) }
            try rig.step(2)
            #expect(rig.engine.playbackState == .playing, "order \(order)")
            #expect(layer.presenter.isVisible("menu"), "order \(order)")
        }
        // Three fingers in, lifted in a shuffled order, with motion on a finger that is not the first.
        Self.down(rig, slot: 2, pause.0, pause.1)
        Self.down(rig, slot: 5, pause.0, pause.1)
        Self.down(rig, slot: 7, 3, 3)
        rig.engine.handleInput(.touchMotion(slot: 5, x: 0.5, y: 0.5, time: rig.engine.lastHostTime))
        Self.up(rig, slot: 5); Self.up(rig, slot: 2); Self.up(rig, slot: 7)
        // An up for a slot that never went down.
        Self.up(rig, slot: 42)
        try rig.step(2)
        #expect(rig.engine.playbackState == .playing)
        try Self.tap(rig, pause.0, pause.1)
        #expect(rig.engine.playbackState == .paused)
    }

    @Test("a touch cancelled mid-tap does nothing and clears the press; a stray up after it does nothing")
    func cancelMidTap() throws {
        let (rig, layer) = try Self.rig()
        let pause = Self.center(try Self.geometry(layer).buttons[0])
        Self.down(rig, pause.0, pause.1)
        #expect(layer.pressed?.index == 0, "press feedback")
        rig.engine.handleInput(.touchCancel(time: rig.engine.lastHostTime + 0.02))
        #expect(layer.pressed == nil)
        Self.up(rig)
        try rig.step(2)
        #expect(rig.engine.playbackState == .playing)
        #expect(layer.presenter.isVisible("menu"))
        try Self.tap(rig, pause.0, pause.1)
        #expect(rig.engine.playbackState == .paused)
    }

    @Test("taps during the hide animation reach no button of the hiding popup")
    func tapsWhileHiding() throws {
        let slow = Overlay(title: "Menu", buttons: [OverlayButton(label: "Pause", action: .pause)], duration: 1)
        let (rig, layer) = try Self.rig(overlays: ["menu": slow])
        let pause = Self.center(try Self.geometry(layer).buttons[0])
        try Self.tap(rig, 3, 3)                           // the dimming: starts a 1 s hide
        #expect(layer.presenter.popup("menu")?.phase == .disappearing)
        for _ in 0..<10 {
            try Self.tap(rig, pause.0, pause.1)
            #expect(rig.engine.playbackState == .playing)
        }
        // Escape and more dimming taps during the hide are harmless.
        for _ in 0..<5 { rig.engine.handleInput(.key(code: 1, pressed: true, time: rig.engine.lastHostTime)) }
        try Self.tap(rig, 3, 3)
        try rig.step(40)
        #expect(layer.presenter.stack.isEmpty)
    }

    @Test("Escape spam hides the stack one popup per press and stops at a modal one; releases and other keys do nothing")
    func escapeSpam() throws {
        let plain = Overlay(title: "Plain")
        let modal = Overlay(title: "Modal", modal: true)
        let (rig, layer) = try Self.rig(overlays: ["a": plain, "b": plain, "m": modal, "c": plain], open: nil)
        let t = rig.engine.lastHostTime
        for id in ["a", "m", "b", "c"] { layer.presenter.show(id, at: t) }
        try rig.step(10)
        for i in 0..<200 {
            rig.engine.handleInput(.key(code: 1, pressed: i % 2 == 0, time: t))
            rig.engine.handleInput(.key(code: 57, pressed: true, time: t))   // space
        }
        try rig.step(20)
        #expect(layer.presenter.visible.map(\.id) == ["a", "m"], "Escape stops at the modal popup: \(layer.presenter.visible.map(\.id))")
    }

    @Test("a tap on the panel's left and top edges is on the panel; one past its right or bottom edge is on the dimming")
    func panelEdges() throws {
        let (rig, layer) = try Self.rig()
        let p = try Self.geometry(layer).panel
        for (x, y) in [(Double(p.x), Double(p.y)), (Double(p.x), Double(p.y + p.height) - 0.01),
                       (Double(p.x + p.width) - 0.01, Double(p.y) + 1)] {
            try Self.tap(rig, x, y)
            #expect(layer.presenter.isVisible("menu"), "(\(x), \(y)) is on the panel")
        }
        try Self.tap(rig, Double(p.x + p.width), Double(p.y) + 1)
        #expect(!layer.presenter.isVisible("menu"), "the right edge is outside the panel")
    }

    @Test("points outside the screen hit the dimming; NaN and infinite coordinates or times are ignored")
    func outOfRangeAndNaN() throws {
        let (rig, layer) = try Self.rig()
        let t = rig.engine.lastHostTime
        let hostile: [(Double, Double, Double)] = [(.nan, 0.5, t), (0.5, .nan, t), (.nan, .nan, t), (.infinity, 0.5, t),
                                                   (-.infinity, .infinity, t), (0.5, 0.5, .nan), (0.5, 0.5, .infinity)]
        for (x, y, time) in hostile {
            rig.engine.handleInput(.touchDown(slot: 0, x: x, y: y, time: time))
            rig.engine.handleInput(.touchMotion(slot: 0, x: y, y: x, time: time))
            rig.engine.handleInput(.touchUp(slot: 0, time: time))
            rig.engine.handleInput(.pointerPosition(x: x, y: y, time: time))
            rig.engine.handleInput(.pointerButton(pressed: true, time: time))
            rig.engine.handleInput(.pointerButton(pressed: false, time: time))
            try rig.step(1)
            #expect(layer.presenter.isVisible("menu"), "(\(x), \(y)) at \(time)")
            #expect(rig.engine.playbackState == .playing)
        }
        rig.engine.handleInput(.touchDevice(widthMM: .nan, heightMM: 0))
        rig.engine.handleInput(.touchDevice(widthMM: 477, heightMM: 268))
        rig.engine.handleInput(.touchDown(slot: 0, x: -3, y: 7, time: t))
        rig.engine.handleInput(.touchUp(slot: 0, time: t + 0.05))
        try rig.step(1)
        #expect(!layer.presenter.isVisible("menu"), "a finite point off the screen is on the dimming")
    }

    @Test("a button that shows its own popup, tapped again and again, keeps one copy on the stack")
    func showOverlayLoop() throws {
        let loop = Overlay(title: "Loop", buttons: [OverlayButton(label: "Again", action: .showOverlay("loop")),
                                                   OverlayButton(label: "Other", action: .showOverlay("other"))])
        let other = Overlay(title: "Other", buttons: [OverlayButton(label: "Back", action: .showOverlay("loop"))])
        let (rig, layer) = try Self.rig(overlays: ["loop": loop, "other": other], open: "loop")
        for i in 0..<30 {
            let top = try #require(layer.presenter.top)
            let g = try Self.geometry(layer, top.id)
            let b = Self.center(g.buttons[top.id == "loop" ? i % 2 : 0])
            try Self.tap(rig, b.0, b.1)
        }
        try rig.step(10)
        #expect(layer.presenter.stack.count <= 2)
        #expect(Set(layer.presenter.stack.map(\.id)).count == layer.presenter.stack.count)
    }

    @Test("a tap that went down on the video does not press a button of a popup that appeared before it lifted")
    func tapStartedBeforePopup() throws {
        let (rig, layer) = try Self.rig(open: nil)
        let pause = Self.center(try Self.geometry(layer).buttons[0])
        Self.down(rig, pause.0, pause.1)
        layer.presenter.show("menu", at: rig.engine.lastHostTime)   // a cue point opens it under the finger
        try rig.step(1)
        Self.up(rig, dt: 0.01)
        try rig.step(2)
        #expect(rig.engine.playbackState == .playing, "the finger went down on the video, not on Pause")
        // The same with the dimming: the new popup must not be dismissed by a tap it never saw.
        layer.presenter.hideAllVisible(at: rig.engine.lastHostTime, animated: false)
        try rig.step(1)
        Self.down(rig, 3, 3)
        layer.presenter.show("menu", at: rig.engine.lastHostTime)
        try rig.step(1)
        Self.up(rig, dt: 0.01)
        try rig.step(2)
        #expect(layer.presenter.isVisible("menu"), "a tap that began before the popup does not dismiss it")
    }

    @Test("a tap that went down on a popup that hid before it lifted does not fall through to the video's tap action")
    func tapOutlivesPopup() throws {
        let (rig, layer) = try Self.rig(tap: .showOverlay("menu"))
        let pause = Self.center(try Self.geometry(layer).buttons[0])
        Self.down(rig, pause.0, pause.1)
        layer.presenter.hideAllVisible(reason: .autoHide, at: rig.engine.lastHostTime)   // autoHide, say
        Self.up(rig, dt: 0.01)
        try rig.step(2)
        #expect(!layer.presenter.isVisible("menu"), "the popup the finger was on is not reopened by the video's tap action")
        #expect(rig.engine.playbackState == .playing)
    }

    @Test("a finger whose up was lost does not keep later taps on the same slot from reaching what they went down on")
    func lostUp() throws {
        let (rig, layer) = try Self.rig(tap: .showOverlay("menu"))
        Self.down(rig, slot: 3, 3, 3)                     // on the menu's dimming; its up never arrives
        layer.presenter.hideAllVisible(at: rig.engine.lastHostTime, animated: false)
        try rig.step(1)
        Self.down(rig, slot: 3, 160, 90, dt: 1)            // the same slot again, on the video now
        Self.up(rig, slot: 3, dt: 1.05)
        try rig.step(2)
        #expect(layer.presenter.isVisible("menu"), "the tap on the video ran the tap action")
    }

    @Test("while the video is paused by a button, popups still animate away and taps still work")
    func pausedUnderPopup() throws {
        let (rig, layer) = try Self.rig()
        let pause = Self.center(try Self.geometry(layer).buttons[0])
        try Self.tap(rig, pause.0, pause.1)
        #expect(rig.engine.playbackState == .paused)
        let frozen = rig.engine.catalogTime
        try Self.tap(rig, 3, 3)
        try rig.step(12)
        #expect(layer.presenter.stack.isEmpty, "the hide animation ran to its end on a paused clock")
        #expect(rig.engine.catalogTime == frozen)
    }

    @Test("an idle rule with a tiny delay hides the popups on the next vblank and never crashes under input")
    func tinyIdle() throws {
        let (rig, layer) = try Self.rig(idle: IdleRule(after: 1e-9, item: "r"))
        try Self.tap(rig, 160, 90)
        try rig.step(12)
        #expect(!layer.presenter.isAnyVisible)
        for _ in 0..<20 {
            layer.presenter.show("menu", at: rig.engine.lastHostTime)
            Self.down(rig, 3, 3)
            try rig.step(1)
            Self.up(rig)
            try rig.step(1)
        }
    }
}
