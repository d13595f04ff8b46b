import Testing
import VitrineCore

/// `FramePolicy.decide` as a table: the frame asked about, the frame decoded after it, the vblank,
/// and the decision.
@Suite("Frame policy: show, hold or drop, with the cause")
struct FramePolicyTests {
    typealias F = FramePolicy.Frame
    typealias V = FramePolicy.Vblank
    static let p30 = 1.0 / 30, p25 = 1.0 / 25

    struct Row: Sendable, CustomTestStringConvertible {
        var what: String
        var frame: F
        var next: Double?
        var vblank: V
        var expected: FramePolicy.Decision
        var testDescription: String { what }
    }

    static let rows: [Row] = [
        // Due or not: within half a period of the clock.
        Row(what: "a frame after the vblank's half period is held", frame: F(pts: 0.1), next: nil,
            vblank: V(clock: 0.05, period: p30), expected: .hold),
        Row(what: "a frame within half a period after the clock is shown", frame: F(pts: 0.06), next: nil,
            vblank: V(clock: 0.05, period: p30), expected: .show),
        Row(what: "a frame exactly half a period ahead is due", frame: F(pts: 0.5 + p30 / 2), next: nil,
            vblank: V(clock: 0.5, period: p30), expected: .show),
        Row(what: "a late frame whose successor is not due yet is shown", frame: F(pts: 0.9), next: 1.05,
            vblank: V(clock: 1.0, period: p30), expected: .show),
        Row(what: "a frame whose successor is not decoded yet is shown", frame: F(pts: 0.9), next: nil,
            vblank: V(clock: 1.0, period: p30), expected: .show),
        // The item's first frame, stills, pauses.
        Row(what: "an item's first frame is held until due", frame: F(pts: 0.2, isFirstOfItem: true), next: nil,
            vblank: V(clock: 0.1, period: p30), expected: .hold),
        Row(what: "an item's first frame is never dropped, even when the next is nearer", frame: F(pts: 0, isFirstOfItem: true),
            next: p30, vblank: V(clock: p30, period: p30), expected: .show),
        Row(what: "a still's first frame is shown at once", frame: F(pts: 3, isFirstOfItem: true, isStill: true), next: nil,
            vblank: V(clock: 0, period: p30), expected: .show),
        Row(what: "while paused the first frame is shown at once", frame: F(pts: 3, isFirstOfItem: true), next: nil,
            vblank: V(clock: 0, period: p30, isPlaying: false), expected: .show),
        Row(what: "while paused nothing is dropped", frame: F(pts: 1), next: 1 + p30,
            vblank: V(clock: 2, period: p30, isPlaying: false), expected: .show),
        // Causes.
        Row(what: "a frame before the seek target is skipped", frame: F(pts: 1.9, seekTarget: 2), next: 1.9 + p30,
            vblank: V(clock: 2, period: p30), expected: .drop(.skippedBeforeSeekTarget)),
        Row(what: "30 fps on 25 Hz: two frames due within one period, no vblank missed: skipped",
            frame: F(pts: 2 * p30), next: 3 * p30, vblank: V(clock: 2 * p25, period: p25, previousClock: p25),
            expected: .drop(.skippedContentRate)),
        Row(what: "due at the vblank before but not decoded then: the decoder was late",
            frame: F(pts: 1), next: 1 + p30, vblank: V(clock: 1 + p30, period: p30, previousClock: 1),
            expected: .drop(.decoderLate)),
        Row(what: "the first vblank of an item has no vblank before it to be late for",
            frame: F(pts: 1), next: 1 + p30, vblank: V(clock: 1 + p30, period: p30, previousClock: nil),
            expected: .drop(.runLoopLate)),
        Row(what: "four periods late while waiting on the display: a display stall",
            frame: F(pts: 1), next: 1 + p30,
            vblank: V(clock: 1 + 4 * p30, period: p30, previousClock: 1 - 2 * p30, sincePrevious: 5 * p30,
                      waitedOnDisplay: 4 * p30), expected: .drop(.displayStall)),
        Row(what: "four periods late with no wait: the run loop was late",
            frame: F(pts: 1), next: 1 + p30,
            vblank: V(clock: 1 + 4 * p30, period: p30, previousClock: 1 - 2 * p30, sincePrevious: 5 * p30,
                      waitedOnDisplay: 0), expected: .drop(.runLoopLate)),
        Row(what: "frames closer than a period after a missed vblank are late, not skipped",
            frame: F(pts: 1), next: 1 + p25 / 2,
            vblank: V(clock: 1 + 2 * p25, period: p25, previousClock: 1 - p25, sincePrevious: 2 * p25),
            expected: .drop(.runLoopLate)),
        Row(what: "a wait shorter than the frame is not a display stall",
            frame: F(pts: 1), next: 1 + p30,
            vblank: V(clock: 1 + 4 * p30, period: p30, previousClock: 1 - 2 * p30, sincePrevious: 5 * p30,
                      waitedOnDisplay: p30 * 0.9), expected: .drop(.runLoopLate)),
    ]

    @Test("decisions", arguments: rows)
    func decide(_ row: Row) {
        #expect(FramePolicy.decide(row.frame, next: row.next, at: row.vblank) == row.expected)
    }

    @Test("a vblank with no previous pick counts one period since it")
    func defaultSincePrevious() {
        #expect(V(clock: 0, period: 0.02).sincePrevious == 0.02)
    }
}
