// The catalog's soundtrack: one audio file that plays under the whole catalog, looping.
// Format: `config/manifest.schema.json` ("soundtrack"); prose: README "Soundtrack".

/// `soundtrack`: music (or any sound) that plays under the catalog's items, looping without a gap,
/// at its own volume. It runs on across item boundaries and playlist loops (it never restarts with
/// the playlist); what it does while an item plays sound of its own (a video with an audio stream,
/// or an `audio` item) is `itemSound`. Under images, silent videos and the slate it plays at `volume`.
public struct Soundtrack: Sendable, Equatable {
    /// What the soundtrack does while the item on screen has sound of its own.
    public enum ItemSound: String, Sendable, Equatable, CaseIterable {
        /// Lowered to `duckVolume`, and back to `volume` after the item (the default).
        case duck
        /// Faded out and stopped; it resumes where it stopped, fading in, once no item sounds.
        case pause
        /// Plays on at `volume`, mixed with the item's sound.
        case mix
    }

    /// The audio file, relative to the catalog folder (`/`-separated), as an item's `src`. Any
    /// container FFmpeg reads (MP3, AAC/M4A, Opus, Ogg Vorbis, FLAC, WAV…); a video file's sound is
    /// used and its pictures ignored.
    public var src: String
    /// Linear gain 0…1 of the soundtrack under silent items (default 1). `audio.volume` and
    /// `setVolume` scale everything, the soundtrack included.
    public var volume: Double
    public var itemSound: ItemSound
    /// Linear gain 0…1 while ducked (default 0.2, about −14 dB), never above `volume`; used with
    /// `itemSound` `duck` only.
    public var duckVolume: Double
    /// Seconds every change of level takes, as a linear ramp (default 0.5; 0 cuts, with a click).
    public var fade: Double
    /// Expected file size in bytes (optional here; on a USB stick here or in `files`).
    public var size: Int?
    /// Expected SHA-256, lowercase hex (optional here; on a USB stick here or in `files`).
    public var sha256: String?

    public static let defaultVolume = 1.0
    public static let defaultDuckVolume = 0.2
    public static let defaultFade = 0.5
    /// The longest `fade` accepted, in seconds.
    public static let maximumFade = 10.0

    public init(src: String, volume: Double = Soundtrack.defaultVolume, itemSound: ItemSound = .duck,
                duckVolume: Double = Soundtrack.defaultDuckVolume, fade: Double = Soundtrack.defaultFade,
                size: Int? = nil, sha256: String? = nil) {
        self.src = src; self.volume = volume; self.itemSound = itemSound
        self.duckVolume = duckVolume; self.fade = fade; self.size = size; self.sha256 = sha256
    }

    /// The soundtrack's gain while an item with (`itemHasSound`) or without sound of its own plays.
    public func level(itemHasSound: Bool) -> Double {
        guard itemHasSound else { return volume }
        switch itemSound {
        case .duck: return min(duckVolume, volume)
        case .pause: return 0
        case .mix: return volume
        }
    }
}
