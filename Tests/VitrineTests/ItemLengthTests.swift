import Foundation
import Testing
import Media
@testable import Vitrine
import VitrineCore

/// Items with 8 kHz and 22.05 kHz sound (WMV, FLV, RealMedia, 3GP, MOV, VOB, MP4, and audio-only files)
/// last their container's duration within one frame, and play their last audio sample: each clip has
/// 3.0 s of video (25 fps) and a 3.12 s sine, so the sound outlasts the pictures by 0.12 s.
@Suite("Whole items: length and last sample", .serialized)
struct ItemLengthTests {
    enum Reference: Sendable { case container, decodedEnd }

    struct Case: Sendable, CustomTestStringConvertible {
        var file: String
        var rate: Int
        var video: [String]?
        var audio: [String]
        /// What the item's length must match: ffprobe's container duration, or, for containers whose
        /// header leaves out the last frames (MPEG-PS estimates from the last timestamps; RealMedia
        /// states the video's length), where ffprobe's decoded streams end.
        var reference: Reference = .container
        var testDescription: String { file }
    }

    static let h264 = ["-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p"]
    static let cases: [Case] = [
        Case(file: "len-8k.mp4", rate: 8000, video: h264, audio: ["-c:a", "aac"]),
        Case(file: "len-22k.mp4", rate: 22050, video: h264, audio: ["-c:a", "aac"]),
        Case(file: "len-8k.3gp", rate: 8000, video: ["-s", "176x144", "-c:v", "h263"], audio: ["-c:a", "aac", "-ac", "1"]),
        Case(file: "len-8k.mov", rate: 8000, video: ["-c:v", "mpeg4"], audio: ["-c:a", "pcm_s16le"]),
        Case(file: "len-22k.mov", rate: 22050, video: ["-c:v", "mpeg4"], audio: ["-c:a", "adpcm_ima_qt"]),
        Case(file: "len-8k.wmv", rate: 8000, video: ["-c:v", "wmv2"], audio: ["-c:a", "wmav2"]),
        Case(file: "len-22k.wmv", rate: 22050, video: ["-c:v", "wmv2"], audio: ["-c:a", "wmav2"]),
        Case(file: "len-22k.flv", rate: 22050, video: ["-c:v", "flv1"], audio: ["-c:a", "libmp3lame"]),
        Case(file: "len-22k.vob", rate: 22050, video: ["-c:v", "mpeg2video"], audio: ["-c:a", "mp2", "-f", "vob"], reference: .decodedEnd),
        Case(file: "len-8k.rm", rate: 8000, video: ["-c:v", "rv10"], audio: ["-c:a", "real_144", "-ac", "1"], reference: .decodedEnd),
        Case(file: "len-8k.m4a", rate: 8000, video: nil, audio: ["-c:a", "aac"]),
        Case(file: "len-22k.m4a", rate: 22050, video: nil, audio: ["-c:a", "aac"]),
        Case(file: "len-8k.wav", rate: 8000, video: nil, audio: []),
        Case(file: "len-22k.wma", rate: 22050, video: nil, audio: ["-c:a", "wmav2"]),
        // MP3's Xing header counts the encoder's delay and padding, which the decoder trims (LAME tag).
        Case(file: "len-8k.mp3", rate: 8000, video: nil, audio: ["-c:a", "libmp3lame"], reference: .decodedEnd),
    ]

    static func clip(_ c: Case) throws -> String {
        var args: [String] = []
        if c.video != nil { args += ["-f", "lavfi", "-i", "testsrc=s=320x240:r=25:d=3"] }
        args += ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=\(c.rate):duration=3.12"]
        args += (c.video ?? []) + c.audio
        return try Harness.clip(c.file, args)
    }

    static func run(_ args: [String]) throws -> Data { try Harness.output(args[0], Array(args.dropFirst())) }

