import Testing
@testable import VitrineCore

/// Records every callback as a line, and refuses to hide the ids in `refuse`.
private final class Recorder: ModalPresenterDelegate {
    var log: [String] = []
    var refuse: Set<String> = []
    var onDidHide: ((ModalPresenter, String) -> Void)?

    func modalPresenter(_ presenter: ModalPresenter, shouldHide id: String, reason: ModalHideReason) -> Bool {
        log.append("should \(id) \(reason)")
        return !refuse.contains(id)
    }
    func modalPresenter(_ presenter: ModalPresenter, willHide id: String, reason: ModalHideReason) {
        log.append("will \(id) \(reason)")
    }
    func modalPresenter(_ presenter: ModalPresenter, didHide id: String, reason: ModalHideReason) {
        log.append("did \(id) \(reason)")
        onDidHide?(presenter, id)
    }
    func modalPresenter(_ presenter: ModalPresenter, didShow id: String) { log.append("shown \(id)") }
}

private let overlays: [String: Overlay] = [
    "a": Overlay(title: "A", buttons: [OverlayButton(label: "Close", action: .hideOverlays)]),
    "b": Overlay(title: "B", buttons: [OverlayButton(label: "Go", action: .jump(item: "welcome", time: 0)),
                                       OverlayButton(label: "Mute", action: .setVolume(0))]),
    "c": Overlay(title: "C", style: .slide, duration: 0.5),
    "m": Overlay(title: "Modal", modal: true),
    "auto": Overlay(title: "Auto", autoHide: 5),
]

/// A presenter with `overlays` and a fresh recorder (returned too, since the delegate is weak).
private func presenter() -> (ModalPresenter, Recorder) {
    let presenter = ModalPresenter(overlays: overlays)
    let recorder = Recorder()
    presenter.delegate = recorder
    return (presenter, recorder)
}

@Suite("Modal presentation")
struct ModalPresenterTests {
    @Test func showAnimatesInThenIsShown() throws {
        let (p, r) = presenter()
        #expect(!p.isAnyVisible && p.top == nil)
        #expect(p.show("a", at: 10))
        let popup = try #require(p.top)
        #expect(popup.id == "a" && popup.phase == .appearing && popup.isVisible && p.isAnyVisible)
        #expect(popup.progress(at: 10) == 0)
        #expect(popup.progress(at: 10.125) == 0.5)
        #expect(popup.progress(at: 10.25) == 1)
        p.update(at: 10.2)
        #expect(p.top?.phase == .appearing && r.log == [])
        p.update(at: 10.25)
        #expect(p.top?.phase == .shown && r.log == ["shown a"])
        #expect(p.top?.progress(at: 99) == 1)
        p.update(at: 11)
        #expect(r.log == ["shown a"])  // once
    }

    @Test func unknownIdIsNotShown() {
        let (p, _) = presenter()
        #expect(!p.show("nope", at: 0))
        #expect(p.stack.isEmpty)
        #expect(p.perform(.showOverlay("nope"), at: 0) == false)
    }

    @Test("shouldHide, willHide, then didHide when the animation ends")
    func callbackOrder() {
        let (p, r) = presenter()
        p.show("a", at: 0)
        p.update(at: 1)
        #expect(p.hide("a", reason: .action, at: 2))
        #expect(r.log == ["shown a", "should a action", "will a action"])
        #expect(!p.isVisible("a") && !p.isAnyVisible && p.top == nil)
        #expect(p.stack.count == 1 && p.stack[0].phase == .disappearing && p.stack[0].hideReason == .action)
        #expect(p.stack[0].progress(at: 2.125) == 0.5)
        p.update(at: 2.2)
        #expect(p.stack.count == 1 && r.log.count == 3)
        p.update(at: 2.25)
        #expect(p.stack.isEmpty)
        #expect(r.log == ["shown a", "should a action", "will a action", "did a action"])
        #expect(!p.hide("a", reason: .action, at: 3))   // nothing left to hide
        #expect(r.log.count == 4)
    }

    @Test func aRefusalLeavesThePopupAlone() {
        let (p, r) = presenter()
        r.refuse = ["a"]
        p.show("a", at: 0)
        p.update(at: 1)
        #expect(!p.hide("a", reason: .action, at: 2))
        #expect(r.log == ["shown a", "should a action"])
        #expect(p.isVisible("a") && p.top?.phase == .shown)
    }

    @Test func tappingTheDimmingHidesANonModalPopup() {
        let (p, r) = presenter()
        p.show("a", at: 0)
        p.update(at: 1)
        #expect(p.tap(.dimming, at: 2) == .dismissed(id: "a"))
        p.update(at: 3)
        #expect(r.log == ["shown a", "should a dimmingTap", "will a dimmingTap", "did a dimmingTap"])
    }

