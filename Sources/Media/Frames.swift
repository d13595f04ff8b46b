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
    /// Width and height in pixels.
    public var width: Int { Int(frame.pointee.width) }
    public var height: Int { Int(frame.pointee.height) }
    /// FFmpeg's name for the pixel format, for example `yuv420p`.
    public var pixelFormatName: String {
        guard let n = av_get_pix_fmt_name(AVPixelFormat(frame.pointee.format)) else { return "unknown" }
        return String(cString: n)
    }
    /// Sample (pixel) aspect ratio; 1 when unknown.
    public var sampleAspectRatio: Double {
        let sar = frame.pointee.sample_aspect_ratio
        return sar.num > 0 && sar.den > 0 ? Double(sar.num) / Double(sar.den) : 1
    }

    /// Takes ownership of the references in `source` (`av_frame_move_ref`).
    init(moving source: UnsafeMutablePointer<AVFrame>, pts: Double, duration: Double) {
        frame = av_frame_alloc()
        av_frame_move_ref(frame, source)
        self.pts = pts
        self.duration = duration
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
