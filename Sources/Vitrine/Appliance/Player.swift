import Foundation
import SystemSupport
import Synchronization
import Media
import VitrineCore
import ServiceManager
import RunLoop

/// Set by SIGINT, SIGTERM, SIGHUP (the run loop's signalfd) or `Player.requestStop()`; the page-flip
/// loop checks it before each vblank.
let stopSignal = Atomic<Bool>(false)

/// Plays a catalog: schedules its items on one time line, decodes them on their own threads, presents
/// video on the output's vblanks with audio as the master clock, and records statistics.
///
/// The run loop is the presenter thread. Source: ffplay's `video_refresh` (show the frame whose PTS is
/// nearest the vblank, drop late ones) with mpv's vo_drm flip pacing.
public final class Player {
    public let manifest: Manifest
    /// The manifest as given, before the output's `playlist` (what the other outputs follow).
    private let sourceManifest: Manifest
    public let catalogDirectory: String
    public let options: RunOptions
    /// The manifest's `display`, with its `wall` merged with the config's (`options.wall`): what the
    /// screen shows. Without a wall when the two do not make a complete one (the slate says why).
    public let display: DisplaySettings
    private let log: Logger
    private let startMessage: SlateMessage?

    /// - Parameters:
    ///   - manifest: a validated manifest.
    ///   - catalogDirectory: the folder its `src` paths are relative to.
    ///   - slateMessage: when set, the run shows the slate with this text instead of the playlist (an
    ///     invalid manifest still gets a screen that says why).
    public init(manifest: Manifest, catalogDirectory: String, options: RunOptions, log: Logger, slateMessage: SlateMessage? = nil) {
        self.manifest = manifest.forOutput(playlist: options.playlist, log: log)
        self.sourceManifest = manifest
        self.catalogDirectory = catalogDirectory
        self.options = options
        self.log = log
        let (wall, wallProblems) = VideoWall.merge(catalog: self.manifest.display.wall, config: options.wall)
        var display = self.manifest.display
        display.wall = wall
        self.display = display
        if !wallProblems.isEmpty {
            for p in wallProblems { log.error("video wall: \(p)") }
        }
        self.startMessage = slateMessage ?? (wallProblems.isEmpty ? nil : SlateMessage(
            reason: .invalidManifest, headline: "Back soon",
            summary: "This screen's video wall settings (the catalog's display.wall and the config's wall) do not fit together",
            details: wallProblems))
    }

    /// Makes SIGINT, SIGTERM and SIGHUP end `run()` at the next vblank (so the CRTC is restored):
    /// blocks them, for the run loop's signalfd to read them. Call it first in `main`, before any
    /// other thread starts: threads inherit the blocked mask, and a thread that does not block them
    /// would take a process-directed signal's default action.
    public static func installSignalHandlers() {
        stopSignal.store(false, ordering: .relaxed)
        SignalMask.block(stopSignals)
    }

    /// The signals that stop a run.
    static let stopSignals: [Signal] = [.interrupt, .terminate, .hangup]

    /// Whether SIGINT/SIGTERM/SIGHUP or `requestStop()` asked the player to stop.
    public static var stopRequested: Bool { stopSignal.load(ordering: .relaxed) }

    /// Clears a previous stop request (tests run several players in one process).
    public static func clearStopRequest() { stopSignal.store(false, ordering: .relaxed) }

    /// Asks a running `run()` to stop at the next vblank; any thread.
    public static func requestStop() {
        stopSignal.store(true, ordering: .relaxed)
        for waker in runningStops.withLock({ Array($0.values) }) { waker.wake() }
    }

    /// For each run in progress, a waker whose handler (on its loop) stops it: `requestStop()`.
    private static let runningStops = Mutex<[ObjectIdentifier: LoopWaker]>([:])

    /// Called with the engine before playback starts (tests and tools attach observers or steer it).
    public var configureEngine: ((PlaybackEngine) -> Void)?

    /// The event log to write to, shared with others (the USB imports); when nil, `options.eventsPath`
    /// is opened for this run.
    public var eventLog: EventLog?

