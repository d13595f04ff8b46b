import Foundation
import SystemSupport
import Media
import RunLoop
import VitrineCore

/// The page-flip loop: once per vblank it reads the catalog clock for the vblank being prepared,
/// asks the engine what plays then, picks the video frame due (`FramePolicy`), composes the screen
/// (video, crossfade, status banner, popups) into the output's back buffer, waits for the previous
/// page flip (one in flight, under one timeout policy), and queues the new one.
///
/// One vblank, in order (`prepare`, the wait, `commit`):
/// 1. the vblank: when the picture drawn now reaches the screen (`VideoOutput.nextPresentationTime`);
/// 2. the clock there (`PlaybackEngine.readClock`);
/// 3. what plays (`PlaybackEngine.itemsAt`: items scheduled, started, ended; seeks; the slate);
/// 4. the frame (`pick`);
/// 5. compose into the back buffer, or keep the picture (`decide`);
/// 6. the wait: for the pending flip to complete (the DRM device's page-flip event, or the headless
///    output's vblank time), or with nothing new to show for the next vblank; a flip pending for
///    `flipWarning` is logged, for `flipLimit` it ends the run;
/// 7. flip, and after it: cue points, progress, the idle rule (`PlaybackEngine.vblankPresented`),
///    telemetry, and the actions dispatched meanwhile.
///
/// `run(on:)` drives it on the run loop: the wait is the loop's (the DRM descriptor, a timer), and
/// on a virtual clock (headless, as fast as possible) a decoder that is behind is waited for through
/// the loop's eventfd (`DecoderProgress`), never by sleeping. `step()` runs one vblank at once, for
/// outputs that never wait (tests).
///
/// Sources: ffplay's `video_refresh` (show the frame whose PTS is nearest the vblank, drop late ones),
/// kmscube and mpv's vo_drm (draw into the back buffer while the previous flip is pending, one flip
/// in flight). Confined to the run loop's thread.
final class Presenter {
    unowned let engine: PlaybackEngine
    let output: VideoOutput
    let compositor: Compositor
    /// The popups over the video, when the manifest defines overlays.
    var overlays: OverlayLayer?
    /// The status banner, drawn under the popups.
    let bannerLayer: BannerLayer
    /// The display is off by schedule (`PlaybackEngine.setDisplayOff`): the next vblank flips a black
    /// picture, the one after powers the output off, and nothing is flipped until this is false
    /// again (the next picture then powers it on, with a modeset on DRM). While off, a real clock
    /// wakes once a second (the watchdog), a virtual one steps its vblanks (the recording is black).
    var displayOff = false
    /// Whether the output is powered off now (`VideoOutput.setDisplayPower`).
    private(set) var outputPoweredOff = false
    private let log: Logger
    private let period: Double
    /// Whether the clock is virtual and waits for decoders (headless, as fast as possible, no sound
    /// device): recordings and snapshots are then exact and repeatable.
    let deterministic: Bool
    let watchdog: WatchdogFeeder

    /// The flip-timeout policy: a page flip still pending after `flipWarning` seconds is logged (the
    /// display stalls), and one pending after `flipLimit` seconds ends the run with
    /// `PresenterError.pageFlipTimedOut` (the service restarts the player, which sets the mode again).
    static let flipWarning = 1.0
    static let flipLimit = 2.0

    // The vblank being prepared.
    /// `CLOCK_MONOTONIC` seconds of the vblank being prepared: popups animate on presentation times.
    private(set) var hostTime = 0.0
    /// Seconds waited on the display (`waitedOnDisplay` plus the output's own stalls) at the start of
    /// the last vblank, and the wait between that vblank and this one.
    private var waitedAtLastStep = 0.0
    private var waitSinceLastStep = 0.0

