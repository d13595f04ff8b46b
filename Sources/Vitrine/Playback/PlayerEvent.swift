import Foundation
import SystemSupport
import Synchronization
import VitrineCore

/// Everything the player reports (SFBAudioPlayer's delegate events plus BCOV's facade events).
/// Times: `at` values are `CLOCK_MONOTONIC` seconds of the output (host time); item times are
/// seconds from the item's start.
public enum PlayerEvent: Sendable, Equatable {
    /// A decoder opened its file and started decoding.
    case decodingStarted(item: String)
    /// A decoder reached the end of its file (everything is queued for output).
    case decodingComplete(item: String)
    /// The item is scheduled to start rendering at host time `at`.
    case renderingWillStart(item: String, at: Double)
    /// The item's first frame or sample was presented.
    case renderingStarted(item: String)
    /// The item's length is known: rendering will complete at host time `at`.
    case renderingWillComplete(item: String, at: Double)
    /// The item's last frame and sample were presented.
    case renderingComplete(item: String)
    /// What a viewer would call "now playing" changed (nil: nothing).
    case nowPlayingChanged(item: String?)
    case playbackStateChanged(PlaybackState)
    /// The last queued item finished and nothing follows.
    case endOfAudio
    /// A decoder was cancelled (stop, skip, seek) after rendering `framesRendered` video frames.
    case decoderCanceled(item: String, framesRendered: Int)
    /// A decoder failed; the item is skipped.
    case decodingAborted(item: String, error: String, framesRendered: Int)
    /// An asynchronous error (output, device).
    case encounteredError(String)
    /// The queue advanced to a new playback session (BCOV).
    case didAdvanceToPlaybackSession(item: String)
    /// The item's duration in seconds became known or was refined.
    case durationChanged(item: String, duration: Double)
    /// Periodic progress, every `progressInterval` seconds of playback.
    case progress(item: String, time: Double, duration: Double?)
    /// The playhead passed cue points (aggregated across a seek).
    case cuePoints(CuePointEvent)
    /// An action from a cue point (or later a button) went onto the action bus.
    case action(Action, source: String)
    /// An audio format change at an item boundary and the measured gap in milliseconds.
    case audioGap(from: String, to: String, milliseconds: Double)
    /// A popup animation (show or hide) ended: how smoothly the video played under it.
    case overlayAnimation(AnimationReport)
    /// The schedule moved playback to another playlist: the entry that plays (its `id`; nil for the
    /// default playlist), the playlist (`"default"`, a name, or names joined by `+` taking turns),
    /// why (`start`, `edge`, `clock step`, `clock set`, `clock unset`, `import`, `interrupt`,
    /// `interrupt ended`) and the wall-clock time it was decided at (seconds since 1970, UTC, on
    /// the schedule's clock: the real one, or `--clock`'s).
    /// For an interrupt (`reason` `interrupt`), `entry` is nil and `playlist` the interrupt's, or for
    /// a popup interrupt the playlist playing under it, with the popup in `overlay`.
    case scheduleChanged(entry: String?, playlist: String, reason: String, wallClock: Double, overlay: String? = nil)
    /// The display was turned on or off by the power schedule (`display.power`), and why (`start`,
    /// `edge`, `clock step`, …, as `scheduleChanged`).
    case displayPower(on: Bool, reason: String, wallClock: Double)

    /// Lifecycle events are replayed to observers that join mid-session; cue points, actions and
    /// progress are not.
    var isLifecycle: Bool {
        switch self {
        case .cuePoints, .action, .progress, .audioGap, .overlayAnimation, .scheduleChanged, .displayPower: return false
        default: return true
        }
    }

    /// The event's name in the event log.
    public var name: String {
        switch self {
        case .decodingStarted: return "decodingStarted"
        case .decodingComplete: return "decodingComplete"
        case .renderingWillStart: return "renderingWillStart"
        case .renderingStarted: return "renderingStarted"
        case .renderingWillComplete: return "renderingWillComplete"
        case .renderingComplete: return "renderingComplete"
        case .nowPlayingChanged: return "nowPlayingChanged"
        case .playbackStateChanged: return "playbackStateChanged"
        case .endOfAudio: return "endOfAudio"
        case .decoderCanceled: return "decoderCanceled"
        case .decodingAborted: return "decodingAborted"
        case .encounteredError: return "encounteredError"
        case .didAdvanceToPlaybackSession: return "didAdvanceToPlaybackSession"
        case .durationChanged: return "durationChanged"
        case .progress: return "progress"
        case .cuePoints: return "cuePoints"
        case .action: return "action"
        case .audioGap: return "audioGap"
        case .overlayAnimation: return "overlayAnimation"
        case .scheduleChanged: return "scheduleChanged"
        case .displayPower: return "displayPower"
        }
    }
}

/// A timestamped event: `monotonic` is `CLOCK_MONOTONIC` seconds, `wall` is Unix time in seconds.
public struct TimedEvent: Sendable, Equatable {
    public var event: PlayerEvent
    public var monotonic: Double
    public var wall: Double
}

