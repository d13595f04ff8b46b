internal import CAVUtil
internal import CAVCodec
internal import CAVFormat
internal import CSwScale

/// Records composited XRGB8888 frames and interleaved S16 audio to a file through libavformat:
/// H.264 (libx264, `ultrafast`, CRF 16; MPEG-4 Part 2 if libx264 is absent) in `yuv420p`, and
/// PCM S16LE audio, in the container the file name implies (Matroska for `.mkv`).
///
/// Video frames are stamped in ticks of 1/`frameRate` s (one per call); audio in samples.
/// The corresponding C functions are `avformat_write_header`, `avcodec_send_frame` and
/// `av_interleaved_write_frame`.
// @unchecked: every write mutates the encoders and the muxer; one thread at a time writes (the recording thread), never two.
public final class MediaWriter: @unchecked Sendable {
    private var format: UnsafeMutablePointer<AVFormatContext>?
    private var videoCodec: UnsafeMutablePointer<AVCodecContext>?
    private var audioCodec: UnsafeMutablePointer<AVCodecContext>?
    private var videoStream: UnsafeMutablePointer<AVStream>?
    private var audioStream: UnsafeMutablePointer<AVStream>?
    private let yuv: UnsafeMutablePointer<AVFrame>
    private let pcm: UnsafeMutablePointer<AVFrame>
    private let packet: UnsafeMutablePointer<AVPacket>
    private var sws: OpaquePointer?
    private var videoIndex: Int64 = 0
    private var audioSamples: Int64 = 0
    private var finished = false
    /// Set once the container header is written; only then is there a file to finish.
    private var headerWritten = false
    /// The encoded size: the frame size rounded down to even numbers (4:2:0 needs them).
    private let encodedWidth: Int
    private let encodedHeight: Int

    public let width: Int
    public let height: Int
    /// Video frames per second (the presentation rate, one frame per vblank).
    public let frameRate: Int
    /// Audio sample rate in Hz and channel count; nil when recording video only.
    public let audioRate: Int?
    public let audioChannels: Int
    /// Frames written so far.
    public var videoFramesWritten: Int64 { videoIndex }
    /// Audio samples per channel written so far.
    public var audioSamplesWritten: Int64 { audioSamples }

    /// Creates `path` and writes the container header.
    /// - Throws: `AVError` from `avformat_alloc_output_context2`, `avio_open`, `avcodec_open2` or
    ///   `avformat_write_header`.
    public init(path: String, width: Int, height: Int, frameRate: Int, audioRate: Int?, audioChannels: Int = 2) throws(AVError) {
        self.width = width; self.height = height; self.frameRate = frameRate
        self.audioRate = audioRate; self.audioChannels = audioChannels
        encodedWidth = max(2, width & ~1); encodedHeight = max(2, height & ~1)
        yuv = av_frame_alloc()
        pcm = av_frame_alloc()
        packet = av_packet_alloc()
        var ctx: UnsafeMutablePointer<AVFormatContext>? = nil
        try avCheck("avformat_alloc_output_context2", avformat_alloc_output_context2(&ctx, nil, nil, path))
        format = ctx
        let fmt = ctx!

        // Video encoder.
        let enc = avcodec_find_encoder_by_name("libx264") ?? avcodec_find_encoder(AV_CODEC_ID_MPEG4)
        guard let enc, let vc = avcodec_alloc_context3(enc) else {
            throw AVError(operation: "avcodec_find_encoder", message: "no H.264 or MPEG-4 encoder")
        }
        videoCodec = vc
        vc.pointee.width = Int32(encodedWidth)
        vc.pointee.height = Int32(encodedHeight)
        vc.pointee.pix_fmt = vt_pix_fmt_yuv420p()
        vc.pointee.time_base = AVRational(num: 1, den: Int32(frameRate))
        vc.pointee.framerate = AVRational(num: Int32(frameRate), den: 1)
        vc.pointee.gop_size = Int32(frameRate * 2)
        vc.pointee.thread_count = 0
        if (fmt.pointee.oformat.pointee.flags & AVFMT_GLOBALHEADER) != 0 {
            vc.pointee.flags |= AV_CODEC_FLAG_GLOBAL_HEADER
        }
        var opts: OpaquePointer? = nil
        if String(cString: enc.pointee.name) == "libx264" {
            av_dict_set(&opts, "preset", "ultrafast", 0)
            av_dict_set(&opts, "crf", "16", 0)
        } else {
            vc.pointee.global_quality = Int32(FF_QP2LAMBDA) * 3
            vc.pointee.flags |= AV_CODEC_FLAG_QSCALE
        }
        let opened = avcodec_open2(vc, enc, &opts)
        av_dict_free(&opts)
        try avCheck("avcodec_open2", opened)
        videoStream = avformat_new_stream(fmt, nil)
        videoStream!.pointee.time_base = vc.pointee.time_base
        try avCheck("avcodec_parameters_from_context", avcodec_parameters_from_context(videoStream!.pointee.codecpar, vc))
        yuv.pointee.format = vt_pix_fmt_yuv420p().rawValue
        yuv.pointee.width = Int32(encodedWidth)
        yuv.pointee.height = Int32(encodedHeight)
        try avCheck("av_frame_get_buffer", av_frame_get_buffer(yuv, 0))

        // Audio encoder: lossless PCM so tests can compare samples.
        if let audioRate {
            guard let aenc = avcodec_find_encoder(AV_CODEC_ID_PCM_S16LE), let ac = avcodec_alloc_context3(aenc) else {
                throw AVError(operation: "avcodec_find_encoder", message: "no pcm_s16le encoder")
            }
            audioCodec = ac
            ac.pointee.sample_fmt = vt_sample_fmt_s16()
            ac.pointee.sample_rate = Int32(audioRate)
            av_channel_layout_default(&ac.pointee.ch_layout, Int32(audioChannels))
            ac.pointee.time_base = AVRational(num: 1, den: Int32(audioRate))
            try avCheck("avcodec_open2", avcodec_open2(ac, aenc, nil))
            audioStream = avformat_new_stream(fmt, nil)
            audioStream!.pointee.time_base = ac.pointee.time_base
            try avCheck("avcodec_parameters_from_context", avcodec_parameters_from_context(audioStream!.pointee.codecpar, ac))
        }

        if (fmt.pointee.oformat.pointee.flags & AVFMT_NOFILE) == 0 {
            try avCheck("avio_open", avio_open(&fmt.pointee.pb, path, AVIO_FLAG_WRITE))
        }
        try avCheck("avformat_write_header", avformat_write_header(fmt, nil))
        headerWritten = true
    }

