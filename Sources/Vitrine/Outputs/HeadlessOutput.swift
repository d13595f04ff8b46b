import Foundation
import SystemSupport
import Media

/// The headless output: presents into memory at a virtual vblank of `refreshRate` Hz.
///
/// Vblank n happens at n / `refreshRate` seconds. With `realtime`, vblank n comes when the monotonic
/// clock reaches it, like a panel: a picture queued by `flip()` is pending until then (the run loop
/// waits for `flipDeadline`, and the presenter does the vblank's work after it). Otherwise it runs as
/// fast as the CPU allows (recording, tests, benchmarks): a flip completes in `flip()`. Every vblank
/// can be recorded through `onVblank`.
final class HeadlessOutput: VideoOutput {
    let width: Int
    let height: Int
    let refreshRate: Double
    let isVirtual = true
    let realtime: Bool
    /// The picture on screen (drawn only when no flip is pending).
    private let front: ImageBuffer
    private var pending = false
    private(set) var vblankCount = 0
    var completedFlips: Int { vblankCount }
    let waitedSeconds = 0.0
    /// The clock vblank times are on (`CLOCK_MONOTONIC`, or a test's).
    private let clock: () -> Double
    /// The time of vblank 0: when the run loop first asks for a vblank, not when the output was made,
    /// so the time spent opening the first item is not owed as vblanks run at once (which dropped the
    /// first frames of a 4K clip as decoded late).
    private var start: Double?
    private var origin: Double {
        if let start { return start }
        let now = clock()
        start = now
        return now
    }
    /// Called after every vblank with the picture on screen and the vblank time.
    var onVblank: ((PixelTarget, Double) throws -> Void)?

    /// - Parameter clock: the clock real-time vblanks follow, in seconds (a test passes its run loop's
    ///   manual clock).
    init(width: Int, height: Int, refreshRate: Double, realtime: Bool, clock: @escaping () -> Double = monotonicNow) {
        self.width = width; self.height = height; self.refreshRate = refreshRate; self.realtime = realtime
        self.clock = clock
        front = ImageBuffer(width: width, height: height)
    }

    func now() -> Double { clock() }

    var summary: String { "headless \(width)x\(height)@\(refreshRate.formatted2) (\(realtime ? "real time" : "as fast as possible"))" }

    func nextPresentationTime() -> Double { _ = origin; return Double(vblankCount + (pending ? 1 : 0)) / refreshRate }

    func monotonicTime(ofPresentation t: Double) -> Double { origin + t }

    func draw(_ body: (PixelTarget) throws -> Void) throws {
        precondition(!pending, "HeadlessOutput.draw: the picture drawn waits for its vblank")
        try front.withTarget { target in try body(target) }
    }

    /// The picture drawn is on screen from the next virtual vblank: at once, or (real time) when its
    /// time comes (`flipDeadline`, then `handleFlipEvents()`).
    func flip() throws {
        precondition(!pending, "HeadlessOutput.flip: a flip is pending")
        if realtime { pending = true } else { try vblank() }
    }

    var isFlipPending: Bool { pending }
    var eventDescriptor: Int32? { nil }

    /// The monotonic time of the vblank the pending flip shows at.
    var flipDeadline: Double? { pending ? origin + Double(vblankCount) / refreshRate : nil }

    /// Completes the pending flip once its vblank's time has come.
    func handleFlipEvents() throws -> Bool {
        guard pending, let due = flipDeadline, clock() + 1e-6 >= due else { return false }
        pending = false
        try vblank()
        return true
    }

    var nextVblankDeadline: Double? { realtime ? origin + Double(vblankCount) / refreshRate : nil }

    func vblankPassed() throws {
        precondition(!pending, "HeadlessOutput.vblankPassed: a flip is pending")
        try vblank()
    }

    func vblankTime(atOrAfter t: Double) -> Double {
        origin + max(Double(vblankCount), ((t - origin) * refreshRate - 1e-6).rounded(.up)) / refreshRate
    }

    /// Puts vblank 0 at the next time it is asked for, when no vblank has been presented yet: the
    /// time playback spent starting (opening the first item, `PlaybackEngine.prefillFrames`) is then
    /// not owed as vblanks run at once, whatever read the output's times meanwhile.
    func restartVblanksIfNoneShown() {
        if vblankCount == 0 && !pending { start = nil }
    }

    func skipVblanks(before t: Double) {
        precondition(!pending, "HeadlessOutput.skipVblanks: a flip is pending")
        vblankCount = max(vblankCount, Int(((t - origin) * refreshRate).rounded()))
    }

    private func vblank() throws {
        let t = Double(vblankCount) / refreshRate
        vblankCount += 1
        if let onVblank { try front.withTarget { try onVblank($0, t) } }
    }

    func withFrontBuffer(_ body: (PixelTarget) throws -> Void) rethrows { try front.withTarget(body) }

    func close() {}
}
