import Foundation
import Media
import VitrineCore
import ServiceManager

/// The player: a queue of items, the playing/paused/stopped states, seeking, events and cue points,
/// presenting on a `VideoOutput` with audio through ALSA (the master clock) or in step with the
/// headless output's virtual vblanks.
///
/// Semantics follow SFBAudioPlayer (decoder queue, states, seeking, delegate events) and
/// BCOVPlaybackFacade (advance and play, progress, duration, cue points aggregated across seeks).
/// A call that has no effect in the current state returns false and changes nothing.
///
/// Threading: the engine is confined to one thread, the run loop's; call the control methods from
/// that thread (for example from an action handler or between `step()` calls). The exceptions are
/// `showBanner(_:)` and `hideBanner()` (through `statusBanner`), which any thread may call. Decoders
/// and the ALSA writer run on their own threads.
public final class PlaybackEngine {
    /// Events for observers (`events.events()` or `events.observe`).
    public let events = EventHub()
    /// Seconds of playback between `progress` events.
    public var progressInterval = 0.25
    /// The action bus cue points post to. The engine carries out `log`, `seek`, `pause`, `resume` and
    /// `setVolume` itself (on the run loop, after the current vblank); the catalog driver handles
    /// `jump`; the overlay UI subscribes for `showOverlay` and `hideOverlays`.
    public let actions = ActionBus()
    /// The status banner's wanted state: `showBanner(_:)` and `hideBanner()` go through it. It is
    /// `Sendable`; hand it to code that reports from another thread (a catalog import, say).
    public let statusBanner = StatusBanner()
    /// Actions for the engine itself, applied between vblanks (handlers must not re-enter `step`).
    private var pendingActions: [(Action, String)] = []

    let output: VideoOutput
    private(set) var audio: ALSAAudio?
    /// Opens the sound device again when it was missing at start (the card's driver may still be
    /// probing at boot); tried every 5 s on a real output until it succeeds.
    var reopenAudio: (() -> ALSAAudio?)?
    private var nextAudioAttempt = 0.0
    let timeline: Timeline
    let format: AudioFormat
    private let compositor: Compositor
    private let log: Logger
    private var queue = PlaybackQueue()
    private let deterministic: Bool
    private let period: Double
    private let notifier = ServiceNotifier()

    // Clock
    private var position = 0.0
    private var pausedOutputTime: Double?
    private var pauseOffset = 0.0
    private var videoClockOrigin: (catalog: Double, output: Double)?

    // Presenter state
    private var content: ScreenContent = .background
    private var drawn: ScreenContent?
    private var currentEntry: Timeline.Entry?
    private var currentFrame: VideoFrame?
    private var currentFrameShown = true
    /// A crossfade in progress: the previous screen and the catalog times it spans.
    private var fade: (from: ImageBuffer, start: Double, duration: Double)?
    private var lastProgressEvent = -Double.infinity
    private var lastPresent = -Double.infinity, lastProgress = monotonicNow(), lastPing = -Double.infinity
    private var flipsSeen = 0
    private var drawnOverlayKey = ""
    /// The host time of the vblank being prepared: popups animate on presentation timestamps.
    private(set) var lastHostTime = 0.0
    private let stallLimit: Double
    /// Decoder generations whose start and completion were reported.
    private var decodeStartedPosted = Set<Int>()
    private var decodeCompletePosted = Set<Int>()
    private var volumeGain = 1.0
    /// A slate that replaces everything (an invalid manifest, no catalog).
    var fixedSlate: SlateMessage?
    /// The popups over the video, when the manifest defines overlays.
    var overlays: OverlayLayer?
    /// The status banner, drawn under the popups.
    let bannerLayer: BannerLayer
    /// Gets the popups ready before playback: their panels laid out and drawn, and the picture kept
    /// under them allocated, so the first popup shown does not stall its first vblanks.
    func prepareOverlays() {
        guard let overlays else { return }
        let canvas = compositor.canvasSize(screenWidth: output.width, screenHeight: output.height)
        overlays.prepare(canvasWidth: canvas.width, canvasHeight: canvas.height)
        compositor.prepareUnderlay(screenWidth: output.width, screenHeight: output.height)
    }

    /// Input routing (taps, Escape, idle), when input is wired.
    var input: InputRouter?
    /// A seek to apply once the current item is on screen (a `jump` with a time).
    var pendingSeek: Double?
    /// Refills the queue when it runs empty (the catalog's loop); nil: the queue simply ends.
    var refill: (() -> [PlaylistItem])?

    /// Statistics so far.
    public private(set) var stats = RunStatistics()
    private var offsetSum = 0.0

