import Foundation
import VitrineCore

/// Touch, pointer and key input as the player sees it, from libinput (`Touch.InputEvent`) or from
/// tests: positions are normalized to the device (0…1), times are `CLOCK_MONOTONIC` seconds.
public enum PointerInput: Sendable, Equatable {
    case touchDown(slot: Int, x: Double, y: Double, time: Double)
    case touchMotion(slot: Int, x: Double, y: Double, time: Double)
    case touchUp(slot: Int, time: Double)
    case touchCancel(time: Double)
    /// An absolute pointer (a mouse-driven kiosk, QEMU's usb-tablet), normalized.
    case pointerPosition(x: Double, y: Double, time: Double)
    /// A relative pointer (a USB mouse): the motion in screen pixels (libinput's accelerated deltas).
    case pointerMove(dx: Double, dy: Double, time: Double)
    /// The left button acts as a finger at the pointer's position.
    case pointerButton(pressed: Bool, time: Double)
    /// Linux key codes: 1 is KEY_ESC.
    case key(code: UInt32, pressed: Bool, time: Double)
    /// A touch device appeared: its size in millimetres sets the 10 mm tap radius.
    case touchDevice(widthMM: Double, heightMM: Double)
}

/// Turns input into popup interaction: taps (down and up within 10 mm and 300 ms) on buttons,
/// on the dimming, Escape, press feedback, and the idle rule. Confined to the run loop's thread.
final class InputRouter {
    var transform: TouchTransform
    private var taps: TapRecognizer
    var idle: IdleTimer?
    /// The manifest's `tap` action: performed by a tap while no popup is visible.
    var tapAction: Action?
    private var pointer = (x: 0.5, y: 0.5)
    /// What each finger down (by slot; -1 is the pointer's button) went down on. A tap reaches only
    /// that: a popup that appeared under the finger, or hid, before it lifted gets nothing, and neither
    /// does the video.
    private var touchTargets: [Int: TouchTarget] = [:]
    private enum TouchTarget: Equatable { case video, popup(String) }
    private let log: Logger

    init(transform: TouchTransform, idle: IdleRule?, tap: Action? = nil, log: Logger) {
        self.transform = transform
        tapAction = tap
        // Until a device reports its size, assume a 22" 16:9 panel (477 × 268 mm).
        taps = TapRecognizer(deviceWidthMM: 477, deviceHeightMM: 268)
        self.idle = idle.map(IdleTimer.init(rule:))
        self.log = log
    }

    /// Handles one event; returns the actions to post (button actions), with their sources.
    func handle(_ input: PointerInput, overlays: OverlayLayer?, now: Double) -> [(Action, String)] {
        switch input {
        case .touchDevice(let w, let h):
            taps = TapRecognizer(deviceWidthMM: w, deviceHeightMM: h)
            return []
        default: break
        }
        idle?.noteInput(at: now)
        switch input {
        case let .touchDown(slot, x, y, time):
            touchTargets[slot] = target(overlays)
            taps.touchDown(slot: slot, x: x, y: y, at: time)
            // A second finger makes it no tap: no button shows as pressed.
            if taps.isTapCandidate { press(at: x, y, overlays) } else { overlays?.pressed = nil }
        case let .touchMotion(slot, x, y, time):
            taps.touchMotion(slot: slot, x: x, y: y, at: time)
            // A drag never presses a button: the feedback goes when the finger leaves the tap radius.
            if !taps.isTapCandidate { overlays?.pressed = nil }
        case let .touchUp(slot, time):
            overlays?.pressed = nil
            let wentDownOn = touchTargets.removeValue(forKey: slot)
            if let tap = taps.touchUp(slot: slot, at: time) { return tapped(tap.x, tap.y, on: wentDownOn, overlays, now: now) }
        case .touchCancel:
            overlays?.pressed = nil
            touchTargets.removeAll()
            taps.touchCancel()
        case let .pointerMove(dx, dy, time):
            guard dx.isFinite, dy.isFinite else { break }
            let x = min(1, max(0, pointer.x + dx / Double(max(1, transform.screenWidth))))
            let y = min(1, max(0, pointer.y + dy / Double(max(1, transform.screenHeight))))
            return handle(.pointerPosition(x: x, y: y, time: time), overlays: overlays, now: now)
        case let .pointerPosition(x, y, time):
            pointer = (x, y)
            if taps.isTracking {
                taps.touchMotion(slot: -1, x: x, y: y, at: time)
                if !taps.isTapCandidate { overlays?.pressed = nil }
            }
        case let .pointerButton(pressed, time):
            if pressed {
                touchTargets[-1] = target(overlays)
                taps.touchDown(slot: -1, x: pointer.x, y: pointer.y, at: time)
                press(at: pointer.x, pointer.y, overlays)
            } else {
                overlays?.pressed = nil
                let wentDownOn = touchTargets.removeValue(forKey: -1)
                if let tap = taps.touchUp(slot: -1, at: time) { return tapped(tap.x, tap.y, on: wentDownOn, overlays, now: now) }
            }
        case let .key(code, pressed, _):
            if code == 1 && pressed, let overlays { _ = overlays.presenter.escape(at: now) }
        case .touchDevice: break
        }
        return []
    }

    /// The idle rule: after N seconds with no input, hide every popup that allows it and jump.
    func checkIdle(overlays: OverlayLayer?, now: Double) -> [(Action, String)] {
        guard let action = idle?.check(at: now) else { return [] }
        _ = overlays?.presenter.hideAllVisible(reason: .idle, at: now)
        log.info("idle for \(idle!.rule.after) s: \(action)")
        return [(action, "idle")]
    }

    private func hit(_ x: Double, _ y: Double, _ overlays: OverlayLayer?) -> (String, OverlayHit)? {
        guard let overlays, let top = overlays.presenter.top else { return nil }
        let size = transform.canvasSize
        guard let g = overlays.geometry(top.id, canvasWidth: size.width, canvasHeight: size.height) else { return nil }
        let p = transform.canvasPoint(normalizedX: x, normalizedY: y)
        return (top.id, g.hitTest(x: p.x, y: p.y))
    }

    private func press(at x: Double, _ y: Double, _ overlays: OverlayLayer?) {
        if let (id, h) = hit(x, y, overlays), case .button(let i) = h { overlays?.pressed = (id, i) }
    }

    /// The popup that receives input now, or the video.
    private func target(_ overlays: OverlayLayer?) -> TouchTarget {
        overlays?.presenter.top.map { .popup($0.id) } ?? .video
    }

    private func tapped(_ x: Double, _ y: Double, on wentDownOn: TouchTarget?, _ overlays: OverlayLayer?,
                        now: Double) -> [(Action, String)] {
        let current = target(overlays)
        guard current == wentDownOn else {
            log.debug("tap ignored: it went down on \(wentDownOn.map { "\($0)" } ?? "nothing"), which no longer receives input (\(current) does)")
            return []
        }
        guard let overlays, let (id, h) = hit(x, y, overlays) else {
            // No popup is visible: the tap is on the video.
            if let tapAction { return [(tapAction, "tap")] }
            return []
        }
        switch overlays.presenter.tap(h, at: now) {
        case let .button(_, index, action): return [(action, "overlay \(id)/button \(index)")]
        default: return []
        }
    }
}