    @Test func tappingTheDimmingNeverHidesAModalPopup() {
        let (p, r) = presenter()
        p.show("m", at: 0)
        p.update(at: 1)
        #expect(p.tap(.dimming, at: 2) == .refused(id: "m"))
        #expect(!p.hide("m", reason: .dimmingTap, at: 2))
        #expect(r.log == ["shown m"])                      // the delegate is not even asked
        #expect(p.isVisible("m"))
        // An action may still hide it.
        #expect(p.hide("m", reason: .action, at: 3))
        #expect(r.log == ["shown m", "should m action", "will m action"])
    }

    @Test func aRefusedDimmingTapIsReported() {
        let (p, r) = presenter()
        r.refuse = ["a"]
        p.show("a", at: 0)
        #expect(p.tap(.dimming, at: 0.5) == .refused(id: "a"))
        #expect(r.log == ["should a dimmingTap"])
    }

    @Test func escapeClosesTheTopPopupUnlessModal() {
        let (p, r) = presenter()
        p.show("a", at: 0)
        p.show("m", at: 0)
        #expect(!p.escape(at: 1))                          // m is on top and modal: nothing hides
        #expect(p.visible.map(\.id) == ["a", "m"] && r.log == [])

        let (q, s) = presenter()
        q.show("m", at: 0)
        q.show("a", at: 0)
        #expect(q.escape(at: 1))
        #expect(s.log == ["should a escapeKey", "will a escapeKey"])
        #expect(q.top?.id == "m")
        #expect(!q.escape(at: 2))                          // now m is on top
        #expect(q.visible.map(\.id) == ["m"])
    }

    @Test func theNewestVisiblePopupGetsTheInput() {
        let (p, _) = presenter()
        p.show("a", at: 0)
        p.show("b", at: 1)
        #expect(p.top?.id == "b")
        #expect(p.tap(.button(1), at: 2) == .button(id: "b", index: 1, action: .setVolume(0)))
        #expect(p.tap(.button(0), at: 2) == .button(id: "b", index: 0, action: .jump(item: "welcome", time: 0)))
        #expect(p.tap(.button(7), at: 2) == .content(id: "b"))   // no such button
        #expect(p.tap(.content, at: 2) == .content(id: "b"))
        p.hide("b", reason: .action, at: 3)
        #expect(p.top?.id == "a")                                 // b is still drawn but takes no input
        #expect(p.stack.map(\.id) == ["a", "b"])
        #expect(p.tap(.button(0), at: 3.1) == .button(id: "a", index: 0, action: .hideOverlays))
    }

    @Test func withNothingVisibleTapsPassThrough() {
        let (p, _) = presenter()
        #expect(p.tap(.dimming, at: 0) == .passedThrough)
        #expect(p.tap(.button(0), at: 0) == .passedThrough)
    }

    @Test func hideAllVisibleHidesNewestFirstAndReportsARefusal() {
        let (p, r) = presenter()
        r.refuse = ["b"]
        for id in ["a", "b", "c"] { p.show(id, at: 0) }
        p.update(at: 1)
        r.log = []
        #expect(!p.hideAllVisible(at: 2))
        #expect(r.log == ["should c action", "will c action", "should b action", "should a action", "will a action"])
        #expect(p.visible.map(\.id) == ["b"])
        #expect(p.isAnyVisible)

        r.refuse = []
        #expect(p.hideAllVisible(at: 3))
        #expect(!p.isAnyVisible)
        p.update(at: 4)
        #expect(p.stack.isEmpty)
        #expect(p.hideAllVisible(at: 5))                 // nothing visible: success
    }

    @Test func hideAllHidesModalPopupsToo() {
        let (p, r) = presenter()
        p.show("m", at: 0)
        p.show("a", at: 0)
        #expect(p.perform(.hideOverlays, at: 1) == true)
        #expect(!p.isAnyVisible)
        #expect(r.log == ["should a action", "will a action", "should m action", "will m action"])
        #expect(p.perform(.pause, at: 1) == nil)
    }

    @Test func theIdleRuleHidesEverythingWithItsOwnReason() {
        let (p, r) = presenter()
        p.show("m", at: 0)
        #expect(p.hideAllVisible(reason: .idle, at: 1, animated: false))
        #expect(p.stack.isEmpty)
        #expect(r.log == ["should m idle", "will m idle", "did m idle"])
    }

