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

/// What `MediaFile.seek(to:)` did to reach its target.
public struct SeekResult: Sendable, Equatable {
    /// PTS in seconds of the frame decoding restarted from (a key frame at or before the target);
    /// nil without video, or past the last frame.
    public var keyFrameTime: Double?
    /// Video frames decoded from that key frame and discarded: each ends at or before the target.
    public var framesSkipped: Int
    /// `avformat_seek_file` calls made: 1 where the container's index lands on the key frame.
    public var demuxerSeeks: Int
    /// The target is past the video's last picture (a file whose sound runs on after it): the next
    /// video frame `read()` returns is that last picture, which ends at or before the target but is
    /// the one on screen there, as when the file plays from its start.
    public var pastLastPicture: Bool

    public init(keyFrameTime: Double?, framesSkipped: Int, demuxerSeeks: Int, pastLastPicture: Bool = false) {
        self.keyFrameTime = keyFrameTime; self.framesSkipped = framesSkipped; self.demuxerSeeks = demuxerSeeks
        self.pastLastPicture = pastLastPicture
    }
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
// @unchecked: every read mutates libavformat/libavcodec state; one thread at a time uses it (its decoder thread), never two.
public final class MediaFile: @unchecked Sendable {
    private var format: UnsafeMutablePointer<AVFormatContext>?
    private let packet: UnsafeMutablePointer<AVPacket>
    private let scratch: UnsafeMutablePointer<AVFrame>
    private var videoDecoder: StreamDecoder?
    private var audioDecoder: StreamDecoder?
    private var startTime: Double = 0
    private var inputEnded = false
    /// Frames `seek(to:)` decoded at or after its target, handed out by `read()` first.
    private var pending: [DecodedFrame] = []
    /// After a seek: audio that ends at or before this item time is dropped, until a block passes it.
    private var audioFloor: Double?
    /// Whether the last video frame made had a timestamp of its own (else it continues the sequence).
    private var lastVideoFrameStamped = false

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
    /// The chosen video or audio stream whose decoder could not be opened, with why; the file plays without it.
    public private(set) var undecodableStreams: [UndecodableStream] = []

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
        var undecodable: [UndecodableStream] = []
        if wantVideo {
            let idx = av_find_best_stream(fmt, AVMEDIA_TYPE_VIDEO, -1, -1, nil, 0)
            if idx >= 0 {
                do { v = try StreamDecoder(format: fmt, index: idx, threads: threads) } catch {
                    undecodable.append(UndecodableStream(.video, format: fmt, index: idx, error: error))
                }
            }
        }
        if wantAudio {
            let idx = av_find_best_stream(fmt, AVMEDIA_TYPE_AUDIO, -1, v.map { Int32($0.index) } ?? -1, nil, 0)
            if idx >= 0 {
                do { a = try StreamDecoder(format: fmt, index: idx, threads: 1) } catch {
                    undecodable.append(UndecodableStream(.audio, format: fmt, index: idx, error: error))
                }
            }
        }
        videoDecoder = v
        audioDecoder = a
        undecodableStreams = undecodable
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
            throw undecodable.first?.error ?? AVError(operation: "av_find_best_stream", message: "no audio or video stream")
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
    /// After `seek(to:)`, the frames it decoded at or after its target come first.
    /// - Throws: `AVError` only for a decoder failure that is not invalid data.
    public func read() throws(AVError) -> DecodedFrame? {
        if !pending.isEmpty { return pending.removeFirst() }
        while true {
            guard let f = try decodeNext() else { return nil }
            // After a seek, audio stored behind the video (MPEG-PS interleaves it up to a second late)
            // still arrives from before the target: drop it until the sound reaches the target.
            if case .audio(let a) = f, let floor = audioFloor {
                if a.pts + a.duration <= floor { continue }
                audioFloor = nil
            }
            return f
        }
    }

