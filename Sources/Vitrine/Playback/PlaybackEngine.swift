import Foundation
import SystemSupport
import Media
import RunLoop
import VitrineCore

/// The player: a queue of items, the playing/paused/stopped states, seeking, events and cue points,
/// presenting on a `VideoOutput` with audio through ALSA (the master clock) or in step with the
/// headless output's virtual vblanks.
///
/// Semantics follow SFBAudioPlayer (decoder queue, states, seeking, delegate events) and
/// BCOVPlaybackFacade (advance and play, progress, duration, cue points aggregated across seeks).
/// A call that has no effect in the current state returns false and changes nothing.
///
/// This file is the playback API and the items' lifecycle on the time line. Its parts:
/// `Presenter` (the page-flip loop: pick, compose, flip), `PlaybackClock` (catalog time),
/// `ActionDispatcher` (every action's one way in), `PlaybackTelemetry` (frame drops, popup
/// animations, `played …` lines: an observer of `events`) and `WatchdogFeeder`.
///
/// Threading: the engine is confined to one thread, the run loop's; call the control methods from
/// that thread (for example from an action handler or between `step()` calls). The exceptions are
/// `showBanner(_:)` and `hideBanner()` (through `statusBanner`), which any thread may call. Decoders
/// and the ALSA writer run on their own threads.
public final class PlaybackEngine: ActionPerformer {
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

    let output: VideoOutput
    private(set) var audio: ALSAAudio?
    /// Opens the sound device again when it was missing at start (the card's driver may still be
    /// probing at boot); tried every 5 s on a real output until it succeeds.
    var reopenAudio: (() -> ALSAAudio?)?
    private var nextAudioAttempt = 0.0
    let timeline: Timeline
    let format: AudioFormat
    let log: Logger
    private var queue = PlaybackQueue()
    /// The display's period in seconds.
    let period: Double
    /// Catalog time: read by the presenter once per vblank, stopped and started by the states.
    private(set) var clock = PlaybackClock()
    let dispatcher: ActionDispatcher
    let telemetry: PlaybackTelemetry
    /// The page-flip loop.
    private(set) var presenter: Presenter!
    /// The run loop's thread, the only one that may call the engine (checked in debug builds).
    let confinement = ThreadConfinement()

    /// The entry on screen (or about to be).
    private(set) var currentEntry: Timeline.Entry?
    private var lastProgressEvent = -Double.infinity
    /// Decoder generations whose start and completion were reported.
    private var decodeStartedPosted = Set<Int>()
    private var decodeCompletePosted = Set<Int>()
    private var volumeGain = 1.0
    /// A slate that replaces everything (an invalid manifest, no catalog).
    var fixedSlate: SlateMessage?
    /// Input routing (taps, Escape, idle), when input is wired.
    var input: InputRouter?
    /// A seek to apply once the current item is on screen (a `jump` with a time).
    var pendingSeek: Double?
    /// Refills the queue when it runs empty (the catalog's loop); nil: the queue simply ends.
    var refill: (() -> [PlaylistItem])?
    /// A synchronised catalog's clock (`sync` in the manifest): catalog time follows the wall clock
    /// and items sit in their slots of the cycle (`startSynchronized`). Nil: catalog time starts at
    /// 0 with the run and follows the master clock.
    private(set) var sync: SyncLock?
    /// The synchronised playlist, in order (to rejoin the cycle at any slot).
    private var syncItems: [PlaylistItem] = []
    /// Told after every vblank: its host time (`CLOCK_MONOTONIC` seconds), the item and PTS
    /// (seconds) of the video frame on screen, nil when the screen shows no frame, and with a sound
    /// device the catalog time heard then less the vblank's, in seconds (`--vblank-log`).
    var vblankObserver: ((Double, String?, Double?, Double?) -> Void)?
    /// Since when (catalog time) an entry has been out of its slot.
    private var outOfStepSince: Double?
    /// Whether a synchronised item's pictures keep coming (`keepInStep`).
    private var stallWatch = StallWatch()
    /// The PTS of the current entry's frame on screen at the last vblank; nil while the screen shows
    /// another entry's picture, or none.
    private var shownPTS: Double?

