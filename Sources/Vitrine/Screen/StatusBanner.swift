import Synchronization
import RunLoop
import VitrineCore

/// The banner the player should show, shared between whoever drives it (a catalog import on its own
/// thread, say) and the run loop that draws it.
///
/// `show` and `hide` may be called from any thread; the run loop picks the change up at its next
/// vblank. `PlaybackEngine.showBanner(_:)` and `hideBanner()` call these; hand this object (it is
/// `Sendable`, the engine is not) to code that runs off the run loop, as with `events` and `actions`.
public final class StatusBanner: Sendable {
    private struct State {
        var banner: Banner?
        /// Grows with every `show` and `hide`: the run loop restarts `hideAfter` when it changes.
        var revision = 0
    }
    private let state = Mutex(State())
    /// Woken at every change: the run loop of the screen that shows it.
    private let waker = Mutex<LoopWaker?>(nil)

    public init() {}

    /// Wakes `waker` (nil: none) at every `show` and `hide`, so a screen that stands still redraws.
    func wakes(_ waker: LoopWaker?) { self.waker.withLock { $0 = waker } }

    /// Shows `banner`, replacing the one up (its `hideAfter` counts again from the next vblank).
    public func show(_ banner: Banner) {
        state.withLock { $0.banner = banner; $0.revision += 1 }
        waker.withLock { $0 }?.wake()
    }

    /// Hides the banner at the next vblank; no effect when none is up.
    public func hide() {
        state.withLock { s in
            guard s.banner != nil else { return }
            s.banner = nil
            s.revision += 1
        }
        waker.withLock { $0 }?.wake()
    }

    /// The banner asked for, until it is hidden or its `hideAfter` has passed.
    public var current: Banner? { state.withLock { $0.banner } }

    /// The banner asked for and the revision it came with.
    func snapshot() -> (banner: Banner?, revision: Int) { state.withLock { ($0.banner, $0.revision) } }

    /// Clears the banner of `revision` once its `hideAfter` has passed, unless a newer one was shown.
    func expire(revision: Int) {
        state.withLock { s in
            guard s.revision == revision else { return }
            s.banner = nil
        }
    }
}
