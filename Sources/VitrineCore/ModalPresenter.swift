// The presentation rules of QMUIModalPresentationViewController, as a state machine without drawing:
// a stack of popups, their show/hide phases driven by explicit timestamps, the should/will/did-hide
// callbacks, modality, "hide all", Escape, auto-hide and the idle rule's hide.

/// Why a popup is being hidden; passed to every hide callback.
public enum ModalHideReason: String, Sendable, Equatable, CaseIterable {
    /// A tap on the dimming around the panel (never hides a `modal` popup).
    case dimmingTap
    /// An action: `hideOverlays` from a cue point or a button, or a direct request by the player.
    case action
    /// The Escape key (never hides a `modal` popup).
    case escapeKey
    /// The overlay's `autoHide` time ran out.
    case autoHide
    /// The manifest's `idle` rule fired.
    case idle
}

/// Where a presented popup is in its life.
public enum ModalPhase: Sendable, Equatable {
    /// The show animation is running.
    case appearing
    /// Fully shown.
    case shown
    /// The hide animation is running; the popup is drawn but no longer visible to input.
    case disappearing
}

/// One popup on the presenter's stack.
public struct ModalPopup: Sendable, Equatable {
    public let id: String
    /// The overlay as it was when shown.
    public let overlay: Overlay
    public internal(set) var phase: ModalPhase
    /// When `show` presented it, or last brought it back to the top; `autoHide` counts from here.
    public internal(set) var shownAt: Double
    /// Why it is disappearing; nil while appearing or shown.
    public internal(set) var hideReason: ModalHideReason?
    /// Timeline position (0 hidden … 1 shown) at `phaseStart`.
    var startProgress: Double
    var phaseStart: Double
    /// Whether `autoHide` may still fire (cleared once it has been refused).
    var autoHideArmed: Bool
    /// Distinguishes two presentations of the same id.
    let serial: Int

    /// QMUI's `visible`: appearing or shown. A disappearing popup is still drawn but takes no input.
    public var isVisible: Bool { phase != .disappearing }

    /// The linear timeline position at `time`: 0 = hidden, 1 = fully shown (ease it with `OverlayAnimation`).
    public func progress(at time: Double) -> Double {
        switch phase {
        case .shown: return 1
        case .appearing, .disappearing:
            return OverlayAnimation.progress(elapsed: time - phaseStart, duration: overlay.duration,
                                             from: startProgress, hiding: phase == .disappearing)
        }
    }

    /// How the popup looks at `time` when laid out at `frame` on a canvas `canvasHeight` pixels high.
    public func appearance(at time: Double, frame: Rect, canvasHeight: Int, easing: Easing = .easeOut) -> OverlayAppearance {
        OverlayAnimation.appearance(of: overlay, progress: progress(at: time), frame: frame,
                                    canvasHeight: canvasHeight, easing: easing)
    }
}

/// QMUIModalPresentationViewControllerDelegate. Every method is optional (the defaults allow hiding
/// and do nothing). For one hide the order is always shouldHide → willHide → didHide.
public protocol ModalPresenterDelegate: AnyObject {
    /// Whether the popup may hide now; asked before every hide except those `modal` already forbids.
    func modalPresenter(_ presenter: ModalPresenter, shouldHide id: String, reason: ModalHideReason) -> Bool
    /// The popup is about to start its hide animation (it no longer counts as visible once this returns).
    func modalPresenter(_ presenter: ModalPresenter, willHide id: String, reason: ModalHideReason)
    /// The hide animation finished and the popup left the stack.
    func modalPresenter(_ presenter: ModalPresenter, didHide id: String, reason: ModalHideReason)
    /// The show animation finished.
    func modalPresenter(_ presenter: ModalPresenter, didShow id: String)
}

extension ModalPresenterDelegate {
    public func modalPresenter(_ presenter: ModalPresenter, shouldHide id: String, reason: ModalHideReason) -> Bool { true }
    public func modalPresenter(_ presenter: ModalPresenter, willHide id: String, reason: ModalHideReason) {}
    public func modalPresenter(_ presenter: ModalPresenter, didHide id: String, reason: ModalHideReason) {}
    public func modalPresenter(_ presenter: ModalPresenter, didShow id: String) {}
}

