import Foundation
import Synchronization
import Media
import VitrineCore
import ServiceManager

/// Set by SIGINT/SIGTERM; the run loop checks it once per vblank.
let stopSignal = Atomic<Bool>(false)

/// Plays a catalog: schedules its items on one time line, decodes them on their own threads, presents
/// video on the output's vblanks with audio as the master clock, and records statistics.
///
/// The run loop is the presenter thread. Source: ffplay's `video_refresh` (show the frame whose PTS is
/// nearest the vblank, drop late ones) with mpv's vo_drm flip pacing.
public final class Player {
    public let manifest: Manifest
    public let catalogDirectory: String
    public let options: RunOptions
    private let log: Logger
    private let startMessage: String?

    /// - Parameters:
    ///   - manifest: a validated manifest.
    ///   - catalogDirectory: the folder its `src` paths are relative to.
    ///   - slateMessage: when set, the run shows the slate with this text instead of the playlist (an
    ///     invalid manifest still gets a screen that says why).
    public init(manifest: Manifest, catalogDirectory: String, options: RunOptions, log: Logger, slateMessage: String? = nil) {
        self.manifest = manifest
        self.catalogDirectory = catalogDirectory
        self.options = options
        self.log = log
        self.startMessage = slateMessage
    }

    /// Installs SIGINT/SIGTERM handlers that end `run()` at the next vblank (so the CRTC is restored).
    public static func installSignalHandlers() {
        stopSignal.store(false, ordering: .relaxed)
        signal(SIGINT) { _ in stopSignal.store(true, ordering: .relaxed) }
        signal(SIGTERM) { _ in stopSignal.store(true, ordering: .relaxed) }
        signal(SIGPIPE, SIG_IGN)
    }

    /// Whether SIGINT/SIGTERM or `requestStop()` asked the player to stop.
    public static var stopRequested: Bool { stopSignal.load(ordering: .relaxed) }

    /// Clears a previous stop request (tests run several players in one process).
    public static func clearStopRequest() { stopSignal.store(false, ordering: .relaxed) }

    /// Asks a running `run()` to stop at the next vblank.
    public static func requestStop() { stopSignal.store(true, ordering: .relaxed) }

    /// Plays until the playlist ends (no loop), `options.duration` passes, or a stop is requested.
    /// - Throws: `PlayerError.deviceUnavailable` when `--output drm` was asked for and no display can be
    ///   opened; output errors that end presentation.
    public func run() throws -> RunStatistics {
        let wallStart = monotonicNow()
        var stats = RunStatistics()

        let output = try makeOutput()
        defer { output.close() }
        stats.output = output.summary
        log.info("output: \(output.summary)")

        let audio = makeAudio()
        let format = audio?.format ?? AudioFormat(sampleRate: options.audioRate, channels: options.audioChannels)
        stats.audio = audio?.summary ?? (options.recordPath != nil ? "into the recording (\(format))" : "no device; decoded and discarded (\(format))")
        log.info("audio: \(stats.audio)")

        let timeline = Timeline(playlist: startMessage == nil ? manifest.playlist : [], catalogDirectory: catalogDirectory,
                                loop: manifest.loop, format: format, untimed: false, log: log.child("decode"))
        let compositor = Compositor(display: manifest.display, log: log)

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
            var pulled = 0
            let volume = manifest.audio.volume
            headless.onVblank = { [log] target, t in
                let due = Int(((t + 1 / headless.refreshRate) * Double(format.sampleRate)).rounded())
                var samples = timeline.pullAudio(frames: due - pulled, timeout: 5)
                pulled = due
                if volume < 1 { applyVolume(&samples, volume) }
                try recorder?.writeVideo(target)
                try recorder?.writeAudio(samples)
                while let next = snapshots.first, t + 1e-9 >= next {
                    snapshots.removeFirst()
                    let file = (self.options.snapshotDirectory as NSString).appendingPathComponent(String(format: "snapshot-%07.3f.png", next))
                    do { try PNGWriter.write(target, to: file); log.info("snapshot \(file)") } catch { log.error("snapshot \(file): \(error)") }
                }
            }
        }
        if let audio {
            // Schedule the first item and let it open before the device starts, so playback does not
            // begin with invented silence.
            timeline.maintain(position: 0)
            let deadline = monotonicNow() + 2
            while let e = timeline.entry(at: 0), e.source.state == .opening, monotonicNow() < deadline {
                Thread.sleep(forTimeInterval: 0.002)
            }
            audio.start(timeline: timeline, volume: manifest.audio.volume)
        }
        defer { audio?.stop() }