    @Test func autoHideFiresAfterItsTime() {
        let (p, r) = presenter()
        p.show("auto", at: 100)
        p.update(at: 104.99)
        #expect(p.isVisible("auto"))
        p.update(at: 105)
        #expect(!p.isVisible("auto"))
        #expect(r.log == ["shown auto", "should auto autoHide", "will auto autoHide"])
        p.update(at: 105.25)
        #expect(r.log.last == "did auto autoHide" && p.stack.isEmpty)
    }

    @Test func aRefusedAutoHideIsNotAskedAgain() {
        let (p, r) = presenter()
        r.refuse = ["auto"]
        p.show("auto", at: 0)
        p.update(at: 5)
        p.update(at: 6)
        p.update(at: 60)
        #expect(r.log == ["shown auto", "should auto autoHide"])
        #expect(p.isVisible("auto"))
    }

    @Test func showingAgainMovesToTheTopAndRestartsAutoHide() {
        let (p, r) = presenter()
        p.show("auto", at: 100)
        p.show("a", at: 101)
        #expect(p.show("auto", at: 103))
        #expect(p.stack.map(\.id) == ["a", "auto"])       // moved, not duplicated
        #expect(p.top?.shownAt == 103)
        p.update(at: 105)
        #expect(p.isVisible("auto"))
        p.update(at: 108)
        #expect(!p.isVisible("auto") && r.log.contains("will auto autoHide"))
    }

    @Test func aHideDuringTheShowReversesFromWhereItIs() {
        let (p, r) = presenter()
        p.show("a", at: 0)
        #expect(p.hide("a", reason: .action, at: 0.1))    // 0.4 of the way in
        let popup = p.stack[0]
        #expect(abs(popup.progress(at: 0.1) - 0.4) < 1e-9)
        #expect(abs(popup.progress(at: 0.15) - 0.2) < 1e-9)
        p.update(at: 0.19)
        #expect(p.stack.count == 1)
        p.update(at: 0.2)
        #expect(p.stack.isEmpty)
        #expect(r.log == ["should a action", "will a action", "did a action"])  // never shown
    }

    @Test func showingWhileDisappearingFinishesTheHideFirst() {
        let (p, r) = presenter()
        p.show("c", at: 0)
        p.update(at: 1)
        p.hide("c", reason: .dimmingTap, at: 2)
        #expect(p.show("c", at: 2.1))
        #expect(r.log == ["shown c", "should c dimmingTap", "will c dimmingTap", "did c dimmingTap"])
        #expect(p.stack.count == 1 && p.top?.phase == .appearing && p.top?.progress(at: 2.1) == 0)
        #expect(abs((p.top?.progress(at: 2.35) ?? 0) - 0.5) < 1e-9)   // c animates over 0.5 s
    }

    @Test func withoutAnimationCallbacksComeAtOnce() {
        let (p, r) = presenter()
        p.show("a", at: 0, animated: false)
        #expect(p.top?.phase == .shown && p.top?.progress(at: 0) == 1)
        #expect(p.hide("a", reason: .action, at: 0, animated: false))
        #expect(p.stack.isEmpty)
        #expect(r.log == ["shown a", "should a action", "will a action", "did a action"])
    }

    @Test func withoutADelegateEverythingMayHide() {
        let p = ModalPresenter(overlays: overlays)
        p.show("a", at: 0)
        p.show("m", at: 0)
        #expect(!p.escape(at: 1))                          // modal still holds
        #expect(p.hideAllVisible(at: 1))
        p.update(at: 2)
        #expect(p.stack.isEmpty)
    }

    @Test func callbacksMayCallBackIntoThePresenter() {
        let (p, r) = presenter()
        r.onDidHide = { presenter, id in if id == "a" { presenter.show("b", at: 5) } }
        p.show("a", at: 0)
        p.hide("a", reason: .action, at: 1)
        p.update(at: 2)
        #expect(p.stack.map(\.id) == ["b"] && p.top?.phase == .appearing)
        #expect(r.log == ["should a action", "will a action", "did a action"])
    }

    @Test func appearanceFollowsTheTimeline() {
        let (p, _) = presenter()
        p.show("c", at: 0)                                 // slide, 0.5 s
        let frame = Rect(x: 600, y: 420, width: 720, height: 240)
        let popup = p.top!
        #expect(popup.appearance(at: 0, frame: frame, canvasHeight: 1080).offsetY == 660)
        #expect(popup.appearance(at: 0.25, frame: frame, canvasHeight: 1080).offsetY == 82.5)
        #expect(popup.appearance(at: 0.5, frame: frame, canvasHeight: 1080).offsetY == 0)
    }
}