    init(output: VideoOutput, audio: ALSAAudio?, format: AudioFormat, display: DisplaySettings, catalogDirectory: String,
         volume: Double, log: Logger) {
        self.output = output
        self.audio = audio
        self.format = format
        self.log = log
        compositor = Compositor(display: display, log: log)
        bannerLayer = BannerLayer(board: statusBanner, log: log.child("banner"))
        period = 1 / output.refreshRate
        deterministic = output.isVirtual && !((output as? HeadlessOutput)?.realtime ?? false) && audio == nil
        stallLimit = max(2, (ServiceNotifier().watchdogInterval ?? 10) / 2)
        volumeGain = volume
        var provider: (() -> PlaylistItem?)!
        timeline = Timeline(catalogDirectory: catalogDirectory, format: format, untimed: false, log: log.child("decode"),
                            nextItem: { provider() })
        provider = { [unowned self] in self.nextForPreroll() }
        timeline.audioOnRunLoop = audio == nil && output.isVirtual
        audio?.volume = volume
    }

    // MARK: - State

    public var playbackState: PlaybackState { queue.state }
    public var isPlaying: Bool { queue.state == .playing }
    public var isPaused: Bool { queue.state == .paused }
    public var isStopped: Bool { queue.state == .stopped }
    public var queueIsEmpty: Bool { queue.queueIsEmpty }
    /// The item a viewer would call "now playing".
    public var nowPlaying: PlaylistItem? { queue.current }
    /// Catalog time in seconds at the last vblank.
    public var catalogTime: Double { position }
    /// Output gain 0…1.
    public var volume: Double {
        get { volumeGain }
        set { volumeGain = max(0, min(1, newValue)); audio?.volume = volumeGain }
    }

    // MARK: - Status banner

    /// Shows `banner` over the picture, replacing the one up: a panel near the bottom of the screen
    /// (of the logical canvas, so it follows `display.rotation`) with the title, the detail, and a
    /// spinner or a progress bar. Call again with a new `Banner` for each progress step.
    ///
    /// Unlike the other control calls, this one (and `hideBanner()`) may be called from any thread:
    /// the change shows at the next vblank. It is above the video, the slate and a popup's dimming
    /// (so it stays legible on a dimmed screen) and under the popup panels, so nothing covers a panel
    /// a tap may reach; the banner itself takes no input (a tap on it is a tap on what is under it). It is redrawn only when it changes: a spinner step (12 a second), a
    /// whole pixel of progress, new text, or when it goes away.
    public func showBanner(_ banner: Banner) { statusBanner.show(banner) }

    /// Hides the status banner at the next vblank; no effect when none is up. Any thread.
    public func hideBanner() { statusBanner.hide() }

    // MARK: - Queue (SFBAudioPlayer / BCOV)

    /// Cancels the current item, clears the queue, and plays `item`.
    public func play(_ item: PlaylistItem) { apply(queue.play(item)) }

    /// Appends `item`; `immediate` first cancels the current item and clears the queue.
    public func enqueue(_ item: PlaylistItem, immediate: Bool = false) {
        if immediate { dropPrerolled(returning: false) }
        apply(queue.enqueue(item, immediate: immediate))
    }

    /// Empties the queue (a prerolled next item is dropped too); the current item plays on.
    public func clearQueue() {
        dropPrerolled(returning: false)
        queue.clearQueue()
    }

    /// Makes the next item current; a playing player plays it at once. False with nothing queued.
    @discardableResult
    public func advanceToNext() -> Bool {
        if let (old, new) = timeline.promotePrerolled(position: position) {
            endItemVideo(old, "cut")
            events.post(.decoderCanceled(item: old.item.id, framesRendered: old.framesRendered))
            queue.nowPlaying(new.item)
            events.post(.didAdvanceToPlaybackSession(item: new.item.id))
            return true
        }
        let (ok, changes) = queue.advanceToNext()
        apply(changes)
        return ok
    }

    @discardableResult
    public func advanceToNextAndPlay() -> Bool {
        guard advanceToNext() else { return false }
        play()
        return true
    }

    // MARK: - Playback control

    @discardableResult public func play() -> Bool { let (ok, c) = queue.play(); apply(c); return ok }
    @discardableResult public func pause() -> Bool { let (ok, c) = queue.pause(); apply(c); return ok }
    @discardableResult public func resume() -> Bool { let (ok, c) = queue.resume(); apply(c); return ok }
    @discardableResult public func togglePlayPause() -> Bool { let (ok, c) = queue.togglePlayPause(); apply(c); return ok }
    /// Cancels the current item and clears the queue; no effect when stopped.
    public func stop() { let (_, c) = queue.stop(); apply(c) }
    /// Cancels the current item and clears the queue whatever the state.
    public func reset() { apply(queue.reset()) }

    // MARK: - Position

