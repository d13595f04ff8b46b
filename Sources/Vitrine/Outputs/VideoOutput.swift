import Foundation
import Media

/// A screen the player presents to: the DRM/KMS scanout, or the headless output in memory.
///
/// Pixels are XRGB8888 (bytes B, G, R, X in memory). Times are seconds on the output's clock:
/// `CLOCK_MONOTONIC` for DRM, a virtual vblank clock starting at 0 for headless.
protocol VideoOutput: AnyObject {
    var width: Int { get }
    var height: Int { get }
    /// Vblank rate in Hz.
    var refreshRate: Double { get }
    var summary: String { get }
    /// Whether time is virtual (headless): the player then derives catalog time from it directly.
    var isVirtual: Bool { get }
    /// The time at which a frame presented now will first be visible.
    func nextPresentationTime() -> Double
    /// Converts a time on this output's clock to `CLOCK_MONOTONIC` seconds.
    func monotonicTime(ofPresentation t: Double) -> Double
    /// Draws the next picture into the back buffer: never the one on screen, nor one queued for it,
    /// so it may run while a flip is pending.
    func draw(_ body: (PixelTarget) throws -> Void) throws
    /// Queues the picture last drawn for the next vblank (a page flip). No flip may be pending:
    /// wait for it first, so that one flip is in flight at most.
    func flip() throws
    /// Whether a queued picture has not reached the screen yet (its flip has not completed).
    var isFlipPending: Bool { get }
    /// The descriptor whose readability says the pending flip may have completed (the DRM device);
    /// nil when flips complete at a time (`flipDeadline`) or at once.
    var eventDescriptor: Int32? { get }
    /// When the pending flip completes, `CLOCK_MONOTONIC` seconds, for outputs whose vblanks are timed
    /// (headless, real time); nil otherwise.
    var flipDeadline: Double? { get }
    /// Reads what happened without waiting (DRM: the page-flip events); true when the pending flip
    /// completed.
    func handleFlipEvents() throws -> Bool
    /// With no flip pending: when the next vblank comes, `CLOCK_MONOTONIC` seconds; nil: at once.
    var nextVblankDeadline: Double? { get }
    /// A vblank passed with no flip (the picture stays): call at `nextVblankDeadline`.
    func vblankPassed() throws
    /// The time of the first vblank at or after `t` (`CLOCK_MONOTONIC` seconds), with no flip pending.
    func vblankTime(atOrAfter t: Double) -> Double
    /// Moves the vblank clock on without vblanks (the screen stays as it is) so that the next one
    /// (`nextVblankDeadline`) is the one at `t`, a time from `vblankTime(atOrAfter:)`.
    func skipVblanks(before t: Double)
    /// The output's clock now: `CLOCK_MONOTONIC` seconds (a test's own clock for a headless output
    /// made with one).
    func now() -> Double
    /// Page flips (or virtual vblanks) completed so far; the watchdog is fed when this grows.
    var completedFlips: Int { get }
    /// Seconds the output itself stood still, beyond what the presenter waited for it (0 for the real
    /// outputs; a test double injects display stalls here).
    var waitedSeconds: Double { get }
    /// Reads the picture on screen (for snapshots).
    func withFrontBuffer(_ body: (PixelTarget) throws -> Void) rethrows
    /// A copy of the picture on screen, or nil before the first frame (default: `withFrontBuffer`, copied).
    func frontBufferCopy() -> ImageBuffer?
    /// Releases the display, restoring what was shown before.
    func close()
    /// Powers the display off (the presenter flipped a black picture first, and flips nothing while
    /// it is off) or on again (the next flip sets the mode). DRM: the CRTC's `ACTIVE` property, or
    /// the connector's `DPMS` on the legacy path (`Scanout.setDisplayPower`). Headless: nothing to
    /// switch; the recording keeps the black picture.
    /// - Throws: the output's errors (`DRMError`).
    func setDisplayPower(_ on: Bool) throws
    /// The connector and whether a sink is connected to it (`DRMOutput`: `.disconnected` while a
    /// hot-plugged screen is gone); nil for an output with no connector (headless).
    var screenConnection: ScreenConnection? { get }
}

extension VideoOutput {
    func setDisplayPower(_ on: Bool) throws {}
    var screenConnection: ScreenConnection? { nil }

    /// False while the output's sink is gone (`screenConnection`): the watchdog then counts no
    /// flips, as while the display is off by schedule.
    var isScreenConnected: Bool {
        if case .disconnected? = screenConnection { return false }
        return true
    }

    /// A copy of the picture on screen (screenshots), or nil before the first frame.
    func frontBufferCopy() -> ImageBuffer? {
        var copy: ImageBuffer?
        withFrontBuffer { target in
            let image = ImageBuffer(width: target.width, height: target.height)
            image.withTarget { $0.copy(from: target) }
            copy = image
        }
        return copy
    }
}


extension Double {
    var formatted2: String { String(format: "%.2f", self) }
}
