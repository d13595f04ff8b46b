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
        let now = alignStart?(clock()) ?? clock()
        start = now
        return now
    }
    /// Seconds between two vblanks: `1 / refreshRate`, or less for a display that runs fast
    /// (`driftPPM`).
    let spacing: Double
    /// Where vblank 0 goes, given the time it is first asked for (monotonic seconds): a synchronised
    /// catalog puts the vblanks on the wall clock's grid of periods from its epoch, as a genlocked
    /// wall's displays are (`SyncLock`). Nil: at that time.
    var alignStart: ((Double) -> Double)?
    private let drifts: Bool
    /// Output seconds of vblank `n` (`n / refreshRate` exactly when the display does not drift).
    private func at(_ n: Int) -> Double { drifts ? Double(n) * spacing : Double(n) / refreshRate }
    /// Called after every vblank with the picture on screen and the vblank time.
    var onVblank: ((PixelTarget, Double) throws -> Void)?

    /// - Parameter clock: the clock real-time vblanks follow, in seconds (a test passes its run loop's
    ///   manual clock).
    ///   - driftPPM: the vblanks come this many parts per million faster than `refreshRate` (a display
    ///     whose crystal drifts, for tests; `refreshRate` stays the nominal rate).
    init(width: Int, height: Int, refreshRate: Double, realtime: Bool, driftPPM: Double = 0,
         clock: @escaping () -> Double = monotonicNow) {
        self.width = width; self.height = height; self.refreshRate = refreshRate; self.realtime = realtime
        spacing = 1 / (refreshRate * (1 + driftPPM * 1e-6))
        drifts = driftPPM != 0
        self.clock = clock
        front = ImageBuffer(width: width, height: height)
    }

    func now() -> Double { clock() }

    var summary: String { "headless \(width)x\(height)@\(refreshRate.formatted2) (\(realtime ? "real time" : "as fast as possible"))" }

    func nextPresentationTime() -> Double { _ = origin; return at(vblankCount + (pending ? 1 : 0)) }

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
    var flipDeadline: Double? { pending ? origin + at(vblankCount) : nil }

    /// Completes the pending flip once its vblank's time has come.
    func handleFlipEvents() throws -> Bool {
        guard pending, let due = flipDeadline, clock() + 1e-6 >= due else { return false }
        pending = false
        try vblank()
        return true
    }

    var nextVblankDeadline: Double? { realtime ? origin + at(vblankCount) : nil }

    func vblankPassed() throws {
        precondition(!pending, "HeadlessOutput.vblankPassed: a flip is pending")
        try vblank()
    }

    func vblankTime(atOrAfter t: Double) -> Double {
        drifts ? origin + max(Double(vblankCount), ((t - origin) / spacing - 1e-6).rounded(.up)) * spacing
            : origin + max(Double(vblankCount), ((t - origin) * refreshRate - 1e-6).rounded(.up)) / refreshRate
    }

    /// Puts vblank 0 at the next time it is asked for, when no vblank has been presented yet: the
    /// time playback spent starting (opening the first item, `PlaybackEngine.prefillFrames`) is then
    /// not owed as vblanks run at once, whatever read the output's times meanwhile.
    func restartVblanksIfNoneShown() {
        if vblankCount == 0 && !pending { start = nil }
    }

    func skipVblanks(before t: Double) {
        precondition(!pending, "HeadlessOutput.skipVblanks: a flip is pending")
        vblankCount = max(vblankCount, Int(((t - origin) / spacing).rounded()))  // spacing = 1 / refreshRate unless it drifts
    }

    private func vblank() throws {
        let t = at(vblankCount)
        vblankCount += 1
        if let onVblank { try front.withTarget { try onVblank($0, t) } }
    }

    func withFrontBuffer(_ body: (PixelTarget) throws -> Void) rethrows { try front.withTarget(body) }

    func close() {}
}
