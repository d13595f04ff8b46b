internal import CAVUtil
internal import CAVCodec
internal import CAVFormat

/// What `MediaFile` knows about its video stream.
public struct VideoStreamInfo: Sendable, Equatable {
    /// Coded size in pixels.
    public var width: Int
    public var height: Int
    /// Frames per second from the stream's average frame rate (else its real base rate); 0 if unknown.
    public var frameRate: Double
    /// Decoder name, for example `h264`.
    public var codecName: String
    /// Sample (pixel) aspect ratio; 1 when unknown. The container's when it states one, else the
    /// codec's, as ffmpeg and mpv choose (`av_guess_sample_aspect_ratio`).
    public var sampleAspectRatio: Double
    /// Stream time base as (numerator, denominator): one tick is num/den seconds.
    public var timeBase: (num: Int, den: Int)
    /// Clockwise turn in degrees, 0, 90, 180 or 270, that shows the picture upright, from the stream's
    /// display matrix (phone videos; `ffprobe` shows its counter-clockwise angle as `rotation`). The
    /// angle is read as ffmpeg's autorotate does (`-av_display_rotation_get`, to the nearest quarter turn).
    /// The corresponding C functions are `av_stream_get_side_data` (`AV_PKT_DATA_DISPLAYMATRIX`) and
    /// `av_display_rotation_get`.
    public var rotation: Int = 0

    public static func == (a: Self, b: Self) -> Bool {
        a.width == b.width && a.height == b.height && a.frameRate == b.frameRate && a.codecName == b.codecName
            && a.sampleAspectRatio == b.sampleAspectRatio && a.timeBase == b.timeBase && a.rotation == b.rotation
    }
}

/// What `MediaFile` knows about its audio stream.
public struct AudioStreamInfo: Sendable, Equatable {
    /// Sample rate in Hz.
    public var sampleRate: Int
    public var channels: Int
    public var codecName: String
}

/// One decoded unit from `MediaFile.read()`.
public enum DecodedFrame: Sendable {
    case video(VideoFrame)
    case audio(AudioFrame)
}

/// A demuxer plus one decoder for its best video stream and one for its best audio stream.
///
/// Opens any container and codec FFmpeg supports (MP4, Matroska/WebM, Ogg, AVI, MPEG-PS, PNG, JPEG…).
/// Timestamps are rebased so the file starts at 0 s. A `MediaFile` is used from one thread at a time.
/// Source: the `avformat_open_input` → `av_read_frame` → `avcodec_send_packet`/`avcodec_receive_frame`
/// loop of ffplay.c, on one thread.
public final class MediaFile: @unchecked Sendable {
    private var format: UnsafeMutablePointer<AVFormatContext>?
    private let packet: UnsafeMutablePointer<AVPacket>
    private let scratch: UnsafeMutablePointer<AVFrame>
    private var videoDecoder: StreamDecoder?
    private var audioDecoder: StreamDecoder?
    private var startTime: Double = 0
    private var inputEnded = false

    /// The path given to `init`.
    public let path: String
    public let video: VideoStreamInfo?
    public let audio: AudioStreamInfo?
    /// Container duration in seconds, if the container states one.
    public let duration: Double?
    /// Whether `duration` comes from the container's header (stream or file durations stated by the
    /// muxer, exact in MP4/MOV/3GP, Matroska, ASF, FLV), rather than estimated from the last timestamps
    /// (MPEG-PS/TS, which leave out the last frame) or the bit rate.
    /// The corresponding field is `AVFormatContext.duration_estimation_method` (`AVFMT_DURATION_FROM_STREAM`).
    public let durationIsStated: Bool
    /// FFmpeg's short name for the container, for example `mov,mp4,m4a,3gp,3g2,mj2`.
    public let containerName: String
    /// True for a single picture (PNG/JPEG image demuxers), which the player holds for the item's `duration`.
    public let isStillImage: Bool
    /// Packets the decoders refused as invalid (corrupt data); decoding continues past them.
    public private(set) var corruptPackets = 0
    /// Packets a decoder refused with EAGAIN (it held frames to be taken first), kept and sent again
    /// once they were taken, as ffplay does (`packet_pending`); none is dropped.
    public private(set) var packetsDeferred = 0
    /// The error that ended demuxing early (for example a truncated file), if any.
    public private(set) var readError: AVError?