    /// Asked after each vblank for a catalog to move to (a finished USB import): the run loop plays it
    /// from the next item boundary, or at once when `immediate`.
    public var nextCatalog: (() -> CatalogSwitch?)?

    /// Called after each vblank on the run loop with the `CLOCK_MONOTONIC` time.
    public var onVblank: ((Double) -> Void)?

    /// USB sticks and `vitrine import` requests for this run: its watches and timers go on the run's
    /// loop, its progress and results on the engine's banner, and a catalog it switched to plays from
    /// the next item boundary (or at once: `import.switch: immediate`).
    public var importer: ImportService?

    /// The control socket and MQTT (status, commands, events) for this run, on its run loop.
    public var fleet: FleetService?

    /// Called on the run loop when a catalog from `nextCatalog` takes over: its first item is on
    /// screen (at the item boundary, or at once when `immediate`). The import's banner says so.
    public var catalogStarted: (() -> Void)?

    /// Plays until the playlist ends (no loop), `options.duration` passes, or a stop is requested.
    /// - Throws: `PlayerError.deviceUnavailable` when `--output drm` was asked for and no display can be
    ///   opened; output errors that end presentation.
    public func run() throws -> RunStatistics {
        let wallStart = monotonicNow()
        let output = try makeOutput()
        defer { output.close() }
        log.info("output: \(output.summary)")

        let audio = makeAudio()
        let format = audio?.format ?? AudioFormat(sampleRate: options.audioRate, channels: options.audioChannels)
        let audioSummary = audio?.summary ?? (options.recordPath != nil ? "into the recording (\(format))" : "no device; decoded and discarded (\(format))")
        log.info("audio: \(audioSummary)")

        let engine = PlaybackEngine(output: output, audio: audio, format: format, display: display,
                                    catalogDirectory: catalogDirectory, volume: manifest.audio.volume, log: log)
        // Failures in a row before the slate: a whole pass of the longest playlist.
        engine.timeline.failureLimit = max(1, ([manifest.playlist] + manifest.playlists.values).map(\.count).max() ?? 1)
        engine.fixedSlate = startMessage
        engine.timeline.setSoundtrack(manifest.soundtrack, directory: catalogDirectory)
        if !manifest.overlays.isEmpty {
            engine.overlays = OverlayLayer(overlays: manifest.overlays, catalogDirectory: catalogDirectory, log: log.child("overlay"))
            // Lay the popups out before the first frame: Pango's first use (font set-up) takes a while
            // on a slow CPU, and must not stall the vblank a popup first appears on.
            let t0 = monotonicNow()
            engine.prepareOverlays()
            log.info("popups laid out: \(manifest.overlays.count) in \(String(format: "%.3f", monotonicNow() - t0)) s")
        }
        engine.input = InputRouter(transform: TouchTransform(screenWidth: output.width, screenHeight: output.height,
                                                             rotation: display.rotation,
                                                             calibration: options.touchCalibration ?? .identity),
                                   idle: manifest.idle, tap: manifest.tap, log: log.child("input"))
        // The schedule: which playlist plays, the display's power, interrupts (a catalog without a
        // schedule plays its playlist with the display on, as before).
        let zone = scheduleZone(for: manifest)
        let clockStart = options.clock.flatMap { parseInstant($0, zone: zone) }.map(Double.init)
        let scheduled = ScheduledPlayback(director: ScheduleDirector(manifest: manifest, zone: zone,
                                                                     madeAt: Self.madeAt(catalogDirectory)),
                                          engine: engine, virtualClockStart: clockStart, log: log.child("schedule"))
        let cec = CECPower(enabled: options.cecEnabled && !options.isSecondaryOutput, port: options.cecPort, log: log.child("cec"))
        scheduled.onPowerChange = { cec.set(on: $0) }
        let runEventLog = try eventLog ?? options.eventsPath.map({ try EventLog(path: $0) })
        if let runEventLog {
            // The observer closure keeps the log open for the whole run.
            engine.events.observe { runEventLog.write($0) }
        }
        // `jump` needs the catalog: play that item (from `time`), then the rest of the playlist after it.
        // Applied on the run loop between vblanks.
        let requests = PlayerRequests()
        engine.actions.subscribe { action, source in
            switch action {
            case let .jump(id, time): requests.add(id, time, source)
            case .interrupt, .endInterrupt: requests.add(action, source)
            default: break
            }
        }
        // A sound card still probing at boot: keep trying on a real screen instead of playing mute forever
        // (and the device closed while the display is off by schedule is opened again so).
        if !output.isVirtual && (options.audioDevice ?? manifest.audio.device) != "none" {
            engine.reopenAudio = { [self] in self.makeAudio(quiet: true) }
        }
        engine.presenter.watchdog.isSilent = options.isSecondaryOutput
        importer?.banner = engine.statusBanner
        configureEngine?(engine)

        // Headless: record and snapshot each vblank; audio is pulled in step with virtual time.
        var recorder: MediaWriter?
        var snapshots = options.snapshotTimes.sorted()
        if let headless = output as? HeadlessOutput, audio == nil {
            if let path = options.recordPath {
                recorder = try MediaWriter(path: path, width: headless.width, height: headless.height,
                                           frameRate: Int(headless.refreshRate.rounded()), audioRate: format.sampleRate,
                                           audioChannels: format.channels)
                log.info("recording to \(path)")
            }
            var due = 0.0
            // Captures values, not the output or the player: the output keeps this closure.
            let perVblank = Double(format.sampleRate) / headless.refreshRate, snapshotDirectory = options.snapshotDirectory
            headless.onVblank = { [log, weak engine] target, t in
                guard let engine else { return }
                due += perVblank
                let n = Int(due.rounded(.down)); due -= Double(n)
                var samples: [Int16]
                if engine.playbackState == .playing || engine.fixedSlate != nil {
                    // As fast as possible (a recording), a decoder that is behind is waited for; on a real
                    // clock the vblank does not wait (the run loop is the picture's): its sound is silence.
                    samples = engine.timeline.pullAudio(frames: n, timeout: headless.realtime ? 0 : 5)
                    if samples.count < n * format.channels { samples += [Int16](repeating: 0, count: n * format.channels - samples.count) }
                } else {
                    samples = [Int16](repeating: 0, count: n * format.channels)
                }
                Volume(engine.volume).scale(&samples)
                try recorder?.writeVideo(target)
                try recorder?.writeAudio(samples)
                while let next = snapshots.first, t + 1e-9 >= next {
                    snapshots.removeFirst()
                    let file = (snapshotDirectory as NSString).appendingPathComponent(String(format: "snapshot-%07.3f.png", next))
                    do { try PNGWriter.write(target, to: file); log.info("snapshot \(file)") } catch { log.error("snapshot \(file): \(error)") }
                }
            }
        }

        // The run loop, on this thread: the page-flip loop, signals, touch, USB sticks and imports.
        let loop = try EventLoop()
        defer { loop.close() }
        defer { scheduled.stop() }  // before the loop closes: its timers are the loop's
        let stopNow = { [log, unowned engine] (why: String) in
            log.info("\(why): stopping at the next vblank", ["catalogTime": String(format: "%.3f", engine.catalogTime)])
            stopSignal.store(true, ordering: .relaxed)
            if engine.presenter.isRunning { engine.presenter.stopSoon() } else { loop.stop() }
        }
        let stopWaker = loop.makeWaker { if Player.stopRequested { stopNow("stop requested") } }
        let key = ObjectIdentifier(stopWaker)
        Self.runningStops.withLock { $0[key] = stopWaker }
        defer { _ = Self.runningStops.withLock { $0.removeValue(forKey: key) } }
        var handles: [LoopSubscription] = []
        defer { handles.forEach { $0.cancel() } }
        // SIGINT, SIGTERM, SIGHUP through a signalfd, when `installSignalHandlers()` blocked them.
        if Self.stopSignals.allSatisfy(SignalMask.isBlocked) {
            handles.append(try loop.handleSignals(Self.stopSignals) { signal in stopNow("\(signal)") })
        }
        // Touch, pointer and keys from libinput's seat, on a real screen.
        let seat = output.isVirtual || options.isSecondaryOutput ? nil : SeatInput(log: log.child("input"))
        var inputWatch: IORegistration?
        defer { inputWatch?.cancel() }
        if let seat {
            inputWatch = try loop.register(seat.fileDescriptor, for: .readable) { [unowned engine] _ in
                for e in seat.poll() { engine.handleInput(e) }
            }
            for e in seat.poll() { engine.handleInput(e) }
        }
        // Hot-plug on the DRM screen: lost (flips stop, playback goes on), back (modeset), another size (a new run).
        var screenRestart: String?
        let screenWatch = (output as? DRMOutput).map { RunScreenWatch(output: $0, connectorName: options.connector, log: log.child("hotplug")) }
        defer { screenWatch?.cancel() }
        if let screenWatch {
            screenWatch.onChange = { [unowned engine] in engine.presenter.outputChanged(status: $0.serviceStatus) }
            screenWatch.onRestart = { [unowned engine] in screenRestart = $0; engine.presenter.wake() }
            screenWatch.attach(to: loop)
        }
        // USB sticks and `vitrine import` requests.
        importer?.attach(to: loop)
        defer { importer?.detach() }
        // The control socket and MQTT: commands act on this run between vblanks.
        var reloaded: CatalogSwitch?
        let control = RunControl(engine: engine, scheduled: scheduled, importer: importer, catalogDirectory: catalogDirectory) { [self] in
            switch readAgain() {
            case .success(let next): reloaded = next; engine.presenter.wake(); return nil
            case .failure(let why): return why.description
            }
        }
        if let others = options.outputReports {
            control.outputs = (OutputReports.Report(connector: options.connector ?? output.summary, playlist: options.playlist), others)
            // The other outputs play what this one plays (not the slate: they keep theirs).
            if startMessage == nil { others.publish(sourceManifest, directory: catalogDirectory) }
        }
        _ = fleet?.attach(to: loop, target: control, eventLog: runEventLog, events: engine.events)
        defer { fleet?.detach(final: Self.stopRequested) }

        // A synchronised catalog (`sync`): catalog time follows the wall clock, the vblanks of a
        // headless output sit on its grid, and the sound device is kept on it.
        let syncLock = startMessage == nil ? makeSyncLock(output: output, format: format) : nil
        var vblankLog: VblankLog?
        if let path = options.vblankLogPath {
            let log = try VblankLog(path: path)
            vblankLog = log
            engine.vblankObserver = { host, item, pts, heard in log.write(monotonic: host, item: item, pts: pts, heard: heard) }
        }
        defer { vblankLog?.close() }
        if let syncLock {
            audio?.follow(syncLock.mapping)
            (output as? HeadlessOutput)?.alignStart = { [mapping = syncLock.mapping, hz = output.refreshRate] t in
                // The next vblank of the wall clock's grid: whole periods from the epoch.
                let c = mapping.catalogTime(atMonotonic: t) + Double(mapping.base)
                return mapping.monotonic(ofCatalog: (c * hz).rounded(.up) / hz - Double(mapping.base))
            }
        }

        if startMessage == nil {
            let items = scheduled.start(on: loop)
            if let syncLock { engine.startSynchronized(syncLock, items: items) } else { for item in items { engine.enqueue(item) } }
            if !engine.displayIsOff { engine.play() }
            engine.startPlayback(on: loop) { loop.stop() }
            try loop.run()
        }
        // `--duration S` presents the vblanks in [0, S): at 30 Hz, 2 s is exactly 60 pictures.
        let period = 1 / output.refreshRate
        let duration = options.duration.map { $0 + engine.catalogTime }  // a synchronised catalog's starts on the wall clock
        var lastOutputsLook = -Double.infinity
        if !Self.stopRequested {
            try engine.presenter.run(on: loop, shouldStop: { [unowned engine] in
                if stopSignal.load(ordering: .relaxed) { return true }
                if let d = duration, engine.stats.vblanks > 0, engine.catalogTime + engine.secondsOff + period >= d - 1e-6 { return true }
                return false
            }, stopsAt: { [unowned engine] in duration.map { $0 - period - engine.secondsOff } }, afterVblank: { [self, unowned engine] in
                onVblank?(monotonicNow())
                if let others = options.outputReports {
                    // The other screens' trouble goes on systemd's STATUS line after this one's.
                    let now = monotonicNow()
                    if now - lastOutputsLook >= 1 { lastOutputsLook = now; engine.presenter.watchdog.otherOutputs(others.trouble) }
                }
                if screenRestart != nil { endedForScreenChange = true; return false }
                if let apply = pendingDecorations, apply(engine) { pendingDecorations = nil }
                if let next = reloaded.take() ?? nextCatalog?() ?? importer?.takeSwitchedCatalog().map({
                    CatalogSwitch(manifest: $0.manifest, directory: $0.directory,
                                  immediate: importer?.settings.switchMode == .immediate)
                }) {
                    // The slate is up (nothing could play): end this run; the caller plays the library again.
                    if startMessage != nil { log.info("a catalog arrived; leaving the slate"); return false }
                    // A new mode, rotation, fit, background or video wall needs a new output (a modeset): end this run,
                    // and the caller plays the library again with the new catalog.
                    if next.manifest.display.output != manifest.display.output {
                        let d = next.manifest.display
                        log.info("the new catalog changes the display (mode \(d.mode), rotation \(d.rotation.rawValue), fit "
                                 + "\(d.fit.rawValue)): restarting the display with it")
                        endedForDisplayChange = true
                        return false
                    }
                    // A synchronised catalog, coming or going: its cycle is set up with the run (the
                    // slots' lengths, the clock's lock), so the new one starts a run of its own, which
                    // joins its cycle at the right frame.
                    if next.manifest.sync != nil || manifest.sync != nil {
                        log.info(next.manifest.sync != nil ? "the new catalog plays on the wall clock: starting it afresh (it joins its cycle)"
                                 : "leaving a catalog synchronized to the wall clock: starting the new one afresh")
                        endedForDisplayChange = true
                        return false
                    }
                    adopt(next, engine: engine, scheduled: scheduled)
                    options.outputReports?.publish(next.manifest, directory: next.directory)
                    control.catalogDirectory = next.directory
                }
                let interrupted = scheduled.director.interrupt != nil
                for request in requests.take() {
                    switch request.action {
                    case let .interrupt(a): scheduled.startInterrupt(a, source: request.source)
                    case .endInterrupt: scheduled.endInterrupt(reason: request.source)
                    case .jump where engine.sync != nil:
                        log.info("\(request.source): jump ignored: a synchronized catalog plays its cycle on the wall clock")
                    case let .jump(id, time):
                        // In the playlist playing, else in the one that holds it (then the rest of that one).
                        let lists = [scheduled.playlist] + manifestPlaylists(scheduled.director.manifest)
                        guard let list = lists.first(where: { $0.contains { $0.id == id } }),
                              let i = list.firstIndex(where: { $0.id == id }) else {
                            log.error("\(request.source): jump to unknown item \(id)"); continue
                        }
                        engine.play(list[i])
                        for item in list[(i + 1)...] { engine.enqueue(item) }
                        if let t = time, t > 0 { engine.pendingSeek = t }
                    default: break
                    }
                }
                scheduled.afterVblank()
                // An interrupt that ended hands back to the cycle at the slot playing now, not to the
                // interrupted item's next slot.
                if syncLock != nil, interrupted, scheduled.director.interrupt == nil { engine.rejoin() }
                if let syncLock, scheduled.director.interrupt == nil {
                    let base = syncLock.base, offset = syncLock.offsetNanoseconds
                    engine.keepInStep()
                    if syncLock.base != base || syncLock.offsetNanoseconds != offset { audio?.follow(syncLock.mapping) }
                }
                return true
            })
        }
        // Before `finish`, which ends the queue: whether a whole pass failed (not a stop that came first).
        foundNothingPlayable = engine.timeline.foundNothingPlayable
        engine.finish()
        (output as? HeadlessOutput)?.onVblank = nil
        try recorder?.finish()
        var stats = engine.stats
        stats.output = output.summary
        stats.audio = audioSummary
        stats.wallSeconds = monotonicNow() - wallStart
        return stats
    }

