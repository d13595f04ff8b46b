import Synchronization
import VitrineCore

/// What the presenter and the engine did, reported through the event hub for telemetry
/// (`EventHub.report`): internal, never kept in the history, streamed or written to the event log.
enum PresentationRecord: Sendable {
    /// An item came on screen (not a seek's restart); `generation` names its decoder.
    case itemStarted(item: String, generation: Int)
    /// A seek replaced the decoder `from` of the item on screen with `to`: still the same item.
    case itemSeeked(from: Int, to: Int)
    /// The item with decoder `generation` left the screen: it ended (`how` nil), or `how` says why
    /// ("cut", "the run ended"). `video`: it showed moving pictures (it gets a `played …` line).
    case itemEnded(generation: Int, video: Bool, how: String?)
    /// A video frame reached the screen; `avOffsetMs` is its PTS less the clock when its item has sound
    /// and playback runs.
    case framePresented(avOffsetMs: Double?)
    /// A frame of `item` at `pts` (item seconds) was passed over at the vblank where the item's clock
    /// read `clock`; `waited` seconds were spent waiting on the display since the vblank before.
    case frameDropped(FramePolicy.DropCause, item: String, pts: Double, clock: Double?, waited: Double)
    /// A seek decoded `count` frames of `item` from the key frame before its target and passed over them.
    case framesSkipped(Int, item: String)
    /// A popup step was left out so a video frame kept its vblank.
    case popupStepYielded
    /// A vblank was prepared: its host time, its catalog time, the wait on the display before it,
    /// the seconds its redraw took (nil: no redraw), and the popups animating (`id:appearing`).
    case vblank(hostTime: Double, position: Double, waited: Double, drawSeconds: Double?, animating: [String])
    /// A still screen (the slate) was stopped between vblanks; the next vblank's catalog time.
    case stoppedStill(position: Double)
    /// The run ended; `videoOnScreen`: the item on screen shows moving pictures.
    case runEnded(videoOnScreen: Bool)
    /// The sound device stopped: its xruns, and the audio frames replaced by silence.
    case soundEnded(xruns: Int, underflowFrames: Int, soundtrackUnderflowFrames: Int)
}

/// Run statistics, frame drops by cause, popup animation reports (`overlayAnimation`) and the
/// proof-of-play `played …` journal lines, kept as an observer of the engine's event hub: it reads
/// the public lifecycle events (`renderingStarted`, `decodingAborted`) and the presenter's
/// `PresentationRecord`s, and posts `overlayAnimation` back.
///
/// Checked `Sendable`: its state is behind one lock, never held while it logs or posts.
final class PlaybackTelemetry: Sendable {
    /// A popup animation in progress: what the video did under it (see `AnimationReport`).
    private struct AnimationWindow {
        var report: AnimationReport
        var start: Double, last: Double
        var presented: Int, dropped: DroppedFrames, yielded: Int
        var draws = 0, drawSum = 0.0
    }

    private struct State {
        var stats = RunStatistics()
        var offsetSum = 0.0
        /// Popup-only redraws left out so far to keep a video frame on time.
        var popupStepsYielded = 0
        /// The item on screen and the counts when it started, for its "played" line.
        var window: (generation: Int, item: String, presented: Int, dropped: DroppedFrames)?
        var animation: AnimationWindow?
    }

    private let state = Mutex(State())
    private let events: EventHub
    private let period: Double
    private let log: Logger

    init(events: EventHub, period: Double, log: Logger) {
        self.events = events
        self.period = period
        self.log = log
        events.observe { [weak self] e in self?.observe(e.event) }
        events.observeRecords { [weak self] r in self?.observe(r) }
    }

    /// Statistics so far.
    var stats: RunStatistics { state.withLock { $0.stats } }

    private func observe(_ event: PlayerEvent) {
        switch event {
        case .renderingStarted: state.withLock { $0.stats.itemsStarted += 1 }
        case .decodingAborted: state.withLock { $0.stats.itemsFailed += 1 }
        default: break
        }
    }

