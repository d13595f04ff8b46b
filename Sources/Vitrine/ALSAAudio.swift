import Foundation
import Synchronization
import PCM

/// Plays the timeline's audio through an ALSA PCM on its own thread and publishes the audio clock.
///
/// The thread blocks in `snd_pcm_writei` one period at a time; underruns are recovered by
/// `PCMDevice` with `snd_pcm_recover`, counted and logged. The clock is the catalog time of the sample
/// being heard: (frames written − `snd_pcm_delay`) / rate, advanced by the monotonic time since it
/// was read.
final class ALSAAudio: @unchecked Sendable {
    /// The PCM; released (closed, flushing plugins such as `file`) by `stop()`.
    private var device: PCMDevice?
    private let name: String
    private let negotiated: PCMConfiguration
    private var finalXruns = 0
    let format: AudioFormat
    private let log: Logger
    private let clock = Mutex<(written: Int, delay: Int, at: Double, started: Bool)>((0, 0, 0, false))
    private let running = Atomic<Bool>(false)
    private var thread: Thread?
    private let done = NSCondition()
    private var finished = false

    init(device name: String, rate: Int, channels: Int, periodFrames: Int, bufferFrames: Int, configText: String?, log: Logger) throws {
        let device = try PCMDevice(name: name, requested: PCMConfiguration(rate: rate, channels: channels, format: .s16le,
                                                                      periodFrames: periodFrames, bufferFrames: bufferFrames),
                             configText: configText)
        self.device = device
        self.name = name
        negotiated = device.negotiated
        let n = device.negotiated
        format = AudioFormat(sampleRate: n.rate, channels: n.channels)
        self.log = log
        let xlog = log
        device.onXrun = { kind in xlog.warning("xrun (\(kind)) recovered with snd_pcm_recover") }
    }

    var summary: String {
        let n = negotiated
        return "ALSA \(name): \(n.rate) Hz, \(n.channels) ch, \(n.format), period \(n.periodFrames ?? 0), buffer \(n.bufferFrames ?? 0) frames"
    }

    var xrunCount: Int { device?.xrunCount ?? finalXruns }

    func start(timeline: Timeline, volume: Double) {
        running.store(true, ordering: .relaxed)
        guard device != nil else { return }
        let period = negotiated.periodFrames ?? 1024
        let periodTime = Double(period) / Double(format.sampleRate)
        let t = Thread { [self] in
            // A local reference that ends with this body, so `stop()` can close the PCM.
            guard let device = self.device else { return }
            while running.load(ordering: .relaxed) {
                var samples = timeline.pullAudio(frames: period, timeout: periodTime)
                if samples.isEmpty { if timeline.isFinished { break } else { continue } }
                if volume < 1 { applyVolume(&samples, volume) }
                do {
                    _ = try device.write(samples)
                } catch {
                    log.error("audio write failed: \(error)")
                    break
                }
                let d = device.delay()
                let now = monotonicNow()
                clock.withLock { c in c.written += samples.count / format.channels; c.delay = d; c.at = now; c.started = true }
            }
            if !running.load(ordering: .relaxed) { device.drop() } else { try? device.drain() }
            done.lock(); finished = true; done.broadcast(); done.unlock()
        }
        t.name = "alsa"
        thread = t
        t.start()
    }

    /// Catalog time in seconds of the sample heard at monotonic time `t`; nil before the first write.
    func catalogTime(at t: Double) -> Double? {
        let c = clock.withLock { $0 }
        guard c.started else { return 0 }
        let played = Double(c.written - c.delay) / Double(format.sampleRate)
        let ahead = min(max(0, t - c.at), Double(c.delay) / Double(format.sampleRate) + 0.1)
        return played + ahead
    }

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
