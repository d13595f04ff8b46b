/// An output volume: a linear gain from 0 (silence) to 1 (unchanged), applied to interleaved signed
/// 16-bit samples in Q15 fixed point, the one scaler for every sound path (the ALSA writer and the
/// headless recording).
///
/// A sample becomes `(sample × gain₁₅) >> 15`, where `gain₁₅ = ⌊gain × 32768⌋`: an arithmetic shift,
/// so results round toward −∞ (−1 at any gain above 0 stays −1). At gain 1 every sample is unchanged;
/// at gain 0 every sample is 0.
public struct Volume: Sendable, Equatable {
    /// The gain in Q15: 32768 is unity, 0 silence.
    public let q15: Int32

    /// - Parameter gain: 0…1; values outside are clamped.
    public init(_ gain: Double) {
        q15 = Int32((max(0, min(1, gain)) * 32768).rounded(.down))
    }

    /// A volume from its Q15 value (0…32768, clamped).
    public init(q15: Int32) { self.q15 = max(0, min(32768, q15)) }

    /// The gain, 0…1.
    public var gain: Double { Double(q15) / 32768 }

    /// Whether samples pass unchanged.
    public var isUnity: Bool { q15 == 32768 }

    /// Scales every sample in place.
    public func scale(_ samples: inout [Int16]) {
        guard !isUnity else { return }
        let g = q15
        samples.withUnsafeMutableBufferPointer { b in
            for i in b.indices { b[i] = Int16(truncatingIfNeeded: (Int32(b[i]) * g) >> 15) }
        }
    }
}
