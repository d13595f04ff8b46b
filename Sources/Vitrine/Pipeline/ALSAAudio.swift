import Foundation
import SystemSupport
import Synchronization
import PCM
import VitrineCore

/// Plays the timeline's audio through an ALSA PCM on its own thread and publishes the audio clock.
///
/// The thread blocks in `snd_pcm_writei` one period at a time; underruns are recovered by
/// `PCMDevice` with `snd_pcm_recover`, counted and logged. While paused it writes silence, so the
/// device never underruns and resumes without a restart. The clock is the catalog time of the sample
/// being heard: device frames played ((frames written − `snd_pcm_delay`), advanced by the monotonic
/// time since the delay was read) minus the pause silence played so far.
///
/// A PCM that keeps no queue (ALSA's `null` plugin, the `file` plugin over it: `snd_pcm_writei`
/// returns at once and `snd_pcm_delay` stays 0) has no clock of its own; the thread then gives it
/// one (`EmulatedRing`): a ring buffer of the negotiated size drained in real time on the monotonic
/// clock, whose fill stands for `snd_pcm_delay` and whose room paces the writes, as a card's would.
final class ALSAAudio: @unchecked Sendable {  // device, thread and finalXruns are the owner thread's (start/stop); `finished` is guarded by `done`; the ALSA thread shares only atomics and `clock`
    /// The PCM; released (closed, flushing plugins such as `file`) by `stop()`.
    private var device: PCMDevice?
    private let name: String
    private let negotiated: PCMConfiguration
    private var finalXruns = 0
    let format: AudioFormat
    private let log: Logger

    /// The device's side of the catalog clock, written after every period.
    private let clock: Mutex<PlaybackClock.SoundDevice>
    private let running = Atomic<Bool>(false)
    private let paused = Atomic<Bool>(false)
    /// The output volume's Q15 gain (`Volume.q15`).
    private let gain = Atomic<Int32>(32768)
    private var thread: Thread?
    /// A synchronised catalog's wall clock (`SyncLock.Mapping`): the sound is kept on it. Nil: the
    /// device is the master clock.
    private let wallClock = Mutex<SyncLock.Mapping?>(nil)
    /// For tests: a device with no queue of its own (`EmulatedRing`) plays this many parts per million
    /// fast (negative: slow). Set before `start`.
    var emulatedDriftPPM = 0.0
    /// The stretch applied to the last period, parts per million (positive: catalog audio consumed
    /// faster than the device's rate; 0 after a correction by skipping or by silence).
    let correctionPPM = Atomic<Int>(0)
    /// A write failed and the thread ended (the device went away): the owner closes it (`stop()`).
    var hasFailed: Bool { writeFailed.load(ordering: .relaxed) }
    private let writeFailed = Atomic<Bool>(false)
        private let done = NSCondition()
    private var finished = false

    init(device name: String, rate: Int, channels: Int, periodFrames: Int, bufferFrames: Int, configText: String?, log: Logger) throws {
        let device = try PCMDevice(name: name, requested: PCMConfiguration(rate: rate, channels: channels, format: .s16le,
                                                                          periodFrames: periodFrames, bufferFrames: bufferFrames),
                                   configText: configText)
        self.device = device
        self.name = name
        negotiated = device.negotiated
        format = AudioFormat(sampleRate: negotiated.rate, channels: negotiated.channels)
        clock = Mutex(PlaybackClock.SoundDevice(rate: negotiated.rate))
        self.log = log
        let xlog = log
        device.onXrun = { kind in xlog.warning("xrun (\(kind)) recovered with snd_pcm_recover") }
    }

    var summary: String {
        let n = negotiated
        return "ALSA \(name): \(n.rate) Hz, \(n.channels) ch, \(n.format), period \(n.periodFrames ?? 0), buffer \(n.bufferFrames ?? 0) frames"
    }

    var xrunCount: Int { device?.xrunCount ?? finalXruns }

    /// Output gain 0…1, applied to every sample from the next period on.
    var volume: Double {
        get { Volume(q15: gain.load(ordering: .relaxed)).gain }
        set { gain.store(Volume(newValue).q15, ordering: .relaxed) }
    }

