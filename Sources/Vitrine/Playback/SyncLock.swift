import Foundation
import SystemSupport
import VitrineCore

/// Where a synchronised catalog's items go on the time line (`Timeline.setSync`): each item is
/// pinned in its slot of the cycle, and lasts the slot.
///
/// Catalog frames count from catalog time 0, which is `base` whole seconds after the epoch; slots are
/// rounded to frames from the epoch (`epochFrame`), so every box rounds them alike whatever its `base`.
/// A value: the decoders' threads never see it, the time line reads it under its lock.
struct SyncPlacement: Sendable {
    let cycle: SyncCycle
    /// Whole seconds from the epoch to catalog time 0.
    let base: Int64
    /// Catalog frames per second (`AudioFormat.sampleRate`).
    let rate: Int
    /// Seconds after "now" that an item joined mid-slot shows its first frame: time for its decoder
    /// to open the file and seek (`ItemSource` with `startAt`).
    let lead: Double

    /// Seconds after the epoch of catalog frame `frame`.
    func sinceEpoch(_ frame: Int) -> Double { Double(base) + Double(frame) / Double(rate) }

    /// The catalog frame of `s` seconds after the epoch, rounded on the epoch's frame grid.
    func frame(sinceEpoch s: Double) -> Int { Int((s * Double(rate)).rounded()) - Int(base) * rate }

    /// Where `item`, wanted from catalog frame `now`, starts: its slot's start (in the past when it is
    /// joined mid-slot) and the item seconds its decoder starts from. Nil for an item with no slot
    /// (an interrupt's), which plays as in a catalog without sync.
    func place(_ item: PlaylistItem, at now: Int) -> (startFrame: Int, startAt: Double)? {
        guard let p = cycle.placement(of: item.id, at: sinceEpoch(now) + lead) else { return nil }
        return (frame(sinceEpoch: p.start), p.offset)
    }

    /// Where `item`, queued to follow an entry that ends at catalog frame `end`, starts: there when
    /// its slot starts there, else at its next slot (the queue's order differs from the cycle's, as
    /// after an interrupt). Nil for an item with no slot.
    func follow(_ item: PlaylistItem, at end: Int) -> Int? {
        let s = sinceEpoch(end)
        guard let p = cycle.placement(of: item.id, at: s + 0.001) else { return nil }
        if p.offset > 0, p.offset < 0.002 + 0.001 { return end }
        if p.offset == 0 { return frame(sinceEpoch: p.start) }
        return cycle.placement(of: item.id, at: p.start + p.length + 0.001).map { frame(sinceEpoch: $0.start) }
    }

    /// Catalog frames the occurrence of `item` starting at catalog frame `start` lasts: to where the
    /// next slot starts. Nil for an item with no slot.
    func frames(of item: PlaylistItem, startingAt start: Int) -> Int? {
        guard let end = cycle.end(of: item.id, startingNear: sinceEpoch(start)) else { return nil }
        return frame(sinceEpoch: end) - start
    }
}

/// The catalog clock of a synchronised catalog: catalog time follows `CLOCK_REALTIME`, so that boxes
/// whose clocks agree (chrony, PTP) show the same frame at the same instant.
///
/// Catalog time `c` is wall-clock time `epoch + base + c` (seconds since 1970 UTC). Vblank times
/// (`CLOCK_MONOTONIC`) become wall-clock times through the offset between the two clocks, read
/// with `clock_gettime` and kept until it moves by more than `stepThreshold` (a clock step: the
/// two clocks run at the same rate otherwise, NTP's slewing included). Readings are rounded to the
/// microsecond, so two boxes that present at the same instant read the same catalog time to the
/// last bit, and decide alike about a frame due exactly between two vblanks.
///
/// Confined to the run loop's thread; the sound device's thread reads `catalogTime(atMonotonic:)`
/// through the `Sendable` snapshot `Mapping`.
final class SyncLock {
    /// Seconds between the two clocks that count as a step, seen at two readings in a row (one
    /// reading preempted between its clock reads could be off by a scheduler tick).
    static let stepThreshold = 0.002
    /// Seconds ahead a joined item is placed (see `SyncPlacement.lead`).
    static let joinLead = 0.5

