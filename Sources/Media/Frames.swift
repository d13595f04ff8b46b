internal import CAVUtil

/// A decoded video picture in its native pixel format (usually YUV 4:2:0), owned by this object.
///
/// Times are in seconds from the start of the file (the container's `start_time` is subtracted).
// @unchecked: immutable once decoded (`let`s and an AVFrame nothing writes again); threads only read its picture.
public final class VideoFrame: @unchecked Sendable {
    let frame: UnsafeMutablePointer<AVFrame>
    /// Presentation time in seconds from the start of the media.
    public let pts: Double
    /// Display duration in seconds (from the packet duration, else 1/frame rate).
    public let duration: Double
    /// Clockwise turn in degrees (0, 90, 180 or 270) that shows the picture upright: the stream's
    /// display matrix (`VideoStreamInfo.rotation`). `Scaler` applies it.
    public let rotation: Int
    /// Coded width and height in pixels (before `rotation`).
    public var width: Int { Int(frame.pointee.width) }
    public var height: Int { Int(frame.pointee.height) }
    /// Width and height in pixels of the picture as displayed: swapped for a 90° or 270° `rotation`.
    public var displayWidth: Int { rotation % 180 == 0 ? width : height }
    public var displayHeight: Int { rotation % 180 == 0 ? height : width }
    /// Sample aspect ratio of the picture as displayed: inverted for a 90° or 270° `rotation`.
    public var displaySampleAspectRatio: Double { rotation % 180 == 0 ? sampleAspectRatio : 1 / sampleAspectRatio }
    /// Bytes of decoded picture this frame holds: the sizes of its reference-counted buffers
    /// (`AVFrame.buf[]` and `extended_buf`), else each plane's `linesize` × its rows. A 3840x2160
    /// 4:2:0 frame from FFmpeg's H.264 decoder holds about 12.7 MB.
    public var bufferBytes: Int {
        let f = frame.pointee
        var total = 0
        withUnsafeBytes(of: f.buf) { raw in
            for b in raw.bindMemory(to: UnsafeMutablePointer<AVBufferRef>?.self) { if let b { total += Int(b.pointee.size) } }
        }
        for i in 0..<Int(f.nb_extended_buf) { if let b = f.extended_buf[i] { total += Int(b.pointee.size) } }
        if total > 0 { return total }
        let ch = av_pix_fmt_desc_get(AVPixelFormat(f.format)).map { Int($0.pointee.log2_chroma_h) } ?? 0
        withUnsafeBytes(of: f.linesize) { raw in
            for (i, l) in raw.bindMemory(to: Int32.self).enumerated() where l > 0 {
                total += Int(l) * (i == 1 || i == 2 ? (Int(f.height) + (1 << ch) - 1) >> ch : Int(f.height))
            }
        }
        return total
    }

    /// Whether the pixel format carries alpha (`AV_PIX_FMT_FLAG_ALPHA`: RGBA PNG, paletted with
    /// transparency, YUVA…); the alpha is straight (not premultiplied), as FFmpeg decodes it.
    public var hasAlpha: Bool {
        guard let d = av_pix_fmt_desc_get(AVPixelFormat(frame.pointee.format)) else { return false }
        return (d.pointee.flags & UInt64(AV_PIX_FMT_FLAG_ALPHA)) != 0
    }
    /// FFmpeg's name for the pixel format, for example `yuv420p`.
    public var pixelFormatName: String {
        guard let n = av_get_pix_fmt_name(AVPixelFormat(frame.pointee.format)) else { return "unknown" }
        return String(cString: n)
    }
    /// Sample (pixel) aspect ratio of the coded picture; 1 when unknown. `MediaFile` sets it as ffplay
    /// does (`av_guess_sample_aspect_ratio`): the container's when it states one, else the codec's.
    public var sampleAspectRatio: Double {
        let sar = frame.pointee.sample_aspect_ratio
        return sar.num > 0 && sar.den > 0 ? Double(sar.num) / Double(sar.den) : 1
    }

    /// Takes ownership of the references in `source` (`av_frame_move_ref`).
    init(moving source: UnsafeMutablePointer<AVFrame>, pts: Double, duration: Double, rotation: Int = 0) {
        frame = av_frame_alloc()
        av_frame_move_ref(frame, source)
        self.pts = pts
        self.duration = duration
        self.rotation = rotation
    }

    deinit {
        var f: UnsafeMutablePointer<AVFrame>? = frame
        av_frame_free(&f)
    }
}

/// A decoded block of audio in its native sample format, owned by this object.
// @unchecked: immutable once decoded (`let`s and an AVFrame nothing writes again); threads only read its samples.
public final class AudioFrame: @unchecked Sendable {
    let frame: UnsafeMutablePointer<AVFrame>
    /// Presentation time in seconds from the start of the media.
    public let pts: Double
    /// Samples per channel.
    public var sampleCount: Int { Int(frame.pointee.nb_samples) }
    /// Sample rate in Hz.
    public var sampleRate: Int { Int(frame.pointee.sample_rate) }
    /// Channel count.
    public var channels: Int { Int(frame.pointee.ch_layout.nb_channels) }
    /// Duration in seconds (`sampleCount / sampleRate`).
    public var duration: Double { sampleRate > 0 ? Double(sampleCount) / Double(sampleRate) : 0 }

    init(moving source: UnsafeMutablePointer<AVFrame>, pts: Double) {
        frame = av_frame_alloc()
        av_frame_move_ref(frame, source)
        self.pts = pts
    }

    deinit {
        var f: UnsafeMutablePointer<AVFrame>? = frame
        av_frame_free(&f)
    }
}