    /// Keeps the sound on a synchronised catalog's wall clock from the next period (`SyncLock`); nil
    /// lets the device's own clock lead again. Any thread.
    ///
    /// After each period the catalog time heard (`catalogTime(at:)`) is compared with the wall
    /// clock's. An error over `hardLimit` is corrected at once: the audio is skipped, or silence
    /// played, which the catalog clock does not count. A smaller one is corrected continuously: the
    /// next period takes `period × (1 − error / settleTime)` catalog frames, stretched to the period
    /// (`DriftResampler`), the stretch at most `maxStretch`.
    func follow(_ mapping: SyncLock.Mapping?) { wallClock.withLock { $0 = mapping } }
    /// Seconds of error corrected at once, not by stretching.
    static let hardLimit = 0.05
    /// Seconds in which an error is halved, about (a proportional controller's time constant).
    static let settleTime = 2.0
    /// Seconds over which the device's drift is learnt (the controller's integral time).
    static let learnTime = 10.0
    /// The largest stretch, as a fraction (0.002: 2000 ppm, 3.5 cents).
    static let maxStretch = 0.002

    /// While paused the device plays silence and the catalog clock stands still.
    func setPaused(_ on: Bool) { paused.store(on, ordering: .relaxed) }

    func start(timeline: Timeline) {
        guard device != nil else { return }
        let base = timeline.audioPosition
        clock.withLock { $0.base = base }
        running.store(true, ordering: .relaxed)
        let period = negotiated.periodFrames ?? 1024
        let periodTime = Double(period) / Double(format.sampleRate)
        // With the caller's fault plan (debug builds: tests make `snd_pcm_writei` fail here).
        let t = Thread(block: FaultInjection.propagating { [self] in
            play(period: period, periodTime: periodTime, timeline: timeline)
            done.lock(); finished = true; done.broadcast(); done.unlock()
        })
        t.name = "alsa"
        thread = t
        t.start()
    }

    /// The ALSA thread's body: writes periods until `stop()` or the end of the time line. Its
    /// reference to the PCM ends with it, before `finished` is set, so `stop()` closes the PCM (the
    /// `file` plugin finishes its WAV then).
    private func play(period: Int, periodTime: Double, timeline: Timeline) {
        guard let device = self.device else { return }
        /// Decided at the first write: the device kept none of it.
        var ring: EmulatedRing?
        var firstWrite = true
        /// Catalog frames owed to (positive) or by the stretch, below one frame.
        var stretchCarry = 0.0
        /// The integral part of the stretch: the device's own drift, once learnt (a PI controller,
        /// so the error settles at 0 rather than at `settleTime` × the drift).
        var drift = 0.0
        /// Catalog frames the next period takes (the stretch), and silence to play first.
        var take = period
        var silenceFirst = 0
        while running.load(ordering: .relaxed) {
            var isPause = paused.load(ordering: .relaxed)
            var samples: [Int16]
            var consumed = 0
            if isPause || silenceFirst > 0 {
                let n = isPause ? period : min(silenceFirst, 4 * period)
                if !isPause { silenceFirst -= n; isPause = true }
                samples = [Int16](repeating: 0, count: n * format.channels)
            } else {
                let generation = timeline.progress.generation
                samples = timeline.pullAudio(frames: take, timeout: periodTime)
                consumed = samples.count / format.channels
                if take != period && consumed == take {
                    samples = DriftResampler.stretch(samples, channels: format.channels, to: period)
                }
                if samples.isEmpty {
                    if timeline.isExhausted { break }
                    // Nothing more until the presenter schedules an item or a decoder delivers.
                    timeline.progress.wait(after: generation, timeout: 0.002)
                    continue
                }
                Volume(q15: gain.load(ordering: .relaxed)).scale(&samples)
            }
            do {
                _ = try device.write(samples)
            } catch {
                // A device that went away (HDMI audio with its screen: ENODEV, EBADFD, EIO): the thread
                // ends, and the engine closes it and opens the device again (`PlaybackEngine.reopenAudio`).
                log.error("audio write failed: \(error); the sound thread ends (on a screen the device is opened again every 5 s)")
                writeFailed.store(true, ordering: .relaxed)
                break
            }
            var d = device.delay()
            let now = monotonicNow()
            let frames = samples.count / format.channels
            if firstWrite {
                firstWrite = false
                if d < frames {
                    ring = EmulatedRing(rate: format.sampleRate, bufferFrames: max(negotiated.bufferFrames ?? 4 * period, period),
                                        drainRate: Double(format.sampleRate) * (1 + emulatedDriftPPM * 1e-6))
                    log.info("\(name) keeps no queue (snd_pcm_delay \(d) after a write of \(frames) frames): paced in real time")
                }
            }
            if ring != nil {
                d = ring!.wrote(frames, at: now)
                clock.withLock { $0.wrote(frames: frames, pauseSilence: isPause, delay: d, at: now, catalogFrames: consumed) }
            } else {
                clock.withLock { $0.wrote(frames: frames, pauseSilence: isPause, delay: d, at: now, catalogFrames: consumed) }
            }
            // A synchronised catalog: the next period's correction.
            if let wall = wallClock.withLock({ $0 }), !paused.load(ordering: .relaxed) {
                let t = monotonicNow()
                let error = catalogTime(at: t) - wall.catalogTime(atMonotonic: t)
                take = period
                if abs(error) > Self.hardLimit {
                    stretchCarry = 0
                    drift = 0
                    let n = Int((abs(error) * Double(format.sampleRate)).rounded())
                    if error < 0 {
                        // Behind: the catalog frames that should have been heard by now are skipped.
                        timeline.skipAudio(frames: n)
                        clock.withLock { $0.skipped(frames: n) }
                    } else {
                        silenceFirst = n
                    }
                    correctionPPM.store(0, ordering: .relaxed)
                } else {
                    drift = max(-Self.maxStretch, min(Self.maxStretch, drift - error / Self.settleTime * periodTime / Self.learnTime))
                    let stretch = max(-Self.maxStretch, min(Self.maxStretch, drift - error / Self.settleTime))
                    stretchCarry += Double(period) * stretch
                    let whole = Int(stretchCarry.rounded(.towardZero))
                    stretchCarry -= Double(whole)
                    take = period + whole
                    correctionPPM.store(Int((stretch * 1e6).rounded()), ordering: .relaxed)
                }
            }
            if let r = ring {
                let wait = r.secondsUntilRoom(for: period, at: monotonicNow())
                if wait > 0 { Thread.sleep(forTimeInterval: wait) }
            }
        }
        if !running.load(ordering: .relaxed) { device.drop() } else { try? device.drain() }
    }