    init(output: VideoOutput, audio: ALSAAudio?, format: AudioFormat, display: DisplaySettings, catalogDirectory: String,
         volume: Double, log: Logger) {
        self.output = output
        self.audio = audio
        self.format = format
        self.log = log
        period = 1 / output.refreshRate
        volumeGain = volume
        dispatcher = ActionDispatcher(events: events, bus: actions, log: log)
        telemetry = PlaybackTelemetry(events: events, period: period, log: log)
        var provider: (() -> PlaylistItem?)!
        timeline = Timeline(catalogDirectory: catalogDirectory, format: format, untimed: false, log: log.child("decode"),
                            nextItem: { provider() })
        provider = { [unowned self] in self.nextForPreroll() }
        timeline.audioOnRunLoop = audio == nil && output.isVirtual
        audio?.volume = volume
        presenter = Presenter(engine: self, display: display, log: log)
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
    public var catalogTime: Double { clock.position }
    /// Output gain 0…1.
    public var volume: Double {
        get { volumeGain }
        set { volumeGain = max(0, min(1, newValue)); audio?.volume = volumeGain }
    }
    /// Statistics so far.
    public var stats: RunStatistics { telemetry.stats }

    // MARK: - Screen

    /// The popups over the video, when the manifest defines overlays.
    var overlays: OverlayLayer? {
        get { presenter.overlays }
        set { presenter.overlays = newValue }
    }
    /// The status banner, drawn under the popups.
    var bannerLayer: BannerLayer { presenter.bannerLayer }
    /// The host time of the vblank being prepared: popups animate on presentation timestamps.
    var lastHostTime: Double { presenter.hostTime }
    /// When set, every redraw counts as taking this long (seconds): lets tests stand in for a slow or
    /// a fast CPU whatever the machine does meanwhile.
    var countedDrawSeconds: Double? {
        get { presenter.countedDrawSeconds }
        set { presenter.countedDrawSeconds = newValue }
    }

    /// Gets the popups ready before playback: their panels laid out and drawn, and the picture kept
    /// under them allocated, so the first popup shown does not stall its first vblanks.
    func prepareOverlays() { presenter.prepareOverlays() }

    // MARK: - Status banner

    /// Shows `banner` over the picture, replacing the one up: a panel near the bottom of the screen
    /// (of the logical canvas, so it follows `display.rotation`) with the title, the detail, and a
    /// spinner or a progress bar. Call again with a new `Banner` for each progress step.
    ///
    /// Unlike the other control calls, this one (and `hideBanner()`) may be called from any thread:
    /// the change shows at the next vblank. It is above the video, the slate and a popup's dimming
    /// (so it stays legible on a dimmed screen) and under the popup panels, so nothing covers a panel
    /// a tap may reach; the banner itself takes no input (a tap on it is a tap on what is under it).
    /// It is redrawn only when it changes: a spinner step (12 a second), a whole pixel of progress,
    /// new text, or when it goes away.
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
        if let (old, new) = timeline.promotePrerolled(position: clock.position) {
            cut(old)
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
    /// Pauses; false (and a log line) for a synchronised catalog, whose cycle runs on the wall clock.
    @discardableResult public func pause() -> Bool {
        if sync != nil { log.info("pause ignored: a synchronized catalog plays on the wall clock"); return false }
        let (ok, c) = queue.pause(); apply(c); return ok
    }
    @discardableResult public func resume() -> Bool { let (ok, c) = queue.resume(); apply(c); return ok }
    @discardableResult public func togglePlayPause() -> Bool {
        if sync != nil && isPlaying { return pause() }
        let (ok, c) = queue.togglePlayPause(); apply(c); return ok
    }
    /// Cancels the current item and clears the queue; no effect when stopped.
    public func stop() { let (_, c) = queue.stop(); apply(c) }
    /// Cancels the current item and clears the queue whatever the state.
    public func reset() { apply(queue.reset()) }

    // MARK: - Display power (the schedule's)

    /// Whether the display is off by schedule (`setDisplayOff`).
    var displayIsOff: Bool { presenter.displayOff }

    /// Output seconds the display spent off by schedule so far: the catalog clock stands still
    /// meanwhile, so a run's length (`--duration`) is its catalog time plus these.
    var secondsOff: Double { offSeconds + (offSince.map { output.nextPresentationTime() - $0 } ?? 0) }
    private var offSeconds = 0.0
    private var offSince: Double?

    /// Whether the output is powered off now (after the black picture reached the screen).
    var outputIsPoweredOff: Bool { presenter.outputPoweredOff }

    /// Turns the display off by schedule, or back on.
    ///
    /// Off: the item on screen is cancelled and the queue cleared (its decoders end, so they use no
    /// CPU), every popup is hidden, the sound device is closed, and the presenter flips a black
    /// picture, then powers the output off (`Presenter.displayOff`); touch is ignored. On: the sound
    /// device is opened again at the next vblank (`reopenAudio`), the next picture powers the output
    /// on; the caller queues and plays what the schedule says (`play()`).
    func setDisplayOff(_ off: Bool) {
        confinement.check()
        guard off != presenter.displayOff else { return }
        if off {
            offSince = output.nextPresentationTime()
        } else if let since = offSince {
            offSeconds += output.nextPresentationTime() - since
            offSince = nil
        }
        if off {
            refill = nil
            stop()
            // Stopped from the start of a run, the clock may not be paused yet: it stands still while off.
            clock.pause(atOutputTime: output.nextPresentationTime())
            hideAllPopups()
        }
        if off, !output.isVirtual, let a = audio {
            // Closed, not fed silence: the writer thread ends, so the CPU is near zero while off (and
            // HDMI audio that goes with the screen is opened afresh). `keepSoundDevice` opens it again.
            a.stop()
            audio = nil
            log.info("sound device closed while the display is off")
        }
        audio?.setPaused(off)  // a headless run's device (no screen to reopen it on) plays silence
        if !off { nextAudioAttempt = 0 }
        presenter.displayOff = off
        presenter.wake()
    }

    /// Opens `item` and decodes its first pictures and sound ahead of its start (`Timeline.warm`):
    /// a schedule edge a second away, so the cut at the edge shows its first frame at once.
    func warm(_ item: PlaylistItem) { timeline.warm(item) }

    /// Seconds of audio handed to the sound device and not yet heard (0 without a device): an item
    /// that replaces what plays starts after them (`Timeline.start`, at the audio write head).
    var audioLead: Double {
        guard audio != nil else { return 0 }
        return max(0, Double(timeline.audioPosition) / Double(format.sampleRate) - clock.position)
    }

    /// Hides every popup at once, modal ones too (an interrupt, the display going off).
    func hideAllPopups() {
        overlays?.presenter.hideAllVisible(reason: .action, at: lastHostTime, animated: false)
    }

    // MARK: - Position

    /// Seconds into the current item; nil with nothing playing.
    public var currentTime: Double? { currentEntry.map { max($0.source.startAt, clock.position - $0.start) } }
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
    ///
    /// The item's running decoder seeks (`ItemSource.seek(to:)`: its file is not opened again) and the
    /// frame on screen at `time` comes at the first vblank after the decoder has it, shown at once
    /// (a sound device's buffered audio plays out first, and the picture stays on that frame meanwhile).
    /// The frames decoded from the key frame before `time` and passed over count as skipped.
    @discardableResult
    public func seek(time: Double) -> Bool {
        confinement.check()
        if sync != nil { log.info("seek ignored: a synchronized catalog plays its cycle on the wall clock"); return false }
        guard supportsSeeking, let e = currentEntry, time >= 0, time.isFinite else { return false }
        if let total = totalTime, time >= total { return false }
        guard let (cancelled, new) = timeline.seek(e, to: time, position: clock.position) else { return false }
        for c in cancelled where c !== e { queue.returnToQueue(c.item) }   // a prerolled next item goes back
        new.onScreen.cues = e.onScreen.cues
        new.onScreen.renderingStarted = true
        new.onScreen.framesRendered = e.onScreen.framesRendered
        // The same decoder decodes to its end again.
        decodeCompletePosted.remove(e.source.generation)
        currentEntry = new
        clock.bumpSerial()
        presenter.forgetFrame()
        if let cue = new.onScreen.cues.seek(to: time) { dispatcher.dispatch(cue) }
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

    // MARK: - Input

    /// Feeds one input event (from libinput, or synthetic in tests) through the same handler.
    /// Button actions go through the dispatcher; the engine's own are applied after the next vblank.
    public func handleInput(_ event: PointerInput) {
        confinement.check()
        guard let input, !presenter.displayOff else { return }
        dispatcher.dispatch(input.handle(event, overlays: overlays, now: lastHostTime))
        presenter.wake()
    }

    // MARK: - One vblank

    /// One vblank: advance the clock, schedule items, pick the frame due, present it, fire cue
    /// points and events. Returns false once the queue is exhausted and nothing plays.
    func step() throws -> Bool { try presenter.step() }

    /// Video frames the first item must have decoded before the clock starts (`startPlayback`).
    static let prefillFrames = 3

    /// Starts playback's clock once the first item has opened, has sound queued and `prefillFrames`
    /// video frames decoded (or turns out to have none, or fails), or after 2 s, so playback begins
    /// with neither silence nor a decoder still warming up its threads (which drops the first frames
    /// as decoded late). Waits on `loop` (for the decoders' progress, and a 2 s timer), then starts
    /// the sound device and calls `started`.
    func startPlayback(on loop: EventLoop, then started: @escaping () -> Void) {
        catchUpWithWallClock()
        scheduleFirstItem()
        var done = false
        var timeout: LoopTimer?
        var progress: LoopWaker?
        let finish = { [unowned self] in
            guard !done else { return }
            done = true
            timeout?.cancel()
            (output as? HeadlessOutput)?.restartVblanksIfNoneShown()
            catchUpWithWallClock()
            audio?.start(timeline: timeline)
            started()
        }
        let check = { [unowned self] in
            guard !done else { return }
            let generation = timeline.progress.generation
            if prefilled() {
                timeline.pinReadyEntries(position: clock.position)
                finish()
            } else {
                timeline.progress.arm(progress!, after: generation)
            }
        }
        progress = loop.makeWaker(onWake: check)
        timeout = loop.scheduleTimer(after: .seconds(2), finish)
        check()
    }

    /// `startPlayback(on:then:)` on a thread with no run loop (a test that steps the engine): waits for
    /// the decoders' progress, at most 2 s, then starts the sound device.
    func startPlayback() {
        catchUpWithWallClock()
        scheduleFirstItem()
        let deadline = monotonicNow() + 2
        while monotonicNow() < deadline {
            let generation = timeline.progress.generation
            if prefilled() { break }
            timeline.progress.wait(after: generation, timeout: deadline - monotonicNow())
        }
        timeline.pinReadyEntries(position: clock.position)
        (output as? HeadlessOutput)?.restartVblanksIfNoneShown()
        catchUpWithWallClock()
        audio?.start(timeline: timeline)
    }

    /// Schedules the first item (and reports it if it failed already).
    private func scheduleFirstItem() {
        timeline.moreExpected = !queue.queueIsEmpty || refill != nil
        // Posted, not dropped: an item that failed to open already counts (`stats.itemsFailed`), so a
        // catalog that cannot play is reported as such however fast its decoder gave up.
        post(timeline.maintain(position: clock.position), hostTime: output.monotonicTime(ofPresentation: output.nextPresentationTime()))
    }

    /// Whether the first item is ready for the clock to start (see `startPlayback`); files that
    /// failed their preflight take no time, so it is the first one that did not fail.
    private func prefilled() -> Bool {
        guard let e = timeline.entries.first(where: { !$0.source.isFailed }) else { return true }
        let s = e.source
        if case .failed = s.state { return true }
        let waiting = !s.isReady
            || audio != nil && s.hasAudio && s.audio.frames < 4096 && !s.audio.isFinished
            || s.hasVideo && !s.isStill && s.video.buffered < Self.prefillFrames && !s.video.isFinished
        return !waiting
    }

    /// Reads catalog time for the presentation at output time `outputTime` (host time `hostTime`).
    func readClock(outputTime: Double, hostTime: Double) -> Double {
        if let sync { return clock.follow(sync.catalogTime(hostTime: hostTime)) }
        let master = PlaybackClock.Master.choose(virtualOutput: output.isVirtual, soundDevice: audio != nil,
                                                 itemHasSound: currentEntry.map { $0.source.hasAudio })
        return clock.read(outputTime: outputTime, referenceTime: hostTime, master: master,
                          soundDevice: audio?.catalogTime(at: hostTime), itemStart: currentEntry?.start)
    }

    /// What the screen shows at the vblank at catalog time `position`.
    enum Showing {
        /// The slate with its message.
        case slate(SlateMessage)
        /// The background colour.
        case background
        /// A frame of this entry (the presenter picks it).
        case item(Timeline.Entry)
        /// What is on screen now stays (an item still opening on a real clock).
        case unchanged
        /// A virtual clock waits for the item due to open (it may fail and be skipped): ask again
        /// when a decoder moves (`timeline.progress`).
        case waitingForDecoders
    }

    /// The items at the vblank at catalog time `position`: reports decoders that started, finished or
    /// failed, schedules and retires items, starts the one due and applies a pending seek. Nil once
    /// the queue is exhausted and nothing plays (`endOfAudio`).
    func itemsAt(_ position: Double, hostTime: Double, deterministic: Bool) -> Showing? {
        if let message = fixedSlate { return .slate(message) }
        if queue.state == .stopped { return .background }
        timeline.moreExpected = !queue.queueIsEmpty || refill != nil
        let changes = timeline.maintain(position: position)
        post(changes, hostTime: hostTime)
        if timeline.isExhausted {
            currentEntry = nil
            events.post(.nowPlayingChanged(item: nil))
            events.post(.endOfAudio)
            apply(queue.playbackEnded())
            return nil
        }
        var entry = timeline.entry(at: position)
        // An item that has nothing to show yet (opening, seeking, or decoding its first frame) is not
        // on screen yet: a virtual clock waits for it (it may fail and be skipped); a real clock keeps
        // showing the previous picture meanwhile. A file that opens but decodes nothing is so never
        // "now playing".
        if let e = entry, e.isFloating || !e.source.isReady || e.source.state == .opening {
            if !e.source.isFailed && deterministic && !stopSignal.load(ordering: .relaxed) { return .waitingForDecoders }
            entry = nil
        }
        if let entry, entry !== currentEntry { switchTo(entry) }
        if let t = pendingSeek, let current = currentEntry, !current.isFloating, current.source.isReady {
            pendingSeek = nil
            seek(time: t)
        }
        if let message = timeline.slateMessage { return .slate(message) }
        guard let current = currentEntry, !current.isFloating, current.source.isReady else { return .unchanged }
        countSeekSkips(current)
        if current === timeline.entry(at: position) { return .item(current) }
        // After a seek, the picture at the target is shown at once even while a sound device's
        // buffered audio still plays out before the entry's sound; it then waits there.
        if current.isSeekRestart && !current.onScreen.picked { return .item(current) }
        return .unchanged
    }

    /// Counts, once the seek is done, the frames a seek decoded and passed over to reach its target.
    private func countSeekSkips(_ e: Timeline.Entry) {
        guard e.isSeekRestart, !e.onScreen.seekSkipCounted, let n = e.source.framesSkippedBySeek else { return }
        e.onScreen.seekSkipCounted = true
        guard n > 0 else { return }
        events.report(.framesSkipped(n, item: e.item.id))
        log.debug("skipped \(n) frames of \(e.item.id) decoded from the key frame before the seek target \(e.source.startAt) s")
    }

    /// After the vblank's picture went to the output: cue points against the presented frame's PTS
    /// (`presentedPTS`: nil when the picture on screen is not the current entry's own; the clock for
    /// items without video), progress, the sound device, the idle rule,
    /// and the engine's share of the actions dispatched during the vblank.
    func vblankPresented(at position: Double, hostTime: Double, presentedPTS: Double?) {
        shownPTS = presentedPTS
        if let e = currentEntry, queue.state == .playing {
            // A moving picture's cue points follow its own presented frames: while the picture on screen
            // is another's (the previous item's, or this item's from before a seek) they wait.
            var local: Double? = position - e.start
            if !e.source.isStill, e.source.hasVideo { local = presentedPTS }
            if let local, let cue = e.onScreen.cues.advance(to: local) { dispatcher.dispatch(cue) }
            if position - lastProgressEvent >= progressInterval {
                lastProgressEvent = position
                events.post(.progress(item: e.item.id, time: max(0, position - e.start), duration: totalTime))
            }
        }
        keepSoundDevice(at: position, hostTime: hostTime)
        if let input { dispatcher.dispatch(input.checkIdle(overlays: overlays, now: hostTime)) }
    }

    /// Carries out the engine's share of the actions dispatched during the vblank.
    func performDispatchedActions() { dispatcher.performPending(on: self) }

    /// Opens a sound device that was missing (every 5 s on a real screen), and with none on a real
    /// clock consumes the items' audio in step with it (or decoders block on full audio queues).
    private func keepSoundDevice(at position: Double, hostTime: Double) {
        // A device that went away mid-play (HDMI audio with its screen): closed; opened again below, every 5 s.
        if let a = audio, a.hasFailed, reopenAudio != nil {
            a.stop()
            audio = nil
            clock.resynchronize()
            nextAudioAttempt = hostTime + 1
            log.warning("sound device lost: playing on without sound, opening it again every 5 s")
        }
        if audio == nil && !output.isVirtual && !presenter.displayOff, let reopen = reopenAudio, hostTime >= nextAudioAttempt {
            nextAudioAttempt = hostTime + 5
            if let a = reopen() {
                if a.format == format {
                    a.volume = volumeGain
                    if queue.state != .playing { a.setPaused(true) }
                    a.start(timeline: timeline)
                    audio = a
                    clock.resynchronize()
                    log.info("audio device opened: \(a.summary)")
                } else {
                    a.stop()
                    log.error("audio device offers \(a.format), not \(format); trying again later")
                }
            }
        }
        if audio == nil && !output.isVirtual && queue.state == .playing {
            let due = Int(position * Double(format.sampleRate)) - timeline.audioPosition
            if due > 0 { _ = timeline.pullAudio(frames: due, timeout: 0) }
        }
    }

    // MARK: - Synchronised catalogs

    /// Plays `items` as a cycle locked to the wall clock (`SyncLock`): the queue starts at the slot
    /// playing half a second from now (`SyncLock.joinLead`), joined mid-item, and every item after it
    /// starts on its slot. Call before `startPlayback`, with the queue empty.
    func startSynchronized(_ lock: SyncLock, items: [PlaylistItem]) {
        confinement.check()
        sync = lock
        syncItems = items
        timeline.setSync(lock.placement)
        clock.follow(lock.catalogTime(hostTime: monotonicNow()))
        queueFromSlot(at: clock.position + SyncLock.joinLead, play: false)
    }

    /// The wall clock's catalog time now, and the audio consumer moved on to it (it starts there, not
    /// at catalog time 0).
    private func catchUpWithWallClock() {
        guard let sync else { return }
        clock.follow(sync.catalogTime(hostTime: monotonicNow()))
        timeline.advanceAudio(to: Int(clock.position * Double(format.sampleRate)))
    }

    /// Queues the synchronised playlist from the slot playing at catalog time `c`; `play` replaces
    /// what plays (a rejoin).
    private func queueFromSlot(at c: Double, play: Bool) {
        guard let sync, !syncItems.isEmpty else { return }
        let id = sync.slot(atCatalog: c).id
        let i = syncItems.firstIndex { $0.id == id } ?? 0
        // From that slot to the playlist's end; the loop's refill then gives the whole playlist.
        let rotated = Array(syncItems[i...])
        if play {
            self.play(rotated[0])
            for item in rotated.dropFirst() { enqueue(item) }
        } else {
            for item in rotated { enqueue(item) }
        }
    }

    /// After each vblank of a synchronised catalog: a wall-clock step (NTP, an administrator) moves
    /// the cycle, so playback rejoins it at the slot the clock now says; an entry found off its slot
    /// for over a second (which nothing should cause) is rejoined too. Catalog time never goes back:
    /// a step moves it on by the step's fraction of a second (`SyncLock.checkForStep`).
    func keepInStep() {
        guard let sync, queue.state == .playing else { return }
        if let step = sync.checkForStep() {
            timeline.setSync(sync.placement)
            log.warning(String(format: "the wall clock stepped by %+.3f s: rejoining the cycle", step))
            rejoin()
            return
        }
        let rate = Double(format.sampleRate)
        let misplaced = timeline.entries.first { e in
            guard !e.source.isFailed, let planned = e.plannedFrames, planned > 0 else { return false }
            let slot = sync.slot(atCatalog: e.start + 0.5 * Double(planned) / rate)
            return slot.id != e.item.id || abs(slot.start - e.start) > 0.002
        }
        guard let e = misplaced else { outOfStepSince = nil; return watchForStall() }
        if outOfStepSince == nil { outOfStepSince = clock.position }
        guard clock.position - outOfStepSince! > 1 else { return }
        log.warning("\(e.item.id) is off its slot in the cycle (starts at \(String(format: "%.3f", e.start)) s, planned \(e.plannedFrames ?? -1), slot \(sync.slot(atCatalog: e.start + 0.5 * Double(e.plannedFrames ?? 0) / rate))): rejoining the cycle")
        rejoin()
    }

    /// A synchronised item whose pictures stopped coming (`StallWatch`): the cycle is rejoined with new
    /// decoders, and the old decoder's state is logged (what it had queued, how far the sound was taken).
    private func watchForStall() {
        // The entry whose slot this is, shown or not (one still opening leaves the one before current).
        // None (a dead slot: its file failed) owes no picture.
        guard let e = timeline.entry(at: clock.position) else { _ = stallWatch.check(position: clock.position, behind: nil); return }
        // Owed: a video's frames, and a picture's one frame until it has it (a still with its frame, a
        // sound, a finished or failed decoder owe nothing).
        let idle = e.source.isFailed || e.source.state == .finished || e.item.type == .audio
            || e.source.isReady && (e.source.isStill || !e.source.hasVideo)
        // A decoder still decoding is not stuck, only behind (or in a sound that runs on past its
        // pictures): it counts once it has decoded nothing for half a second.
        let moving = stallWatch.isDecoding(generation: e.source.generation,
                                           decoded: e.source.decodedVideoFrames + e.source.decodedAudioFrames, at: clock.position)
        let behind = idle || moving ? nil : StallWatch.behind(due: clock.position - e.start, shown: e === currentEntry ? shownPTS : nil,
                                                    startAt: e.source.startAt)
        guard let late = stallWatch.check(position: clock.position, behind: behind) else { return }
        let s = e.source
        let heard = Double(timeline.audioPosition) / Double(format.sampleRate)
        func f(_ x: Double) -> String { String(format: "%.3f", x) }
        log.warning("\(e.item.id) shows no new picture: \(f(late)) s behind its slot (decoder \(s.state), \(s.video.buffered) pictures "
                    + "and \(s.audio.frames) sound frames queued; sound taken to catalog \(f(heard)) s, the vblank at \(f(clock.position)) s): "
                    + "rejoining the cycle with new decoders")
        rejoin()
    }

    /// Plays the cycle again from the slot the wall clock says (an interrupt ended, a step): that
    /// slot joined mid-item half a second from now, as at a start.
    func rejoin() {
        outOfStepSince = nil
        clock.follow(sync!.catalogTime(hostTime: monotonicNow()))
        queueFromSlot(at: clock.position + SyncLock.joinLead, play: true)
    }

    // MARK: - Items

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

    /// An entry cancelled while it played or was prerolled (`decoderCanceled`; its "played" line says "cut").
    private func cut(_ e: Timeline.Entry) {
        events.report(.itemEnded(generation: e.source.generation, video: e.source.hasVideo && !e.source.isStill, how: "cut"))
        events.post(.decoderCanceled(item: e.item.id, framesRendered: e.onScreen.framesRendered))
    }

    private func apply(_ changes: [PlaybackChange]) {
        confinement.check()
        for change in changes {
            switch change {
            case .cancelCurrent:
                for e in timeline.cancelAll() { cut(e) }
                if currentEntry != nil { events.post(.nowPlayingChanged(item: nil)) }
                currentEntry = nil
                presenter.releaseFrame()
            case .load(let item):
                let (cancelled, _) = timeline.start(item, position: clock.position)
                for e in cancelled { cut(e) }
                clock.bumpSerial()
                events.post(.didAdvanceToPlaybackSession(item: item.id))
            case .state(let s):
                switch s {
                case .paused:
                    clock.pause(atOutputTime: output.nextPresentationTime())
                    audio?.setPaused(true)
                case .playing:
                    clock.resume(atOutputTime: output.nextPresentationTime())
                    audio?.setPaused(false)
                case .stopped:
                    clock.pause(atOutputTime: output.nextPresentationTime())
                    audio?.setPaused(true)   // the device plays silence until playback starts again
                    timeline.cancelAll()
                    currentEntry = nil
                    presenter.releaseFrame()
                }
                events.post(.playbackStateChanged(s))
            }
        }
    }

    private func switchTo(_ entry: Timeline.Entry) {
        presenter.itemEnding()
        let isSeekRestart = entry.onScreen.renderingStarted
        currentEntry = entry
        presenter.forgetFrame()
        guard !isSeekRestart else { return }
        announceStart(entry)
        presenter.itemStarting(entry)
        if !entry.source.hasAudio { clock.resynchronize() }
    }

    /// An item starts: "now playing", `renderingStarted`.
    private func announceStart(_ entry: Timeline.Entry) {
        entry.onScreen.renderingStarted = true
        events.report(.itemStarted(item: entry.item.id, generation: entry.source.generation))
        queue.nowPlaying(entry.item)
        log.info("now playing \(entry.item.id) (\(entry.item.src))", ["at": String(format: "%.3f", entry.start)])
        events.post(.renderingStarted(item: entry.item.id))
        events.post(.nowPlayingChanged(item: entry.item.id))
    }

    private func post(_ changes: Timeline.Changes, hostTime: Double) {
        let position = clock.position
        for (e, why) in changes.failed {
            events.post(.decodingAborted(item: e.item.id, error: why, framesRendered: e.onScreen.framesRendered))
        }
        for e in changes.retired + changes.cancelled {
            // An item that began and ended between two vblanks (a 5 ms sound) still started: it played.
            if !e.onScreen.renderingStarted && !isFailed(e) && changes.retired.contains(where: { $0 === e }) { announceStart(e) }
            guard e.onScreen.renderingStarted else { continue }
            events.report(.itemEnded(generation: e.source.generation, video: e.source.hasVideo && !e.source.isStill, how: nil))
            // The item played to its end: cue points after its last frame's PTS, up to its length, fire now.
            if let length = e.source.length, let cue = e.onScreen.cues.finish(length: length) { dispatcher.dispatch(cue) }
            events.post(.renderingComplete(item: e.item.id))
            if e === currentEntry { currentEntry = nil }
        }
        for e in changes.scheduled + timeline.takeScheduledByAudio() {
            events.post(.renderingWillStart(item: e.item.id, at: hostTime + (e.start - position)))
        }
        for e in timeline.entries + changes.retired + changes.cancelled {
            let id = e.source.generation
            if e.source.state != .opening, !decodeStartedPosted.contains(id), !isFailed(e) {
                decodeStartedPosted.insert(id)
                events.post(.decodingStarted(item: e.item.id))
            }
            if e.source.state == .finished, !decodeCompletePosted.contains(id) {
                decodeCompletePosted.insert(id)
                events.post(.decodingComplete(item: e.item.id))
            }
            if !e.onScreen.announcedLength, let len = e.source.length {
                e.onScreen.announcedLength = true
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

    /// Ends the run: the animation being measured and the item on screen are reported, decoders and
    /// the sound device stop, observers' streams end.
    func finish() {
        events.report(.runEnded(videoOnScreen: currentEntry.map { $0.source.hasVideo && !$0.source.isStill } ?? false))
        // The item on screen is cut: the proof-of-play log closes it.
        if let e = currentEntry, e.onScreen.renderingStarted {
            events.post(.decoderCanceled(item: e.item.id, framesRendered: e.onScreen.framesRendered))
        }
        timeline.shutdown()
        audio?.stop()
        timeline.stopSoundtrack()
        events.report(.soundEnded(xruns: audio?.xrunCount ?? 0, underflowFrames: timeline.underflowFrames,
                                  soundtrackUnderflowFrames: timeline.soundtrackUnderflowFrames))
        events.finish()
    }
}