    /// Opens `path` and the decoders for its best video and audio streams.
    /// - Parameters:
    ///   - path: a local file path.
    ///   - video: whether to decode video; `audio`: whether to decode audio.
    ///   - threads: decoder threads, 0 for automatic (FFmpeg picks one per core).
    /// - Throws: `AVError` from `avformat_open_input`, `avformat_find_stream_info`, or `avcodec_open2`;
    ///   or "no audio or video stream" when nothing decodable is found.
    public init(path: String, video wantVideo: Bool = true, audio wantAudio: Bool = true, threads: Int = 0) throws(AVError) {
        self.path = path
        packet = av_packet_alloc()
        scratch = av_frame_alloc()
        var ctx: UnsafeMutablePointer<AVFormatContext>? = nil
        do {
            try avCheck("avformat_open_input", avformat_open_input(&ctx, path, nil, nil))
        } catch {
            var p: UnsafeMutablePointer<AVPacket>? = packet; av_packet_free(&p)
            var f: UnsafeMutablePointer<AVFrame>? = scratch; av_frame_free(&f)
            throw error
        }
        format = ctx
        let fmt = ctx!
        containerName = fmt.pointee.iformat.map { String(cString: $0.pointee.name) } ?? "unknown"
        do {
            try avCheck("avformat_find_stream_info", avformat_find_stream_info(fmt, nil))
        } catch {
            video = nil; audio = nil; duration = nil; durationIsStated = false; isStillImage = false
            throw error
        }
        if fmt.pointee.start_time != noPTS {
            startTime = Double(fmt.pointee.start_time) / Double(AV_TIME_BASE)
        }
        duration = fmt.pointee.duration != noPTS && fmt.pointee.duration > 0
            ? Double(fmt.pointee.duration) / Double(AV_TIME_BASE) : nil
        durationIsStated = duration != nil && fmt.pointee.duration_estimation_method == AVFMT_DURATION_FROM_STREAM

        var v: StreamDecoder? = nil
        var a: StreamDecoder? = nil
        var firstError: AVError? = nil
        if wantVideo {
            let idx = av_find_best_stream(fmt, AVMEDIA_TYPE_VIDEO, -1, -1, nil, 0)
            if idx >= 0 {
                do { v = try StreamDecoder(format: fmt, index: idx, threads: threads) } catch { firstError = error }
            }
        }
        if wantAudio {
            let idx = av_find_best_stream(fmt, AVMEDIA_TYPE_AUDIO, -1, v.map { Int32($0.index) } ?? -1, nil, 0)
            if idx >= 0 {
                do { a = try StreamDecoder(format: fmt, index: idx, threads: 1) } catch { firstError = firstError ?? error }
            }
        }
        videoDecoder = v
        audioDecoder = a
        if let v {
            let st = fmt.pointee.streams[v.index]!
            let cp = st.pointee.codecpar!
            var rate = st.pointee.avg_frame_rate
            if rate.num <= 0 || rate.den <= 0 { rate = st.pointee.r_frame_rate }
            let sar = av_guess_sample_aspect_ratio(fmt, st, nil)
            video = VideoStreamInfo(
                width: Int(cp.pointee.width), height: Int(cp.pointee.height),
                frameRate: rate.num > 0 && rate.den > 0 ? Double(rate.num) / Double(rate.den) : 0,
                codecName: String(cString: avcodec_get_name(cp.pointee.codec_id)),
                sampleAspectRatio: sar.num > 0 && sar.den > 0 ? Double(sar.num) / Double(sar.den) : 1,
                timeBase: (Int(st.pointee.time_base.num), Int(st.pointee.time_base.den)),
                rotation: displayRotation(st))
        } else {
            video = nil
        }
        if let a {
            let cp = fmt.pointee.streams[a.index]!.pointee.codecpar!
            audio = AudioStreamInfo(sampleRate: Int(cp.pointee.sample_rate), channels: Int(cp.pointee.ch_layout.nb_channels),
                                    codecName: String(cString: avcodec_get_name(cp.pointee.codec_id)))
        } else {
            audio = nil
        }
        let name = containerName
        isStillImage = video != nil && audio == nil
            && (name.hasPrefix("image2") || name.hasSuffix("_pipe") || name == "png" || name == "mjpeg")
        if v == nil && a == nil {
            throw firstError ?? AVError(operation: "av_find_best_stream", message: "no audio or video stream")
        }
    }