    deinit {
        if !finished && headerWritten { try? finish() }
        sws_freeContext(sws)
        avcodec_free_context(&videoCodec)
        avcodec_free_context(&audioCodec)
        if let fmt = format {
            if (fmt.pointee.oformat.pointee.flags & AVFMT_NOFILE) == 0 { avio_closep(&fmt.pointee.pb) }
            avformat_free_context(fmt)
        }
        var y: UnsafeMutablePointer<AVFrame>? = yuv; av_frame_free(&y)
        var p: UnsafeMutablePointer<AVFrame>? = pcm; av_frame_free(&p)
        var k: UnsafeMutablePointer<AVPacket>? = packet; av_packet_free(&k)
    }

    /// Encodes one composited frame (the target must be `width`×`height`).
    /// - Throws: `AVError` from `sws_scale`, `avcodec_send_frame` or the muxer.
    public func writeVideo(_ image: PixelTarget) throws(AVError) {
        guard let vc = videoCodec else { return }
        precondition(image.width == width && image.height == height, "frame size differs from the recording")
        try avCheck("av_frame_make_writable", av_frame_make_writable(yuv))
        sws = sws_getCachedContext(sws, Int32(width), Int32(height), vt_pix_fmt_bgra(),
                                   Int32(encodedWidth), Int32(encodedHeight), vt_pix_fmt_yuv420p(), Int32(SWS_BILINEAR), nil, nil, nil)
        var src: [UnsafePointer<UInt8>?] = [UnsafePointer(image.base.assumingMemoryBound(to: UInt8.self)), nil, nil, nil]
        var srcStride: [Int32] = [Int32(image.stride), 0, 0, 0]
        withUnsafeMutableBytes(of: &yuv.pointee.data) { data in
            withUnsafeMutableBytes(of: &yuv.pointee.linesize) { ls in
                let d = data.bindMemory(to: UnsafeMutablePointer<UInt8>?.self)
                let l = ls.bindMemory(to: Int32.self)
                _ = sws_scale(sws, &src, &srcStride, 0, Int32(height), d.baseAddress, l.baseAddress)
            }
        }
        yuv.pointee.pts = videoIndex
        videoIndex += 1
        try avCheck("avcodec_send_frame", avcodec_send_frame(vc, yuv))
        try drain(vc, videoStream!)
    }

    /// Encodes interleaved S16 samples (`frames × audioChannels` values).
    public func writeAudio(_ samples: [Int16]) throws(AVError) {
        guard let ac = audioCodec, !samples.isEmpty else { return }
        let frames = samples.count / audioChannels
        pcm.pointee.nb_samples = Int32(frames)
        pcm.pointee.format = Int32(vt_sample_fmt_s16().rawValue)
        pcm.pointee.sample_rate = ac.pointee.sample_rate
        av_channel_layout_copy(&pcm.pointee.ch_layout, &ac.pointee.ch_layout)
        try avCheck("av_frame_get_buffer", av_frame_get_buffer(pcm, 0))
        samples.withUnsafeBytes { src in
            pcm.pointee.data.0!.update(from: src.baseAddress!.assumingMemoryBound(to: UInt8.self), count: src.count)
        }
        pcm.pointee.pts = audioSamples
        audioSamples += Int64(frames)
        let r = avcodec_send_frame(ac, pcm)
        av_frame_unref(pcm)
        try avCheck("avcodec_send_frame", r)
        try drain(ac, audioStream!)
    }