/// What a tap did while popups were up (see `ModalPresenter.tap(_:at:)`).
public enum ModalTapOutcome: Sendable, Equatable {
    /// No popup is visible: the tap goes to whatever is below (nothing, for now).
    case passedThrough
    /// The top popup's button `index` was tapped: post `action` (the presenter does not run actions).
    case button(id: String, index: Int, action: Action)
    /// The panel, outside its buttons: swallowed.
    case content(id: String)
    /// The dimming was tapped and the top popup started hiding.
    case dismissed(id: String)
    /// The dimming was tapped but the top popup stays: it is `modal`, or `shouldHide` refused.
    case refused(id: String)
}

/// Presents overlays as a stack of popups; the newest visible one receives input.
///
/// Time is always passed in (seconds on any monotonic clock, e.g. vblank timestamps); call `update(at:)`
/// once per frame to finish animations, fire `didShow`/`didHide` and run `autoHide`. Not thread-safe:
/// confine it to the run loop's thread, like the engine. Callbacks may call back into the presenter.
public final class ModalPresenter {
    /// Weak, as in QMUI.
    public weak var delegate: (any ModalPresenterDelegate)?
    /// The overlays `show` can present, by id (normally `Manifest.overlays`). Changing it does not
    /// affect popups already presented.
    public var overlays: [String: Overlay]
    /// Every popup being drawn, bottom first: appearing, shown and disappearing ones.
    public private(set) var stack: [ModalPopup] = []
    private var nextSerial = 0

    public init(overlays: [String: Overlay] = [:]) { self.overlays = overlays }

    // MARK: State

    /// Popups that are appearing or shown, bottom first.
    public var visible: [ModalPopup] { stack.filter(\.isVisible) }
    /// QMUI's `isAnyModalPresentationViewControllerVisible`.
    public var isAnyVisible: Bool { stack.contains(where: \.isVisible) }
    /// The popup that receives input: the newest visible one.
    public var top: ModalPopup? { stack.last(where: \.isVisible) }
    /// Whether the popup `id` is appearing or shown.
    public func isVisible(_ id: String) -> Bool { stack.contains { $0.id == id && $0.isVisible } }
    /// The popup `id` while it is on the stack (in any phase).
    public func popup(_ id: String) -> ModalPopup? { stack.last { $0.id == id } }

    // MARK: Showing

    /// Presents the overlay `id` on top of the stack at `time` with its show animation.
    ///
    /// An overlay that is already visible is moved to the top instead and its `autoHide` restarts; one
    /// that is disappearing finishes hiding at once (its `didHide` fires) and is presented afresh.
    /// - Returns: false when `overlays` has no such id.
    @discardableResult
    public func show(_ id: String, at time: Double, animated: Bool = true) -> Bool {
        guard let overlay = overlays[id] else { return false }
        if let index = stack.lastIndex(where: { $0.id == id && $0.isVisible }) {
            var popup = stack.remove(at: index)
            popup.shownAt = time
            popup.autoHideArmed = true
            stack.append(popup)
            return true
        }
        let leaving = stack.filter { $0.id == id }
        stack.removeAll { $0.id == id }
        for popup in leaving { delegate?.modalPresenter(self, didHide: popup.id, reason: popup.hideReason ?? .action) }
        nextSerial += 1
        stack.append(ModalPopup(id: id, overlay: overlay, phase: animated ? .appearing : .shown, shownAt: time,
                                hideReason: nil, startProgress: 0, phaseStart: time,
                                autoHideArmed: overlay.autoHide != nil, serial: nextSerial))
        if !animated { delegate?.modalPresenter(self, didShow: id) }
        return true
    }

    // MARK: Hiding

    /// Hides the popup `id` for `reason` at `time`: asks `shouldHide` (a refusal leaves it untouched),
    /// calls `willHide`, then plays the show animation backwards from where it is; `didHide` fires from
    /// `update(at:)` when that ends, or at once when `animated` is false.
    ///
    /// `.dimmingTap` and `.escapeKey` never hide a `modal` popup (and do not ask the delegate).
    /// - Returns: whether the popup started hiding; false if it is not visible, is modal for this reason,
    ///   or the delegate refused.
    @discardableResult
    public func hide(_ id: String, reason: ModalHideReason, at time: Double, animated: Bool = true) -> Bool {
        guard let popup = stack.last(where: { $0.id == id && $0.isVisible }) else { return false }
        return hide(serial: popup.serial, reason: reason, at: time, animated: animated)
    }

    /// Hides the newest visible popup; see `hide(_:reason:at:animated:)`.
    @discardableResult
    public func hideTop(reason: ModalHideReason, at time: Double, animated: Bool = true) -> Bool {
        guard let top else { return false }
        return hide(serial: top.serial, reason: reason, at: time, animated: animated)
    }

