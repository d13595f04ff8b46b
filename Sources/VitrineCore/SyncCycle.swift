/// `sync`: the manifest's lock of the playlist to the wall clock, so that every box with the same
/// catalog and a synchronised clock shows the same frame at the same instant (a video wall, a row of
/// screens), with no leader and no messages between the boxes.
///
/// The playlist is one cycle of items back to back; at wall-clock time `t` (`CLOCK_REALTIME`, seconds
/// since 1970 UTC) the cycle stands at `(t − epoch) mod cycle`.
public struct SyncSettings: Sendable, Equatable {
    /// The instant the cycle's first pass began: seconds since 1970 UTC (whole seconds, from the
    /// manifest's RFC 3339 text with `Z` or an offset).
    public var epoch: Int64

    public init(epoch: Int64) { self.epoch = epoch }
}

/// The cycle of a synchronised playlist: each item's slot (start and length in seconds from the
/// cycle's start) and the arithmetic from wall-clock time to item time.
///
/// Times are kept as exact as doubles allow for any box: positions are counted from `epoch` (seconds
/// since 1970 UTC, whole), so two boxes given the same wall time compute the same slot and item time
/// to the last bit. Lengths come from the item's `duration`, else its container's (`MediaFile.duration`),
/// read the same way on every box from the same file.
public struct SyncCycle: Sendable, Equatable {
    /// One item's place in the cycle.
    public struct Slot: Sendable, Equatable {
        /// The item's id (`PlaylistItem.id`, unique in a manifest).
        public var id: String
        /// Seconds from the cycle's start.
        public var start: Double
        /// Seconds.
        public var length: Double
        public var end: Double { start + length }
    }

    /// Seconds since 1970 UTC.
    public let epoch: Int64
    public let slots: [Slot]
    /// The cycle's length in seconds (the slots' lengths added up).
    public let length: Double

    /// - Parameter lengths: each item's id and length in seconds, in playlist order; items of length
    ///   0 or less take no slot.
    /// - Returns: nil when no item has a length.
    public init?(epoch: Int64, lengths: [(id: String, length: Double)]) {
        var slots: [Slot] = []
        var t = 0.0
        for (id, length) in lengths where length > 0 && length.isFinite {
            slots.append(Slot(id: id, start: t, length: length))
            t += length
        }
        guard !slots.isEmpty else { return nil }
        self.epoch = epoch
        self.slots = slots
        length = t
    }

    /// Where the cycle stands `sinceEpoch` seconds after `epoch`: the pass (0 from the epoch, negative
    /// before it), the slot's index, and the seconds into that slot's item.
    public func locate(sinceEpoch s: Double) -> (pass: Int, index: Int, offset: Double) {
        let pass = (s / length).rounded(.down)
        var p = s - pass * length
        if p < 0 { p = 0 }
        if p >= length { p = 0 }
        // The last slot whose start is at or before p.
        var lo = 0, hi = slots.count - 1
        while lo < hi {
            let mid = (lo + hi + 1) / 2
            if slots[mid].start <= p { lo = mid } else { hi = mid - 1 }
        }
        return (Int(pass), lo, max(0, p - slots[lo].start))
    }

    /// Seconds after `epoch` at which slot `index` of `pass` starts.
    public func start(pass: Int, index: Int) -> Double { Double(pass) * length + slots[index].start }

    /// Where the item `id` plays when it is asked for at `sinceEpoch` seconds after `epoch`: the
    /// occurrence playing then (its start is in the past, `offset` seconds into it), else its next
    /// one (`offset` 0). Nil when the item has no slot.
    /// - Returns: the start of that occurrence, seconds after `epoch`, and the seconds into the item
    ///   it is joined at.
    public func placement(of id: String, at sinceEpoch: Double) -> (start: Double, offset: Double, length: Double)? {
        let here = locate(sinceEpoch: sinceEpoch)
        if slots[here.index].id == id {
            return (start(pass: here.pass, index: here.index), here.offset, slots[here.index].length)
        }
        // The next occurrence: this pass after here, else the next pass.
        for pass in [here.pass, here.pass + 1] {
            for i in slots.indices where slots[i].id == id && (pass > here.pass || i > here.index) {
                return (start(pass: pass, index: i), 0, slots[i].length)
            }
        }
        return nil
    }

    /// The end, seconds after `epoch`, of the occurrence of item `id` that starts nearest `start`
    /// (seconds after `epoch`): where the item after it starts. Nil when the item has no slot.
    public func end(of id: String, startingNear start: Double) -> Double? {
        var best: (distance: Double, end: Double)?
        let pass = (start / length).rounded(.down)
        for p in [pass - 1, pass, pass + 1] {
            for s in slots where s.id == id {
                let t = p * length + s.start
                let d = abs(t - start)
                if best == nil || d < best!.distance { best = (d, t + s.length) }
            }
        }
        return best?.end
    }
}

/// Reads a `sync.epoch`: RFC 3339 with `Z` or an offset (`2026-01-01T00:00:00Z`,
/// `2026-01-01T01:00:00+01:00`), whole seconds. A local time with no offset is refused (boxes in a
/// wall could be set to different zones), as is anything `parseInstant` does not read.
/// - Returns: seconds since 1970 UTC, or nil.
public func parseSyncEpoch(_ text: String) -> Int64? {
    let u = Array(text.utf8)
    guard u.count > 11 else { return nil }
    let tail = u[11...]
    guard tail.last == UInt8(ascii: "Z") || tail.contains(UInt8(ascii: "+")) || tail.contains(UInt8(ascii: "-")) else { return nil }
    return parseInstant(text, zone: .utc)
}
