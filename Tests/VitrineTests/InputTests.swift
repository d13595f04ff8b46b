import Foundation
import Testing
import Media
@testable import Vitrine
import VitrineCore

/// Synthetic input through the same handler libinput events reach (`PlaybackEngine.handleInput`).
@Suite("Touch input on popups", .serialized)
struct InputTests {
    static func rig(modal: Bool, rotation: Rotation = .none) throws -> (EngineRig, OverlayLayer) {
        let dir = try Harness.newFolder("input")
        try FileManager.default.copyItem(atPath: try Harness.colorClip("red", seconds: 4, size: "320x180"), toPath: dir + "/media/red.mp4")
        let rig = EngineRig(catalog: dir, width: 320, height: 180)
        let overlay = Overlay(title: "Menu", body: "Tap a button", buttons: [
            OverlayButton(label: "Pause", action: .pause), OverlayButton(label: "Close", action: .hideOverlays)],
            modal: modal)
        let layer = OverlayLayer(overlays: ["menu": overlay], catalogDirectory: dir, log: Logger(label: "t", sink: LogSink.memory().0))
        rig.engine.overlays = layer
        rig.engine.input = InputRouter(transform: TouchTransform(screenWidth: 320, screenHeight: 180, rotation: rotation),
                                       idle: nil, log: Logger(label: "t", sink: LogSink.memory().0))
        rig.engine.play(PlaylistItem(id: "r", type: .video, src: "media/red.mp4",
                                     cuePoints: [CuePoint(time: 0.1, id: "open", action: .showOverlay("menu"))]))
        try rig.run(until: 0.6)
        #expect(layer.presenter.isVisible("menu"))
        return (rig, layer)
    }

    /// Taps the canvas point (x, y) of a 320x180 unrotated screen: down, then up 0.1 s later.
    static func tap(_ rig: EngineRig, x: Double, y: Double) throws {
        let t = rig.engine.lastHostTime
        rig.engine.handleInput(.touchDown(slot: 0, x: x / 320, y: y / 180, time: t))
        try rig.step(3)
        rig.engine.handleInput(.touchUp(slot: 0, time: t + 0.1))
        try rig.step(1)
    }

    @Test("a tap on a button runs its action; a tap on the dimming hides a non-modal popup")
    func buttonsAndDimming() throws {
        let (rig, layer) = try Self.rig(modal: false)
        let g = try #require(layer.geometry("menu", canvasWidth: 320, canvasHeight: 180))
        let pause = g.buttons[0]
        try Self.tap(rig, x: Double(pause.x + pause.width / 2), y: Double(pause.y + pause.height / 2))
        #expect(rig.engine.playbackState == .paused)
        #expect(layer.presenter.isVisible("menu"), "buttons do not close the popup themselves")
        try Self.tap(rig, x: 3, y: 3)            // the dimming, outside the panel
        #expect(!layer.presenter.isVisible("menu"))
    }

    @Test("tapping the dimming never hides a modal popup; its Close button does")
    func modal() throws {
        let (rig, layer) = try Self.rig(modal: true)
        try Self.tap(rig, x: 3, y: 3)
        #expect(layer.presenter.isVisible("menu"))
        rig.engine.handleInput(.key(code: 1, pressed: true, time: rig.engine.lastHostTime))
        #expect(layer.presenter.isVisible("menu"), "Escape does not close a modal popup")
        let g = try #require(layer.geometry("menu", canvasWidth: 320, canvasHeight: 180))
        let close = g.buttons[1]
        try Self.tap(rig, x: Double(close.x + close.width / 2), y: Double(close.y + close.height / 2))
        try rig.step(2)
        #expect(!layer.presenter.isVisible("menu"))
    }

    @Test("Escape closes a non-modal popup; a drag across a button never triggers it")
    func escapeAndDrag() throws {
        let (rig, layer) = try Self.rig(modal: false)
        let g = try #require(layer.geometry("menu", canvasWidth: 320, canvasHeight: 180))
        let pause = g.buttons[0]
        let t = rig.engine.lastHostTime
        // Down on the button, move 40 % of the screen away and back, up: a drag, not a tap.
        rig.engine.handleInput(.touchDown(slot: 0, x: Double(pause.midX) / 320, y: Double(pause.midY) / 180, time: t))
        rig.engine.handleInput(.touchMotion(slot: 0, x: 0.9, y: 0.1, time: t + 0.05))
        rig.engine.handleInput(.touchMotion(slot: 0, x: Double(pause.midX) / 320, y: Double(pause.midY) / 180, time: t + 0.1))
        rig.engine.handleInput(.touchUp(slot: 0, time: t + 0.15))
        try rig.step(2)
        #expect(rig.engine.playbackState == .playing)
        rig.engine.handleInput(.key(code: 1, pressed: true, time: rig.engine.lastHostTime))
        try rig.step(12)
        #expect(!layer.presenter.isVisible("menu"))
    }