    /// Catalog time in seconds of the sample heard at monotonic time `t`; where the device starts
    /// before its first write.
    func catalogTime(at t: Double) -> Double { clock.withLock { $0 }.catalogTime(at: t) }

    func stop() {
        guard thread != nil else { return }
        running.store(false, ordering: .relaxed)
        done.lock()
        let deadline = Date(timeIntervalSinceNow: 2)
        while !finished { if !done.wait(until: deadline) { break } }
        done.unlock()
        // Close the PCM now (the `file` plugin writes its WAV header on close).
        thread = nil
        finalXruns = device?.xrunCount ?? finalXruns
        device = nil
    }
}

/// The ring buffer a PCM without a queue of its own is given (`ALSAAudio`): `bufferFrames` frames,
/// drained at `rate` frames a second on the monotonic clock from the first write, as a card drains
/// its buffer. A writer that falls behind finds it empty (an underrun) and starts it again.
struct EmulatedRing {
    let rate: Int
    let bufferFrames: Int
    /// Frames queued at `at` (monotonic seconds).
    private var queued = 0.0
    private var at: Double?

    /// Frames drained a second: `rate`, or a drifting card's (tests).
    let drainRate: Double

    init(rate: Int, bufferFrames: Int, drainRate: Double? = nil) {
        self.rate = rate; self.bufferFrames = bufferFrames; self.drainRate = drainRate ?? Double(rate)
    }

    /// Frames still queued at `t`.
    func fill(at t: Double) -> Double {
        guard let at else { return 0 }
        return max(0, queued - (t - at) * drainRate)
    }

    /// Queues a write of `frames` at `t`; returns the frames queued after it (what `snd_pcm_delay` reports).
    mutating func wrote(_ frames: Int, at t: Double) -> Int {
        queued = fill(at: t) + Double(frames)
        at = t
        return Int(queued.rounded())
    }

    /// Seconds from `t` until `frames` more fit.
    func secondsUntilRoom(for frames: Int, at t: Double) -> Double {
        let excess = fill(at: t) + Double(frames) - Double(bufferFrames)
        return excess > 0 ? excess / drainRate : 0
    }
}