    // The picture.
    private var content: ScreenContent = .background
    /// The entry whose frame `content` is (nil when it is no frame).
    private var contentEntry: Timeline.Entry?
    private var drawn: ScreenContent?
    /// The current item's frame taken for the screen, and whether a vblank has shown it yet.
    private var frame: VideoFrame?
    private var frameShown = true
    /// A crossfade in progress: the previous screen and the catalog times it spans.
    private var fade: (from: ImageBuffer, start: Double, duration: Double)?
    private var drawnOverlayKey = ""
    private var lastPresent = -Double.infinity
    /// Seconds the last redraw took (composition only, not the wait for the flip).
    private var lastDrawSeconds = 0.0
    /// Composition seconds of this step's redraw, nil when it did not redraw.
    private var drawnThisStep: Double?
    /// When set, every redraw counts as taking this long (seconds): lets tests stand in for a slow or
    /// a fast CPU whatever the machine does meanwhile.
    var countedDrawSeconds: Double?
    /// The entry, its local time and the vblank time at the last `pick`, to tell a late decoder from a
    /// late run loop.
    private var lastPick: (entry: Timeline.Entry, local: Double, hostTime: Double)?

    init(engine: PlaybackEngine, display: DisplaySettings, log: Logger) {
        self.engine = engine
        output = engine.output
        self.log = log
        compositor = Compositor(display: display, log: log)
        bannerLayer = BannerLayer(board: engine.statusBanner, log: log.child("banner"))
        period = 1 / output.refreshRate
        deterministic = output.isVirtual && !((output as? HeadlessOutput)?.realtime ?? false) && engine.audio == nil
        engine.timeline.soundtrackWaits = deterministic
        watchdog = WatchdogFeeder(now: output.now())
    }

    /// Gets the popups ready before playback: their panels laid out and drawn, and the picture kept
    /// under them allocated, so the first popup shown does not stall its first vblanks.
    func prepareOverlays() {
        guard let overlays else { return }
        let canvas = compositor.canvasSize(screenWidth: output.width, screenHeight: output.height)
        overlays.prepare(canvasWidth: canvas.width, canvasHeight: canvas.height)
        compositor.prepareUnderlay(screenWidth: output.width, screenHeight: output.height)
    }

    // MARK: - One vblank

    /// A prepared vblank: its catalog time, what was drawn into the back buffer (nil: the screen keeps
    /// its picture), and the monotonic time its redraw was decided at.
    struct Prepared {
        let position: Double
        let redraw: (shown: ScreenContent, overlayKey: String)?
        let now: Double
    }

    enum Preparation {
        case ready(Prepared)
        /// A virtual clock waits for a decoder: prepare again when `DecoderProgress` moves.
        case waitingForDecoders
        /// The queue is exhausted and nothing plays.
        case ended
    }

    /// A vblank whose preparation waits for decoders: its clock, and the entry being picked from.
    private var resuming: (position: Double, picking: Timeline.Entry?)?

    /// Steps 1–5: prepares the next vblank's picture in the back buffer.
    func prepare() throws -> Preparation {
        engine.confinement.check()
        if resuming == nil {
            // 1. The vblank being prepared.
            waitSinceLastStep = waitedOnDisplay + output.waitedSeconds - waitedAtLastStep
            waitedAtLastStep = waitedOnDisplay + output.waitedSeconds
            drawnThisStep = nil
            let tDisplay = output.nextPresentationTime()
            hostTime = output.monotonicTime(ofPresentation: tDisplay)
            // 2. The catalog clock there.
            resuming = (engine.readClock(outputTime: tDisplay, hostTime: hostTime), nil)
        }
        let position = resuming!.position
        var picking = resuming!.picking
        if picking == nil {
            // 3. What plays.
            guard let showing = engine.itemsAt(position, hostTime: hostTime, deterministic: deterministic) else {
                resuming = nil
                return .ended
            }
            switch showing {
            case .slate(let message): content = .slate(message); contentEntry = nil
            case .background: content = .background; contentEntry = nil
            case .item(let entry): picking = entry
            case .unchanged: break
            case .waitingForDecoders: return .waitingForDecoders
            }
        }
        // 4. The frame.
        if let entry = picking, !pick(entry, at: position) {
            resuming!.picking = entry
            return .waitingForDecoders
        }
        resuming = nil
        // 5. Compose, or keep the picture.
        return .ready(try decide(at: position))
    }