    /// Flushes the encoders and writes the trailer. Called by `deinit` if not called before.
    public func finish() throws(AVError) {
        guard !finished, headerWritten, let fmt = format else { return }
        finished = true
        if let vc = videoCodec { _ = avcodec_send_frame(vc, nil); try drain(vc, videoStream!) }
        if let ac = audioCodec { _ = avcodec_send_frame(ac, nil); try drain(ac, audioStream!) }
        try avCheck("av_write_trailer", av_write_trailer(fmt))
    }

    private func drain(_ c: UnsafeMutablePointer<AVCodecContext>, _ st: UnsafeMutablePointer<AVStream>) throws(AVError) {
        while true {
            let r = avcodec_receive_packet(c, packet)
            if r == averrorEAGAIN || r == averrorEOF { return }
            try avCheck("avcodec_receive_packet", r)
            av_packet_rescale_ts(packet, c.pointee.time_base, st.pointee.time_base)
            packet.pointee.stream_index = st.pointee.index
            try avCheck("av_interleaved_write_frame", av_interleaved_write_frame(format, packet))
        }
    }
}

/// Writes a `PixelTarget` as an RGB PNG file with FFmpeg's PNG encoder.
public enum PNGWriter {
    /// - Throws: `AVError` from the encoder, or `avio_open` when `path` cannot be created.
    /// The corresponding C functions are `avcodec_send_frame` (png) and `avio_write`.
    public static func write(_ image: PixelTarget, to path: String) throws(AVError) {
        let bytes = try encode(image)
        var io: UnsafeMutablePointer<AVIOContext>? = nil
        try avCheck("avio_open", avio_open(&io, path, AVIO_FLAG_WRITE))
        bytes.withUnsafeBufferPointer { avio_write(io, $0.baseAddress, Int32($0.count)) }
        try avCheck("avio_closep", avio_closep(&io))
    }

    /// The PNG file's bytes (RGB, 8 bits per channel) for `image` (XRGB8888, its stride in bytes).
    /// - Throws: `AVError` from the encoder.
    /// The corresponding C functions are `avcodec_send_frame` and `avcodec_receive_packet` (png).
    public static func encode(_ image: PixelTarget) throws(AVError) -> [UInt8] {
        guard let enc = avcodec_find_encoder(AV_CODEC_ID_PNG), var c = avcodec_alloc_context3(enc) else {
            throw AVError(operation: "avcodec_find_encoder", message: "no PNG encoder")
        }
        var cc: UnsafeMutablePointer<AVCodecContext>? = c
        defer { avcodec_free_context(&cc) }
        c.pointee.width = Int32(image.width)
        c.pointee.height = Int32(image.height)
        c.pointee.pix_fmt = vt_pix_fmt_rgb24()
        c.pointee.time_base = AVRational(num: 1, den: 1)
        try avCheck("avcodec_open2", avcodec_open2(c, enc, nil))
        var frame: UnsafeMutablePointer<AVFrame>? = av_frame_alloc()
        defer { av_frame_free(&frame) }
        let f = frame!
        f.pointee.format = vt_pix_fmt_rgb24().rawValue
        f.pointee.width = Int32(image.width)
        f.pointee.height = Int32(image.height)
        try avCheck("av_frame_get_buffer", av_frame_get_buffer(f, 0))
        let sws = sws_getContext(Int32(image.width), Int32(image.height), vt_pix_fmt_bgra(),
                                 Int32(image.width), Int32(image.height), vt_pix_fmt_rgb24(), Int32(SWS_POINT), nil, nil, nil)
        defer { sws_freeContext(sws) }
        var src: [UnsafePointer<UInt8>?] = [UnsafePointer(image.base.assumingMemoryBound(to: UInt8.self)), nil, nil, nil]
        var srcStride: [Int32] = [Int32(image.stride), 0, 0, 0]
        withUnsafeMutableBytes(of: &f.pointee.data) { data in
            withUnsafeMutableBytes(of: &f.pointee.linesize) { ls in
                _ = sws_scale(sws, &src, &srcStride, 0, Int32(image.height),
                              data.bindMemory(to: UnsafeMutablePointer<UInt8>?.self).baseAddress,
                              ls.bindMemory(to: Int32.self).baseAddress)
            }
        }
        try avCheck("avcodec_send_frame", avcodec_send_frame(c, f))
        _ = avcodec_send_frame(c, nil)
        var pkt: UnsafeMutablePointer<AVPacket>? = av_packet_alloc()
        defer { av_packet_free(&pkt) }
        try avCheck("avcodec_receive_packet", avcodec_receive_packet(c, pkt))
        let bytes = [UInt8](UnsafeBufferPointer(start: pkt!.pointee.data, count: Int(pkt!.pointee.size)))
        _ = c
        c = cc!
        return bytes
    }
}
