/// Which decoded video frame the next vblank shows, and why a frame that is never shown was passed
/// over: ffplay's `video_refresh` and `compute_target_delay` rules as one pure function.
///
/// A frame is *due* at a vblank when its PTS is within half a period of the clock there: the vblank
/// nearest its PTS shows it. The presenter asks about the earliest frame not shown yet:
/// - not due: `hold` (it stays queued; the screen keeps what it shows);
/// - due, and the frame decoded after it is not due (or not decoded yet): `show`;
/// - due, and the frame after it is due too: `drop`, with the cause (the later frame takes its place).
///
/// The first frame of an item is always shown once due, even when the vblank's phase makes the
/// second one nearer: a title frame is never skipped at a boundary. A still picture, the first frame
/// while paused, and the first frame after a seek (the picture at its target) are shown at once;
/// after a seek the frame nearest the vblank is shown, as at any other vblank (the one before it is
/// skipped before the seek target).
///
/// Times are seconds: PTS and clock in item time (from the item's time zero), the rest in seconds of
/// the reference clock.
public enum FramePolicy {
    /// Why a frame was never shown (each counts in `DroppedFrames`).
    public enum DropCause: Sendable, Equatable {
        /// It was already due at the vblank before, but its decoder had not delivered it then.
        case decoderLate
        /// The run loop's own step overran (drawing too slow, or the CPU busy elsewhere).
        case runLoopLate
        /// The run loop waited on the display (page flips, vblanks) for longer than the frame lasts.
        case displayStall
        /// It was still unshown when its item ended.
        case itemEnded
        /// Decoded before a seek target (decoding restarts at the key frame before it).
        case skippedBeforeSeekTarget
        /// The content has more frames than the display has vblanks (two fell due within one period
        /// with no vblank missed): passed over on purpose.
        case skippedContentRate
    }

    public enum Decision: Sendable, Equatable {
        case hold
        case show
        case drop(DropCause)
    }

    /// The frame the decision is about.
    public struct Frame: Sendable, Equatable {
        /// Its PTS, item seconds.
        public var pts: Double
        /// No frame of its item was taken yet.
        public var isFirstOfItem: Bool
        /// It is a still picture (an image, a cover).
        public var isStill: Bool
        /// Item seconds where decoding was asked to start (0, or a seek target).
        public var seekTarget: Double
        /// No frame was taken since a seek (the decoder's first frame at the target).
        public var opensSeek: Bool

        public init(pts: Double, isFirstOfItem: Bool = false, isStill: Bool = false, seekTarget: Double = 0, opensSeek: Bool = false) {
            self.pts = pts; self.isFirstOfItem = isFirstOfItem; self.isStill = isStill; self.seekTarget = seekTarget
            self.opensSeek = opensSeek
        }
    }

    /// The vblank being prepared.
    public struct Vblank: Sendable, Equatable {
        /// Item seconds the clock reads at this vblank.
        public var clock: Double
        /// The display's period, seconds.
        public var period: Double
        /// Whether playback runs (paused: the first frame is shown, nothing is dropped).
        public var isPlaying: Bool
        /// Item seconds the clock read at the previous vblank's pick, when that was the same item.
        public var previousClock: Double?
        /// Seconds from the previous vblank's pick to this one (one period when there was none).
        public var sincePrevious: Double
        /// Seconds the run loop spent waiting on the display between the two.
        public var waitedOnDisplay: Double

        public init(clock: Double, period: Double, isPlaying: Bool = true, previousClock: Double? = nil,
                    sincePrevious: Double? = nil, waitedOnDisplay: Double = 0) {
            self.clock = clock; self.period = period; self.isPlaying = isPlaying; self.previousClock = previousClock
            self.sincePrevious = sincePrevious ?? period; self.waitedOnDisplay = waitedOnDisplay
        }

        /// Whether a frame at `pts` is due: its PTS is within half a period of the clock, or earlier.
        public func isDue(_ pts: Double) -> Bool { pts <= clock + period / 2 }
    }

    /// Decides about `frame`, the earliest frame not shown yet.
    /// - Parameters:
    ///   - frame: the frame.
    ///   - next: the PTS of the frame decoded after it, when there is one (ask with `nil` about a
    ///     frame still at the head of its queue: the answer is then `hold` or `show`).
    ///   - vblank: the vblank being prepared.
    public static func decide(_ frame: Frame, next: Double?, at vblank: Vblank) -> Decision {
        let shownAtOnce = frame.isFirstOfItem && (frame.isStill || !vblank.isPlaying) || frame.opensSeek
        if !vblank.isDue(frame.pts) && !shownAtOnce { return .hold }
        if frame.isFirstOfItem && !frame.isStill && !frame.opensSeek { return .show }
        guard vblank.isPlaying, let next, vblank.isDue(next) else { return .show }
        return .drop(cause(frame, next: next, at: vblank))
    }

    /// Why `frame`, due at `vblank`, is passed over for `next`, due too.
    static func cause(_ frame: Frame, next: Double, at v: Vblank) -> DropCause {
        if frame.pts < frame.seekTarget { return .skippedBeforeSeekTarget }
        if next - frame.pts < v.period * 0.99 && v.sincePrevious <= v.period * 1.5 { return .skippedContentRate }
        if let previous = v.previousClock, frame.pts <= previous + v.period / 2 { return .decoderLate }
        if v.waitedOnDisplay > max(next - frame.pts, v.period) { return .displayStall }
        return .runLoopLate
    }
}