    static func text(_ args: [String]) throws -> String {
        String(decoding: try run(args), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `key=value` lines of `ffprobe -show_entries entries` for the first frame (or the stream/format).
    static func probe(_ path: String, _ entries: String, stream: String? = nil, firstFrame: Bool = false) throws -> [String: Double] {
        var args = ["ffprobe", "-v", "error"] + (stream.map { ["-select_streams", $0] } ?? [])
        if firstFrame { args += ["-read_intervals", "%+#8"] }  // a few packets: a decoder may hold the first
        var kv: [String: Double] = [:]
        for line in try text(args + ["-show_entries", entries, "-of", "default=nw=1", path]).split(separator: "\n") {
            let p = line.split(separator: "=", maxSplits: 1)
            if p.count == 2, kv[String(p[0])] == nil, let v = Double(p[1]) { kv[String(p[0])] = v }
        }
        return kv
    }

    /// ffprobe's container duration; or where the decoded streams end: the last video frame's
    /// timestamp plus duration, and the first audio frame's timestamp plus every sample ffmpeg decodes.
    static func expectedLength(_ path: String, _ reference: Reference) throws -> Double {
        let format = try probe(path, "format=start_time,duration")
        let start = format["start_time"] ?? 0
        if reference == .container { return try #require(format["duration"]) }
        var end = 0.0
        for line in try text(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
                              "frame=best_effort_timestamp_time,pkt_duration_time", "-of", "csv=p=0", path]).split(separator: "\n") {
            let f = line.split(separator: ",").compactMap { Double($0) }
            if f.count == 2 { end = max(end, f[0] + f[1] - start) }
        }
        let first = try probe(path, "frame=best_effort_timestamp_time", stream: "a:0", firstFrame: true)
        let rate = try #require(try probe(path, "stream=sample_rate", stream: "a:0")["sample_rate"])
        let samples = try run(["ffmpeg", "-v", "error", "-i", path, "-map", "0:a", "-ac", "1", "-f", "s16le", "-"]).count / 2
        return max(end, (first["best_effort_timestamp_time"] ?? start) - start + Double(samples) / rate)
    }

    /// One frame: of the video, or for a file without video, of the audio codec (its first frame).
    static func frameSeconds(_ path: String, hasVideo: Bool) throws -> Double {
        if hasVideo { return 1.0 / 25 }
        let samples = try #require(try probe(path, "frame=nb_samples", stream: "a:0", firstFrame: true)["nb_samples"])
        return samples / (try #require(try probe(path, "stream=sample_rate", stream: "a:0")["sample_rate"]))
    }

    /// Samples of the left channel louder than a quarter of `peak`.
    static func loud(_ samples: [Int16], channels: Int, peak: Int) -> Int {
        stride(from: 0, to: samples.count, by: channels).reduce(0) { $0 + (abs(Int(samples[$1])) > peak / 4 ? 1 : 0) }
    }

    @Test("the item lasts the container's duration within one frame and keeps every loud sample ffmpeg decodes", arguments: cases)
    func wholeItem(_ c: Case) throws {
        let path = try Self.clip(c)
        let format = AudioFormat(sampleRate: 48000, channels: 2)
        let item = PlaylistItem(id: "clip", type: c.video == nil ? .audio : .video, src: path)
        let (sink, _) = LogSink.memory()
        let source = ItemSource(item: item, path: path, generation: 1, audioFormat: format, untimed: true,
                                log: Logger(label: "test", sink: sink))
        source.start()
        defer { source.cancel() }
        var audio: [Int16] = []
        let deadline = Date(timeIntervalSinceNow: 60)
        while Date() < deadline {
            while source.video.pop() != nil {}
            let n = source.audio.take(maxFrames: 48000, into: &audio, timeout: 0.01)
            if n == 0 && source.length != nil && source.video.isDrained && source.audio.isDrained { break }
        }
        let length = try #require(source.length, "\(c.file): decoding did not finish")
        let expected = try Self.expectedLength(path, c.reference)
        let frame = try Self.frameSeconds(path, hasVideo: c.video != nil)
        #expect(abs(length - expected) <= frame + 1e-3, "\(c.file): item lasts \(length) s, ffprobe \(expected) s (one frame \(frame) s)")
        #expect(length >= 3.12 - 1e-3, "\(c.file): the 3.12 s sine fits in the item (\(length) s)")
        // The samples the timeline plays: those before the item's end.
        let played = Array(audio.prefix(Int((length * 48000).rounded()) * 2))
        let reference = try Self.run(["ffmpeg", "-v", "error", "-i", path, "-map", "0:a", "-ar", "48000", "-ac", "2",
                                      "-f", "s16le", "-"])
        let ffmpeg = reference.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        let peak = Int(ffmpeg.map { abs(Int($0)) }.max() ?? 0)
        try #require(peak > 1000, "\(c.file): ffmpeg decodes a sine")
        let want = Self.loud(ffmpeg, channels: 2, peak: peak), got = Self.loud(played, channels: 2, peak: peak)
        #expect(got >= want - 96, "\(c.file): \(got) loud samples played, ffmpeg decodes \(want) (\(Double(want - got) / 48000) s short)")
    }
}
