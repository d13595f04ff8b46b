internal import CALSA
internal import Glibc
import Synchronization

/// An open ALSA playback PCM with negotiated parameters.
///
/// Owns the `snd_pcm_t` and closes it in `deinit`; closing also flushes plugins such as `file`.
///
/// Threading: call `write`, `drain`, `drop`, `prepare` and `pause` from one thread (the audio
/// thread). `delay()`, `state`, `xrunCount` and `onXrun` may be used from any thread: alsa-lib
/// serialises calls on one handle (its default thread-safe mode; the kernel does it for `hw`),
/// and the Swift-side counters sit behind a mutex.
// @unchecked: the Swift state is `let`s and a `Mutex`; alsa-lib serialises calls on the shared `snd_pcm_t`.
public final class PCMDevice: @unchecked Sendable {
    /// The `snd_pcm_t`.
    let handle: OpaquePointer
    /// Kept alive while the PCM is open: plugins may hold nodes of the tree they were opened from.
    private let localConfiguration: LocalConfiguration?
    private let shared = Mutex(Shared())

    struct Shared {
        var xrunCount = 0
        var onXrun: (@Sendable (XrunKind) -> Void)?
    }

    /// The PCM name it was opened with, such as `"default"` or `"hw:0,0"`.
    public let name: String
    /// What the device accepted; every field, including `periodFrames` and `bufferFrames`, is set.
    public let negotiated: PCMConfiguration
    /// Whether the hardware can pause in place (`snd_pcm_hw_params_can_pause`).
    public let canPause: Bool
    /// Bytes per interleaved frame in the negotiated format.
    public let bytesPerFrame: Int

    /// Opens the playback PCM `name` and negotiates parameters near `requested`.
    ///
    /// Hardware parameters: access `RW_INTERLEAVED`; the requested format, else the first of
    /// s16le, s32le, floatLE the PCM accepts; channels near; rate near, in Hz, with alsa-lib
    /// resampling allowed; period size near and buffer size near, in frames. A missing
    /// `periodFrames` defaults to 20 ms, a missing `bufferFrames` to four periods.
    /// Software parameters: playback starts when buffer − period frames are queued (at least one
    /// period), and the writer wakes when one period is free. Read `negotiated` for the result.
    ///
    /// - Parameters:
    ///   - name: A PCM name: `"default"`, `"null"`, `"hw:0,0"`, `"plughw:1"`, or one defined in an
    ///     ALSA configuration, including `configText`.
    ///   - requested: The wanted rate, channels, format, period and buffer.
    ///   - configText: ALSA configuration text loaded on top of a private copy of the global
    ///     configuration, for this open only, for example
    ///     `pcm.capture { type file; slave.pcm "null"; file "/tmp/out.wav"; format "wav" }`.
    ///     The process environment and alsa-lib's global cache are left alone.
    /// - Throws: `ALSAError` with operation `snd_pcm_open` (`snd_pcm_open_lconf` when
    ///   `configText` is given) when the name is unknown (`-ENOENT`) or the device is busy
    ///   (`-EBUSY`); `snd_config_load` when `configText` does not parse; the name of the
    ///   `snd_pcm_hw_params_*` / `snd_pcm_sw_params*` call the device refused.
    ///
    /// The corresponding C functions are `snd_pcm_open`, `snd_pcm_hw_params` and `snd_pcm_sw_params`.
    public init(name: String, requested: PCMConfiguration, configText: String? = nil) throws(ALSAError) {
        let localConfiguration = try configText.map { text throws(ALSAError) in try LocalConfiguration(loading: text) }
        var pcm: OpaquePointer?
        if let root = localConfiguration?.root {
            try check("snd_pcm_open_lconf", subject: name) {
                snd_pcm_open_lconf(&pcm, name, SND_PCM_STREAM_PLAYBACK, 0, root)
            }
        } else {
            try check("snd_pcm_open", subject: name) { snd_pcm_open(&pcm, name, SND_PCM_STREAM_PLAYBACK, 0) }
        }
        guard let pcm else { throw ALSAError(operation: "snd_pcm_open", code: -ENODEV, subject: name) }

        let result: Negotiation.Result
        do throws(ALSAError) {
            result = try Negotiation.negotiate(pcm, requested: requested)
        } catch {
            snd_pcm_close(pcm)
            throw ALSAError(operation: error.operation, code: error.code, subject: name)
        }
        self.handle = pcm
        self.localConfiguration = localConfiguration
        self.name = name
        self.negotiated = result.configuration
        self.canPause = result.canPause
        self.bytesPerFrame = result.configuration.bytesPerFrame
    }

