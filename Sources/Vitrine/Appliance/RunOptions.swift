import Foundation
import VitrineCore

/// How `vitrine run` and `vitrine play` drive the outputs.
public struct RunOptions: Sendable {
    public enum OutputKind: String, Sendable { case auto, drm, headless }
    public var output: OutputKind = .auto
    /// Headless: write the composited video and audio to this file (Matroska), as fast as the CPU allows.
    public var recordPath: String?
    /// Headless: catalog times (seconds from the start of the run) at which to write PNG snapshots.
    public var snapshotTimes: [Double] = []
    public var snapshotDirectory: String = "."
    /// Writes every player event as one JSON line (the proof-of-play log).
    public var eventsPath: String?
    /// Stop after this many seconds of catalog time.
    public var duration: Double?
    /// Headless: pace vblanks on the monotonic clock (default: only when not recording or snapshotting).
    public var realtime: Bool?
    /// `--clock TIME`: the schedule reads a virtual clock that starts at this time with the first
    /// vblank and runs with the output's vblank clock; nil reads `CLOCK_REALTIME`. ISO 8601
    /// (`2026-12-07T10:59:50Z`, `…+01:00`, or local `2026-12-07T10:59:50` in the schedule's zone).
    public var clock: String?
    /// The schedule's time zone when the catalog names none (`--timezone`, else the config's
    /// `timezone`), an IANA name; nil: the system's.
    public var timezone: String?
    /// Headless screen size and vblank rate used when `display.mode` is not an exact mode.
    public var headlessWidth = 1280
    public var headlessHeight = 720
    public var headlessRefresh = 30.0
    /// DRM: connector name (e.g. `HDMI-A-1`); nil picks the first connected one.
    public var connector: String?
    /// The config's `outputs`: two or more screens, each with its own run (`ScreenOutputs`).
    public var outputs: [OutputSettings] = []
    /// The named playlist of the catalog this run plays (an output's `playlist`) instead of its
    /// `playlist` and schedule; nil: the catalog as it is.
    public var playlist: String?
    /// An output's `mode`, over the catalog's `display.mode` on the DRM screen; nil: the catalog's.
    public var outputMode: DisplayModeRequest?
    /// The card's lessor when the box drives several outputs: the run's DRM output is a lease of it.
    public var lessor: DRMLessor?
    /// Set on the first output's run when the box drives several (`outputs`): the other outputs'
    /// entries for its status (`OutputReports`).
    public var outputReports: OutputReports?
    /// The run of a second screen (`outputs[1...]`): no sound (the first screen's run has the card),
    /// no touch seat, no HDMI-CEC, and nothing said to systemd (the first screen feeds the watchdog).
    public var isSecondaryOutput = false
    /// DRM device path; nil picks the first `/dev/dri/card*`.
    public var card: String?
    /// ALSA: override the manifest's `audio.device`; `none` disables audio output.
    public var audioDevice: String?
    /// Extra ALSA configuration text loaded on top of the system's (for example a `file` PCM that
    /// captures to a WAV); the PCM named by `audioDevice` may be defined here.
    public var alsaConfigText: String?
    /// Touch calibration (libinput's 3×2 matrix on normalized coordinates), config `input.calibration`.
    public var touchCalibration: CalibrationMatrix?
    /// ALSA period and buffer sizes in frames (config `audio.periodFrames`, `audio.bufferFrames`).
    public var periodFrames: Int = 1024
    public var bufferFrames: Int = 4096
    /// HDMI-CEC power control (config `cec.enabled`, `cec.port`): whether the TV is also sent
    /// standby and power-on through libcec, and the adapter's com port (nil: the first one found).
    public var cecEnabled = false
    public var cecPort: String?
    /// `--vblank-log FILE`: one line per vblank (`VblankLog`): its wall-clock time, the item and PTS
    /// of the frame on screen, and with a sound device how far the sound heard is from it: what a
    /// synchronised wall is checked with.
    public var vblankLogPath: String?
    /// `--test-display-ppm N`: the headless output's vblanks come N parts per million faster than
    /// its nominal rate (a display whose clock drifts; tests of synchronised catalogs).
    public var displayDriftPPM = 0.0
    /// `--test-audio-ppm N`: a sound device that keeps no queue of its own (ALSA's `null` plugin,
    /// paced by `EmulatedRing`) plays N parts per million faster (negative: slower) than its rate.
    public var audioDriftPPM = 0.0
    /// This box's place in a video wall (config `wall`): its keys override the catalog's
    /// `display.wall` key by key (`VideoWall.merge(catalog:config:)`). Nil: the catalog's alone.
    public var wall: WallSettings?
    /// Output audio format when no device decides it (headless).
    public var audioRate = 48000
    public var audioChannels = 2

    public init() {}
}

/// What a run did, printed when `run` exits.
public struct RunStatistics: Sendable, CustomStringConvertible {
    public var framesPresented = 0
    /// Video frames passed over, by cause.
    public var dropped = DroppedFrames()
    public var framesDropped: Int { dropped.total }
    public var vblanks = 0
    public var xruns = 0
    /// Audio frames replaced by silence because a decoder fell behind.
    public var audioUnderflowFrames = 0
    /// Soundtrack frames replaced by silence because its decoder fell behind.
    public var soundtrackUnderflowFrames = 0
    /// A/V offset in milliseconds: presented frame PTS minus the audio clock at its vblank.
    public var avOffsetMeanMs = 0.0
    public var avOffsetMaxMs = 0.0
    public var avSamples = 0
    public var itemsStarted = 0
    public var itemsFailed = 0
    /// Catalog seconds played.
    public var catalogSeconds = 0.0
    public var wallSeconds = 0.0
    public var output = ""
    public var audio = ""

    public var description: String {
        """
        output: \(output)
        audio: \(audio)
        frames presented: \(framesPresented)
        frames dropped: \(dropped.summary)
        xruns: \(xruns)
        audio underflow: \(audioUnderflowFrames) frames\(soundtrackUnderflowFrames > 0 ? ", soundtrack \(soundtrackUnderflowFrames) frames" : "")
        A/V offset: mean \(String(format: "%.2f", avOffsetMeanMs)) ms, max \(String(format: "%.2f", avOffsetMaxMs)) ms (\(avSamples) frames)
        catalog time: \(String(format: "%.2f", catalogSeconds)) s in \(String(format: "%.2f", wallSeconds)) s wall
        """
    }
}