    /// Step 7: flips the picture drawn (the previous flip has completed, or the vblank waited for
    /// has come). `finish` then does the vblank's work after the flip.
    func commit(_ p: Prepared) throws {
        if let redraw = p.redraw {
            if outputPoweredOff {
                try output.setDisplayPower(true)
                outputPoweredOff = false
            }
            try output.flip()
            drawnOverlayKey = redraw.overlayKey
            lastPresent = p.now
            if drawn == nil {
                watchdog.firstFrame()
                log.info("first frame on screen")
            }
            drawn = redraw.shown
            if case .frame(let f, _) = content, let entry = engine.currentEntry, !frameShown {
                frameShown = true
                entry.onScreen.framesRendered += 1
                watchdog.progressed(at: p.now)
                let offsetMs = entry.source.hasAudio && engine.isPlaying ? (entry.start + f.pts - p.position) * 1000 : nil
                engine.events.report(.framePresented(avOffsetMs: offsetMs))
            }
        }
    }

    /// The vblank's work after its flip: the watchdog, cue points, progress, the idle rule,
    /// telemetry, and the actions dispatched meanwhile.
    func finish(_ p: Prepared) {
        // Progress: a new frame was shown (above), or nothing more is expected (a still, an audio item,
        // the slate, a pause, or an item whose decoder finished).
        if let entry = engine.currentEntry, case .frame = content, !entry.source.isStill, engine.isPlaying,
           entry.source.state == .playing, entry.source.hasVideo {
            // waiting on video frames: only a presented frame counts
        } else {
            watchdog.progressed(at: p.now)
        }
        // Off by schedule, or no sink connected (hot-plug): no flips expected, none is a fault.
        if outputPoweredOff || !output.isScreenConnected { watchdog.screenOff(at: p.now) } else { watchdog.flips(output.completedFlips, at: p.now) }
        // Off by schedule: once the black picture is on screen, the output powers off.
        if displayOff && !outputPoweredOff && drawn == .dark && !output.isFlipPending {
            do {
                try output.setDisplayPower(false)
                outputPoweredOff = true
            } catch {
                log.error("display power off failed (the screen stays black): \(error)")
            }
        }
        // After the flip: cue points follow the current entry's own frames.
        var presentedPTS: Double?
        if case .frame(let f, _) = content, let e = contentEntry, e === engine.currentEntry { presentedPTS = f.pts }
        engine.vblankPresented(at: p.position, hostTime: hostTime, presentedPTS: presentedPTS)
        if let observe = engine.vblankObserver {
            let heard = engine.audio.map { $0.catalogTime(at: hostTime) - p.position }
            if case .frame(let f, _) = content, let e = contentEntry { observe(hostTime, e.item.id, f.pts, heard) } else { observe(hostTime, nil, nil, heard) }
        }
        let animating = overlays?.presenter.stack.filter { $0.phase != .shown }
            .map { "\($0.id):\($0.phase == .appearing ? "appearing" : "disappearing")" } ?? []
        engine.events.report(.vblank(hostTime: hostTime, position: p.position, waited: waitSinceLastStep,
                                     drawSeconds: drawnThisStep, animating: animating))
        engine.performDispatchedActions()
    }

    /// One vblank at once, for outputs that never wait (headless as fast as possible, test doubles);
    /// a decoder that is behind is waited for on its `DecoderProgress`. Returns false once the queue is
    /// exhausted and nothing plays.
    /// - Throws: the output's errors.
    func step() throws -> Bool {
        while true {
            let generation = engine.timeline.progress.generation
            switch try prepare() {
            case .ended:
                return false
            case .waitingForDecoders:
                engine.timeline.progress.wait(after: generation, timeout: 0.1)
            case .ready(let p):
                if output.isFlipPending {
                    let completed = try output.handleFlipEvents()
                    precondition(completed, "Presenter.step: this output waits for its flips; run it with run(on:)")
                } else if p.redraw == nil {
                    precondition(output.nextVblankDeadline == nil, "Presenter.step: this output waits for its vblanks; run it with run(on:)")
                    try output.vblankPassed()
                }
                try commit(p)
                if output.isFlipPending {
                    let completed = try output.handleFlipEvents()
                    precondition(completed, "Presenter.step: this output waits for its flips; run it with run(on:)")
                }
                finish(p)
                return true
            }
        }
    }