    /// Seconds into the current item; nil with nothing playing.
    public var currentTime: Double? { currentEntry.map { max($0.source.startAt, position - $0.start) } }
    /// The current item's length in seconds once known (else its container's, capped by `duration`).
    public var totalTime: Double? {
        guard let e = currentEntry else { return nil }
        if let len = e.source.length { knownLength[e.item.src] = len; return len }
        if let d = e.source.containerDuration {
            let capped = e.item.duration.map { min($0, d) } ?? d
            if knownLength[e.item.src] == nil { knownLength[e.item.src] = capped }
            return capped
        }
        return knownLength[e.item.src] ?? e.item.duration
    }
    /// Position and length in output audio frames (`format.sampleRate` per second).
    public var framePosition: Int? { currentTime.map { Int(($0 * Double(format.sampleRate)).rounded()) } }
    public var frameLength: Int? { totalTime.map { Int(($0 * Double(format.sampleRate)).rounded()) } }

    /// True when the current item can seek (a seekable file that is not a still picture).
    public var supportsSeeking: Bool {
        guard let e = currentEntry, e.item.type != .image else { return false }
        if e.source.state == .opening { return knownSeekable[e.item.src] ?? false }
        let ok = !e.source.isStill && e.source.seekable
        knownSeekable[e.item.src] = ok
        return ok
    }
    private var knownLength: [String: Double] = [:]
    /// Whether each file could seek, remembered so a second seek can follow the first at once.
    private var knownSeekable: [String: Bool] = [:]

    /// Seeks the current item to `time` seconds. False when seeking is unsupported or out of range.
    /// Cue points between the old and new playhead fire as one aggregated event.
    @discardableResult
    public func seek(time: Double) -> Bool {
        guard supportsSeeking, let e = currentEntry, time >= 0, time.isFinite else { return false }
        if let total = totalTime, time >= total { return false }
        let (cancelled, new) = timeline.start(e.item, position: position, startAt: time)
        for c in cancelled where c !== e { queue.returnToQueue(c.item) }   // a prerolled next item goes back
        new.cues = e.cues
        new.renderingStarted = true
        new.framesRendered = e.framesRendered
        if itemVideo?.entry === e { itemVideo?.entry = new }   // the same item, seeked: one "played" line
        currentEntry = new
        currentFrame = nil
        currentFrameShown = true
        if let cue = new.cues.seek(to: time) { fire(cue) }
        log.info("seek \(e.item.id) to \(String(format: "%.3f", time)) s")
        return true
    }

    /// Seeks to `position` in [0, 1) of the current item's length.
    @discardableResult
    public func seek(position fraction: Double) -> Bool {
        guard fraction >= 0, fraction < 1, let total = totalTime else { return false }
        return seek(time: fraction * total)
    }

    /// Seeks to audio frame `frame` (`format.sampleRate` per second).
    @discardableResult
    public func seek(frame: Int) -> Bool { seek(time: Double(frame) / Double(format.sampleRate)) }

    /// Seeks forward by `seconds` (default 3), clamped to just before the end.
    @discardableResult
    public func seek(forward seconds: Double = 3) -> Bool {
        guard let t = currentTime else { return false }
        var target = t + seconds
        if let total = totalTime { target = min(target, max(0, total - period)) }
        return seek(time: target)
    }

    /// Seeks backward by `seconds` (default 3), clamped to 0.
    @discardableResult
    public func seek(backward seconds: Double = 3) -> Bool {
        guard let t = currentTime else { return false }
        return seek(time: max(0, t - seconds))
    }

    // MARK: - Internals

    private func nextForPreroll() -> PlaylistItem? {
        guard queue.state != .stopped else { return nil }
        if queue.queueIsEmpty, let refill {
            for item in refill() { _ = queue.enqueue(item) }
        }
        return queue.takeNextForPreroll()
    }

    private func dropPrerolled(returning: Bool) {
        if let item = timeline.dropPrerolled(), returning { queue.returnToQueue(item) }
    }

    private func apply(_ changes: [PlaybackChange]) {
        for change in changes {
            switch change {
            case .cancelCurrent:
                for e in timeline.cancelAll() {
                    endItemVideo(e, "cut")
                    events.post(.decoderCanceled(item: e.item.id, framesRendered: e.framesRendered))
                }
                if currentEntry != nil { events.post(.nowPlayingChanged(item: nil)) }
                currentEntry = nil
                currentFrame = nil
            case .load(let item):
                let (cancelled, _) = timeline.start(item, position: position)
                for e in cancelled {
                    endItemVideo(e, "cut")
                    events.post(.decoderCanceled(item: e.item.id, framesRendered: e.framesRendered))
                }
                events.post(.didAdvanceToPlaybackSession(item: item.id))
            case .state(let s):
                switch s {
                case .paused:
                    if pausedOutputTime == nil { pausedOutputTime = output.nextPresentationTime() }
                    audio?.setPaused(true)
                case .playing:
                    if let t = pausedOutputTime { pauseOffset += output.nextPresentationTime() - t }
                    pausedOutputTime = nil
                    videoClockOrigin = nil
                    audio?.setPaused(false)
                case .stopped:
                    if pausedOutputTime == nil { pausedOutputTime = output.nextPresentationTime() }
                    audio?.setPaused(true)   // the device plays silence until playback starts again
                    timeline.cancelAll()
                    currentEntry = nil
                    currentFrame = nil
                }
                events.post(.playbackStateChanged(s))
            }
        }
    }