    /// QMUI's `hideAllVisibleModalPresentationViewControllerIfCan`: hides every visible popup that allows
    /// it, newest first, and carries on past refusals.
    /// - Returns: false if any visible popup stayed (refused by the delegate, or modal for this reason);
    ///   true otherwise, including when nothing was visible.
    @discardableResult
    public func hideAllVisible(reason: ModalHideReason = .action, at time: Double, animated: Bool = true) -> Bool {
        var all = true
        for popup in stack.reversed() where popup.isVisible {
            if !hide(serial: popup.serial, reason: reason, at: time, animated: animated) { all = false }
        }
        return all
    }

    /// The Escape key: hides the top popup unless it is modal. Returns whether it started hiding.
    @discardableResult
    public func escape(at time: Double) -> Bool { hideTop(reason: .escapeKey, at: time) }

    /// A tap on the top popup's layout (`OverlayGeometry.hitTest`) at `time`. Buttons are reported, not
    /// run; a dimming tap hides the top popup unless it is modal or the delegate refuses.
    public func tap(_ hit: OverlayHit, at time: Double) -> ModalTapOutcome {
        guard let top else { return .passedThrough }
        switch hit {
        case let .button(index):
            guard top.overlay.buttons.indices.contains(index) else { return .content(id: top.id) }
            return .button(id: top.id, index: index, action: top.overlay.buttons[index].action)
        case .content:
            return .content(id: top.id)
        case .dimming:
            return hide(serial: top.serial, reason: .dimmingTap, at: time) ? .dismissed(id: top.id) : .refused(id: top.id)
        }
    }

    /// Carries out `showOverlay` and `hideOverlays` (reason `.action`); returns nil for other actions,
    /// else whether it fully succeeded (`show` found the id; `hideAllVisible` hid everything).
    @discardableResult
    public func perform(_ action: Action, at time: Double) -> Bool? {
        switch action {
        case let .showOverlay(id): return show(id, at: time)
        case .hideOverlays: return hideAllVisible(reason: .action, at: time)
        default: return nil
        }
    }

    // MARK: Time

    /// Advances to `time`: appearing popups whose animation is over become shown (`didShow`), disappearing
    /// ones leave the stack (`didHide`), then popups whose `autoHide` ran out start hiding (reason
    /// `.autoHide`; a refusal disarms it until the popup is shown again).
    public func update(at time: Double) {
        var events: [(id: String, hidden: ModalHideReason?)] = []
        var kept: [ModalPopup] = []
        for var popup in stack {
            switch popup.phase {
            case .appearing where popup.progress(at: time) >= 1:
                popup.phase = .shown
                popup.startProgress = 1
                popup.phaseStart = time
                events.append((popup.id, nil))
                kept.append(popup)
            case .disappearing where popup.progress(at: time) <= 0:
                events.append((popup.id, popup.hideReason ?? .action))
            default:
                kept.append(popup)
            }
        }
        stack = kept
        for event in events {
            if let reason = event.hidden { delegate?.modalPresenter(self, didHide: event.id, reason: reason) } else {
                delegate?.modalPresenter(self, didShow: event.id)
            }
        }
        let due = stack.filter { $0.isVisible && $0.autoHideArmed && time >= $0.shownAt + ($0.overlay.autoHide ?? .infinity) }
        for popup in due.reversed() where !hide(serial: popup.serial, reason: .autoHide, at: time) {
            if let index = stack.firstIndex(where: { $0.serial == popup.serial }) { stack[index].autoHideArmed = false }
        }
    }

    // MARK: Private

    private func hide(serial: Int, reason: ModalHideReason, at time: Double, animated: Bool = true) -> Bool {
        guard let popup = stack.first(where: { $0.serial == serial }), popup.isVisible else { return false }
        if popup.overlay.modal, reason == .dimmingTap || reason == .escapeKey { return false }
        if let delegate, !delegate.modalPresenter(self, shouldHide: popup.id, reason: reason) { return false }
        // The delegate may have changed the stack: look the popup up again.
        guard stack.contains(where: { $0.serial == serial && $0.isVisible }) else { return false }
        delegate?.modalPresenter(self, willHide: popup.id, reason: reason)
        guard let index = stack.firstIndex(where: { $0.serial == serial && $0.isVisible }) else { return true }
        if animated {
            stack[index].startProgress = stack[index].progress(at: time)
            stack[index].phaseStart = time
            stack[index].phase = .disappearing
            stack[index].hideReason = reason
        } else {
            stack.remove(at: index)
            delegate?.modalPresenter(self, didHide: popup.id, reason: reason)
        }
        return true
    }
}
