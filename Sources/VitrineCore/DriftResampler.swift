/// Stretches a block of interleaved 16-bit audio to a slightly different length by linear
/// interpolation: how a synchronised catalog's sound follows the wall clock when the sound card's
/// crystal runs fast or slow (±100 ppm is about ⅓ s an hour). The ratio changes by a few hundred
/// ppm at most, so the pitch moves by under a cent and no sample jumps: no click.
///
/// Output frame `j` of a block of `n` frames sits at input frame `j × m / n` of a block of `m`, so
/// consecutive blocks join with the same spacing (the next block's frame 0 is input frame `m`) and
/// nothing is carried from one block to the next.
public enum DriftResampler {
    /// - Parameters:
    ///   - samples: `m × channels` interleaved samples (`m` ≥ 1).
    ///   - channels: samples per frame.
    ///   - frames: `n`, the frames wanted (≥ 1).
    /// - Returns: `n × channels` samples; `samples` itself when `n == m`.
    public static func stretch(_ samples: [Int16], channels: Int, to frames: Int) -> [Int16] {
        let m = samples.count / channels
        guard m > 0, frames > 0, frames != m else { return samples }
        var out = [Int16](repeating: 0, count: frames * channels)
        let step = Double(m) / Double(frames)
        samples.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in
                for j in 0..<frames {
                    let x = Double(j) * step
                    let i = min(Int(x), m - 1)
                    let k = min(i + 1, m - 1)
                    let f = x - Double(i)
                    for c in 0..<channels {
                        let a = Double(src[i * channels + c]), b = Double(src[k * channels + c])
                        dst[j * channels + c] = Int16(clamping: Int((a + (b - a) * f).rounded()))
                    }
                }
            }
        }
        return out
    }
}
