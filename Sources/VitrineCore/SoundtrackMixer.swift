// Mixing the catalog's soundtrack under the items' own sound, with click-free level changes.

/// A linear gain in steps of 1/65536 (65536 is unity, 0 is silence), for 16-bit samples.
public struct SampleGain: Sendable, Equatable, Hashable {
    /// The gain × 65536, 0…65536.
    public var q16: Int

    public static let zero = SampleGain(q16: 0)
    public static let unity = SampleGain(q16: 65536)

    /// `q16` is clamped to 0…65536.
    public init(q16: Int) { self.q16 = max(0, min(65536, q16)) }

    /// A linear gain 0…1 (clamped), rounded to the nearest 1/65536.
    public init(_ linear: Double) {
        self.init(q16: linear.isFinite ? Int((max(0, min(1, linear)) * 65536).rounded()) : 0)
    }

    /// `sample × gain`, rounded to the nearest integer (halves towards +∞). Never overflows: |result| ≤ 32768.
    @inline(__always)
    public func scale(_ sample: Int16) -> Int32 { Int32((Int(sample) * q16 + 32768) >> 16) }
}

/// Puts the soundtrack under the catalog's own audio, one block at a time: interleaved S16,
/// `channels` samples per frame, at the output's sample rate.
///
/// Each output sample is the item's sample plus the soundtrack's sample times the soundtrack's gain,
/// saturated to 16 bits. The gain follows `Soundtrack.level(itemHasSound:)`. Every change of level is
/// a linear ramp of `fadeFrames` frames (`fade` seconds), one gain step per frame, the same for
/// every channel of a frame, so the level never jumps (no click). A new level while a ramp runs
/// starts a new ramp from the gain reached so far. The gain starts at `initialGain` (default 0: the
/// soundtrack fades in when playback begins).
///
/// The soundtrack is *held* (its frames are not taken, so it resumes where it stopped) when its gain
/// has reached 0 and should stay there: with `itemSound` `pause` under an item with sound, and while
/// `enabled` is false (a catalog switch: fade out, swap the soundtrack, enable again). Ducking to a
/// `duckVolume` of 0 is not a hold: the soundtrack runs on, silent.
///
/// Pure and deterministic: the same blocks give the same samples, so it is tested with exact values.
public struct SoundtrackMixer: Sendable {
    public let settings: Soundtrack
    public let channels: Int
    /// Frames a change of level takes: `fade × sampleRate`, rounded, at least 1.
    public let fadeFrames: Int
    /// The gain of the last frame mixed.
    public private(set) var gain: SampleGain
    /// False fades the soundtrack out over `fadeFrames` and then holds it; true brings it back.
    public var enabled = true
    /// The level being moved to (q16), and the ramp's start and frames done, while one runs.
    private var target: Int
    private var ramp: (from: Int, done: Int)?

    /// - Parameters:
    ///   - settings: the manifest's `soundtrack`.
    ///   - sampleRate: output frames per second, > 0.
    ///   - channels: samples per frame, > 0.
    ///   - initialGain: the gain before the first frame.
    public init(settings: Soundtrack, sampleRate: Int, channels: Int, initialGain: SampleGain = .zero) {
        precondition(sampleRate > 0 && channels > 0, "sample rate and channels must be positive")
        self.settings = settings
        self.channels = channels
        fadeFrames = max(1, Int((settings.fade * Double(sampleRate)).rounded()))
        gain = initialGain
        target = initialGain.q16
    }

    /// Whether the soundtrack is held now (see the type's description): the next block takes none
    /// of its frames unless the level to reach changes.
    public func isHolding(itemHasSound: Bool) -> Bool {
        gain.q16 == 0 && level(itemHasSound: itemHasSound) == 0 && holds(itemHasSound: itemHasSound)
    }

    /// Mixes one block.
    /// - Parameters:
    ///   - item: the catalog's audio for the block, `frames × channels` samples (silence where no
    ///     item sounds). Its length sets the block's length.
    ///   - itemHasSound: whether the item playing over the whole block has sound of its own (split
    ///     blocks at item boundaries).
    ///   - soundtrack: called once, with the number of soundtrack frames the block takes (the whole
    ///     block, fewer when a hold begins inside it, 0 while held); returns up to that many frames,
    ///     interleaved in the output format. Missing frames are silence.
    /// - Returns: `item.count` samples.
    public mutating func mix(item: [Int16], itemHasSound: Bool, soundtrack: (Int) -> [Int16]) -> [Int16] {
        let frames = item.count / channels
        let wanted = level(itemHasSound: itemHasSound)
        if wanted != target {
            target = wanted
            ramp = (gain.q16, 0)
        }
        let holdAtZero = target == 0 && holds(itemHasSound: itemHasSound)
        // One gain per frame; the soundtrack is taken up to the first frame of a hold.
        var gains = [Int](repeating: 0, count: frames)
        var g = gain.q16
        var taken = frames
        for k in 0..<frames {
            if let r = ramp {
                let done = r.done + 1
                g = r.from + (target - r.from) * done / fadeFrames
                ramp = done >= fadeFrames ? nil : (r.from, done)
            }
            gains[k] = g
            if holdAtZero && g == 0 && taken == frames { taken = k }
        }
        if frames > 0 { gain = SampleGain(q16: g) }
        let bed = soundtrack(taken)
        var out = [Int16](repeating: 0, count: frames * channels)
        for k in 0..<frames {
            let frameGain = SampleGain(q16: gains[k])
            for c in 0..<channels {
                let i = k * channels + c
                let under: Int32 = k < taken && i < bed.count ? frameGain.scale(bed[i]) : 0
                out[i] = Int16(clamping: Int32(item[i]) + under)
            }
        }
        return out
    }

    /// The gain (q16) to move to.
    private func level(itemHasSound: Bool) -> Int {
        enabled ? SampleGain(settings.level(itemHasSound: itemHasSound)).q16 : 0
    }

    /// Whether a gain of 0 holds the soundtrack (rather than letting it run on, silent).
    private func holds(itemHasSound: Bool) -> Bool { !enabled || itemHasSound && settings.itemSound == .pause }
}