    // MARK: - On the run loop

    /// Where the loop's vblank is.
    private enum Phase {
        /// Between vblanks: the next one is prepared at the loop's next iteration.
        case starting
        /// Preparing waits for a decoder.
        case decoders
        /// Prepared; waiting for the pending flip to complete.
        case flip(Prepared, since: Double)
        /// Prepared with nothing new to show and no flip pending; waiting for the next vblank.
        case vblank(Prepared)
        /// A still screen (`stillUntil`): the next vblank is prepared when it may change, or on `wake()`.
        case still
        /// Flipped on an output whose flips complete at a time (headless, real time): waiting for it,
        /// so the vblank's work comes after its vblank.
        case shown(Prepared)
        case stopped
    }

    /// The loop the presenter runs on, and its handles.
    private struct Driver {
        let loop: EventLoop
        var phase: Phase = .starting
        var next: LoopTimer?
        var deadline: LoopTimer?
        var flipWatch: IORegistration?
        var decoders: LoopWaker?
        var shouldStop: () -> Bool
        var afterVblank: () -> Bool
        /// The catalog time the run ends at, if it ends at one (`--duration`).
        var stopsAt: () -> Double?
        var failure: Error?
    }
    private var driver: Driver?
    /// Seconds the presenter waited on the display (flips, vblanks) so far.
    private var waitedOnDisplay = 0.0

    /// Runs the page-flip loop on `loop` (the calling thread's) until the queue is exhausted,
    /// `shouldStop()` says so before a vblank, or an error. Other sources registered on `loop` are
    /// served meanwhile; `afterVblank` runs after each vblank's work (the player's checks), and ends
    /// the run by returning false. `stopsAt` gives the catalog time the run ends at, if it ends at one
    /// (a still screen sleeps until then at most).
    /// - Throws: the output's errors, `PresenterError.pageFlipTimedOut`, `RunLoopError`.
    func run(on loop: EventLoop, shouldStop: @escaping () -> Bool, stopsAt: @escaping () -> Double? = { nil },
             afterVblank: @escaping () -> Bool) throws {
        try start(on: loop, shouldStop: shouldStop, stopsAt: stopsAt, afterVblank: afterVblank)
        do {
            try loop.run()
        } catch {
            try? end()
            throw error
        }
        try end()
    }

    /// Starts the page-flip loop on `loop` without running the loop (a test drives a manual clock):
    /// the first vblank is prepared at the loop's next iteration. `run(on:)` is `start`, the loop's
    /// `run()`, then `end()`.
    func start(on loop: EventLoop, shouldStop: @escaping () -> Bool, stopsAt: @escaping () -> Double? = { nil },
               afterVblank: @escaping () -> Bool) throws {
        loop.assertInLoop()
        precondition(driver == nil, "Presenter.start: already running")
        var d = Driver(loop: loop, shouldStop: shouldStop, afterVblank: afterVblank, stopsAt: stopsAt)
        if let fd = output.eventDescriptor {
            d.flipWatch = try loop.register(fd, for: .readable) { [unowned self] _ in self.flipEvent() }
        }
        d.decoders = loop.makeWaker { [unowned self] in
            if case .decoders = driver?.phase { vblank() }
        }
        d.next = loop.scheduleTimer(at: loop.now) { [unowned self] in vblank() }
        driver = d
        engine.statusBanner.wakes(loop.makeWaker { [unowned self] in wake() })
    }

    /// Whether a loop started with `start(on:)` has stopped (the queue ended, a stop, an error).
    var hasStopped: Bool {
        if case .stopped? = driver?.phase { return true }
        return false
    }

    /// Ends the loop started with `start(on:)`: its handles go.
    /// - Throws: the error that stopped it, if one did.
    func end() throws {
        guard let d = driver else { return }
        engine.statusBanner.wakes(nil)
        d.flipWatch?.cancel()
        d.next?.cancel()
        d.deadline?.cancel()
        driver = nil
        if let failure = d.failure { throw failure }
    }

    /// Whether `run(on:)` (or `start(on:)`) is running.
    var isRunning: Bool { driver != nil }