    private func fire(_ cue: CuePointEvent) {
        events.post(.cuePoints(cue))
        for c in cue.cuePoints {
            let source = "cue \(cue.itemID)/\(c.id)"
            events.post(.action(c.action, source: source))
            pendingActions.append((c.action, source))
            actions.post(c.action, source: source)
        }
    }

    /// Feeds one input event (from libinput, or synthetic in tests) through the same handler.
    /// Button actions go onto the action bus; the engine's own are applied after the next vblank.
    public func handleInput(_ event: PointerInput) {
        guard let input else { return }
        for (action, source) in input.handle(event, overlays: overlays, now: lastHostTime) {
            events.post(.action(action, source: source))
            pendingActions.append((action, source))
            actions.post(action, source: source)
        }
    }

    /// Applies the actions the engine owns, queued by `fire` during a vblank.
    private func performPendingActions() {
        let list = pendingActions
        pendingActions.removeAll()
        for (action, source) in list {
            switch action {
            case .log(let m): log.info("\(source): \(m)")
            case .seek(let t): seek(time: t)
            case .pause: pause()
            case .resume: resume()
            case .setVolume(let v): volume = v
            case .showOverlay, .hideOverlays:
                if let overlays {
                    let done = overlays.presenter.perform(action, at: lastHostTime)
                    if done == false { log.info("\(source): \(action) had no effect") }
                } else {
                    log.info("\(source): \(action) (no overlays in this catalog)")
                }
            case .jump: break
            }
        }
    }

    /// Catalog time at the output time `tDisplay`.
    private func clock(at tDisplay: Double) -> Double {
        if queue.state != .playing && pausedOutputTime != nil { return position }
        let tMono = output.monotonicTime(ofPresentation: tDisplay)
        if output.isVirtual && audio == nil { return tDisplay - pauseOffset }
        if let audio, let entry = currentEntry, entry.source.hasAudio, let t = audio.catalogTime(at: tMono) {
            videoClockOrigin = nil
            return t
        }
        if let audio, currentEntry == nil, let t = audio.catalogTime(at: tMono) { return t }
        if videoClockOrigin == nil {
            let base = audio?.catalogTime(at: tMono) ?? (currentEntry.map { max($0.start, position) } ?? position)
            videoClockOrigin = (base, tMono)
        }
        return videoClockOrigin!.catalog + (tMono - videoClockOrigin!.output)
    }

    /// Video frames the first item must have decoded before the clock starts (`startPlayback`).
    static let prefillFrames = 3

    /// Starts playback's clock: waits (at most 2 s) until the first item has opened, has sound
    /// queued and `prefillFrames` video frames decoded (or turns out to have none, or fails), then
    /// starts the audio device, so playback begins with neither silence nor a decoder still warming
    /// up its threads (which drops the first frames as decoded late).
    func startPlayback() {
        timeline.moreExpected = !queue.queueIsEmpty || refill != nil
        // Posted, not dropped: an item that failed to open already counts (`stats.itemsFailed`), so a
        // catalog that cannot play is reported as such however fast its decoder gave up.
        post(timeline.maintain(position: 0), hostTime: output.monotonicTime(ofPresentation: output.nextPresentationTime()))
        let deadline = monotonicNow() + 2
        while let e = timeline.entries.first, monotonicNow() < deadline {
            let s = e.source
            if case .failed = s.state { break }
            let waiting = s.state == .opening
                || audio != nil && s.hasAudio && s.audio.frames < 4096 && !s.audio.isFinished
                || s.hasVideo && !s.isStill && s.video.buffered < Self.prefillFrames && !s.video.isFinished
            guard waiting else { break }
            Thread.sleep(forTimeInterval: 0.002)
        }
        audio?.start(timeline: timeline)
    }

