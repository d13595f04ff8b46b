internal import CALSA

/// The state of a PCM stream (`snd_pcm_state_t`).
///
/// An open set, so a state alsa-lib adds later still fits.
public struct PCMState: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The `snd_pcm_state_t` value.
    public var rawValue: Int32

    public init(rawValue: Int32) { self.rawValue = rawValue }

    init(_ state: snd_pcm_state_t) { self.rawValue = Int32(state.rawValue) }

    /// Opened, hardware parameters not set.
    public static let open = PCMState(SND_PCM_STATE_OPEN)
    /// Parameters set, not ready to play (after `drop()` or `drain()`).
    public static let setup = PCMState(SND_PCM_STATE_SETUP)
    /// Ready; starts when the start threshold is reached.
    public static let prepared = PCMState(SND_PCM_STATE_PREPARED)
    /// Playing.
    public static let running = PCMState(SND_PCM_STATE_RUNNING)
    /// Underrun: the device ran out of frames.
    public static let xrun = PCMState(SND_PCM_STATE_XRUN)
    /// Playing out the queued frames before stopping.
    public static let draining = PCMState(SND_PCM_STATE_DRAINING)
    /// Paused with `snd_pcm_pause`.
    public static let paused = PCMState(SND_PCM_STATE_PAUSED)
    /// The system suspended; the hardware needs resuming.
    public static let suspended = PCMState(SND_PCM_STATE_SUSPENDED)
    /// The device went away (USB unplugged).
    public static let disconnected = PCMState(SND_PCM_STATE_DISCONNECTED)

    /// alsa-lib's name for the state, such as `RUNNING`.
    ///
    /// The corresponding C function is `snd_pcm_state_name`.
    public var description: String {
        snd_pcm_state_name(snd_pcm_state_t(rawValue: .init(truncatingIfNeeded: rawValue))).map { String(cString: $0) }
            ?? "state \(rawValue)"
    }
}

/// Why playback was interrupted and recovered during a write.
public enum XrunKind: Sendable, Hashable {
    /// The device ran out of frames (`-EPIPE`).
    case underrun
    /// The system suspended the device (`-ESTRPIPE`).
    case suspend
}