    /// Whether, in `run()`, every item tried failed and nothing was left to try: the slate came up, or
    /// the queue of a catalog that does not loop ended. False when a stop (SIGTERM, `--duration`) came
    /// before the items had all been tried.
    public private(set) var foundNothingPlayable = false

    /// Whether `run()` ended because `nextCatalog` gave a catalog with other display settings (mode,
    /// rotation, fit, background): they need a new output, so the caller plays that catalog in a new run.
    public private(set) var endedForDisplayChange = false

    /// Whether `run()` ended because the screen came back (hot-plug) with a mode of another size than
    /// the output's buffers: the caller opens the display again and plays on.
    public private(set) var endedForScreenChange = false

    /// After a switch at an item boundary: applies the new catalog's popups and rules once its first
    /// item is on screen (returns true then).
    private var pendingDecorations: ((PlaybackEngine) -> Bool)?

    /// Moves playback to another catalog: what its schedule plays now (its items with absolute
    /// paths, so the old catalog's files and the new one's never mix) replaces the queue after the
    /// item on screen, or at once; its popups, tap and idle rules and volume replace the old ones
    /// when its first item starts. (A catalog with other display settings ends the run instead: see
    /// `endedForDisplayChange`.)
    private func adopt(_ next: CatalogSwitch, engine: PlaybackEngine, scheduled: ScheduledPlayback) {
        // Absolute, or the engine would take a relative `--library` folder as relative to the old catalog.
        let directory = ((next.directory.hasPrefix("/") ? next.directory
            : (FileManager.default.currentDirectoryPath as NSString).appendingPathComponent(next.directory)) as NSString).standardizingPath
        let m = next.manifest.forOutput(playlist: options.playlist, log: log).withAbsolutePaths(in: directory)
        guard !m.playlist.isEmpty else { return }
        scheduled.adopt(ScheduleDirector(manifest: m, zone: scheduleZone(for: m), madeAt: Self.madeAt(directory)),
                        immediate: next.immediate)
        let items = scheduled.playlist
        // The new popups, tap and idle rules and volume take over with the new catalog's first item, so
        // the item on screen keeps its own (its remaining cue points name its catalog's popups).
        let layer = m.overlays.isEmpty ? nil
            : OverlayLayer(overlays: m.overlays, catalogDirectory: directory, log: log.child("overlay"))
        let folder = directory + "/"
        pendingDecorations = { [log, unowned self] engine in
            guard next.immediate || engine.nowPlaying?.src.hasPrefix(folder) == true else { return false }
            engine.overlays = layer
            engine.prepareOverlays()
            engine.input?.tapAction = m.tap
            engine.input?.idle = m.idle.map(IdleTimer.init(rule:))
            engine.volume = m.audio.volume
            engine.timeline.setSoundtrack(m.soundtrack, directory: directory)
            log.info("the new catalog's popups, tap and idle rules, volume and soundtrack are in effect")
            self.catalogStarted?()
            return true
        }
        if let apply = pendingDecorations, apply(engine) { pendingDecorations = nil }
        log.info("catalog \(directory) (version \(m.version), \(items.count) items) plays "
                 + (next.immediate ? "now" : "from the next item boundary"))
    }