    /// Ends `run(on:)` at the next vblank: at once when it is between vblanks, waiting for a decoder
    /// or for a vblank with no flip pending, else once the flip it waits for has come.
    func stopSoon() {
        guard let d = driver else { return }
        switch d.phase {
        case .still:
            // A still screen slept through the vblanks since its last redraw (up to a second): the run
            // ends at the next one, and its catalog time is counted to there.
            output.skipVblanks(before: output.vblankTime(atOrAfter: output.now()))
            let t = output.nextPresentationTime()
            let position = engine.readClock(outputTime: t, hostTime: output.monotonicTime(ofPresentation: t))
            engine.events.report(.stoppedStill(position: position))
            stopDriver()
        case .starting, .decoders, .vblank: stopDriver()
        default: break
        }
    }

    /// Ends `run(on:)` (with `failure`, if any) after the current handler.
    private func stopDriver(_ failure: Error? = nil) {
        guard var d = driver else { return }
        if case .stopped = d.phase { return }
        d.phase = .stopped
        d.failure = failure
        d.next?.cancel()
        d.deadline?.cancel()
        driver = d
        d.loop.stop()
    }

    /// Prepares the next vblank and waits for what it needs.
    private func vblank() {
        guard let d = driver else { return }
        switch d.phase {
        case .starting:
            if d.shouldStop() { return stopDriver() }
        case .decoders:
            // The same vblank, prepared again (its clock was read): a stop asked meanwhile came
            // through `stopSoon()`.
            break
        case .still:
            if d.shouldStop() { return stopDriver() }
            // The vblanks a still screen did not need pass by: the next one prepared is at least half a
            // period away.
            output.skipVblanks(before: output.vblankTime(atOrAfter: output.now() + period / 2))
        default: return
        }
        do {
            let generation = engine.timeline.progress.generation
            switch try prepare() {
            case .ended:
                stopDriver()
            case .waitingForDecoders:
                driver!.phase = .decoders
                engine.timeline.progress.arm(d.decoders!, after: generation)
            case .ready(let p):
                if output.isFlipPending {
                    awaitFlip(p)
                } else if p.redraw == nil, let due = output.nextVblankDeadline {
                    waitForVblank(p, at: due)
                } else {
                    if p.redraw == nil { try output.vblankPassed() }
                    try flipped(p)
                }
            }
        } catch {
            stopDriver(error)
        }
    }

    /// Waits for the pending flip: its event (DRM) or its time (headless), under the one timeout
    /// policy: logged after `flipWarning`, the run ends after `flipLimit`.
    private func awaitFlip(_ p: Prepared) {
        let since = output.now()
        driver!.phase = .flip(p, since: since)
        if let due = output.flipDeadline {
            driver!.deadline = reschedule(driver!.deadline, at: due) { [unowned self] in flipEvent() }
        } else {
            driver!.deadline = reschedule(driver!.deadline, at: since + Self.flipWarning) { [unowned self] in
                log.warning("page flip did not complete within \(Int(Self.flipWarning)) s")
                driver!.deadline = reschedule(driver!.deadline, at: since + Self.flipLimit) { [unowned self] in
                    stopDriver(PresenterError.pageFlipTimedOut(seconds: Self.flipLimit))
                }
            }
        }
    }

    /// The output's descriptor is readable, or its flip time came: the pending flip may have completed.
    private func flipEvent() {
        do {
            guard try output.handleFlipEvents() else { return }
            switch driver?.phase {
            case let .flip(p, since):
                driver!.deadline?.cancel()
                waitedOnDisplay += output.now() - since
                // The flip that completed is the vblank a kept picture waited for; a new picture goes now.
                try flipped(p)
            case let .shown(p):
                driver!.deadline?.cancel()
                try finished(p)
            default:
                break
            }
        } catch {
            stopDriver(error)
        }
    }

    /// Waits for the vblank at `due` with nothing new to show and no flip pending.
    private func waitForVblank(_ p: Prepared, at due: Double) {
        driver!.phase = .vblank(p)
        let since = output.now()
        driver!.deadline = reschedule(driver!.deadline, at: due) { [unowned self] in
            waitedOnDisplay += output.now() - since
            vblankCame()
        }
    }

