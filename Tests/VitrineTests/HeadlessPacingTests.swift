import Foundation
import Testing
@testable import Vitrine

/// The real-time headless output paces vblanks from the first one the run loop asks for: the time
/// between making the output and starting playback (opening and prerolling the first item) is not
/// owed as a burst of vblanks at start, which showed a 4K clip's first frames as decoded late.
@Suite("Headless output: real-time pacing")
struct HeadlessPacingTests {
    @Test("made 0.3 s before the first vblank: vblanks 0…6 still take six periods (≥ 0.19 s at 30 Hz)")
    func noBurstAtStart() throws {
        let output = HeadlessOutput(width: 64, height: 36, refreshRate: 30, realtime: true)
        Thread.sleep(forTimeInterval: 0.3)      // opening and prerolling the first item
        #expect(output.nextPresentationTime() == 0)
        let first = monotonicNow()
        try output.idle()
        for _ in 0..<6 {
            _ = output.nextPresentationTime()
            try output.idle()
        }
        let elapsed = monotonicNow() - first
        #expect(elapsed >= 6.0 / 30 - 0.01, "7 vblanks in \(elapsed) s: a burst at start")
        #expect(abs(output.monotonicTime(ofPresentation: 0) - first) < 0.05, "vblank 0 is when it was first asked for")
    }
}
