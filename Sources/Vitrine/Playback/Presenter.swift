import Foundation
import Media
import VitrineCore

/// The page-flip loop: once per vblank it reads the catalog clock for the vblank being prepared,
/// asks the engine what plays then, picks the video frame due (`FramePolicy`), composes the screen
/// (video, crossfade, status banner, popups) into the output's back buffer, and queues it as a page
/// flip, with one flip in flight and one timeout policy (`awaitFlip`).
///
/// `step()` is the loop's body, in order:
/// 1. the vblank: when the picture drawn now reaches the screen (`VideoOutput.nextPresentationTime`);
/// 2. the clock there (`PlaybackEngine.readClock`);
/// 3. what plays (`PlaybackEngine.itemsAt`: items scheduled, started, ended; seeks; the slate);
/// 4. the frame (`pick`);
/// 5. compose and flip (`present`), or keep the picture (`idle`);
/// 6. after it: cue points, progress, the idle rule (`PlaybackEngine.vblankPresented`), telemetry,
///    and the actions dispatched meanwhile.
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
    private let log: Logger
    private let period: Double
    /// Whether the clock is virtual and waits for decoders (headless, as fast as possible, no sound
    /// device): recordings and snapshots are then exact and repeatable.
    let deterministic: Bool
    private let watchdog: WatchdogFeeder

    /// The flip-timeout policy: a page flip still pending after `flipWarning` seconds is logged (the
    /// display stalls), and one pending after `flipLimit` seconds ends the run with
    /// `PresenterError.pageFlipTimedOut` (the service restarts the player, which sets the mode again).
    static let flipWarning = 1.0
    static let flipLimit = 2.0

    // The vblank being prepared.
    /// `CLOCK_MONOTONIC` seconds of the vblank being prepared: popups animate on presentation times.
    private(set) var hostTime = 0.0
    /// `output.waitedSeconds` at the start of the last step, and the wait between that step and this one.
    private var waitedAtLastStep = 0.0
    private var waitSinceLastStep = 0.0

    // The picture.
    private var content: ScreenContent = .background
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
        watchdog = WatchdogFeeder(now: monotonicNow())
    }

    /// Gets the popups ready before playback: their panels laid out and drawn, and the picture kept
    /// under them allocated, so the first popup shown does not stall its first vblanks.
    func prepareOverlays() {
        guard let overlays else { return }
        let canvas = compositor.canvasSize(screenWidth: output.width, screenHeight: output.height)
        overlays.prepare(canvasWidth: canvas.width, canvasHeight: canvas.height)
        compositor.prepareUnderlay(screenWidth: output.width, screenHeight: output.height)
    }

    // MARK: - The loop's body

    /// One vblank (see the type's description). Returns false once the queue is exhausted and
    /// nothing plays.
    /// - Throws: the output's errors, and `PresenterError.pageFlipTimedOut`.
    func step() throws -> Bool {
        // 1. The vblank being prepared.
        let waited = output.waitedSeconds
        waitSinceLastStep = waited - waitedAtLastStep
        waitedAtLastStep = waited
        drawnThisStep = nil
        let tDisplay = output.nextPresentationTime()
        hostTime = output.monotonicTime(ofPresentation: tDisplay)
        // 2. The catalog clock there.
        let position = engine.readClock(outputTime: tDisplay, hostTime: hostTime)
        // 3. What plays.
        guard let showing = engine.itemsAt(position, hostTime: hostTime, deterministic: deterministic) else { return false }
        switch showing {
        case .slate(let message): content = .slate(message)
        case .background: content = .background
        case .item(let entry): pick(entry, at: position)   // 4. The frame.
        case .unchanged: break
        }
        // 5. Compose and flip.
        try present(at: position)
        // 6. After it.
        var presentedPTS: Double?
        if case .frame(let f, _) = content { presentedPTS = f.pts }
        engine.vblankPresented(at: position, hostTime: hostTime, presentedPTS: presentedPTS)
        let animating = overlays?.presenter.stack.filter { $0.phase != .shown }
            .map { "\($0.id):\($0.phase == .appearing ? "appearing" : "disappearing")" } ?? []
        engine.events.report(.vblank(hostTime: hostTime, position: position, waited: waitSinceLastStep,
                                 drawSeconds: drawnThisStep, animating: animating))
        engine.performDispatchedActions()
        return true
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
    /// instead of passing frames over, so recordings are exact.
    private func pick(_ entry: Timeline.Entry, at position: Double) {
        let vblank = FramePolicy.Vblank(clock: position - entry.start, period: period, isPlaying: engine.isPlaying,
                                        previousClock: lastPick.flatMap { $0.entry === entry ? $0.local : nil },
                                        sincePrevious: lastPick.map { hostTime - $0.hostTime },
                                        waitedOnDisplay: waitSinceLastStep)
        defer { lastPick = (entry, vblank.clock, hostTime) }
        let source = entry.source, q = source.video
        while engine.isPlaying || frame == nil {
            guard let f = q.peek() else {
                if waitForDecoder(entry) { continue } else { break }
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
            let head = FramePolicy.Frame(pts: f.pts, isFirstOfItem: first, isStill: isStill, seekTarget: source.startAt)
            guard FramePolicy.decide(head, next: nil, at: vblank) == .show else { break }
            _ = q.pop()
            frame = f
            frameShown = false
            if first && !isStill { break }   // the item's first frame is shown whatever follows it
        }
        if let f = frame {
            content = .frame(f, generation: source.generation)
        } else if !source.hasVideo && source.state != .opening {
            content = .background
        }
    }

    /// On a virtual clock, waits (at most 0.1 s) for `entry`'s decoder to deliver a frame; false when
    /// none is coming, or the clock is real.
    private func waitForDecoder(_ entry: Timeline.Entry) -> Bool {
        let source = entry.source, q = source.video
        if !deterministic || q.isFinished || q.closed { return false }
        if case .failed = source.state { return false }
        if !source.hasVideo && source.state != .opening { return false }
        // A decoder blocked on a full audio queue (video that ends long before its sound) sends no
        // more pictures until this clock drains the audio: do not wait for one.
        if source.audio.frames >= source.audio.capacityFrames - engine.format.sampleRate / 10 { return false }
        if stopSignal.load(ordering: .relaxed) { return false }
        q.waitForItem(timeout: 0.1)
        return true
    }

    /// Whether the current item's next decoded video frame becomes due (within half a period of its
    /// PTS, as `pick` takes it) before catalog time `t`. False while paused, for stills, and when no
    /// frame is decoded yet.
    private func videoFrameDue(before t: Double) -> Bool {
        guard engine.isPlaying, let e = engine.currentEntry, !e.source.isStill, let next = e.source.video.peek() else { return false }
        return e.start + next.pts - period / 2 < t
    }

    // MARK: - Compose and flip

    /// Redraws when the picture changes, and at least once a second so the display keeps flipping
    /// (the watchdog is fed from completed flips); otherwise keeps the picture for this vblank.
    private func present(at position: Double) throws {
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
        if yieldToVideo { engine.events.report(.popupStepYielded) }
        if !yieldToVideo && (shown != drawn || overlayKey != drawnOverlayKey || now - lastPresent >= 1) {
            try compose(shown)
            // One flip in flight: the picture just drawn waits for the previous one to reach the screen.
            try awaitFlip()
            try output.flip()
            drawnOverlayKey = overlayKey
            lastPresent = now
            if drawn == nil {
                watchdog.firstFrame()
                log.info("first frame on screen")
            }
            drawn = shown
            if case .frame(let f, _) = content, let entry = engine.currentEntry, !frameShown {
                frameShown = true
                entry.onScreen.framesRendered += 1
                watchdog.progressed(at: now)
                let offsetMs = entry.source.hasAudio && engine.isPlaying ? (entry.start + f.pts - position) * 1000 : nil
                engine.events.report(.framePresented(avOffsetMs: offsetMs))
            }
        } else if output.isFlipPending {
            try awaitFlip()
        } else {
            try output.idle()
        }
        // Progress: a new frame was shown (above), or nothing more is expected (a still, an audio item,
        // the slate, a pause, or an item whose decoder finished).
        if let entry = engine.currentEntry, case .frame = content, !entry.source.isStill, engine.isPlaying,
           entry.source.state == .playing, entry.source.hasVideo {
            // waiting on video frames: only a presented frame counts
        } else {
            watchdog.progressed(at: now)
        }
        watchdog.flips(output.completedFlips, at: now)
    }

    /// Composes `shown` with the banner and popups over it into the output's back buffer.
    private func compose(_ shown: ScreenContent) throws {
        let layer = overlays, banner = bannerLayer, at = hostTime
        let popups = layer?.isDrawing ?? false, bannerUp = banner.isShowing
        var drawStart = 0.0, drawEnd = 0.0
        defer { lastDrawSeconds = countedDrawSeconds ?? (drawEnd - drawStart); drawnThisStep = lastDrawSeconds }
        try output.draw { target in
            drawStart = monotonicNow()
            defer { drawEnd = monotonicNow() }
            if popups || bannerUp {
                // The banner first, so the popups (which take the input) are always on top.
                try compositor.drawDecorated(shown, into: target) { logical, under in
                    if bannerUp {
                        logical.copy(from: under)
                        banner.draw(into: logical, at: at)
                        layer?.draw(into: logical, at: at)
                    } else {
                        layer?.draw(into: logical, at: at, base: under)
                    }
                }
            } else {
                compositor.releaseUnderlay()
                try compositor.draw(shown, into: target)
            }
        }
    }

    /// Waits for the pending page flip, under the one flip-timeout policy (`flipWarning`, `flipLimit`).
    private func awaitFlip() throws {
        guard output.isFlipPending else { return }
        if try output.waitForFlip(timeout: Self.flipWarning) { return }
        log.warning("page flip did not complete within \(Int(Self.flipWarning)) s")
        if try output.waitForFlip(timeout: Self.flipLimit - Self.flipWarning) { return }
        throw PresenterError.pageFlipTimedOut(seconds: Self.flipLimit)
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