    /// One vblank: advance the clock, schedule items, pick the frame due, present it, fire cue
    /// points and events. Returns false once the queue is exhausted and nothing plays.
    func step() throws -> Bool {
        let waited = output.waitedSeconds
        waitSinceLastStep = waited - waitedAtLastStep
        waitedAtLastStep = waited
        drawnThisStep = nil
        let tDisplay = output.nextPresentationTime()
        position = clock(at: tDisplay)
        let hostTime = output.monotonicTime(ofPresentation: tDisplay)
        lastHostTime = hostTime

        if let message = fixedSlate {
            content = .slate(message)
        } else if queue.state == .stopped {
            content = .background
        } else {
            timeline.moreExpected = !queue.queueIsEmpty || refill != nil
            let changes = timeline.maintain(position: position)
            post(changes, hostTime: hostTime)
            if timeline.isExhausted {
                currentEntry = nil
                events.post(.nowPlayingChanged(item: nil))
                events.post(.endOfAudio)
                apply(queue.playbackEnded())
                return false
            }
            var entry = timeline.entry(at: position)
            // An item still opening is not on screen yet: a virtual clock waits for it (it may fail
            // and be skipped); a real clock keeps showing the previous picture meanwhile.
            while let e = entry, e.source.state == .opening {
                guard deterministic, !stopSignal.load(ordering: .relaxed) else { entry = nil; break }
                Thread.sleep(forTimeInterval: 0.001)
                if e.source.state != .opening {
                    post(timeline.maintain(position: position), hostTime: hostTime)
                    entry = timeline.entry(at: position)
                }
            }
            if let e = entry, case .failed = e.source.state { entry = nil }
            if let entry, entry !== currentEntry { switchTo(entry) }
            if let t = pendingSeek, currentEntry != nil, currentEntry!.source.state != .opening {
                pendingSeek = nil
                seek(time: t)
            }
            if let message = timeline.slateMessage {
                content = .slate(message)
            } else if let entry = currentEntry, entry === timeline.entry(at: position) {
                pickFrame(entry)
            }
        }
        try present(hostTime: hostTime)
        if let e = currentEntry, queue.state == .playing {
            // Cue points against the presented frame's PTS (or the clock for items without video).
            let local: Double
            if case .frame(let f, _) = content, !e.source.isStill, e.source.hasVideo { local = f.pts } else { local = position - e.start }
            if let cue = e.cues.advance(to: local) { fire(cue) }
            if position - lastProgressEvent >= progressInterval {
                lastProgressEvent = position
                events.post(.progress(item: e.item.id, time: max(0, position - e.start), duration: totalTime))
            }
        }
        if audio == nil && !output.isVirtual, let reopen = reopenAudio, hostTime >= nextAudioAttempt {
            nextAudioAttempt = hostTime + 5
            if let a = reopen() {
                if a.format == format {
                    a.volume = volumeGain
                    if queue.state != .playing { a.setPaused(true) }
                    a.start(timeline: timeline)
                    audio = a
                    videoClockOrigin = nil
                    log.info("audio device opened: \(a.summary)")
                } else {
                    a.stop()
                    log.error("audio device offers \(a.format), not \(format); trying again later")
                }
            }
        }
        // With no sound device on a real clock (DRM without ALSA), nobody else consumes the items'
        // audio: discard it in step with the clock, or decoders block on full audio queues.
        if audio == nil && !output.isVirtual && queue.state == .playing {
            let due = Int(position * Double(format.sampleRate)) - timeline.audioPosition
            if due > 0 { _ = timeline.pullAudio(frames: due, timeout: 0) }
        }
        if let input {
            for (action, source) in input.checkIdle(overlays: overlays, now: hostTime) {
                events.post(.action(action, source: source))
                pendingActions.append((action, source))
                actions.post(action, source: source)
            }
        }
        trackAnimation(at: hostTime)
        performPendingActions()
        stats.vblanks += 1
        stats.catalogSeconds = position
        return true
    }

    /// A popup animation in progress: what the video did under it (see `AnimationReport`).
    private struct AnimationWindow {
        var report: AnimationReport
        var start: Double, last: Double
        var presented: Int, dropped: DroppedFrames, yielded: Int
        var draws = 0, drawSum = 0.0
    }
    private var animation: AnimationWindow?
    /// Seconds the last redraw took (composition only, not the wait for the flip).
    private var lastDrawSeconds = 0.0
    /// Composition seconds of this step's redraw, nil when it did not redraw.
    private var drawnThisStep: Double?
    /// Redraws counted as taking at least this long (seconds): lets tests stand in for a slow CPU.
    var drawSecondsFloor = 0.0
    /// Popup-only redraws left out so far to keep a video frame on time (see `present`).
    private(set) var popupStepsYielded = 0
    /// `output.waitedSeconds` at the start of the last step, and the wait between that step and this one.
    private var waitedAtLastStep = 0.0
    /// The video item on screen and the frame counts when it started, for its "played" journal line.
    private var itemVideo: (entry: Timeline.Entry, presented: Int, dropped: DroppedFrames)?
    /// The entry, its local time and the vblank time (`lastHostTime`) at the last `pickFrame`, to tell
    /// a late decoder from a late run loop.
    private var lastPick: (entry: Timeline.Entry, local: Double, hostTime: Double)?
    private var waitSinceLastStep = 0.0