    @Test("a relative mouse moves the pointer from the screen centre by its motion in pixels; its click taps there")
    func relativeMouse() throws {
        let (rig, layer) = try Self.rig(modal: false)
        let g = try #require(layer.geometry("menu", canvasWidth: 320, canvasHeight: 180))
        let pause = g.buttons[0]
        let t = rig.engine.lastHostTime
        // From (160, 90) to the Pause button's centre, in two moves; then a click.
        let dx = Double(pause.midX - 160), dy = Double(pause.midY - 90)
        rig.engine.handleInput(.pointerMove(dx: dx / 2, dy: dy / 2, time: t))
        rig.engine.handleInput(.pointerMove(dx: dx / 2, dy: dy / 2, time: t + 0.01))
        rig.engine.handleInput(.pointerButton(pressed: true, time: t + 0.02))
        #expect(layer.pressed?.index == 0)
        rig.engine.handleInput(.pointerButton(pressed: false, time: t + 0.1))
        try rig.step(2)
        #expect(rig.engine.playbackState == .paused)
        // Far off screen: the pointer stops at the edge (the dimming), and a click closes the popup.
        rig.engine.handleInput(.pointerMove(dx: -10_000, dy: -10_000, time: t + 0.2))
        rig.engine.handleInput(.pointerButton(pressed: true, time: t + 0.21))
        rig.engine.handleInput(.pointerButton(pressed: false, time: t + 0.25))
        try rig.step(12)
        #expect(!layer.presenter.isVisible("menu"))
    }

    @Test("press feedback goes when a finger drags off the tap radius, and never follows a second finger")
    func pressFeedback() throws {
        let (rig, layer) = try Self.rig(modal: false)
        let g = try #require(layer.geometry("menu", canvasWidth: 320, canvasHeight: 180))
        let pause = g.buttons[0], close = g.buttons[1]
        let t = rig.engine.lastHostTime
        rig.engine.handleInput(.touchDown(slot: 0, x: Double(pause.midX) / 320, y: Double(pause.midY) / 180, time: t))
        #expect(layer.pressed?.index == 0)
        rig.engine.handleInput(.touchMotion(slot: 0, x: 0.95, y: 0.05, time: t + 0.05))
        #expect(layer.pressed == nil, "dragged away: no longer pressed")
        rig.engine.handleInput(.touchUp(slot: 0, time: t + 0.1))
        rig.engine.handleInput(.touchDown(slot: 0, x: Double(pause.midX) / 320, y: Double(pause.midY) / 180, time: t + 0.2))
        rig.engine.handleInput(.touchDown(slot: 1, x: Double(close.midX) / 320, y: Double(close.midY) / 180, time: t + 0.21))
        #expect(layer.pressed == nil, "two fingers are no tap")
        rig.engine.handleInput(.touchCancel(time: t + 0.3))
        try rig.step(2)
        #expect(rig.engine.playbackState == .playing)
    }