    deinit {
        snd_pcm_close(handle)
    }

    func withShared<R>(_ body: (inout Shared) -> R) -> R {
        shared.withLock { body(&$0) }
    }

    /// The stream's current state.
    ///
    /// The corresponding C function is `snd_pcm_state`.
    public var state: PCMState { PCMState(snd_pcm_state(handle)) }

    /// Underruns and suspends recovered from by `write` since the device was opened.
    public var xrunCount: Int { shared.withLock { $0.xrunCount } }

    /// Called on the writing thread, inside `write`, after each recovered underrun or suspend.
    public var onXrun: (@Sendable (_ kind: XrunKind) -> Void)? {
        get { shared.withLock { $0.onXrun } }
        set { shared.withLock { $0.onXrun = newValue } }
    }

    /// Frames written but not yet heard: the audio master clock.
    ///
    /// Includes frames queued before the stream started (state `prepared`), and the device's own
    /// latency past the ring buffer, so it can exceed `bufferFrames` (a sound server's sink, a
    /// codec FIFO). Returns 0 when no stream is set up (`setup` after `drop()`/`drain()`, `xrun`)
    /// or on any error; never negative. Plugins without a clock (`null`, `file`) report 0.
    ///
    /// The corresponding C function is `snd_pcm_delay`.
    public func delay() -> Int {
        var frames: snd_pcm_sframes_t = 0
        guard snd_pcm_delay(handle, &frames) >= 0 else { return 0 }
        return max(0, frames)
    }

    /// Plays out every queued frame, blocking until done, then stops the stream (state `setup`).
    ///
    /// The next `write` prepares the stream again. Does nothing if the stream is already stopped.
    ///
    /// - Throws: `ALSAError` with operation `snd_pcm_drain`, for example `-ENODEV` when the
    ///   device was unplugged or `-ESTRPIPE` when the system suspended it.
    ///
    /// The corresponding C function is `snd_pcm_drain`.
    public func drain() throws(ALSAError) {
        guard state != .setup else { return }
        try check("snd_pcm_drain", subject: name) { snd_pcm_drain(handle) }
    }

    /// Stops the stream at once, discarding queued frames (state `setup`).
    ///
    /// The next `write` prepares the stream again.
    ///
    /// The corresponding C function is `snd_pcm_drop`.
    public func drop() {
        // Fails only in state `open`, which an initialised PCMDevice never is.
        _ = snd_pcm_drop(handle)
    }

    /// Makes a stopped stream ready to play again (state `prepared`).
    ///
    /// - Throws: `ALSAError` with operation `snd_pcm_prepare`, for example `-ENODEV` when the
    ///   device was unplugged.
    ///
    /// The corresponding C function is `snd_pcm_prepare`.
    public func prepare() throws(ALSAError) {
        try check("snd_pcm_prepare", subject: name) { snd_pcm_prepare(handle) }
    }

    /// Pauses or resumes playback.
    ///
    /// With hardware pause (`canPause`) the queued frames stay and resume where they stopped.
    /// Without it, pausing drops the queued frames (at most one buffer) and resuming prepares the
    /// stream for the next `write`. Pausing a stream that is not running, or resuming one that
    /// is not paused or stopped, does nothing. Failures fall back to drop and prepare; a device
    /// that is gone reports it on the next `write`.
    ///
    /// The corresponding C function is `snd_pcm_pause`.
    public func pause(_ on: Bool) {
        if on {
            guard state == .running else { return }
            if canPause, snd_pcm_pause(handle, 1) >= 0, state == .paused { return }
            _ = snd_pcm_drop(handle)
        } else {
            switch state {
            case .paused:
                if snd_pcm_pause(handle, 0) >= 0, state != .paused { return }
                // Some plugins (`null`) stay paused: restart the stream instead.
                _ = snd_pcm_drop(handle)
                _ = snd_pcm_prepare(handle)
            case .setup:
                _ = snd_pcm_prepare(handle)
            default:
                return
            }
        }
    }
}
