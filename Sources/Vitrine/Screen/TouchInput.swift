import Foundation
import Touch

/// libinput events, as the player's `PointerInput`.
extension PointerInput {
    /// Nil for events the player does not use (frames, relative motion, other buttons, releases of keys).
    init?(_ e: InputEvent) {
        switch e {
        case .deviceAdded(let d):
            guard d.hasTouch, let w = d.widthMM, let h = d.heightMM, w > 0, h > 0 else { return nil }
            self = .touchDevice(widthMM: w, heightMM: h)
        case let .touchDown(slot, x, y, t): self = .touchDown(slot: slot, x: x, y: y, time: t)
        case let .touchMotion(slot, x, y, t): self = .touchMotion(slot: slot, x: x, y: y, time: t)
        case let .touchUp(slot, t): self = .touchUp(slot: slot, time: t)
        case let .touchCancel(_, t): self = .touchCancel(time: t)
        case let .pointerMotionAbsolute(x, y, t): self = .pointerPosition(x: x, y: y, time: t)
        case let .pointerButton(button, pressed, t):
            guard button == InputEvent.buttonLeft else { return nil }
            self = .pointerButton(pressed: pressed, time: t)
        case let .key(code, pressed, t): self = .key(code: code, pressed: pressed, time: t)
        case let .pointerMotion(dx, dy, t): self = .pointerMove(dx: dx, dy: dy, time: t)
        case .deviceRemoved, .touchFrame: return nil
        }
    }
}

/// The seat's input devices through libinput's udev backend; devices plugged in later arrive as
/// `deviceAdded` without a restart. Read by the run loop when its descriptor is readable.
final class SeatInput {
    private let context: InputContext
    private let log: Logger

    init?(log: Logger) {
        do {
            context = try InputContext.udev()
        } catch {
            log.warning("touch input unavailable: \(error)")
            return nil
        }
        self.log = log
    }

    /// libinput's descriptor: readable when events wait (`poll()` reads them).
    var fileDescriptor: Int32 { context.fileDescriptor }

    /// Every pending event, converted.
    func poll() -> [PointerInput] {
        do {
            return try context.dispatch().compactMap { e in
                if case .deviceAdded(let d) = e { log.info("input device added: \(d)") }
                if case .deviceRemoved(let d) = e { log.info("input device removed: \(d)") }
                return PointerInput(e)
            }
        } catch {
            log.error("input: \(error)")
            return []
        }
    }
}