    /// The vblank waited for came, with no flip pending.
    private func vblankCame() {
        guard case let .vblank(p) = driver?.phase else { return }
        do {
            try output.vblankPassed()
            try flipped(p)
        } catch {
            stopDriver(error)
        }
    }

    /// The output's screen went away or came back (hot-plug, `DRMOutput`): a flip waited for may
    /// now complete at a time (`flipDeadline`) rather than on a device event, and the next vblank
    /// redraws (a screen that came back shows the picture the timeline is at with its modeset).
    /// `status` goes to systemd's STATUS line.
    func outputChanged(status: String) {
        watchdog.status(status)
        lastPresent = -.infinity
        guard let d = driver else { return }
        switch d.phase {
        case .flip:
            if let due = output.flipDeadline {
                driver!.deadline = reschedule(driver!.deadline, at: due) { [unowned self] in flipEvent() }
            }
        case .still:
            wake()
        default:
            break
        }
    }

    /// Something may change a still screen (input, a banner, an import): the next vblank is prepared
    /// at once instead of when it would have changed by itself. Any other phase already runs vblank
    /// by vblank.
    func wake() {
        guard case .still = driver?.phase else { return }
        driver!.next?.cancel()
        driver!.next = driver!.loop.scheduleTimer(at: driver!.loop.now) { [unowned self] in vblank() }
    }

    /// When a still screen may change next, if it is still: the slate with no popup, no crossfade, no
    /// banner that animates and no action waiting. The earliest of the redraw that keeps the display
    /// flipping (a second after the last), the banner's hide, the idle rule, the slate's retry and the
    /// run's end (`stopsAt`). Nil: it may change at every vblank.
    private func stillUntil(_ p: Prepared) -> Double? {
        var t: Double
        if displayOff && outputPoweredOff && engine.dispatcher.pendingCount == 0 {
            // Off by schedule: a second at a time (the watchdog); the schedule wakes it at its edge.
            t = hostTime + 1
        } else {
            guard case .slate = content, fade == nil, !(overlays?.isDrawing ?? false), engine.dispatcher.pendingCount == 0
            else { return nil }
            t = lastPresent + 1
        }
        if !displayOff, let banner = bannerLayer.banner {
            guard !banner.showsSpinner, banner.progress == nil, let hide = bannerLayer.hideTime else { return nil }
            t = min(t, hide)
        }
        if let idle = engine.input?.idle?.deadline { t = min(t, idle) }
        // Catalog times become host times at the clock's rate (1 s a second on the slate).
        for catalogTime in [engine.timeline.slateRetryTime, driver?.stopsAt()].compactMap({ $0 }) {
            t = min(t, hostTime + (catalogTime - p.position))
        }
        return t
    }

    /// Commits the prepared vblank; on an output whose flips complete at a time, waits for it.
    private func flipped(_ p: Prepared) throws {
        try commit(p)
        if output.isFlipPending, let due = output.flipDeadline {
            driver!.phase = .shown(p)
            let since = output.now()
            driver!.deadline = reschedule(driver!.deadline, at: due) { [unowned self] in
                waitedOnDisplay += output.now() - since
                flipEvent()
            }
            return
        }
        try finished(p)
    }

    /// The vblank's work after its flip, then the next vblank at the loop's next iteration.
    private func finished(_ p: Prepared) throws {
        finish(p)
        guard driver != nil else { return }
        if case .stopped = driver!.phase { return }
        driver!.phase = .starting
        guard driver!.afterVblank() else { return stopDriver() }
        if case .stopped = driver?.phase { return }
        // A still screen prepares its next vblank when it may change: the vblanks between would
        // change nothing.
        var at = driver!.loop.now
        if p.redraw == nil, !output.isFlipPending, let next = output.nextVblankDeadline, let still = stillUntil(p),
           still > next + period {
            driver!.phase = .still
            at = Deadline(seconds: still)
        }
        driver!.next?.cancel()
        driver!.next = driver!.loop.scheduleTimer(at: at) { [unowned self] in vblank() }
    }

