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
    /// Draws a new picture into a free buffer and queues it for the next vblank (a page flip).
    func present(_ draw: (PixelTarget) throws -> Void) throws
    /// Nothing new to show: waits for the next vblank, keeping the current picture.
    func idle() throws
    /// Page flips (or virtual vblanks) completed so far; the watchdog is fed when this grows.
    var completedFlips: Int { get }
    /// Seconds the output has spent blocked waiting for page flips or vblanks (monotonic clock;
    /// 0 for a virtual clock that runs as fast as possible).
    var waitedSeconds: Double { get }
    /// Reads the picture on screen (for snapshots).
    func withFrontBuffer(_ body: (PixelTarget) throws -> Void) rethrows
    /// Releases the display, restoring what was shown before.
    func close()
}

/// Monotonic clock in seconds (`CLOCK_MONOTONIC`).
func monotonicNow() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// The headless output: presents into memory at a virtual vblank of `refreshRate` Hz.
///
/// Vblank n happens at n / `refreshRate` seconds. With `realtime`, each vblank waits for the
/// monotonic clock to reach it, like a panel; otherwise it runs as fast as the CPU allows (recording,
/// tests, benchmarks). Every vblank can be recorded through `onVblank`.
final class HeadlessOutput: VideoOutput {
    let width: Int
    let height: Int
    let refreshRate: Double
    let isVirtual = true
    let realtime: Bool
    private let front: ImageBuffer
    private(set) var vblankCount = 0
    var completedFlips: Int { vblankCount }
    private(set) var waitedSeconds = 0.0
    /// The monotonic time of vblank 0: when the run loop first asks for a vblank, not when the output
    /// was made, so the time spent opening the first item is not owed as vblanks run at once (which
    /// dropped the first frames of a 4K clip as decoded late).
    private var origin: Double?
    private var start: Double {
        if let origin { return origin }
        let now = monotonicNow()
        origin = now
        return now
    }
    /// Called after every vblank with the picture on screen and the vblank time.
    var onVblank: ((PixelTarget, Double) throws -> Void)?

    init(width: Int, height: Int, refreshRate: Double, realtime: Bool) {
        self.width = width; self.height = height; self.refreshRate = refreshRate; self.realtime = realtime
        front = ImageBuffer(width: width, height: height)
    }

    var summary: String { "headless \(width)x\(height)@\(refreshRate.formatted2) (\(realtime ? "real time" : "as fast as possible"))" }

    func nextPresentationTime() -> Double { _ = start; return Double(vblankCount) / refreshRate }

    func monotonicTime(ofPresentation t: Double) -> Double { start + t }

    func present(_ draw: (PixelTarget) throws -> Void) throws {
        try front.withTarget { target in try draw(target) }
        try vblank()
    }

    func idle() throws { try vblank() }

    private func vblank() throws {
        let t = Double(vblankCount) / refreshRate
        if realtime {
            let wait = start + t - monotonicNow()
            if wait > 0 {
                let start = monotonicNow()
                Thread.sleep(forTimeInterval: wait)
                waitedSeconds += monotonicNow() - start
            }
        }
        vblankCount += 1
        if let onVblank { try front.withTarget { try onVblank($0, t) } }
    }

    func withFrontBuffer(_ body: (PixelTarget) throws -> Void) rethrows { try front.withTarget(body) }

    func close() {}
}

extension Double {
    var formatted2: String { String(format: "%.2f", self) }
}
