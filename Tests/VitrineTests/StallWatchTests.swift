import Testing
@testable import Vitrine

/// `StallWatch`: when a synchronised item's pictures stopped coming long enough to act, vblank by
/// vblank at 60 Hz (catalog seconds).
@Suite struct StallWatchTests {
    /// Feeds vblanks from `from` to `to` with `behind(t)`; returns the catalog times `check` acted at.
    static func run(_ watch: inout StallWatch, from: Double, to: Double, behind: (Double) -> Double?) -> [Double] {
        var acted: [Double] = []
        var t = from
        while t < to {
            if watch.check(position: t, behind: behind(t)) != nil { acted.append(t) }
            t += 1.0 / 60
        }
        return acted
    }

    @Test func aFrozenPictureIsActedOnOnceItIsOverASecondBehindForTwoSeconds() {
        var watch = StallWatch()
        // Frames stop at catalog 10.5 (the frame of 10.5 held): over a second behind from 11.5.
        let acted = Self.run(&watch, from: 10, to: 14) { t in t < 10.5 ? 0 : t - 10.5 }
        #expect(acted.count == 1)
        #expect(abs(acted[0] - 13.5) <= 1.0 / 60 + 1e-9, "acted at \(acted)")
    }

    @Test func aPictureThatCatchesUpInTimeIsLeftAlone() {
        var watch = StallWatch()
        // 1.5 s behind for 1.9 s, then on time: never two seconds on end.
        let acted = Self.run(&watch, from: 0, to: 10) { t in t >= 2 && t < 3.9 ? 1.5 : 0.02 }
        #expect(acted.isEmpty)
    }

    @Test func aDecoderWithNothingMoreToGiveOwesNoPicture() {
        var watch = StallWatch()
        // A finished or failed decoder, a still, sound only: nil, however long.
        #expect(Self.run(&watch, from: 0, to: 30) { _ in nil }.isEmpty)
        // And nil in the middle restarts the count.
        #expect(Self.run(&watch, from: 30, to: 40) { t in Int(t) % 3 == 2 ? nil : 5 }.isEmpty)
    }

    @Test func aStallThatStaysIsActedOnAtMostEveryTenSeconds() {
        var watch = StallWatch()
        let acted = Self.run(&watch, from: 0, to: 35) { t in t + 2 }
        // 2 s to act the first time (at 2.0), then every 10 s (to the vblank after): 12, 22, 32.
        #expect(acted.count == 4, "acted at \(acted)")
        #expect(abs((acted.first ?? -1) - 2) <= 1.0 / 60 + 1e-9, "acted at \(acted)")
        for (a, b) in zip(acted, acted.dropFirst()) { #expect(b - a >= 10 - 1e-9 && b - a <= 10 + 1.0 / 60 + 1e-9, "acted at \(acted)") }
    }

    @Test func behindCountsFromTheJoinedTimeUntilTheItemsOwnFrameIsShown() {
        // Joined 4 s into the item, due 4.3: 0.3 s behind while another item's picture is on screen.
        #expect(abs(StallWatch.behind(due: 4.3, shown: nil, startAt: 4) - 0.3) < 1e-12)
        #expect(abs(StallWatch.behind(due: 4.3, shown: 4.25, startAt: 4) - 0.05) < 1e-12)
        #expect(StallWatch.behind(due: 2, shown: nil, startAt: 0) == 2)
    }
}