    /// `reload`: the catalog read again from disk, to play at once: the library's `current` (when
    /// the run plays the library), else this run's manifest file.
    private func readAgain() -> Result<CatalogSwitch, ReloadError> {
        var directory = catalogDirectory
        if let importer {
            // The library's `current`, and only it: a damaged one is refused, not replaced by `previous`.
            let resolution = importer.library.resolve()
            guard let found = resolution.catalog, found.slot == .current else {
                let why = resolution.skipped.first.map { "\($0)" } ?? "no current catalog"
                log.error("reload: the library's current catalog cannot be read (\(why)); the catalog playing is unchanged")
                return .failure(ReloadError(description: "the library's current catalog: \(why)"))
            }
            directory = found.directory
        }
        let path = ["manifest.json", "catalog.json"].map { (directory as NSString).appendingPathComponent($0) }
            .first { FileManager.default.fileExists(atPath: $0) }
        guard let path else { return .failure(ReloadError(description: "no manifest.json in \(directory)")) }
        let result = ManifestParser.load(path: path)
        guard let manifest = result.manifest, result.errors.isEmpty else {
            let first = result.errors.prefix(3).map(\.description).joined(separator: "; ")
            log.error("reload: \(path): \(result.errors.count) problem(s): \(first); the catalog playing is unchanged")
            return .failure(ReloadError(description: "\(path): \(first)"))
        }
        log.info("reload: \(path) (version \(manifest.version)) plays now")
        return .success(CatalogSwitch(manifest: manifest, directory: directory, immediate: true))
    }