    @Test("a pressed button is drawn in the pressed colour on screen, and in the normal one again after release; the other button never changes")
    func pressedButtonPixels() throws {
        let (rig, layer) = try Self.rig(modal: false)
        let g = try #require(layer.geometry("menu", canvasWidth: 320, canvasHeight: 180))
        let pause = g.buttons[0], close = g.buttons[1]
        // A point inside each button, clear of its label and its rounded corners.
        func colour(_ r: VitrineCore.Rect) -> UInt32 {
            var p: UInt32 = 0
            rig.output.withFrontBuffer { t in p = t.base.load(fromByteOffset: r.midY * t.stride + (r.x + 3) * 4, as: UInt32.self) }
            return p & 0x00FF_FFFF
        }
        try rig.step(1)
        let normal = OverlayLayer.buttonColor & 0x00FF_FFFF, pressed = OverlayLayer.buttonPressedColor & 0x00FF_FFFF
        #expect(colour(pause) == normal && colour(close) == normal)
        let t = rig.engine.lastHostTime
        rig.engine.handleInput(.touchDown(slot: 0, x: Double(pause.midX) / 320, y: Double(pause.midY) / 180, time: t))
        try rig.step(1)
        #expect(colour(pause) == pressed)
        #expect(colour(close) == normal)
        // Dragged away: the normal colour again.
        rig.engine.handleInput(.touchMotion(slot: 0, x: 0.95, y: 0.05, time: t + 0.05))
        try rig.step(1)
        #expect(colour(pause) == normal && colour(close) == normal)
        rig.engine.handleInput(.touchUp(slot: 0, time: t + 0.1))
        // Pressed again: the pressed copy is made again from the kept panel, the same pixels.
        rig.engine.handleInput(.touchDown(slot: 0, x: Double(close.midX) / 320, y: Double(close.midY) / 180, time: t + 0.2))
        try rig.step(1)
        #expect(colour(close) == pressed && colour(pause) == normal)
        rig.engine.handleInput(.touchCancel(time: t + 0.3))
        try rig.step(1)
        #expect(colour(close) == normal)
    }

    @Test("the manifest's tap action: a tap on the video opens the menu; taps on the open popup do not reopen it")
    func tapOpensMenu() throws {
        let (rig, layer) = try Self.rig(modal: false)
        rig.engine.input?.tapAction = .showOverlay("menu")
        try Self.tap(rig, x: 3, y: 3)            // the dimming: hides the popup, does not reopen it
        try rig.step(12)
        #expect(!layer.presenter.isAnyVisible)
        try Self.tap(rig, x: 160, y: 90)         // the video: the tap action opens it again
        #expect(layer.presenter.isVisible("menu"))
        try rig.step(12)
        #expect(layer.presenter.stack.map(\.id) == ["menu"])
    }

    @Test("a popup's show and hide animations are reported with the video frames presented and dropped under them")
    func animationFrameDrops() throws {
        let dir = try Harness.newFolder("anim")
        try FileManager.default.copyItem(atPath: try Harness.colorClip("red", seconds: 4, size: "320x180"), toPath: dir + "/media/red.mp4")
        let rig = EngineRig(catalog: dir, width: 320, height: 180)
        let recorder = EventRecorder()
        rig.engine.events.observe { recorder.add($0) }
        rig.engine.overlays = OverlayLayer(overlays: ["menu": Overlay(title: "Menu", style: .slide, duration: 0.5)],
                                           catalogDirectory: dir, log: Logger(label: "t", sink: LogSink.memory().0))
        rig.engine.play(PlaylistItem(id: "r", type: .video, src: "media/red.mp4",
                                     cuePoints: [CuePoint(time: 0.5, id: "open", action: .showOverlay("menu")),
                                                 CuePoint(time: 1.5, id: "close", action: .hideOverlays)]))
        try rig.run(until: 2.5)
        let reports = recorder.events.compactMap { e -> AnimationReport? in
            if case let .overlayAnimation(r) = e { return r } else { return nil }
        }
        try #require(reports.count == 2)
        #expect(reports[0].phases == ["menu:appearing"])
        #expect(reports[1].phases == ["menu:disappearing"])
        for r in reports {
            // 0.5 s at 30 Hz: 15 vblanks (first to last 14 periods), each with a new 30 fps video frame.
            #expect((14...16).contains(r.vblanks), "vblanks \(r.vblanks)")
            #expect(abs(r.seconds - Double(r.vblanks - 1) / 30) < 1e-6)
            #expect(r.missedVblanks == 0)
            #expect(r.framesDropped == 0)
            #expect(r.dropped == DroppedFrames())
            #expect(r.framesPresented == r.vblanks)
            #expect(r.periodMs == 1000.0 / 30)
            #expect(r.drawMaxMs > 0 && r.drawMeanMs > 0 && r.drawMeanMs <= r.drawMaxMs)
        }
    }

    @Test("with the screen rotated 90°, a touch lands on the rotated button")
    func rotatedTouch() throws {
        let (rig, layer) = try Self.rig(modal: false, rotation: .clockwise90)
        // The logical canvas is 180x320; find the Pause button there and touch where it is on the panel.
        let g = try #require(layer.geometry("menu", canvasWidth: 180, canvasHeight: 320))
        let b = g.buttons[0]
        let screen = Layout.screenPoint(canvasX: b.midX, canvasY: b.midY, rotation: .clockwise90, screenWidth: 320, screenHeight: 180)
        try Self.tap(rig, x: Double(screen.x), y: Double(screen.y))
        #expect(rig.engine.playbackState == .paused)
    }
}

