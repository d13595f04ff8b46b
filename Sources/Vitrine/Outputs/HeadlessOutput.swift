import Foundation
import Media

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
    private var origin: Double = monotonicNow()
    /// Called after every vblank with the picture on screen and the vblank time.
    var onVblank: ((PixelTarget, Double) throws -> Void)?

    init(width: Int, height: Int, refreshRate: Double, realtime: Bool) {
        self.width = width; self.height = height; self.refreshRate = refreshRate; self.realtime = realtime
        front = ImageBuffer(width: width, height: height)
    }

    var summary: String { "headless \(width)x\(height)@\(refreshRate.formatted2) (\(realtime ? "real time" : "as fast as possible"))" }

    func nextPresentationTime() -> Double { Double(vblankCount) / refreshRate }

    func monotonicTime(ofPresentation t: Double) -> Double { origin + t }

    func draw(_ body: (PixelTarget) throws -> Void) throws {
        try front.withTarget { target in try body(target) }
    }

    /// The picture drawn is on screen from the next virtual vblank: that vblank happens now.
    func flip() throws { try vblank() }

    /// Flips complete at once.
    var isFlipPending: Bool { false }
    func waitForFlip(timeout: Double) throws -> Bool { true }

    func idle() throws { try vblank() }

    private func vblank() throws {
        let t = Double(vblankCount) / refreshRate
        if realtime {
            let wait = origin + t - monotonicNow()
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