    /// Measures frame drops while any popup animates, and reports each animation when it ends.
    private func trackAnimation(at hostTime: Double) {
        let animating = overlays?.presenter.stack.filter { $0.phase != .shown }
            .map { "\($0.id):\($0.phase == .appearing ? "appearing" : "disappearing")" } ?? []
        if !animating.isEmpty {
            if var a = animation {
                a.report.missedVblanks += max(0, Int(((hostTime - a.last) / period).rounded()) - 1)
                a.last = hostTime
                a.report.vblanks += 1
                a.report.longestWaitMs = max(a.report.longestWaitMs, waitSinceLastStep * 1000)
                for p in animating where !a.report.phases.contains(p) { a.report.phases.append(p) }
                if let d = drawnThisStep { a.draws += 1; a.drawSum += d; a.report.drawMaxMs = max(a.report.drawMaxMs, d * 1000) }
                animation = a
            } else {
                let report = AnimationReport(phases: animating, seconds: 0, vblanks: 1, missedVblanks: 0, framesPresented: 0,
                                             dropped: DroppedFrames(), longestWaitMs: 0,
                                             drawMeanMs: 0, drawMaxMs: (drawnThisStep ?? 0) * 1000, periodMs: period * 1000,
                                             stepsYielded: 0)
                animation = AnimationWindow(report: report, start: hostTime, last: hostTime,
                                            presented: stats.framesPresented, dropped: stats.dropped, yielded: popupStepsYielded,
                                            draws: drawnThisStep == nil ? 0 : 1, drawSum: drawnThisStep ?? 0)
            }
        } else if animation != nil {
            endAnimation()
        }
    }

    /// Reports the animation being measured (`overlayAnimation`), at its end or when the run ends.
    private func endAnimation() {
        guard let a = animation else { return }
        animation = nil
        var r = a.report
        r.seconds = a.last - a.start
        r.framesPresented = stats.framesPresented - a.presented
        r.dropped = stats.dropped - a.dropped
        r.stepsYielded = popupStepsYielded - a.yielded
        r.drawMeanMs = a.draws > 0 ? a.drawSum / Double(a.draws) * 1000 : 0
        log.info(r.summary)
        events.post(.overlayAnimation(r))
    }

    /// Logs what the video item `e` did on screen ("played …"), once, when it ends, is cut or the run
    /// ends (`how` says which of the last two). Stills and items without video have no such line.
    private func endItemVideo(_ e: Timeline.Entry, _ how: String?) {
        guard let w = itemVideo, w.entry === e else { return }
        itemVideo = nil
        guard e.source.hasVideo, !e.source.isStill else { return }
        log.info("played \(e.item.id): \(stats.framesPresented - w.presented) video frames presented, "
                 + (stats.dropped - w.dropped).summary + (how.map { "; \($0)" } ?? ""))
    }

    private func switchTo(_ entry: Timeline.Entry) {
        if let c = currentFrame, !currentFrameShown, let old = currentEntry {
            stats.dropped.itemEnded += 1
            log.debug("dropped frame at \(c.pts) s of \(old.item.id): its item ended first")
        }
        let isSeekRestart = entry.renderingStarted
        currentEntry = entry
        currentFrame = nil
        currentFrameShown = true
        guard !isSeekRestart else { return }
        entry.renderingStarted = true
        stats.itemsStarted += 1
        itemVideo = (entry, stats.framesPresented, stats.dropped)
        // A crossfade into this item starts from what is on screen now.
        if let t = entry.item.transition, t.type == .crossfade, t.duration > 0, let shown = drawn {
            let size = compositor.canvasSize(screenWidth: output.width, screenHeight: output.height)
            let from = ImageBuffer(width: size.width, height: size.height)
            do {
                try from.withTarget { try compositor.drawLogical(shown, into: $0) }
                fade = (from, position, t.duration)
            } catch {
                log.error("crossfade: \(error)")
            }
        } else {
            fade = nil
        }
        queue.nowPlaying(entry.item)
        log.info("now playing \(entry.item.id) (\(entry.item.src))", ["at": String(format: "%.3f", entry.start)])
        events.post(.renderingStarted(item: entry.item.id))
        events.post(.nowPlayingChanged(item: entry.item.id))
        if !entry.source.hasAudio { videoClockOrigin = nil }
    }

