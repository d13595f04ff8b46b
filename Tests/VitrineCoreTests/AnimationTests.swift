import Testing
@testable import VitrineCore

private func close(_ a: Double, _ b: Double, _ tolerance: Double = 1e-9) -> Bool { abs(a - b) <= tolerance }

@Suite("Overlay animations")
struct AnimationTests {
    /// The row-of-two panel from the layout tests, on a 1920×1080 canvas.
    let frame = Rect(x: 600, y: 420, width: 720, height: 240)

    @Test func easingValuesAtStartMiddleAndEnd() {
        for easing in Easing.allCases {
            #expect(easing(0) == 0)
            #expect(easing(1) == 1)
            #expect(easing(-0.5) == 0 && easing(1.5) == 1 && easing(.nan) == 0)  // clamped
        }
        #expect(Easing.linear(0.5) == 0.5)
        #expect(Easing.easeIn(0.5) == 0.125)
        #expect(Easing.easeOut(0.5) == 0.875)
        #expect(Easing.easeInOut(0.5) == 0.5)
        #expect(Easing.easeInOut(0.25) == 0.0625)
        #expect(Easing.easeInOut(0.75) == 0.9375)
        #expect(Easing.easeOut(0.2) > Easing.linear(0.2) && Easing.easeIn(0.2) < Easing.linear(0.2))
    }

    @Test func timelineProgressShowsAndHides() {
        #expect(OverlayAnimation.progress(elapsed: 0, duration: 0.25) == 0)
        #expect(OverlayAnimation.progress(elapsed: 0.125, duration: 0.25) == 0.5)
        #expect(OverlayAnimation.progress(elapsed: 0.25, duration: 0.25) == 1)
        #expect(OverlayAnimation.progress(elapsed: 3, duration: 0.25) == 1)
        #expect(OverlayAnimation.progress(elapsed: -1, duration: 0.25) == 0)  // a late timestamp never runs backwards
        #expect(OverlayAnimation.progress(elapsed: 0, duration: 0.25, from: 1, hiding: true) == 1)
        #expect(OverlayAnimation.progress(elapsed: 0.125, duration: 0.25, from: 1, hiding: true) == 0.5)
        #expect(OverlayAnimation.progress(elapsed: 0.25, duration: 0.25, from: 1, hiding: true) == 0)
        // A hide that interrupts a show at 0.4 reverses from there.
        #expect(close(OverlayAnimation.progress(elapsed: 0.05, duration: 0.25, from: 0.4, hiding: true), 0.2))
        #expect(OverlayAnimation.progress(elapsed: 0.5, duration: 0.25, from: 0.4, hiding: true) == 0)
    }

    @Test func fade() {
        let start = OverlayAnimation.appearance(style: .fade, progress: 0, frame: frame, canvasHeight: 1080, dimmingAlpha: 0.5)
        let middle = OverlayAnimation.appearance(style: .fade, progress: 0.5, frame: frame, canvasHeight: 1080, dimmingAlpha: 0.5)
        let end = OverlayAnimation.appearance(style: .fade, progress: 1, frame: frame, canvasHeight: 1080, dimmingAlpha: 0.5)
        #expect(start == OverlayAppearance(alpha: 0, dimmingAlpha: 0, scale: 1, offsetY: 0))
        #expect(middle == OverlayAppearance(alpha: 0.875, dimmingAlpha: 0.4375, scale: 1, offsetY: 0))
        #expect(end == OverlayAppearance(alpha: 1, dimmingAlpha: 0.5, scale: 1, offsetY: 0))
        #expect(end.drawnFrame(frame) == (600, 420, 720, 240))
        let linear = OverlayAnimation.appearance(style: .fade, progress: 0.5, frame: frame, canvasHeight: 1080,
                                                 dimmingAlpha: 0.8, easing: .linear)
        #expect(linear == OverlayAppearance(alpha: 0.5, dimmingAlpha: 0.4))
    }

