internal import CALSA

/// A PCM sample format (`snd_pcm_format_t`).
///
/// An open set: any value alsa-lib defines can be represented, including ones added later;
/// the static members are the formats Vitrine negotiates.
public struct SampleFormat: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The `snd_pcm_format_t` value.
    public var rawValue: Int32

    public init(rawValue: Int32) { self.rawValue = rawValue }

    init(_ format: snd_pcm_format_t) { self.rawValue = Int32(format.rawValue) }

    var alsa: snd_pcm_format_t { snd_pcm_format_t(rawValue: .init(truncatingIfNeeded: rawValue)) }

    /// Signed 16-bit little-endian (`SND_PCM_FORMAT_S16_LE`).
    public static let s16le = SampleFormat(SND_PCM_FORMAT_S16_LE)
    /// Signed 32-bit little-endian (`SND_PCM_FORMAT_S32_LE`).
    public static let s32le = SampleFormat(SND_PCM_FORMAT_S32_LE)
    /// 32-bit IEEE float little-endian, range -1.0...1.0 (`SND_PCM_FORMAT_FLOAT_LE`).
    public static let floatLE = SampleFormat(SND_PCM_FORMAT_FLOAT_LE)

    /// Bytes one sample of one channel occupies in memory; 0 for formats without a fixed width.
    ///
    /// The corresponding C function is `snd_pcm_format_physical_width`.
    public var bytesPerSample: Int {
        let bits = snd_pcm_format_physical_width(alsa)
        return bits > 0 ? Int(bits) / 8 : 0
    }

    /// alsa-lib's name for the format, such as `S16_LE`.
    ///
    /// The corresponding C function is `snd_pcm_format_name`.
    public var description: String {
        snd_pcm_format_name(alsa).map { String(cString: $0) } ?? "format \(rawValue)"
    }
}