    private func pickFrame(_ entry: Timeline.Entry) {
        let local = position - entry.start
        defer { lastPick = (entry, local, lastHostTime) }
        let q = entry.source.video
        // Show the latest frame due by this vblank (PTS within half a period); frames passed over
        // were late and count as dropped. A virtual clock waits for the decoder instead, so
        // recordings are exact.
        while queue.state == .playing || currentFrame == nil {
            if let f = q.peek() {
                guard f.pts <= local + period / 2 || (entry.source.isStill && currentFrame == nil) || currentFrame == nil && queue.state != .playing else { break }
                // The first frame of an item is always shown, even when the vblank phase makes the
                // second one nearer: a title frame is never skipped at a boundary.
                if currentFrame == nil && !entry.source.isStill {
                    _ = q.pop()
                    currentFrame = f
                    currentFrameShown = false
                    break
                }
                _ = q.pop()
                if let c = currentFrame, !currentFrameShown {
                    let why: String
                    let stepGap = lastPick.map { lastHostTime - $0.hostTime } ?? period
                    if c.pts < entry.source.startAt || f.pts - c.pts < period * 0.99 && stepGap <= period * 1.5 {
                        stats.dropped.skipped += 1          // before a seek target, or more frames than vblanks
                        why = "skipped (\(c.pts < entry.source.startAt ? "before the seek target" : "the content's rate is above the display's"))"
                    } else if let last = lastPick, last.entry === entry, c.pts <= last.local + period / 2 {
                        stats.dropped.decoderLate += 1      // due at the vblank before, but not decoded then
                        why = "decoded late"
                    } else if waitSinceLastStep > max(f.pts - c.pts, period) {
                        stats.dropped.displayStall += 1     // blocked on the display for longer than the frame lasts
                        why = "waited \(Int(waitSinceLastStep * 1000)) ms on the display"
                    } else {
                        stats.dropped.runLoopLate += 1
                        why = "the run loop was late"
                    }
                    log.debug("dropped frame at \(c.pts) s of \(entry.item.id) at the vblank at \(local) s: \(why)")
                }
                currentFrame = f
                currentFrameShown = false
                continue
            }
            if !deterministic || q.isFinished || q.closed { break }
            if case .failed = entry.source.state { break }
            if !entry.source.hasVideo && entry.source.state != .opening { break }
            // A decoder blocked on a full audio queue (video that ends long before its sound) sends no
            // more pictures until this clock drains the audio: do not wait for one.
            if entry.source.audio.frames >= entry.source.audio.capacityFrames - format.sampleRate / 10 { break }
            if stopSignal.load(ordering: .relaxed) { break }
            q.waitForItem(timeout: 0.1)
        }
        if let f = currentFrame {
            content = .frame(f, generation: entry.source.generation)
        } else if !entry.source.hasVideo && entry.source.state != .opening {
            content = .background
        }
    }

    private func present(hostTime: Double) throws {
        // Redraw when the picture changes, and at least once a second so the display keeps flipping
        // (the watchdog is fed from completed flips).
        let now = monotonicNow()
        var shown = content
        if let f = fade {
            let progress = (position - f.start) / f.duration
            if progress >= 1 || progress < 0 { fade = nil } else { shown = .crossfade(from: f.from, to: content, progress: progress) }
        }
        let canvas = compositor.canvasSize(screenWidth: output.width, screenHeight: output.height)
        let overlayKey = (overlays?.drawKey(at: hostTime) ?? "") + "|"
            + bannerLayer.drawKey(at: hostTime, canvasWidth: canvas.width, canvasHeight: canvas.height)
        // A popup step alone (the picture unchanged) gives way to the video on a slow CPU: when drawing
        // takes over half a period and the next video frame falls due before this drawing would be
        // done, the vblank is left to that frame. The popups then animate at the video's rate, and
        // the video drops no frame for them.
        let popupStepOnly = shown == drawn && overlayKey != drawnOverlayKey && now - lastPresent < 1
        let yieldToVideo = popupStepOnly && lastDrawSeconds > period / 2
            && videoFrameDue(before: position + lastDrawSeconds + period / 2)
        if yieldToVideo { popupStepsYielded += 1 }
        if !yieldToVideo && (shown != drawn || overlayKey != drawnOverlayKey || now - lastPresent >= 1) {
            let c = shown
            let layer = overlays, banner = bannerLayer
            let popups = layer?.isDrawing ?? false, bannerUp = banner.isShowing
            var drawStart = 0.0, drawEnd = 0.0
            defer { lastDrawSeconds = max(drawEnd - drawStart, drawSecondsFloor); drawnThisStep = lastDrawSeconds }
            try output.present { target in
                drawStart = monotonicNow()
                defer { drawEnd = monotonicNow() }
                if popups || bannerUp {
                    // The banner above the popups' dimming (legible) and under their panels (which
                    // take the input, so they are always on top).
                    try compositor.drawDecorated(c, into: target) { logical, under in
                        let drawBanner: ((PixelTarget) -> Void)? = bannerUp ? { banner.draw(into: $0, at: hostTime) } : nil
                        if let layer {
                            layer.draw(into: logical, at: hostTime, base: under, aboveDimming: drawBanner)
                        } else {
                            logical.copy(from: under)
                            drawBanner?(logical)
                        }
                    }
                } else {
                    compositor.releaseUnderlay()
                    try compositor.draw(c, into: target)
                }
            }
            drawnOverlayKey = overlayKey
            lastPresent = now
            if drawn == nil {
                notifier.ready(status: "playing")
                log.info("first frame on screen")
            }
            drawn = shown
            if case .frame(let f, _) = content, let entry = currentEntry, !currentFrameShown {
                currentFrameShown = true
                entry.framesRendered += 1
                stats.framesPresented += 1
                lastProgress = now
                if entry.source.hasAudio && queue.state == .playing {
                    let off = (entry.start + f.pts - position) * 1000
                    offsetSum += off
                    stats.avSamples += 1
                    stats.avOffsetMaxMs = max(stats.avOffsetMaxMs, abs(off))
                    stats.avOffsetMeanMs = offsetSum / Double(stats.avSamples)
                }
            }
        } else {
            try output.idle()
        }
        // Progress: a new frame was shown, or nothing more is expected (a still, an audio item, the
        // slate, a pause, or an item whose decoder finished). A decoder that stalls mid-item stops the
        // pings, so systemd restarts the player.
        if let entry = currentEntry, case .frame = content, !entry.source.isStill, queue.state == .playing,
           entry.source.state == .playing, entry.source.hasVideo {
            // waiting on video frames: only a presented frame counts (set above)
        } else {
            lastProgress = now
        }
        if output.completedFlips != flipsSeen {
            flipsSeen = output.completedFlips
            if now - lastProgress < stallLimit && now - lastPing >= 0.5 {
                notifier.watchdog()
                lastPing = now
            }
        }
    }