    /// `timer` moved to `time` (monotonic seconds), or a new timer there.
    private func reschedule(_ timer: LoopTimer?, at time: Double, _ handler: @escaping () -> Void) -> LoopTimer {
        timer?.cancel()
        return driver!.loop.scheduleTimer(at: Deadline(seconds: time), handler)
    }

    // MARK: - Frames

    /// The item on screen changes: a frame taken and never shown is dropped (its item ended first).
    func itemEnding() {
        if let c = frame, !frameShown, let old = engine.currentEntry {
            engine.events.report(.frameDropped(.itemEnded, item: old.item.id, pts: c.pts, clock: nil, waited: 0))
        }
    }

    /// A new item comes on screen: a crossfade into it starts from what is on screen now.
    func itemStarting(_ entry: Timeline.Entry) {
        if let t = entry.item.transition, t.type == .crossfade, t.duration > 0, let shown = drawn {
            let size = compositor.canvasSize(screenWidth: output.width, screenHeight: output.height)
            let from = ImageBuffer(width: size.width, height: size.height)
            do {
                try from.withTarget { try compositor.drawLogical(shown, into: $0) }
                fade = (from, engine.clock.position, t.duration)
            } catch {
                log.error("crossfade: \(error)")
            }
        } else {
            fade = nil
        }
    }

    /// The frame taken is no longer wanted (a seek, a new item): the next pick starts afresh.
    func forgetFrame() {
        frame = nil
        frameShown = true
    }

    /// The item was cancelled: its frame is let go.
    func releaseFrame() { frame = nil }

    /// Takes the frame of `entry` due at the vblank at catalog time `position` (`FramePolicy`).
    /// Frames passed over are recorded with their cause. A virtual clock waits for the decoder
    /// instead of passing frames over, so recordings are exact: false when it must wait (call again
    /// when the decoder has moved).
    private func pick(_ entry: Timeline.Entry, at position: Double) -> Bool {
        // Its pictures are timed from the vblank its first frame came on (`pictureLag`, under a period).
        let vblank = FramePolicy.Vblank(clock: position - entry.start - entry.onScreen.pictureLag, period: period,
                                        isPlaying: engine.isPlaying,
                                        previousClock: lastPick.flatMap { $0.entry === entry ? $0.local : nil },
                                        sincePrevious: lastPick.map { hostTime - $0.hostTime },
                                        waitedOnDisplay: waitSinceLastStep)
        let source = entry.source, q = source.video
        while engine.isPlaying || frame == nil {
            guard let f = q.peek() else {
                if mustWaitForDecoder(entry) { return false } else { break }
            }
            let isStill = source.isStill
            if let c = frame, !frameShown {
                // `c` is taken for this vblank: passed over if `f`, decoded after it, is due too.
                let taken = FramePolicy.Frame(pts: c.pts, isStill: isStill, seekTarget: source.startAt)
                guard case .drop(let cause) = FramePolicy.decide(taken, next: f.pts, at: vblank) else { break }
                engine.events.report(.frameDropped(cause, item: entry.item.id, pts: c.pts, clock: vblank.clock, waited: waitSinceLastStep))
                _ = q.pop()
                frame = f
                continue
            }
            let first = frame == nil
            let opensSeek = first && entry.isSeekRestart
            let head = FramePolicy.Frame(pts: f.pts, isFirstOfItem: first && !opensSeek, isStill: isStill,
                                         seekTarget: source.startAt, opensSeek: opensSeek)
            guard FramePolicy.decide(head, next: nil, at: vblank) == .show else { break }
            _ = q.pop()
            frame = f
            frameShown = false
            entry.onScreen.picked = true
            if first && !isStill && !opensSeek {
                // The item's first frame is shown whatever follows it. An item that starts between two
                // vblanks has its pictures timed from this one: the frame after the first is not then
                // due at once (and dropped), and each comes at its own vblank, under a period late.
                let lag = vblank.clock - f.pts
                // (Not in a synchronised catalog: each frame goes on the vblank nearest its wall-clock time.)
                if engine.isPlaying && lag > 0 && lag < period && engine.sync == nil { entry.onScreen.pictureLag = lag }
                break
            }
        }
        lastPick = (entry, vblank.clock, hostTime)
        if let f = frame {
            content = .frame(f, generation: source.generation)
            contentEntry = entry
        } else if !source.hasVideo && source.state != .opening {
            content = .background
            contentEntry = nil
        }
        return true
    }

