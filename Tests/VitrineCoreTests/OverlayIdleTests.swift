import Testing
@testable import VitrineCore

@Suite("Idle rule timer")
struct OverlayIdleTests {
    let rule = IdleRule(after: 90, item: "welcome")

    @Test func withoutInputItNeverFires() {
        var timer = IdleTimer(rule: rule)
        #expect(timer.deadline == nil)
        #expect(timer.check(at: 0) == nil)
        #expect(timer.check(at: 10_000) == nil)
    }

    @Test func firesOnceAfterTheQuietSpell() {
        var timer = IdleTimer(rule: rule)
        timer.noteInput(at: 10)
        #expect(timer.deadline == 100)
        #expect(timer.check(at: 99.9) == nil)
        #expect(timer.check(at: 100) == .jump(item: "welcome", time: nil))
        #expect(timer.check(at: 100.1) == nil)              // once per quiet spell
        #expect(timer.check(at: 500) == nil)
        #expect(timer.deadline == nil)
    }

    @Test func everyInputPushesTheDeadline() {
        var timer = IdleTimer(rule: rule)
        timer.noteInput(at: 150)
        timer.noteInput(at: 160)
        #expect(timer.check(at: 240) == nil)
        #expect(timer.deadline == 250)
        timer.noteInput(at: 155)                            // an older timestamp never pulls it back
        #expect(timer.deadline == 250)
        #expect(timer.check(at: 250) == .jump(item: "welcome", time: nil))
        timer.noteInput(at: 300)                            // re-armed by new input
        #expect(timer.check(at: 390) == .jump(item: "welcome", time: nil))
    }

    @Test func theIdleHideAndJumpTogether() {
        // What the player does when the timer fires: hide every popup (even modal ones), then jump.
        let presenter = ModalPresenter(overlays: ["m": Overlay(modal: true), "a": Overlay()])
        var timer = IdleTimer(rule: rule)
        presenter.show("m", at: 0)
        presenter.show("a", at: 1)
        timer.noteInput(at: 2)
        presenter.update(at: 91)
        #expect(timer.check(at: 91) == nil && presenter.isAnyVisible)
        let action = timer.check(at: 92)
        #expect(action == rule.action)
        #expect(presenter.hideAllVisible(reason: .idle, at: 92))
        #expect(!presenter.isAnyVisible)
        presenter.update(at: 93)
        #expect(presenter.stack.isEmpty)
    }
}