    private func observe(_ record: PresentationRecord) {
        var lines: [String] = [], debug: [String] = []
        var report: AnimationReport?
        state.withLock { s in
            switch record {
            case let .itemStarted(item, generation):
                s.window = (generation, item, s.stats.framesPresented, s.stats.dropped)
            case let .itemSeeked(from, to):
                if s.window?.generation == from { s.window?.generation = to }
            case let .itemEnded(generation, video, how):
                if let line = Self.endWindow(&s, generation: generation, video: video, how: how) { lines.append(line) }
            case .framePresented(let offset):
                s.stats.framesPresented += 1
                if let off = offset {
                    s.offsetSum += off
                    s.stats.avSamples += 1
                    s.stats.avOffsetMaxMs = max(s.stats.avOffsetMaxMs, abs(off))
                    s.stats.avOffsetMeanMs = s.offsetSum / Double(s.stats.avSamples)
                }
            case let .frameDropped(cause, item, pts, clock, waited):
                debug.append(Self.count(cause, &s.stats.dropped, item: item, pts: pts, clock: clock, waited: waited))
            case let .framesSkipped(n, _):
                s.stats.dropped.skipped += n
            case .popupStepYielded:
                s.popupStepsYielded += 1
            case let .vblank(hostTime, position, waited, drawSeconds, animating):
                report = track(&s, hostTime: hostTime, waited: waited, drawSeconds: drawSeconds, animating: animating)
                s.stats.vblanks += 1
                s.stats.catalogSeconds = position
            case .stoppedStill(let position):
                s.stats.catalogSeconds = max(s.stats.catalogSeconds, position)
            case .runEnded(let video):
                report = Self.endAnimation(&s)
                if let w = s.window, let line = Self.endWindow(&s, generation: w.generation, video: video, how: "the run ended") {
                    lines.append(line)
                }
            case let .soundEnded(xruns, underflow, soundtrackUnderflow):
                s.stats.xruns = xruns
                s.stats.audioUnderflowFrames = underflow
                s.stats.soundtrackUnderflowFrames = soundtrackUnderflow
            }
        }
        for d in debug { log.debug(d) }
        if let report {
            log.info(report.summary)
            events.post(.overlayAnimation(report))
        }
        for l in lines { log.info(l) }
    }

    /// Counts a frame passed over; returns its journal line.
    private static func count(_ cause: FramePolicy.DropCause, _ d: inout DroppedFrames, item: String, pts: Double,
                              clock: Double?, waited: Double) -> String {
        let why: String
        switch cause {
        case .decoderLate: d.decoderLate += 1; why = "decoded late"
        case .displayStall: d.displayStall += 1; why = "waited \(Int(waited * 1000)) ms on the display"
        case .runLoopLate: d.runLoopLate += 1; why = "the run loop was late"
        case .itemEnded: d.itemEnded += 1; why = "its item ended first"
        case .skippedBeforeSeekTarget: d.skipped += 1; why = "skipped (before the seek target)"
        case .skippedContentRate: d.skipped += 1; why = "skipped (the content's rate is above the display's)"
        }
        guard let clock else { return "dropped frame at \(pts) s of \(item): \(why)" }
        return "dropped frame at \(pts) s of \(item) at the vblank at \(clock) s: \(why)"
    }

    /// Closes the "played" window of decoder `generation`: the line for a video item, once.
    private static func endWindow(_ s: inout State, generation: Int, video: Bool, how: String?) -> String? {
        guard let w = s.window, w.generation == generation else { return nil }
        s.window = nil
        guard video else { return nil }
        return "played \(w.item): \(s.stats.framesPresented - w.presented) video frames presented, "
            + (s.stats.dropped - w.dropped).summary + (how.map { "; \($0)" } ?? "")
    }

    /// Measures frame drops while any popup animates; returns the report of an animation that ended.
    private func track(_ s: inout State, hostTime: Double, waited: Double, drawSeconds: Double?,
                       animating: [String]) -> AnimationReport? {
        guard !animating.isEmpty else { return Self.endAnimation(&s) }
        if var a = s.animation {
            a.report.missedVblanks += max(0, Int(((hostTime - a.last) / period).rounded()) - 1)
            a.last = hostTime
            a.report.vblanks += 1
            a.report.longestWaitMs = max(a.report.longestWaitMs, waited * 1000)
            for p in animating where !a.report.phases.contains(p) { a.report.phases.append(p) }
            if let d = drawSeconds { a.draws += 1; a.drawSum += d; a.report.drawMaxMs = max(a.report.drawMaxMs, d * 1000) }
            s.animation = a
        } else {
            let report = AnimationReport(phases: animating, seconds: 0, vblanks: 1, missedVblanks: 0, framesPresented: 0,
                                         dropped: DroppedFrames(), longestWaitMs: 0,
                                         drawMeanMs: 0, drawMaxMs: (drawSeconds ?? 0) * 1000, periodMs: period * 1000,
                                         stepsYielded: 0)
            s.animation = AnimationWindow(report: report, start: hostTime, last: hostTime,
                                          presented: s.stats.framesPresented, dropped: s.stats.dropped,
                                          yielded: s.popupStepsYielded,
                                          draws: drawSeconds == nil ? 0 : 1, drawSum: drawSeconds ?? 0)
        }
        return nil
    }

    /// Ends the animation being measured, if any, and returns its report.
    private static func endAnimation(_ s: inout State) -> AnimationReport? {
        guard let a = s.animation else { return nil }
        s.animation = nil
        var r = a.report
        r.seconds = a.last - a.start
        r.framesPresented = s.stats.framesPresented - a.presented
        r.dropped = s.stats.dropped - a.dropped
        r.stepsYielded = s.popupStepsYielded - a.yielded
        r.drawMeanMs = a.draws > 0 ? a.drawSum / Double(a.draws) * 1000 : 0
        return r
    }
}