    @Test func popupScalesAboutTheCentre() {
        let start = OverlayAnimation.appearance(style: .popup, progress: 0, frame: frame, canvasHeight: 1080, dimmingAlpha: 0.5)
        #expect(start == OverlayAppearance(alpha: 0, dimmingAlpha: 0, scale: 0.8, offsetY: 0))
        #expect(start.drawnFrame(frame) == (672, 444, 576, 192))

        let middle = OverlayAnimation.appearance(style: .popup, progress: 0.5, frame: frame, canvasHeight: 1080, dimmingAlpha: 0.5)
        #expect(middle.alpha == 0.875 && middle.dimmingAlpha == 0.4375)
        #expect(close(middle.scale, 0.975))
        let m = middle.drawnFrame(frame)
        #expect(close(m.x, 609) && close(m.y, 423) && close(m.width, 702) && close(m.height, 234))
        #expect(close(m.x + m.width / 2, 960) && close(m.y + m.height / 2, 540))  // the centre never moves

        let end = OverlayAnimation.appearance(style: .popup, progress: 1, frame: frame, canvasHeight: 1080, dimmingAlpha: 0.5)
        #expect(end == OverlayAppearance(alpha: 1, dimmingAlpha: 0.5, scale: 1, offsetY: 0))
        #expect(end.drawnFrame(frame) == (600, 420, 720, 240))
    }

    @Test func slideRisesFromBelowTheBottomEdge() {
        let start = OverlayAnimation.appearance(style: .slide, progress: 0, frame: frame, canvasHeight: 1080, dimmingAlpha: 0.5)
        #expect(start == OverlayAppearance(alpha: 1, dimmingAlpha: 0, scale: 1, offsetY: 660))
        #expect(start.drawnFrame(frame) == (600, 1080, 720, 240))   // top edge on the canvas's bottom edge

        let middle = OverlayAnimation.appearance(style: .slide, progress: 0.5, frame: frame, canvasHeight: 1080, dimmingAlpha: 0.5)
        #expect(middle == OverlayAppearance(alpha: 1, dimmingAlpha: 0.4375, scale: 1, offsetY: 82.5))
        #expect(middle.drawnFrame(frame).y == 502.5)

        let end = OverlayAnimation.appearance(style: .slide, progress: 1, frame: frame, canvasHeight: 1080, dimmingAlpha: 0.5)
        #expect(end == OverlayAppearance(alpha: 1, dimmingAlpha: 0.5, scale: 1, offsetY: 0))

        let linear = OverlayAnimation.appearance(style: .slide, progress: 0.5, frame: frame, canvasHeight: 1080,
                                                 dimmingAlpha: 0.5, easing: .linear)
        #expect(linear.offsetY == 330)
        // Portrait canvas: 1920 high.
        let portrait = OverlayAnimation.appearance(style: .slide, progress: 0, frame: Rect(x: 150, y: 678, width: 780, height: 564),
                                                   canvasHeight: 1920, dimmingAlpha: 0.5)
        #expect(portrait.offsetY == 1242)
    }

    @Test("hiding is the show played backwards", arguments: OverlayStyle.allCases)
    func hidingReversesShowing(_ style: OverlayStyle) {
        let duration = 0.25
        for elapsed in [0.0, 0.05, 0.125, 0.2, 0.25] {
            let showing = OverlayAnimation.appearance(
                style: style, progress: OverlayAnimation.progress(elapsed: duration - elapsed, duration: duration),
                frame: frame, canvasHeight: 1080, dimmingAlpha: 0.6)
            let hiding = OverlayAnimation.appearance(
                style: style, progress: OverlayAnimation.progress(elapsed: elapsed, duration: duration, from: 1, hiding: true),
                frame: frame, canvasHeight: 1080, dimmingAlpha: 0.6)
            #expect(close(showing.alpha, hiding.alpha) && close(showing.dimmingAlpha, hiding.dimmingAlpha))
            #expect(close(showing.scale, hiding.scale) && close(showing.offsetY, hiding.offsetY, 1e-6))
        }
    }

    @Test func appearanceOfAnOverlayUsesItsStyleAndDimming() {
        let overlay = Overlay(style: .popup, dimming: OverlayDimming(color: .black, alpha: 0.8))
        let a = OverlayAnimation.appearance(of: overlay, progress: 0.5, frame: frame, canvasHeight: 1080)
        #expect(close(a.dimmingAlpha, 0.7) && close(a.scale, 0.975) && a.alpha == 0.875)
    }
}