    struct ReloadError: Error, CustomStringConvertible { var description: String }

    /// The zone the schedule reads times of day in: the catalog's `timezone`, else `--timezone` or
    /// the config's, else the system's (`TZ`, `/etc/localtime`). A zone that cannot be read falls
    /// back to the next, with a log line.
    private func scheduleZone(for m: Manifest) -> ZoneRules {
        for name in [m.timezone, options.timezone].compactMap({ $0 }) {
            do { return try ZoneRules(identifier: name) } catch { log.error("time zone \(name): \(error); trying the next") }
        }
        return ZoneRules.system()
    }

    /// When the catalog in `directory` was made: its manifest's modification time (UTC seconds).
    static func madeAt(_ directory: String) -> Int64? {
        for name in ["manifest.json", "catalog.json"] {
            let path = (directory as NSString).appendingPathComponent(name)
            if let date = (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date {
                return Int64(date.timeIntervalSince1970)
            }
        }
        return nil
    }

    /// The named playlists of `m`, in document order.
    private func manifestPlaylists(_ m: Manifest) -> [[PlaylistItem]] {
        [m.playlist] + m.playlistNames.compactMap { m.playlists[$0] }
    }

    private func makeOutput() throws -> VideoOutput {
        var kind = options.output
        if kind == .auto { kind = DRMOutput.isAvailable ? .drm : .headless }
        switch kind {
        case .drm:
            do {
                return try DRMOutput(card: options.card, mode: options.outputMode ?? manifest.display.mode, connector: options.connector,
                                     lessor: options.lessor, log: log.child(options.lessor == nil ? "kms" : "kms \(options.connector ?? "")"))
            } catch {
                throw PlayerError.deviceUnavailable("DRM/KMS: \(error)")
            }
        default:
            var w = options.headlessWidth, h = options.headlessHeight, hz = options.headlessRefresh
            // The output's exact mode, else the catalog's, else the headless size.
            for case let .exact(mw, mh, mr)? in [options.outputMode, manifest.display.mode] { (w, h, hz) = (mw, mh, Double(mr)); break }
            if let why = DisplayModeRequest.exact(width: w, height: h, refresh: max(1, Int(hz.rounded()))).outOfRange {
                throw PlayerError.invalidConfiguration("headless output: \(why)")
            }
            let realtime = options.realtime ?? (options.recordPath == nil && options.snapshotTimes.isEmpty)
            return HeadlessOutput(width: w, height: h, refreshRate: hz, realtime: realtime, driftPPM: options.displayDriftPPM)
        }
    }

    /// The wall-clock lock of a catalog with `sync`, when the output runs in real time (a screen, or
    /// headless paced by the clock; a recording runs as fast as it can and plays from the start).
    /// Each item's slot is its `duration`, else its file's container duration (`MediaFile`); an image
    /// lasts its `duration` (10 s by default).
    private func makeSyncLock(output: VideoOutput, format: AudioFormat) -> SyncLock? {
        guard let sync = manifest.sync else { return nil }
        if let headless = output as? HeadlessOutput, !headless.realtime {
            log.info("sync: the headless output runs as fast as it can here (recording or snapshots, no --realtime), not on the wall clock; playing the playlist from its start")
            return nil
        }
        var lengths: [(id: String, length: Double)] = []
        for item in manifest.playlist {
            var length: Double?
            if item.type == .image {
                length = item.duration ?? 10
            } else {
                let path = item.src.hasPrefix("/") ? item.src : FileNames.path(item.src, in: catalogDirectory)
                do {
                    let file = try MediaFile(path: path)
                    length = [file.duration, item.duration].compactMap { $0 }.min()
                } catch {
                    length = item.duration
                    log.error("sync: \(item.id) (\(item.src)): \(error)" + (length == nil ? "; it takes no slot in the cycle" : ""),
                              ["file": path])
                }
            }
            lengths.append((item.id, length ?? 0))
        }
        guard let cycle = SyncCycle(epoch: sync.epoch, lengths: lengths) else {
            log.error("sync: no item of the playlist has a length; playing it from its start")
            return nil
        }
        let lock = SyncLock(cycle: cycle, rate: format.sampleRate)
        let here = cycle.locate(sinceEpoch: lock.sinceEpoch(catalog: lock.catalogTime(hostTime: monotonicNow())))
        log.info(String(format: "sync: cycle %.3f s of %d items from the epoch %@; joining pass %ld at %@ + %.3f s",
                        cycle.length, cycle.slots.count, EventLog.iso(Double(sync.epoch)), here.pass, cycle.slots[here.index].id, here.offset))
        return lock
    }

    private func makeAudio(quiet: Bool = false) -> ALSAAudio? {
        let device = options.audioDevice ?? manifest.audio.device
        if device == "none" { return nil }
        // Headless runs play into memory; they use an ALSA device only when one is named explicitly.
        let drm = options.output == .drm || (options.output == .auto && DRMOutput.isAvailable)
        if !drm && options.audioDevice == nil { return nil }
        do {
            let audio = try ALSAAudio(device: device, rate: options.audioRate, channels: options.audioChannels,
                                      periodFrames: options.periodFrames, bufferFrames: options.bufferFrames,
                                      configText: options.alsaConfigText, log: log.child("alsa"))
            audio.emulatedDriftPPM = options.audioDriftPPM
            return audio
        } catch {
            if !quiet { log.error("audio device \(device) unavailable, playing without sound (trying again every 5 s): \(error)") }
            return nil
        }
    }
}

/// A catalog the running player should move to (`Player.nextCatalog`).
public struct CatalogSwitch: Sendable {
    /// The validated manifest.
    public var manifest: Manifest
    /// The folder its relative paths are in (a library generation, `gen.<N>`).
    public var directory: String
    /// Cut the item on screen (config `import.switch: immediate`) instead of waiting for its end.
    public var immediate: Bool

    public init(manifest: Manifest, directory: String, immediate: Bool) {
        self.manifest = manifest; self.directory = directory; self.immediate = immediate
    }
}

/// Errors that end a run, mapped to sysexits by the CLI.
public enum PlayerError: Error, CustomStringConvertible {
    case deviceUnavailable(String)
    case invalidConfiguration(String)
    public var description: String {
        switch self {
        case .deviceUnavailable(let s): return "device unavailable: \(s)"
        case .invalidConfiguration(let s): return s
        }
    }
}

/// The player's actions (`jump`, `interrupt`, `endInterrupt`) posted during a vblank, applied after it.
final class PlayerRequests: Sendable {
    private let list = Mutex<[(action: Action, source: String)]>([])
    func add(_ id: String, _ time: Double?, _ source: String) { add(.jump(item: id, time: time), source) }
    func add(_ action: Action, _ source: String) { list.withLock { $0.append((action, source)) } }
    func take() -> [(action: Action, source: String)] { list.withLock { l in defer { l.removeAll() }; return l } }
}