    let cycle: SyncCycle
    let rate: Int
    /// The wall clock less the monotonic clock, nanoseconds.
    private(set) var offsetNanoseconds: Int64
    /// Whole seconds from the epoch to catalog time 0.
    private(set) var base: Int64

    /// The clocks' relation as a value, for other threads (the sound device's).
    struct Mapping: Sendable {
        let offsetNanoseconds: Int64
        let epoch: Int64
        let base: Int64

        /// Catalog seconds at monotonic time `t`, rounded to the microsecond.
        func catalogTime(atMonotonic t: Double) -> Double {
            let shift = Double(offsetNanoseconds - (epoch + base) * 1_000_000_000) / 1e9
            return ((t + shift) * 1e6).rounded() / 1e6
        }

        /// Monotonic seconds of catalog time `c`.
        func monotonic(ofCatalog c: Double) -> Double {
            c - Double(offsetNanoseconds - (epoch + base) * 1_000_000_000) / 1e9
        }
    }

    /// - Parameters:
    ///   - cycle: the playlist's slots.
    ///   - rate: catalog frames per second.
    init(cycle: SyncCycle, rate: Int) {
        self.cycle = cycle
        self.rate = rate
        offsetNanoseconds = Self.readOffset()
        let now = (WallClock.nanosecondsSinceEpoch() / 1_000_000_000) - cycle.epoch
        base = now
    }

    var mapping: Mapping { Mapping(offsetNanoseconds: offsetNanoseconds, epoch: cycle.epoch, base: base) }

    var placement: SyncPlacement { SyncPlacement(cycle: cycle, base: base, rate: rate, lead: Self.joinLead) }

    /// Catalog seconds at monotonic time `hostTime` (a vblank's).
    func catalogTime(hostTime: Double) -> Double { mapping.catalogTime(atMonotonic: hostTime) }

    /// Seconds after the epoch of catalog time `c`.
    func sinceEpoch(catalog c: Double) -> Double { Double(base) + c }

    /// Reads the clocks' offset again; returns the step in seconds (wall clock forwards is positive)
    /// when it moved by more than `stepThreshold`, and adopts it; nil otherwise. Catalog time never
    /// goes back: `base` moves by the step's whole seconds (rounded down), so catalog time moves on by
    /// the rest, under a second, and the caller rejoins the cycle at the slot the clock now says.
    func checkForStep() -> Double? {
        let now = Self.readOffset()
        let step = now - offsetNanoseconds
        guard abs(Double(step)) / 1e9 > Self.stepThreshold else { suspectedStep = nil; return nil }
        // Confirmed by the next reading (the next vblank) within a millisecond of this one.
        guard let earlier = suspectedStep, abs(Double(now - earlier)) / 1e9 < 0.001 else { suspectedStep = now; return nil }
        suspectedStep = nil
        offsetNanoseconds = now
        let seconds = Double(step) / 1e9
        base += Int64(seconds.rounded(.down))
        return seconds
    }
    /// An offset that differed by more than `stepThreshold` at the last reading.
    private var suspectedStep: Int64?

    /// The wall clock less the monotonic clock, from a pair of readings taken together.
    /// The pair whose wall-clock reads are nearest each other of up to 4 tries (under 20 µs apart:
    /// not preempted between them).
    static func readOffset() -> Int64 {
        var best: (span: Int64, offset: Int64)?
        for _ in 0..<4 {
            let w1 = WallClock.nanosecondsSinceEpoch()
            let m = Int64(MonotonicClock.nanoseconds())
            let w2 = WallClock.nanosecondsSinceEpoch()
            let span = w2 - w1
            if best == nil || span < best!.span { best = (span, w1 + span / 2 - m) }
            if span < 20_000 { break }
        }
        return best!.offset
    }

    /// The slot playing at catalog time `c`: its item id and the catalog time it started at.
    func slot(atCatalog c: Double) -> (id: String, start: Double) {
        let s = sinceEpoch(catalog: c)
        let here = cycle.locate(sinceEpoch: s)
        return (cycle.slots[here.index].id, cycle.start(pass: here.pass, index: here.index) - Double(base))
    }
}