        let period = 1 / output.refreshRate
        let deterministic = output.isVirtual && !((output as? HeadlessOutput)?.realtime ?? false) && audio == nil
        var content: ScreenContent = startMessage.map { .slate($0) } ?? .background
        var drawn: ScreenContent? = nil
        var currentEntry: Timeline.Entry? = nil
        var currentFrame: VideoFrame? = nil
        var currentFrameShown = true
        var offsetSum = 0.0
        var videoClockOrigin: (catalog: Double, output: Double)? = nil
        let notifier = ServiceNotifier()
        var lastPresent = -Double.infinity, lastProgress = monotonicNow(), lastPing = -Double.infinity
        var flipsSeen = 0
        // A decoder that shows no new frame for this long while its item should be moving stops the
        // watchdog pings, so systemd restarts the player.
        let stallLimit = max(2, (notifier.watchdogInterval ?? 10) / 2)

        while !stopSignal.load(ordering: .relaxed) {
            let tDisplay = output.nextPresentationTime()
            // Catalog time at that vblank: virtual time headless; the audio clock when the item has
            // audio; the monotonic clock for video-only items and when there is no audio device.
            let position: Double
            let tMono = output.monotonicTime(ofPresentation: tDisplay)
            if output.isVirtual && audio == nil {
                position = tDisplay
            } else if let audio, let entry = currentEntry, entry.source.hasAudio, let t = audio.catalogTime(at: tMono) {
                position = t
                videoClockOrigin = nil
            } else if let audio, currentEntry == nil, let t = audio.catalogTime(at: tMono) {
                position = t
            } else {
                if videoClockOrigin == nil {
                    let base = audio?.catalogTime(at: tMono) ?? (currentEntry?.start ?? 0)
                    videoClockOrigin = (base, tMono)
                }
                position = videoClockOrigin!.catalog + (tMono - videoClockOrigin!.output)
            }
            if let d = options.duration, position >= d { break }
            if let message = startMessage {
                content = .slate(message)
            } else {
                timeline.maintain(position: position)
                if timeline.isFinished { break }
                var entry = timeline.entry(at: position)
                // An item still opening is not on screen yet: a virtual clock waits for it (it may fail
                // and be skipped); a real clock keeps showing the previous picture meanwhile.
                while let e = entry, e.source.state == .opening {
                    guard deterministic else { entry = nil; break }
                    Thread.sleep(forTimeInterval: 0.001)
                    if e.source.state != .opening {
                        timeline.maintain(position: position)
                        entry = timeline.entry(at: position)
                    }
                }
                if let e = entry, case .failed = e.source.state { entry = nil }
                if entry !== currentEntry, let entry {
                    if let c = currentFrame, !currentFrameShown, let old = currentEntry {
                        stats.framesDropped += 1
                        log.debug("dropped frame at \(c.pts) s of \(old.source.item.id): its item ended first")
                    }
                    currentEntry = entry
                    currentFrame = nil
                    currentFrameShown = true
                    stats.itemsStarted += 1
                    log.info("now playing \(entry.source.item.id) (\(entry.source.item.src))",
                             ["item": String(entry.index), "at": String(format: "%.3f", entry.start)])
                    if !(entry.source.hasAudio) { videoClockOrigin = nil }
                }
                if let message = timeline.slateMessage {
                    content = .slate(message)
                } else if let entry = currentEntry, entry === timeline.entry(at: position) {
                    let local = position - entry.start
                    let q = entry.source.video
                    // Show the latest frame due by this vblank (PTS within half a period); frames passed
                    // over were late and count as dropped. A virtual (headless, untimed) clock waits for the
                    // decoder instead, so recordings are exact.
                    while true {
                        if let f = q.peek() {
                            guard f.pts <= local + period / 2 || (entry.source.isStill && currentFrame == nil) else { break }
                            // The first frame of an item is always shown, even when the vblank phase makes
                            // the second one nearer: a title frame is never skipped at a boundary.
                            if currentFrame == nil && !entry.source.isStill {
                                _ = q.pop()
                                currentFrame = f
                                currentFrameShown = false
                                break
                            }
                            _ = q.pop()
                            if let c = currentFrame, !currentFrameShown {
                                stats.framesDropped += 1
                                log.debug("dropped frame at \(c.pts) s of \(entry.source.item.id): late for the vblank at \(local) s")
                            }
                            currentFrame = f
                            currentFrameShown = false
                            continue
                        }
                        if !deterministic || q.isFinished || q.closed { break }
                        if case .failed = entry.source.state { break }
                        if !entry.source.hasVideo && entry.source.state != .opening { break }
                        q.waitForItem(timeout: 0.1)
                    }
                    if let f = currentFrame {
                        content = .frame(f, generation: entry.source.generation)
                    } else if !entry.source.hasVideo && entry.source.state != .opening {
                        content = .background
                    }
                }
            }
            // Redraw when the picture changes, and at least once a second so the display keeps
            // flipping (the watchdog is fed from completed flips).
            let now = monotonicNow()
            if content != drawn || now - lastPresent >= 1 {
                try output.present { target in try compositor.draw(content, into: target) }
                lastPresent = now
                if drawn == nil {
                    notifier.ready(status: "playing \(manifest.title)")
                    log.info("first frame on screen", ["after": String(format: "%.3f s", now - wallStart)])
                }
                drawn = content
                if case .frame(let f, _) = content, let entry = currentEntry {
                    if !currentFrameShown {
                        currentFrameShown = true
                        stats.framesPresented += 1
                        lastProgress = now
                        if entry.source.hasAudio {
                            let off = (entry.start + f.pts - position) * 1000
                            offsetSum += off
                            stats.avSamples += 1
                            stats.avOffsetMaxMs = max(stats.avOffsetMaxMs, abs(off))
                        }
                    }
                }
            } else {
                try output.idle()
            }
            // Progress: a new frame was shown, or nothing more is expected (a still, an audio item, the
            // slate, or an item whose decoder finished). A decoder that stalls mid-item stops the pings.
            if let entry = currentEntry, case .frame = content, !entry.source.isStill,
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
            stats.vblanks += 1
            stats.catalogSeconds = position
        }
        timeline.shutdown()
        try recorder?.finish()
        stats.avOffsetMeanMs = stats.avSamples > 0 ? offsetSum / Double(stats.avSamples) : 0
        stats.xruns = audio?.xrunCount ?? 0
        stats.audioUnderflowFrames = timeline.underflowFrames
        stats.wallSeconds = monotonicNow() - wallStart
        return stats
    }

    private func makeOutput() throws -> VideoOutput {
        var kind = options.output
        if kind == .auto { kind = DRMOutput.isAvailable ? .drm : .headless }
        switch kind {
        case .drm:
            do {
                return try DRMOutput(card: options.card, mode: manifest.display.mode, connector: options.connector, log: log.child("kms"))
            } catch {
                throw PlayerError.deviceUnavailable("DRM/KMS: \(error)")
            }
        default:
            var w = options.headlessWidth, h = options.headlessHeight, hz = options.headlessRefresh
            if case let .exact(mw, mh, mr) = manifest.display.mode { w = mw; h = mh; hz = Double(mr) }
            let realtime = options.realtime ?? (options.recordPath == nil && options.snapshotTimes.isEmpty)
            return HeadlessOutput(width: w, height: h, refreshRate: hz, realtime: realtime)
        }
    }

    private func makeAudio() -> ALSAAudio? {
        let device = options.audioDevice ?? manifest.audio.device
        if device == "none" { return nil }
        // Headless runs play into memory; they use an ALSA device only when one is named explicitly.
        let drm = options.output == .drm || (options.output == .auto && DRMOutput.isAvailable)
        if !drm && options.audioDevice == nil { return nil }
        do {
            return try ALSAAudio(device: device, rate: options.audioRate, channels: options.audioChannels,
                                 periodFrames: options.periodFrames, bufferFrames: options.bufferFrames,
                                 configText: options.alsaConfigText, log: log.child("alsa"))
        } catch {
            log.error("audio device \(device) unavailable, playing without sound: \(error)")
            return nil
        }
    }
}

/// Errors that end a run, mapped to sysexits by the CLI.
public enum PlayerError: Error, CustomStringConvertible {
    case deviceUnavailable(String)
    public var description: String {
        switch self { case .deviceUnavailable(let s): return "device unavailable: \(s)" }
    }
}

/// Scales interleaved S16 samples by `gain` (0…1).
func applyVolume(_ samples: inout [Int16], _ gain: Double) {
    let g = Int32(max(0, min(1, gain)) * 32768)
    for i in samples.indices { samples[i] = Int16(truncatingIfNeeded: (Int32(samples[i]) * g) >> 15) }
}
