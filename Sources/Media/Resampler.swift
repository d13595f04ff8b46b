internal import CAVUtil
internal import CSwResample

/// Converts decoded audio to one fixed output format: interleaved signed 16-bit samples at
/// `outputRate` Hz with `outputChannels` channels. Downmixes (5.1 → stereo with FFmpeg's default
/// matrix) and changes rate as needed. Rebuilds its `SwrContext` when the input format changes.
/// Input rates outside `inputRates` are refused: `swr_init` builds a filter bank whose length grows
/// with the input/output rate ratio (for a corrupt 1.16 GHz header it computed for 17 s, then failed
/// to allocate the gigabytes it needed).
/// The corresponding C function is `swr_convert`.
// @unchecked: `convert` mutates the SwrContext; one owner calls it at a time (it may move between threads, never shared).
public final class Resampler: @unchecked Sendable {
    /// Output sample rate in Hz.
    public let outputRate: Int
    /// Output channel count.
    public let outputChannels: Int
    /// The input sample rates accepted, in Hz: from telephone-grade audio below 8 kHz to 768 kHz PCM.
    public static let inputRates: ClosedRange<Int> = 1000...768_000
    private var swr: OpaquePointer?
    private var inputKey: (rate: Int32, format: Int32, layout: AVChannelLayout)?

    public init(outputRate: Int, outputChannels: Int) {
        self.outputRate = outputRate
        self.outputChannels = outputChannels
    }

    deinit { swr_free(&swr) }

    /// Converts one frame, or its first `samples` samples per channel (`nil`: all of them); returns
    /// `frames × outputChannels` interleaved samples (may be empty while the resampler fills its
    /// filter delay).
    /// - Throws: `AVError` from `swr_alloc_set_opts2`, `swr_init` or `swr_convert`, or (operation
    ///   `swr_init`) for a sample rate outside `inputRates`.
    public func convert(_ audio: AudioFrame, samples: Int? = nil) throws(AVError) -> [Int16] {
        let f = audio.frame
        try configure(for: f)
        let inCount = Int32(max(0, min(Int(f.pointee.nb_samples), samples ?? Int(f.pointee.nb_samples))))
        let outCapacity = Int(swr_get_out_samples(swr, inCount)) + 32
        var out = [Int16](repeating: 0, count: outCapacity * outputChannels)
        let produced: Int32 = out.withUnsafeMutableBytes { buf -> Int32 in
            var dst: UnsafeMutablePointer<UInt8>? = buf.baseAddress!.assumingMemoryBound(to: UInt8.self)
            let src = UnsafeMutableRawPointer(f.pointee.extended_data!).assumingMemoryBound(to: UnsafePointer<UInt8>?.self)
            return swr_convert(swr, &dst, Int32(outCapacity), src, inCount)
        }
        try avCheck("swr_convert", produced)
        out.removeLast(out.count - Int(produced) * outputChannels)
        return out
    }

    /// Returns the samples still held in the resampler's filter (call at the end of a stream).
    public func flush() -> [Int16] {
        guard swr != nil else { return [] }
        let cap = 4096
        var out = [Int16](repeating: 0, count: cap * outputChannels)
        let produced = out.withUnsafeMutableBytes { buf -> Int32 in
            var dst: UnsafeMutablePointer<UInt8>? = buf.baseAddress!.assumingMemoryBound(to: UInt8.self)
            return swr_convert(swr, &dst, Int32(cap), nil, 0)
        }
        out.removeLast(out.count - Int(max(0, produced)) * outputChannels)
        return out
    }

    private func configure(for f: UnsafeMutablePointer<AVFrame>) throws(AVError) {
        let rate = f.pointee.sample_rate
        let fmt = f.pointee.format
        var layout = f.pointee.ch_layout
        if vt_channel_order_is_unspec(&layout) != 0 {
            av_channel_layout_default(&layout, layout.nb_channels)
        }
        if let k = inputKey, k.rate == rate, k.format == fmt, av_channel_layout_compare(&inputKey!.layout, &layout) == 0 {
            return
        }
        guard Self.inputRates.contains(Int(rate)) else {
            throw AVError(operation: "swr_init", message: "sample rate \(rate) Hz is outside \(Self.inputRates.lowerBound)–\(Self.inputRates.upperBound) Hz")
        }
        swr_free(&swr)
        var outLayout = AVChannelLayout()
        av_channel_layout_default(&outLayout, Int32(outputChannels))
        var ctx: OpaquePointer? = nil
        try avCheck("swr_alloc_set_opts2", swr_alloc_set_opts2(
            &ctx, &outLayout, vt_sample_fmt_s16(), Int32(outputRate),
            &layout, AVSampleFormat(fmt), rate, 0, nil))
        do {
            try avCheck("swr_init", swr_init(ctx))
        } catch {
            swr_free(&ctx)
            throw error
        }
        swr = ctx
        inputKey = (rate, fmt, layout)
    }
}