    private func decodeNext() throws(AVError) -> DecodedFrame? {
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

    /// Seeks so that the next video frame `read()` returns is the one on screen at `seconds` (its PTS
    /// at or before the target, its end after it), and the audio starts with the block that plays at
    /// the target. Decoding restarts from the last key frame at or before the target; the frames
    /// between it and the target are decoded and discarded (`SeekResult.framesSkipped`). A key frame
    /// less than half a frame period after the target is taken as the target's picture (it is then
    /// the first frame, and nothing is decoded before it): Matroska with Vorbis starts its video a
    /// few ms late, and a seek to a round time would otherwise decode a whole GOP for a picture
    /// under half a frame earlier.
    ///
    /// Containers with an index (MP4, Matroska, AVI…) land on that key frame at once. MPEG-PS and
    /// MPEG-TS have none: FFmpeg searches their timestamps (`ff_gen_search` over `read_timestamp`) and
    /// lands on the packet with the nearest earlier DTS, usually a P or B picture, so the decoder
    /// shows nothing until the next I picture, up to a GOP after the target (an open GOP's leading B
    /// pictures cannot be decoded at all from there). So before decoding, seek points are tried by
    /// reading packets only (the first key-frame packet after each): 0.5 s back, then doubling, until
    /// one lands at or before the target, then narrowed to one frame period, so decoding starts from
    /// the key frame nearest the target. A demuxer that flags no key frames is probed by decoding.
    /// A still picture or an audio-only file takes one demuxer seek (audio is cut by its caller).
    /// - Parameter seconds: item time, seconds from the start of the file (clamped at 0).
    /// - Returns: where decoding restarted and what was passed over.
    /// - Throws: `AVError` from `avformat_seek_file`, `av_read_frame` or decoding.
    /// The corresponding C function is `avformat_seek_file` (backward: `min_ts` INT64_MIN, `max_ts` the target).
    @discardableResult
    public func seek(to seconds: Double) throws(AVError) -> SeekResult {
        pending.removeAll()
        let target = max(0, seconds)
        audioFloor = target
        guard let video = videoDecoder, !isStillImage else {
            try seekDemuxer(to: target)
            return SeekResult(keyFrameTime: nil, framesSkipped: 0, demuxerSeeks: 1)
        }
        let period = frameInterval
        var seeks = 0
        // Whether decoding from a demuxer seek to `t` reaches the target: its first key frame is at or
        // before it, or there is nowhere further back to go.
        func lands(_ t: Double) throws(AVError) -> Bool {
            if t <= 0 { return true }
            seeks += 1
            try seekDemuxer(to: t)
            var key = try firstKeyPacket(of: video, target: target)
            if case .unknown = key {
                seeks += 1
                try seekDemuxer(to: t)
                key = try firstStampedFrame()
            }
            // A key frame less than half a frame after the target is the target's picture, to the
            // frame: Matroska with Vorbis, for one, starts its video a few ms late (key frames at
            // 10.003 s for a GOP of 10 s), and a seek to 10 s must not decode the whole GOP before.
            if case .at(let k) = key { return k <= target + period / 2 }
            return false
        }
        // First at half a frame past the target, so a key frame there is found (see `lands`).
        var good = target + period / 2
        if !(try lands(good)) {
            var bad = target
            var back = max(0.5, 2 * period)
            while true {
                let t = max(0, target - back)
                if try lands(t) { good = t; break }
                bad = t
                back *= 2
            }
            // The latest seek point that still lands at or before the target, to one frame period.
            while bad - good > period {
                let mid = (good + bad) / 2
                if try lands(mid) { good = mid } else { bad = mid }
            }
        }
        // Decode forward from the key frame to the frame on screen at the target. Pictures before the
        // first one with a timestamp of its own (broken leading pictures) have no known time: skipped.
        seeks += 1
        try seekDemuxer(to: good)
        var kept: [DecodedFrame] = []
        var skipped = 0
        var key: Double?
        var last: DecodedFrame?
        var reached = false
        decoding: while let f = try decodeNext() {
            switch f {
            case .video(let v):
                if key == nil && lastVideoFrameStamped { key = v.pts }
                if key != nil && v.pts + v.duration > target + 1e-6 { kept.append(f); reached = true; break decoding }
                if key != nil { last = f }
                skipped += 1
            case .audio(let a):
                if a.pts + a.duration > target { kept.append(f) }
            }
        }
        // The end of the file with no picture reaching the target: the last one stays on screen.
        if !reached, let last {
            kept.insert(last, at: 0)
            pending = kept
            return SeekResult(keyFrameTime: key, framesSkipped: skipped - 1, demuxerSeeks: seeks, pastLastPicture: true)
        }
        pending = kept
        return SeekResult(keyFrameTime: key, framesSkipped: skipped, demuxerSeeks: seeks)
    }

    /// The first key frame after a demuxer seek, as `seek(to:)` probes for it.
    private enum KeyFrameScan { case at(Double), end, unknown }

    /// Reads packets (no decoding) to the first key-frame packet of `video`: its PTS. A key frame
    /// stored without a PTS (MPEG-PS muxers often give I pictures only a DTS) is shown no earlier than
    /// its DTS, which answers when that is after `target`; otherwise, and when 600 of its packets
    /// carry no key flag (a demuxer without a parser's flags), the answer is `.unknown`.
    private func firstKeyPacket(of video: StreamDecoder, target: Double) throws(AVError) -> KeyFrameScan {
        guard let fmt = format else { return .end }
        var seen = 0
        while seen < 600 {
            let r = av_read_frame(fmt, packet)
            if r == averrorEAGAIN { continue }
            if r < 0 { return r == averrorEOF ? .end : .unknown }
            defer { av_packet_unref(packet) }
            guard Int(packet.pointee.stream_index) == video.index else { continue }
            seen += 1
            if packet.pointee.flags & AV_PKT_FLAG_KEY != 0 {
                if let t = self.seconds(packet.pointee.pts, video) { return .at(t) }
                if let d = self.seconds(packet.pointee.dts, video), d > target + 1e-6 { return .at(d) }
                return .unknown
            }
        }
        return .unknown
    }

    /// Decodes to the first video frame with a timestamp of its own: its time.
    private func firstStampedFrame() throws(AVError) -> KeyFrameScan {
        var frames = 0
        while let f = try decodeNext() {
            guard case .video(let v) = f else { continue }
            if lastVideoFrameStamped { return .at(v.pts) }
            frames += 1
            if frames >= 300 { return .at(v.pts) }   // a stream without timestamps: its guess will do
        }
        return .end
    }

    /// One backward demuxer seek to item time `seconds`, then the decoders are flushed.
    private func seekDemuxer(to seconds: Double) throws(AVError) {
        guard let fmt = format else { return }
        let ts = Int64((seconds + startTime) * Double(AV_TIME_BASE))
        try avCheck("avformat_seek_file", avformat_seek_file(fmt, -1, Int64.min, ts, ts, 0))
        for d in [videoDecoder, audioDecoder].compactMap({ $0 }) {
            avcodec_flush_buffers(d.context)
            d.drained = false
            // Timestamps start again: a frame without one continues from the seek point.
            d.lastPTS = -Double.infinity
            d.nextPTS = seconds
            d.dropPending()
        }
        inputEnded = false
    }

    /// Seconds per video frame (1/25 when the stream states no rate).
    private var frameInterval: Double { (video?.frameRate ?? 0) > 0 ? 1 / video!.frameRate : 1.0 / 25 }

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
        let stamp = seconds(f.best_effort_timestamp, d)
        var pts = stamp ?? d.nextPTS
        if pts < d.lastPTS { pts = d.nextPTS }      // non-monotonic stamps: continue the sequence
        lastVideoFrameStamped = stamp != nil
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
        do throws(AVError) {
            try avCheck("avcodec_parameters_to_context", avcodec_parameters_to_context(ctx, par))
            ctx.pointee.pkt_timebase = st.pointee.time_base
            ctx.pointee.thread_count = Int32(threads)
            // FFmpeg 5.1's WebP decoder breaks under frame threads: a corrupt VP8 chunk ends in
            // `av_assert0(frame->buf[0])` (decode.c), which aborts the process. A still needs none.
            ctx.pointee.thread_type = par.pointee.codec_id == AV_CODEC_ID_WEBP ? FF_THREAD_SLICE : FF_THREAD_FRAME | FF_THREAD_SLICE
            let opened = avcodec_open2(ctx, codec, nil)
            // Theora's decoder (vp3.c) returns a bare -1 for corrupt headers: av_strerror would say
            // "Operation not permitted".
            if opened == -1 { throw AVError(operation: "avcodec_open2", message: "corrupt codec headers") }
            try avCheck("avcodec_open2", opened)
        } catch {
            var c: UnsafeMutablePointer<AVCodecContext>? = ctx
            avcodec_free_context(&c)
            throw error
        }
        // Stored only once opened: an initializer that throws after every stored property is set
        // still runs `deinit`, which would free the context a second time (a corrupt Vorbis setup
        // header or Theora extradata made `avcodec_open2` fail, then `avcodec_close` crashed).
        context = ctx
        timeBase = Double(st.pointee.time_base.num) / Double(max(1, st.pointee.time_base.den))
    }

    deinit {
        var c: UnsafeMutablePointer<AVCodecContext>? = context
        avcodec_free_context(&c)
        av_packet_free(&pendingStorage)
    }
}