    deinit {
        videoDecoder = nil
        audioDecoder = nil
        avformat_close_input(&format)
        var p: UnsafeMutablePointer<AVPacket>? = packet
        av_packet_free(&p)
        var f: UnsafeMutablePointer<AVFrame>? = scratch
        av_frame_free(&f)
    }

    /// Decodes the file's cover art: the picture of an `AV_DISPOSITION_ATTACHED_PIC` stream (an MP3's
    /// ID3 `APIC` frame, an M4A's `covr` atom, a Matroska cover attachment), in its native pixel format,
    /// with PTS 0 and the file's duration. It does not disturb `read()`, and works when the file was
    /// opened without video.
    /// - Returns: the picture, or nil when the file has no cover art.
    /// - Throws: `AVError` from `avcodec_open2`, `avcodec_send_packet` or `avcodec_receive_frame` when
    ///   the picture cannot be decoded.
    /// The corresponding field is `AVStream.attached_pic`.
    public func coverArt() throws(AVError) -> VideoFrame? {
        guard let fmt = format else { return nil }
        for i in 0..<Int(fmt.pointee.nb_streams) {
            guard let st = fmt.pointee.streams[i], st.pointee.disposition & AV_DISPOSITION_ATTACHED_PIC != 0,
                  st.pointee.attached_pic.size > 0 else { continue }
            let decoder = try StreamDecoder(format: fmt, index: Int32(i), threads: 1)
            let picture = (UnsafeMutableRawPointer(st) + MemoryLayout<AVStream>.offset(of: \AVStream.attached_pic)!)
                .assumingMemoryBound(to: AVPacket.self)
            try avCheck("avcodec_send_packet", avcodec_send_packet(decoder.context, picture))
            _ = avcodec_send_packet(decoder.context, nil)
            var frame: UnsafeMutablePointer<AVFrame>? = av_frame_alloc()
            defer { av_frame_free(&frame) }
            try avCheck("avcodec_receive_frame", avcodec_receive_frame(decoder.context, frame))
            return VideoFrame(moving: frame!, pts: 0, duration: duration ?? 0)
        }
        return nil
    }

    /// Whether the container can seek (it has an index or a seekable byte stream).
    public var supportsSeeking: Bool {
        guard let pb = format?.pointee.pb else { return false }
        return pb.pointee.seekable != 0
    }

    /// Returns the next decoded frame, video or audio, in decode order; nil once both decoders are drained.
    ///
    /// Corrupt packets are counted in `corruptPackets` and skipped. A demuxer error other than end of
    /// file ends the stream (it is kept in `readError`) so a truncated file plays up to its damage.
    /// - Throws: `AVError` only for a decoder failure that is not invalid data.
    public func read() throws(AVError) -> DecodedFrame? {
        while true {
            if let v = videoDecoder, !v.drained, try receive(v) { return .video(makeVideoFrame(v)) }
            if let a = audioDecoder, !a.drained, try receive(a) { return .audio(makeAudioFrame(a)) }
            let videoDone = videoDecoder?.drained ?? true
            let audioDone = audioDecoder?.drained ?? true
            if videoDone && audioDone { return nil }
            // A packet (or the end-of-stream flush) a decoder refused with EAGAIN goes again first, now
            // that its frames were taken: ffplay's `packet_pending`.
            if let d = [videoDecoder, audioDecoder].compactMap({ $0 }).first(where: { $0.hasPending }) {
                resend(d)
                continue
            }
            if inputEnded {
                // Flushed decoders that still report EAGAIN have nothing more: treat as drained.
                videoDecoder?.drained = true
                audioDecoder?.drained = true
                continue
            }
            try feed()
        }
    }

    /// Seeks so the next frames start at or before `seconds` (a key frame), and flushes the decoders.
    /// - Throws: `AVError` from `avformat_seek_file`.
    /// The corresponding C function is `avformat_seek_file`.
    public func seek(to seconds: Double) throws(AVError) {
        guard let fmt = format else { return }
        let ts = Int64((seconds + startTime) * Double(AV_TIME_BASE))
        try avCheck("avformat_seek_file", avformat_seek_file(fmt, -1, Int64.min, ts, ts, 0))
        for d in [videoDecoder, audioDecoder].compactMap({ $0 }) {
            avcodec_flush_buffers(d.context)
            d.drained = false
            d.dropPending()
        }
        inputEnded = false
    }