extension Rect {
    var midX: Int { x + width / 2 }
    var midY: Int { y + height / 2 }
}

@Suite("Popups: stacked composition")
struct StackedPopupCompositionTests {
    @Test("two stacked popups drawn in one pass from the picture under them match drawing each dimming in turn (±2 per channel)")
    func fusedMatchesSequential() throws {
        let layer = OverlayLayer(overlays: ["menu": Overlay(title: "Menu", body: "Below", maxWidth: 280),
                                            "info": Overlay(title: "Info", body: "On top", dimming: OverlayDimming(color: RGBColor(red: 0x20, green: 0x40, blue: 0x60), alpha: 0.4), maxWidth: 160)],
                                 catalogDirectory: "/", log: Logger(label: "t", sink: LogSink.memory().0))
        #expect(layer.presenter.show("menu", at: 0, animated: false))
        #expect(layer.presenter.show("info", at: 0, animated: false))
        let base = ImageBuffer(width: 320, height: 180)
        base.withTarget { t in
            for y in 0..<180 { t.fill(PixelRect(x: 0, y: y, width: 320, height: 1), with: 0xFF00_0000 | UInt32(y) << 16 | UInt32(255 - y) << 8 | 0x80) }
        }
        let fused = ImageBuffer(width: 320, height: 180), sequential = ImageBuffer(width: 320, height: 180)
        base.withTarget { b in
            fused.withTarget { layer.draw(into: $0, at: 1, base: b) }
            sequential.withTarget { $0.copy(from: b); layer.draw(into: $0, at: 1) }
        }
        var worst = 0
        for y in stride(from: 0, to: 180, by: 3) {
            for x in stride(from: 0, to: 320, by: 3) {
                let p = fused.rgb(x: x, y: y), q = sequential.rgb(x: x, y: y)
                worst = max(worst, abs(Int(p.r) - Int(q.r)), abs(Int(p.g) - Int(q.g)), abs(Int(p.b) - Int(q.b)))
            }
        }
        #expect(worst <= 2, "largest difference \(worst)")
        // Outside both panels: the picture dimmed by black 0.5, then #204060 at 0.4.
        let corner = fused.rgb(x: 2, y: 0), under = base.rgb(x: 2, y: 0)
        let expected = Int((Double(under.b) * 0.5 * 0.6 + 0x60 * 0.4).rounded())
        #expect(abs(Int(corner.b) - expected) <= 2)
    }
}

@Suite("Popups: image")
struct PopupImageTests {
    @Test("an overlay image is drawn above the title, centred, at its own size when it fits; a missing one is left out")
    func imageAboveTitle() throws {
        let png = try Harness.clip("magenta-100x50.png", ["-f", "lavfi", "-i", "color=c=#FF00FF:s=100x50", "-frames:v", "1"])
        let dir = (png as NSString).deletingLastPathComponent
        let (sink, records) = LogSink.memory()
        let layer = OverlayLayer(overlays: ["card": Overlay(title: "Card", body: "With a picture", image: (png as NSString).lastPathComponent),
                                            "broken": Overlay(title: "Card", image: "missing.png")],
                                 catalogDirectory: dir, log: Logger(label: "t", sink: sink))
        #expect(layer.presenter.show("card", at: 0, animated: false))
        let canvas = ImageBuffer(width: 640, height: 360)
        canvas.withTarget { layer.draw(into: $0, at: 1) }
        let g = try #require(layer.geometry("card", canvasWidth: 640, canvasHeight: 360))
        let midX = g.content.x + g.content.width / 2
        // The picture's centre row, 25 px below the content's top: magenta; its edges 50 px either side.
        let p = canvas.rgb(x: midX, y: g.content.y + 25)
        #expect(p.r > 240 && p.g < 15 && p.b > 240, "\(p)")
        #expect(canvas.rgb(x: midX - 45, y: g.content.y + 25) == p)
        #expect(canvas.rgb(x: midX - 55, y: g.content.y + 25) != p, "100 px wide, not stretched")
        #expect(g.content.height > 50, "the title and body come below it")

        let g2 = try #require(layer.geometry("broken", canvasWidth: 640, canvasHeight: 360))
        #expect(g2.content.height < 50)
        #expect(records().contains { $0.message.contains("missing.png") && $0.message.contains("drawn without it") })
    }
}