    /// Whether a virtual clock must wait for `entry`'s decoder to deliver a frame; false when none is
    /// coming, or the clock is real.
    private func mustWaitForDecoder(_ entry: Timeline.Entry) -> Bool {
        let source = entry.source, q = source.video
        if !deterministic || q.isFinished || q.closed { return false }
        if case .failed = source.state { return false }
        if !source.hasVideo && source.state != .opening { return false }
        // A decoder blocked on a full audio queue (video that ends long before its sound) sends no
        // more pictures until this clock drains the audio: do not wait for one.
        if source.audio.frames >= source.audio.capacityFrames - engine.format.sampleRate / 10 { return false }
        if stopSignal.load(ordering: .relaxed) { return false }
        return true
    }

    /// Whether the current item's next decoded video frame becomes due (within half a period of its
    /// PTS, as `pick` takes it) before catalog time `t`. False while paused, for stills, and when no
    /// frame is decoded yet.
    private func videoFrameDue(before t: Double) -> Bool {
        guard engine.isPlaying, let e = engine.currentEntry, !e.source.isStill, let next = e.source.video.peek() else { return false }
        return e.start + e.onScreen.pictureLag + next.pts - period / 2 < t
    }

    // MARK: - Compose and flip

    /// Step 5: redraws when the picture changes, and at least once a second so the display keeps
    /// flipping (the watchdog is fed from completed flips); otherwise keeps the picture.
    private func decide(at position: Double) throws -> Prepared {
        let now = output.now()
        var shown = content
        if displayOff {
            fade = nil
            // Black once; then nothing is flipped while the display is off.
            guard drawn != .dark else { return Prepared(position: position, redraw: nil, now: now) }
            try compose(.dark)
            return Prepared(position: position, redraw: (.dark, drawnOverlayKey), now: now)
        }
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
        if yieldToVideo { engine.events.report(.popupStepYielded) }
        guard !yieldToVideo && (shown != drawn || overlayKey != drawnOverlayKey || now - lastPresent >= 1) else {
            return Prepared(position: position, redraw: nil, now: now)
        }
        try compose(shown)
        return Prepared(position: position, redraw: (shown, overlayKey), now: now)
    }

    /// Composes `shown` with the banner and popups over it into the output's back buffer.
    private func compose(_ shown: ScreenContent) throws {
        let layer = overlays, banner = bannerLayer, at = hostTime
        let popups = shown != .dark && layer?.isDrawing ?? false, bannerUp = shown != .dark && banner.isShowing
        var drawStart = 0.0, drawEnd = 0.0
        defer { lastDrawSeconds = countedDrawSeconds ?? (drawEnd - drawStart); drawnThisStep = lastDrawSeconds }
        try output.draw { target in
            drawStart = monotonicNow()
            defer { drawEnd = monotonicNow() }
            if popups || bannerUp {
                // The banner above the popups' dimming (legible) and under their panels (which
                // take the input, so they are always on top).
                try compositor.drawDecorated(shown, into: target) { logical, under in
                    let drawBanner: ((PixelTarget) -> Void)? = bannerUp ? { banner.draw(into: $0, at: at) } : nil
                    if let layer {
                        layer.draw(into: logical, at: at, base: under, aboveDimming: drawBanner)
                    } else {
                        logical.copy(from: under)
                        drawBanner?(logical)
                    }
                }
            } else {
                compositor.releaseUnderlay()
                try compositor.draw(shown, into: target)
            }
        }
    }

}

/// Errors that end presentation.
enum PresenterError: Error, CustomStringConvertible {
    /// A page flip was still pending after this many seconds.
    case pageFlipTimedOut(seconds: Double)

    var description: String {
        switch self {
        case .pageFlipTimedOut(let s): return "the display did not complete a page flip within \(s.formatted2) s"
        }
    }
}
