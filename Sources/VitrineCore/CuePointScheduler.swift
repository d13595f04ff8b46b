// Cue-point firing with the semantics of Brightcove's playback facade
// (`playbackSession:didPassCuePoints:`): one event per pass of the playhead, aggregated over
// every cue point in (previousTime, currentTime], whether the playhead moved by playing or by a seek.

/// One cue-point event: every cue point of an item whose time lies in (`previousTime`, `currentTime`].
public struct CuePointEvent: Sendable, Equatable {
    /// The item whose cue points were passed.
    public var itemID: String
    /// Playhead time before the cue points, seconds from the item's start (−1 before playback began,
    /// so a cue point at 0 fires when the item starts).
    public var previousTime: Double
    /// Playhead time after them, seconds from the item's start.
    public var currentTime: Double
    /// The cue points passed, in time order (ties keep manifest order).
    public var cuePoints: [CuePoint]
    /// True when a seek or skip (not steady playback) moved the playhead.
    public var bySeek: Bool

    public init(itemID: String, previousTime: Double, currentTime: Double, cuePoints: [CuePoint], bySeek: Bool) {
        self.itemID = itemID; self.previousTime = previousTime; self.currentTime = currentTime
        self.cuePoints = cuePoints; self.bySeek = bySeek
    }
}

/// Tracks the playhead of one item and reports the cue points it passes.
///
/// - `advance(to:)` during playback fires each cue point once, when the playhead passes its time;
///   cue points at the same time come in one event.
/// - `seek(to:)` forward across several cue points fires one aggregated event with all of them;
///   a backward seek fires nothing, and cue points after the new position fire again as playback
///   passes them.
/// - `finish(length:)` when the item ends by itself: the playhead follows the presented frames,
///   and the last frame of a 4.0 s clip at 30 fps is presented at 3.967 s, so a cue point at the
///   item's last instant (after the last frame's PTS, up to its length) would never be passed. The
///   rule: such cue points fire when the item ends, in one event with `currentTime` the length.
///   Cue points later than the length (by more than `endTolerance`) never fire; validation warns
///   about them.
public struct CuePointScheduler: Sendable {
    public let itemID: String
    /// Sorted by time, stable.
    public let cuePoints: [CuePoint]
    /// The playhead (seconds) after the last call; −1 before the item started.
    public private(set) var playhead: Double = -1

    public init(itemID: String, cuePoints: [CuePoint]) {
        self.itemID = itemID
        self.cuePoints = cuePoints.enumerated().sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }.map(\.element)
    }

    /// Playback moved the playhead to `time`. Returns the cue points in (playhead, time], or nil.
    public mutating func advance(to time: Double) -> CuePointEvent? { move(to: time, bySeek: false) }

    /// A seek or skip moved the playhead to `time`: one aggregated event for (playhead, time], or nil.
    public mutating func seek(to time: Double) -> CuePointEvent? { move(to: time, bySeek: true) }

    /// How far past the item's length, in seconds, a cue point still counts as at its end: the
    /// length is measured in output audio frames and a time written `4.0` may land a rounding
    /// error past it.
    public static let endTolerance = 0.001

    /// The item played to its end, `length` seconds long: fires the cue points the playhead has not
    /// passed whose time is at most `length` (+ `endTolerance`), as playback (not a seek). Later
    /// calls fire nothing.
    public mutating func finish(length: Double) -> CuePointEvent? {
        let previous = playhead
        let end = length + Self.endTolerance
        guard end > previous else { return nil }
        playhead = end
        let passed = cuePoints.filter { $0.time > previous && $0.time <= end }
        return passed.isEmpty ? nil : CuePointEvent(itemID: itemID, previousTime: previous, currentTime: length,
                                                     cuePoints: passed, bySeek: false)
    }

    private mutating func move(to time: Double, bySeek: Bool) -> CuePointEvent? {
        let previous = playhead
        playhead = time
        guard time > previous else { return nil }
        let passed = cuePoints.filter { $0.time > previous && $0.time <= time }
        return passed.isEmpty ? nil : CuePointEvent(itemID: itemID, previousTime: previous, currentTime: time, cuePoints: passed, bySeek: bySeek)
    }
}