    /// Whether the current item's next decoded video frame becomes due (within half a period of its
    /// PTS, as `pickFrame` takes it) before catalog time `t`. False while paused, for stills, and
    /// when no frame is decoded yet.
    private func videoFrameDue(before t: Double) -> Bool {
        guard queue.state == .playing, let e = currentEntry, !e.source.isStill, let next = e.source.video.peek() else { return false }
        return e.start + next.pts - period / 2 < t
    }

    private func post(_ changes: Timeline.Changes, hostTime: Double) {
        for (e, why) in changes.failed {
            stats.itemsFailed += 1
            events.post(.decodingAborted(item: e.item.id, error: why, framesRendered: e.framesRendered))
        }
        for e in changes.retired where e.renderingStarted {
            endItemVideo(e, nil)
            // The item played to its end: cue points after its last frame's PTS, up to its length, fire now.
            if let length = e.source.length, let cue = e.cues.finish(length: length) { fire(cue) }
            events.post(.renderingComplete(item: e.item.id))
            if e === currentEntry { currentEntry = nil }
        }
        for e in changes.scheduled + timeline.takeScheduledByAudio() {
            events.post(.renderingWillStart(item: e.item.id, at: hostTime + (e.start - position)))
        }
        for e in timeline.entries + changes.retired {
            let id = e.source.generation
            if e.source.state != .opening, !decodeStartedPosted.contains(id), !isFailed(e) {
                decodeStartedPosted.insert(id)
                events.post(.decodingStarted(item: e.item.id))
            }
            if e.source.state == .finished, !decodeCompletePosted.contains(id) {
                decodeCompletePosted.insert(id)
                events.post(.decodingComplete(item: e.item.id))
            }
            if !e.announcedLength, let len = e.source.length {
                e.announcedLength = true
                events.post(.durationChanged(item: e.item.id, duration: len))
                events.post(.renderingWillComplete(item: e.item.id, at: hostTime + (e.start + len - position)))
            }
        }
        for g in timeline.takeAudioGaps() {
            let ms = Double(g.frames) * 1000 / Double(format.sampleRate)
            events.post(.audioGap(from: g.from, to: g.to, milliseconds: ms))
            if g.formatsDiffer { log.info("audio format change \(g.from) → \(g.to): gap \(String(format: "%.2f", ms)) ms (resampled to \(format); the device keeps its format)") }
        }
        if decodeStartedPosted.count > 256 {
            let keep = decodeStartedPosted.max() ?? 0
            decodeStartedPosted = decodeStartedPosted.filter { $0 > keep - 8 }
            decodeCompletePosted = decodeCompletePosted.filter { $0 > keep - 8 }
        }
    }

    private func isFailed(_ e: Timeline.Entry) -> Bool { if case .failed = e.source.state { return true } else { return false } }

    func finish() {
        if animation != nil { endAnimation() }
        if let w = itemVideo { endItemVideo(w.entry, "the run ended") }
        // The item on screen is cut: the proof-of-play log closes it.
        if let e = currentEntry, e.renderingStarted {
            events.post(.decoderCanceled(item: e.item.id, framesRendered: e.framesRendered))
        }
        timeline.shutdown()
        audio?.stop()
        stats.xruns = audio?.xrunCount ?? 0
        stats.audioUnderflowFrames = timeline.underflowFrames
        events.finish()
    }
}
