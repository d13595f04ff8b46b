// The manifest's `idle` rule as a timer: armed by touch input, fires once per quiet spell.

/// Watches for a quiet spell after touch input. Input arms it; `after` seconds later `check` returns the
/// rule's jump once, then nothing until the next input. With no input at all it never fires, so an
/// untouched kiosk plays its playlist undisturbed.
///
/// When it fires the player should hide the popups (`ModalPresenter.hideAllVisible(reason: .idle, at:)`)
/// and post the returned action.
public struct IdleTimer: Sendable, Equatable {
    public var rule: IdleRule
    /// The time of the latest input, or nil when none has come since the timer last fired.
    public private(set) var lastInput: Double?

    public init(rule: IdleRule) { self.rule = rule }

    /// Any touch (down, motion or up) or key at `time`.
    public mutating func noteInput(at time: Double) {
        lastInput = max(time, lastInput ?? time)
    }

    /// When the timer would fire if no more input comes, or nil when it is not armed.
    public var deadline: Double? { lastInput.map { $0 + rule.after } }

    /// The rule's action if `time` is at or past the deadline (and disarms); nil otherwise.
    public mutating func check(at time: Double) -> Action? {
        guard let deadline, time >= deadline else { return nil }
        lastInput = nil
        return rule.action
    }
}