    /// Reads one packet and sends it to its decoder; at the end of the input, flushes the decoders.
    private func feed() throws(AVError) {
        guard let fmt = format else { inputEnded = true; return }
        let r = av_read_frame(fmt, packet)
        if r < 0 {
            if r != averrorEOF && r != averrorEAGAIN { readError = AVError(operation: "av_read_frame", code: r) }
            if r == averrorEAGAIN { return }
            inputEnded = true
            for d in [videoDecoder, audioDecoder].compactMap({ $0 }) { send(nil, to: d) }
            return
        }
        defer { av_packet_unref(packet) }
        let index = Int(packet.pointee.stream_index)
        for d in [videoDecoder, audioDecoder].compactMap({ $0 }) where d.index == index { send(packet, to: d) }
    }

    /// Sends `packet` (nil: the end-of-stream flush) to `d`. A packet the decoder refuses with EAGAIN
    /// (it holds frames to be taken first) is kept, its references moved, and sent again by `read()`.
    private func send(_ packet: UnsafeMutablePointer<AVPacket>?, to d: StreamDecoder) {
        let s = avcodec_send_packet(d.context, packet)
        if s == averrorEAGAIN {
            d.keepPending(packet)
            packetsDeferred += 1
        } else if s < 0 && s != averrorEOF {
            corruptPackets += 1
        }
    }

    /// Sends `d`'s pending packet again. A decoder that refuses it twice while it has no frame to give
    /// (both calls EAGAIN, an API violation ffplay only logs) loses it, counted as corrupt, rather than
    /// stalling the file.
    private func resend(_ d: StreamDecoder) {
        let s = avcodec_send_packet(d.context, d.pendingPacket)
        if s == averrorEAGAIN {
            guard d.outputEmpty else { return }
            d.refusedWhileEmpty += 1
            if d.refusedWhileEmpty < 2 { return }
            corruptPackets += 1
        } else if s < 0 && s != averrorEOF {
            corruptPackets += 1
        }
        d.dropPending()
    }

    /// Reads and sends up to `count` packets without taking frames in between, as a caller that
    /// demuxes ahead of decoding does: decoders then refuse packets with EAGAIN. For tests.
    func demuxAhead(packets count: Int) throws(AVError) {
        for _ in 0..<count where !inputEnded {
            if let d = [videoDecoder, audioDecoder].compactMap({ $0 }).first(where: { $0.hasPending }) { resend(d) } else { try feed() }
        }
    }

    /// Receives one frame into `scratch`; false when the decoder needs input (EAGAIN) or is drained (EOF).
    private func receive(_ d: StreamDecoder) throws(AVError) -> Bool {
        let r = avcodec_receive_frame(d.context, scratch)
        d.outputEmpty = r != 0
        if r == 0 { d.refusedWhileEmpty = 0; return true }
        if r == averrorEAGAIN { return false }
        if r == averrorEOF { d.drained = true; return false }
        // A decode error on one frame: count it and carry on, as ffplay does.
        corruptPackets += 1
        return false
    }

    private func seconds(_ ts: Int64, _ d: StreamDecoder) -> Double? {
        guard ts != noPTS else { return nil }
        return Double(ts) * d.timeBase - startTime
    }

    private func makeVideoFrame(_ d: StreamDecoder) -> VideoFrame {
        let f = scratch.pointee
        let frameInterval = (video?.frameRate ?? 0) > 0 ? 1 / video!.frameRate : 1.0 / 25
        var pts = seconds(f.best_effort_timestamp, d) ?? d.nextPTS
        if pts < d.lastPTS { pts = d.nextPTS }      // non-monotonic stamps: continue the sequence
        var dur = f.pkt_duration > 0 ? Double(f.pkt_duration) * d.timeBase : frameInterval
        if dur <= 0 || dur > 10 { dur = frameInterval }
        d.lastPTS = pts
        d.nextPTS = pts + dur
        // The container's aspect ratio wins over the codec's, as in ffplay and mpv.
        if let fmt = format {
            scratch.pointee.sample_aspect_ratio = av_guess_sample_aspect_ratio(fmt, fmt.pointee.streams[d.index], scratch)
        }
        return VideoFrame(moving: scratch, pts: pts, duration: dur, rotation: video?.rotation ?? 0)
    }