/// The lifecycle events a late observer is replayed: the current lifecycle, not the history.
///
/// Kept: the latest `playbackStateChanged`, `nowPlayingChanged` and `endOfAudio`, the last
/// `errorLimit` errors, and the events of each item still in flight (scheduled, decoding or on
/// screen). When an item ends (`renderingComplete`, `decoderCanceled`, `decodingAborted`) its
/// events go, with the end itself. So a box that plays for months keeps a few dozen events, not
/// about 9 for every item it ever played; `limit` bounds it whatever the order of events.
struct LifecycleReplay {
    /// The most events kept; the oldest go first past it.
    static let limit = 64
    /// The most `encounteredError` events kept.
    static let errorLimit = 8
    private(set) var events: [TimedEvent] = []

    mutating func record(_ timed: TimedEvent) {
        let e = timed.event
        switch e {
        case .playbackStateChanged, .nowPlayingChanged, .endOfAudio:
            events.removeAll { $0.event.name == e.name }
            events.append(timed)
        case .encounteredError:
            events.append(timed)
            let errors = events.indices.filter { events[$0].event.name == e.name }
            if errors.count > Self.errorLimit {
                let drop = Set(errors.prefix(errors.count - Self.errorLimit))
                events = events.indices.filter { !drop.contains($0) }.map { events[$0] }
            }
        case let .renderingComplete(item), let .decoderCanceled(item, _), let .decodingAborted(item, _, _):
            endItem(item)
        default:
            guard e.isLifecycle else { return }
            events.append(timed)
        }
        if events.count > Self.limit { events.removeFirst(events.count - Self.limit) }
    }

    /// The item that ended is the oldest of its id in flight: its events are those before the next
    /// scheduling of the same id (a one-item loop prerolls the item again before it ends).
    private mutating func endItem(_ item: String) {
        let mine = events.indices.filter { Self.item(of: events[$0].event) == item }
        let starts = mine.filter { Self.startsItem(events[$0].event) }
        let end = starts.count >= 2 ? starts[1] : Int.max
        let drop = Set(mine.filter { $0 < end })
        events = events.indices.filter { !drop.contains($0) }.map { events[$0] }
    }

    /// The item an item-scoped lifecycle event is about.
    static func item(of e: PlayerEvent) -> String? {
        switch e {
        case let .decodingStarted(i), let .decodingComplete(i), let .renderingWillStart(i, _), let .renderingStarted(i),
             let .renderingWillComplete(i, _), let .didAdvanceToPlaybackSession(i), let .durationChanged(i, _):
            return i
        default:
            return nil
        }
    }

    /// Whether `e` is the first event of an item's pass: scheduled by the queue, or played at once.
    static func startsItem(_ e: PlayerEvent) -> Bool {
        switch e {
        case .renderingWillStart, .didAdvanceToPlaybackSession: return true
        default: return false
        }
    }
}

/// Delivers events to observers, each through its own `AsyncStream`, and keeps the current
/// lifecycle (`LifecycleReplay`) so an observer added mid-session first receives what it needs to
/// know the state of things: what plays, in which state, and the lifecycle of the items in flight
/// (cue points and progress excepted: only future ones).
public final class EventHub: Sendable {
    private struct State {
        var replay = LifecycleReplay()
        var observers: [UUID: AsyncStream<TimedEvent>.Continuation] = [:]
        var callbacks: [UUID: @Sendable (TimedEvent) -> Void] = [:]
    }
    private let state = Mutex(State())

    public init() {}

    /// A stream of events from now on, preceded by the current lifecycle.
    public func events() -> AsyncStream<TimedEvent> {
        let (stream, continuation) = AsyncStream<TimedEvent>.makeStream(bufferingPolicy: .unbounded)
        let id = UUID()
        state.withLock { s in
            for e in s.replay.events { continuation.yield(e) }
            s.observers[id] = continuation
        }
        continuation.onTermination = { [weak self] _ in _ = self?.state.withLock { $0.observers.removeValue(forKey: id) } }
        return stream
    }

    /// Calls `body` synchronously for every event from now on (after replaying the current lifecycle).
    @discardableResult
    public func observe(_ body: @escaping @Sendable (TimedEvent) -> Void) -> UUID {
        let id = UUID()
        let replay = state.withLock { s -> [TimedEvent] in s.callbacks[id] = body; return s.replay.events }
        replay.forEach(body)
        return id
    }

    public func removeObserver(_ id: UUID) { _ = state.withLock { $0.callbacks.removeValue(forKey: id) } }

    /// The events a late observer would be replayed now.
    var replayed: [TimedEvent] { state.withLock { $0.replay.events } }

