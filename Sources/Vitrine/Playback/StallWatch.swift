/// Watches, vblank by vblank, whether the item playing in a synchronised cycle keeps showing its own
/// frames. A decoder that gives none (stuck opening its file, blocked on a queue, starved) leaves the
/// picture before it on screen, as it should for one frame (no black frame); held for seconds, it is
/// one screen of a wall frozen while its neighbours play, and nothing else would notice: the item is
/// in its slot (`PlaybackEngine.keepInStep`), only its pictures do not come. The engine then rejoins
/// the cycle with new decoders, and says what the old one was doing. The engine counts an item as
/// owing a picture only while its decoder has decoded nothing for half a second: one that decodes is
/// slow, not stuck, and one decoding a sound that runs on past its pictures owes none.
///
/// All times are catalog or item seconds. A value, confined to the run loop's thread.
struct StallWatch {
    /// Seconds the picture on screen may be behind the frame due before the item counts as stalled.
    static let behindLimit = 1.0
    /// Seconds (catalog time) an item stays stalled before `check` asks to act.
    static let holdLimit = 2.0
    /// Seconds (catalog time) between two actions: a file too heavy for the box to decode in real
    /// time is rejoined at most this often, not at every vblank.
    static let minimumInterval = 10.0

    private var stalledSince: Double?
    private var lastAction = -Double.infinity
    /// The decoder watched (its generation), what it had decoded, and the catalog time that last changed.
    private var decoder: (generation: Int, decoded: Int, since: Double)?

    /// Whether the decoder of `generation`, which has decoded `decoded` units (pictures and sound
    /// frames) by catalog time `position`, decoded anything in the last half second: one still
    /// decoding is slow, not stuck. Call once a vblank, before `check`.
    mutating func isDecoding(generation: Int, decoded: Int, at position: Double) -> Bool {
        if decoder?.generation != generation || decoder?.decoded != decoded { decoder = (generation, decoded, position) }
        return position - decoder!.since < 0.5
    }

    /// Judges one vblank.
    /// - Parameters:
    ///   - position: the vblank's catalog time.
    ///   - behind: seconds the picture on screen is behind the frame due (see `behind(due:shown:startAt:)`),
    ///     nil when nothing is owed (the decoder finished or failed, a still, sound only).
    /// - Returns: how far behind the picture is when it is time to act, else nil.
    mutating func check(position: Double, behind: Double?) -> Double? {
        guard let behind, behind > Self.behindLimit else { stalledSince = nil; return nil }
        if stalledSince == nil { stalledSince = position }
        guard position - stalledSince! >= Self.holdLimit, position - lastAction >= Self.minimumInterval else { return nil }
        lastAction = position
        stalledSince = nil
        return behind
    }

    /// Seconds the picture is behind: `due` (item seconds due at the vblank) less the PTS `shown` of
    /// the item's own frame on screen, or, while the screen still shows another item's picture (nil),
    /// less `startAt`, the item time its decoder started from (0, or where it was joined mid-slot).
    static func behind(due: Double, shown: Double?, startAt: Double) -> Double { due - (shown ?? startAt) }
}