    private func makeAudioFrame(_ d: StreamDecoder) -> AudioFrame {
        let f = scratch.pointee
        var pts = seconds(f.best_effort_timestamp, d) ?? d.nextPTS
        if pts < d.lastPTS - 0.001 { pts = d.nextPTS }
        d.lastPTS = pts
        d.nextPTS = pts + (f.sample_rate > 0 ? Double(f.nb_samples) / Double(f.sample_rate) : 0)
        return AudioFrame(moving: scratch, pts: pts)
    }
}

/// The clockwise quarter turn that shows `st` upright, from its display matrix; 0 without one.
/// ffmpeg's autorotate turns by `-av_display_rotation_get` (fftools `get_rotation`), as does mpv.
func displayRotation(_ st: UnsafeMutablePointer<AVStream>) -> Int {
    guard let sd = av_stream_get_side_data(st, AV_PKT_DATA_DISPLAYMATRIX, nil) else { return 0 }
    let angle = sd.withMemoryRebound(to: Int32.self, capacity: 9) { av_display_rotation_get($0) }
    guard angle.isFinite else { return 0 }
    let clockwise = Int((-angle / 90).rounded()) * 90
    return ((clockwise % 360) + 360) % 360
}

/// One opened decoder (`AVCodecContext`) for one stream; frees the context in `deinit`.
final class StreamDecoder {
    let index: Int
    var context: UnsafeMutablePointer<AVCodecContext>
    /// Seconds per tick of the stream's time base.
    let timeBase: Double
    var drained = false
    var lastPTS = -Double.infinity
    var nextPTS = 0.0
    /// The packet the decoder refused with EAGAIN, to send again (nil with `hasPending`: the flush).
    private(set) var pendingPacket: UnsafeMutablePointer<AVPacket>?
    private(set) var hasPending = false
    private var pendingStorage: UnsafeMutablePointer<AVPacket>?
    /// Whether the last `avcodec_receive_frame` gave no frame.
    var outputEmpty = false
    /// Times the pending packet was refused again while the decoder had no frame to give.
    var refusedWhileEmpty = 0

    /// Keeps `packet` (moving its references) to send again; nil keeps the end-of-stream flush.
    func keepPending(_ packet: UnsafeMutablePointer<AVPacket>?) {
        if let packet {
            if pendingStorage == nil { pendingStorage = av_packet_alloc() }
            av_packet_move_ref(pendingStorage, packet)
            pendingPacket = pendingStorage
        } else {
            pendingPacket = nil
        }
        hasPending = true
        refusedWhileEmpty = 0
    }

    func dropPending() {
        if let p = pendingStorage { av_packet_unref(p) }
        pendingPacket = nil
        hasPending = false
        refusedWhileEmpty = 0
    }

    init(format: UnsafeMutablePointer<AVFormatContext>, index: Int32, threads: Int) throws(AVError) {
        self.index = Int(index)
        let st = format.pointee.streams[Int(index)]!
        let par = st.pointee.codecpar!
        guard let codec = avcodec_find_decoder(par.pointee.codec_id) else {
            throw AVError(operation: "avcodec_find_decoder",
                          message: "no decoder for \(String(cString: avcodec_get_name(par.pointee.codec_id)))")
        }
        guard let ctx = avcodec_alloc_context3(codec) else {
            throw AVError(operation: "avcodec_alloc_context3", code: vt_averror(ENOMEM))
        }
        context = ctx
        timeBase = Double(st.pointee.time_base.num) / Double(max(1, st.pointee.time_base.den))
        do {
            try avCheck("avcodec_parameters_to_context", avcodec_parameters_to_context(ctx, par))
            ctx.pointee.pkt_timebase = st.pointee.time_base
            ctx.pointee.thread_count = Int32(threads)
            ctx.pointee.thread_type = FF_THREAD_FRAME | FF_THREAD_SLICE
            try avCheck("avcodec_open2", avcodec_open2(ctx, codec, nil))
        } catch {
            var c: UnsafeMutablePointer<AVCodecContext>? = ctx
            avcodec_free_context(&c)
            throw error
        }
    }

    deinit {
        var c: UnsafeMutablePointer<AVCodecContext>? = context
        avcodec_free_context(&c)
        av_packet_free(&pendingStorage)
    }
}