    func post(_ event: PlayerEvent, monotonic: Double = monotonicNow()) {
        let timed = TimedEvent(event: event, monotonic: monotonic, wall: Date().timeIntervalSince1970)
        let callbacks = state.withLock { s -> [@Sendable (TimedEvent) -> Void] in
            if event.isLifecycle { s.replay.record(timed) }
            for c in s.observers.values { c.yield(timed) }
            return Array(s.callbacks.values)
        }
        for c in callbacks { c(timed) }
    }

    /// Presentation records (what the presenter did at each vblank), for telemetry: delivered at once
    /// on the posting thread, never kept in the history, streamed or written to the event log.
    private let recordObservers = Mutex<[@Sendable (PresentationRecord) -> Void]>([])

    /// Calls `body` synchronously for every presentation record from now on.
    func observeRecords(_ body: @escaping @Sendable (PresentationRecord) -> Void) {
        recordObservers.withLock { $0.append(body) }
    }

    /// Delivers `record` to the record observers.
    func report(_ record: PresentationRecord) {
        for body in recordObservers.withLock({ $0 }) { body(record) }
    }

    /// Ends every stream.
    func finish() {
        let conts = state.withLock { s -> [AsyncStream<TimedEvent>.Continuation] in
            let c = Array(s.observers.values); s.observers.removeAll(); return c
        }
        conts.forEach { $0.finish() }
    }
}

/// Video frames passed over, by cause. A frame is *dropped* when a later one became due before a
/// vblank could show it; the cause is judged between the vblank before the drop and the vblank at it.
public struct DroppedFrames: Sendable, Equatable {
    /// The frame was already due at the vblank before, but its decoder had not delivered it yet.
    public var decoderLate = 0
    /// The run loop was blocked in the kernel, waiting for a page flip or vblank
    /// (`VideoOutput.waitedSeconds`), for longer than one video frame lasts: the display or the
    /// whole machine stood still while the player had nothing to do but wait.
    public var displayStall = 0
    /// The run loop's own step (input, composition, the flip) took longer than a video frame lasts,
    /// or the operating system did not run it: drawing too slow, or a CPU too busy.
    public var runLoopLate = 0
    /// Frames still unshown when their item ended.
    public var itemEnded = 0
    /// Passed over on purpose: the content has more frames than the display has vblanks (a 30 fps
    /// clip on a 25 Hz mode: two frames fell due within one period with no vblank missed), or the
    /// frames decoded before a seek target.
    public var skipped = 0

    public init() {}
    public var total: Int { decoderLate + displayStall + runLoopLate + itemEnded + skipped }

    public static func - (a: DroppedFrames, b: DroppedFrames) -> DroppedFrames {
        var d = DroppedFrames()
        d.decoderLate = a.decoderLate - b.decoderLate
        d.displayStall = a.displayStall - b.displayStall
        d.runLoopLate = a.runLoopLate - b.runLoopLate
        d.itemEnded = a.itemEnded - b.itemEnded
        d.skipped = a.skipped - b.skipped
        return d
    }

    /// Like `3 dropped (decoder 0, run loop 3, display 0, item end 0, skipped 0)`.
    public var summary: String {
        "\(total) dropped (decoder \(decoderLate), run loop \(runLoopLate), display \(displayStall), item end \(itemEnded), "
            + "skipped \(skipped))"
    }
}

/// How the video played while a popup animated, from its first to its last vblank.
public struct AnimationReport: Sendable, Equatable {
    /// What animated, like `["menu:appearing"]`, in the order they started.
    public var phases: [String]
    /// Seconds from the first to the last vblank of the animation (monotonic clock).
    public var seconds: Double
    /// Vblanks the run loop stepped through.
    public var vblanks: Int
    /// Vblanks the run loop did not present at: gaps between presentation times over 1.5 periods.
    public var missedVblanks: Int
    /// New video frames shown.
    public var framesPresented: Int
    /// Video frames passed over, by cause.
    public var dropped: DroppedFrames
    /// The longest wait for a page flip or vblank between two steps, in milliseconds.
    public var longestWaitMs: Double
    /// Composition time per redraw (video, dimming and popups into the back buffer), in milliseconds.
    public var drawMeanMs: Double
    public var drawMaxMs: Double
    /// The vblank period in milliseconds, for scale.
    public var periodMs: Double
    /// Vblanks at which the popups did not move so a video frame due soon kept its vblank (drawing
    /// took over half a period: a slow CPU).
    public var stepsYielded: Int

    public var framesDropped: Int { dropped.total }

    /// One line for the journal, parsed by `tools/vm-test`.
    public var summary: String {
        let f = { (v: Double) in String(format: "%.1f", v) }
        return "popup animation \(phases.joined(separator: ", ")): \(String(format: "%.3f", seconds)) s, \(vblanks) vblanks, "
            + "\(missedVblanks) missed, \(framesPresented) video frames presented, \(dropped.summary); longest wait "
            + "\(f(longestWaitMs)) ms; drawing \(f(drawMeanMs)) ms mean, \(f(drawMaxMs)) ms max (period \(f(periodMs)) ms); "
            + "\(stepsYielded) popup steps left to the video"
    }
}
