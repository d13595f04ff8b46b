import Foundation
import Testing
import VitrineTestSupport
@testable import Media

/// `MediaFile.seek(to:)` lands on the frame on screen at the target, in containers with and without
/// an index, judged against a sequential decode of the same file and ffprobe's picture types.
@Suite("MediaFile seek")
struct MediaSeekTests {
    /// 10 s of 320x180 30 fps with the frame number in binary in the top 32 rows (10 blocks 32 px
    /// wide, block b white when bit b is set), moving texture below, and a 440 Hz tone.
    static let numbered = "geq=lum='if(lt(Y,32),if(mod(floor(N/pow(2,floor(X/32))),2),235,16),128+60*sin(X/7+N/3)*cos(Y/5))':cb=128:cr=128"
    static func sources() -> [String] {
        ["-f", "lavfi", "-i", "color=c=black:s=320x180:r=30:d=10", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=10",
         "-vf", numbered]
    }

    /// MPEG-2 in MPEG-PS, open GOPs of 15 with 2 B-frames (the closed-GOP flag off), MP2 sound.
    static func openGOPProgramStream() throws -> String {
        try Fixtures.generate("seek-open-gop.mpg", sources() + ["-c:v", "mpeg2video", "-g", "15", "-bf", "2", "-flags", "-cgop",
                                                               "-q:v", "3", "-c:a", "mp2", "-b:a", "128k", "-f", "mpeg"])
    }

    /// The same open-GOP MPEG-2 in MPEG-TS (no index either), MP2 sound.
    static func openGOPTransportStream() throws -> String {
        try Fixtures.generate("seek-open-gop.ts", sources() + ["-c:v", "mpeg2video", "-g", "15", "-bf", "2", "-flags", "-cgop",
                                                              "-q:v", "3", "-c:a", "mp2", "-b:a", "128k", "-f", "mpegts"])
    }

    /// H.264 in MP4 (an index of key frames), GOP 30 with B-frames, AAC sound.
    static func indexedMP4() throws -> String {
        try Fixtures.generate("seek-indexed.mp4", sources() + ["-c:v", "libx264", "-preset", "ultrafast", "-g", "30", "-bf", "2",
                                                              "-pix_fmt", "yuv420p", "-c:a", "aac"])
    }

    /// H.264 and Vorbis in Matroska, 25 fps, a key frame every 5 s: the Vorbis stream's start puts
    /// the video 3 ms late, so the key frames are at 0.003, 5.003 and 10.003 s.
    static func lateKeyFramesMKV() throws -> String {
        try Fixtures.generate("seek-late-keys.mkv", ["-f", "lavfi", "-i", "testsrc2=s=160x90:r=25:d=12", "-f", "lavfi", "-i", "sine=frequency=440:duration=12",
                                                    "-c:v", "libx264", "-preset", "ultrafast", "-g", "125", "-pix_fmt", "yuv420p",
                                                    "-c:a", "libvorbis", "-shortest", "-f", "matroska"])
    }

    /// Each video frame's PTS from a sequential decode, and the display-order indices of key frames (ffprobe's `key_frame`: I pictures in MPEG, IDR in H.264).
    static func truth(_ path: String) throws -> (pts: [Double], keys: [Int]) {
        let file = try MediaFile(path: path, audio: false)
        var pts: [Double] = []
        while let f = try file.read() { if case .video(let v) = f { pts.append(v.pts) } }
        let types = try Fixtures.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "frame=key_frame", "-of", "csv=p=0", path])
            .split(separator: "\n").compactMap { $0.split(separator: ",").first.map { $0.trimmingCharacters(in: .whitespaces) } }
            .filter { !$0.isEmpty }
        try #require(types.count == pts.count, "ffprobe lists \(types.count) frames, the decode gave \(pts.count)")
        return (pts, types.indices.filter { types[$0] == "1" })
    }

    static func frameNumber(_ v: VideoFrame) throws -> Int {
        let img = ImageBuffer(width: v.width, height: v.height)
        try img.withTarget { try Scaler().scale(v, into: $0, rect: PixelRect(x: 0, y: 0, width: v.width, height: v.height)) }
        var n = 0
        for b in 0..<10 where img.rgb(x: 32 * b + 16, y: 16).g > 128 { n |= 1 << b }
        return n
    }

    /// Seeks one `MediaFile` to each target in turn (forward and back) and checks the first frames.
    /// - Returns: the seeks that gave a video frame.
    static func check(_ path: String, targets: [Double], numbered: Bool) throws -> Int {
        var seeks = 0
        let (pts, keys) = try truth(path)
        let file = try MediaFile(path: path)
        let period = pts.count > 1 ? (pts.last! - pts.first!) / Double(pts.count - 1) : 1.0 / 25
        for target in targets {
            // The frame on screen at the target; or a key frame less than half a frame after it.
            let keyAfter = keys.first { pts[$0] > target + 1e-6 && pts[$0] <= target + period / 2 }
            let want = keyAfter ?? pts.lastIndex { $0 <= target + 1e-6 } ?? 0
            let key = keys.last { $0 <= want } ?? 0
            let result = try file.seek(to: target)
            var firstVideo: VideoFrame?
            var firstAudio: AudioFrame?
            while firstVideo == nil || firstAudio == nil, let f = try file.read() {
                switch f {
                case .video(let v): if firstVideo == nil { firstVideo = v }
                case .audio(let a): if firstAudio == nil { firstAudio = a }
                }
            }
            let v = try #require(firstVideo, "no video after seeking to \(target) s")
            let got = pts.firstIndex { abs($0 - v.pts) < 1e-3 }
            #expect(got == want, "seek to \(target) s: first frame at \(v.pts) s (frame \(got.map(String.init) ?? "?")), want frame \(want) at \(pts[want]) s")
            if numbered {
                let shown = try frameNumber(v)
                #expect(shown == want, "seek to \(target) s: the picture shows frame \(shown), want \(want)")
            }
            #expect(result.framesSkipped == want - key, "seek to \(target) s: skipped \(result.framesSkipped), want \(want - key) (key frame \(key))")
            #expect(result.keyFrameTime.map { abs($0 - pts[key]) < 1e-3 } == true, "seek to \(target) s: restarted from \(result.keyFrameTime ?? -1) s, want key frame \(key) at \(pts[key]) s")
            // The sound restarts with the block that plays at the target, not earlier.
            let a = try #require(firstAudio, "no audio after seeking to \(target) s")
            #expect(a.pts <= target + 1e-3 && a.pts + a.duration > target, "seek to \(target) s: first audio block \(a.pts)…\(a.pts + a.duration) s")
            print("seek to \(target) s in \((path as NSString).lastPathComponent): frame \(want), key frame \(key), \(result.demuxerSeeks) demuxer seeks")
            seeks += 1
        }
        return seeks
    }

    @Test("open-GOP MPEG-2 in MPEG-PS: every seek shows the frame at the target, decoded from the key frame before it")
    func openGOPProgramStreamSeeks() throws {
        #expect(try Self.check(try Self.openGOPProgramStream(), targets: [4.2, 0.3, 7.77, 2.5, 5.0, 9.5, 0], numbered: true) == 7)
    }

    @Test("open-GOP MPEG-2 in MPEG-TS: every seek shows the frame at the target")
    func openGOPTransportStreamSeeks() throws {
        #expect(try Self.check(try Self.openGOPTransportStream(), targets: [4.2, 0.3, 7.77, 2.5, 9.5], numbered: true) == 5)
    }

    @Test("H.264 in MP4: the index lands on the key frame before the target; the frames up to the target are skipped")
    func indexedSeeks() throws {
        #expect(try Self.check(try Self.indexedMP4(), targets: [4.2, 0.3, 7.77, 2.5, 9.5], numbered: true) == 5)
    }

    @Test("Matroska with key frames 3 ms after 5 s and 10 s: a seek to 10 s starts at the key frame at 10.003 s, not 5 s before it")
    func keyFrameJustAfterTarget() throws {
        let path = try Self.lateKeyFramesMKV()
        let (pts, keys) = try Self.truth(path)
        try #require(keys.map { (pts[$0] * 1000).rounded() } == [3, 5003, 10003], "key frames at \(keys.map { pts[$0] }) s")
        let file = try MediaFile(path: path)
        for (target, key) in [(10.0, keys[2]), (5.0, keys[1]), (9.99, keys[2])] {
            let result = try file.seek(to: target)
            var first: VideoFrame?
            while first == nil, let f = try file.read() { if case .video(let v) = f { first = v } }
            let v = try #require(first)
            #expect(abs(v.pts - pts[key]) < 1e-3, "seek to \(target) s: first frame at \(v.pts) s, want the key frame at \(pts[key]) s")
            #expect(result.framesSkipped == 0, "seek to \(target) s: \(result.framesSkipped) frames decoded and passed over")
        }
        // Half a frame (20 ms) or more before a key frame, the frame on screen is the one before it.
        let result = try file.seek(to: 9.98)
        #expect(result.framesSkipped == 124, "seek to 9.98 s: skipped \(result.framesSkipped), want 124 (from the key frame at 5.003 s)")
    }

    @Test("a seek past the last picture of a file whose sound runs on: the last picture comes first (the one on screen there), then the sound from the target")
    func pastTheLastPicture() throws {
        // 2 s of pictures at 30 fps (B-frames, a key frame every 15) and 6 s of sound.
        let path = try Fixtures.generate("seek-long-sound.mp4", ["-f", "lavfi", "-i", "testsrc2=s=160x90:r=30:d=2",
                                                                 "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=6",
                                                                 "-c:v", "libx264", "-preset", "ultrafast", "-g", "15", "-bf", "2",
                                                                 "-pix_fmt", "yuv420p", "-c:a", "aac"])
        let file = try MediaFile(path: path)
        for target in [4.0, 2.5, 5.9] {
            let result = try file.seek(to: target)
            #expect(result.pastLastPicture)
            var frames: [DecodedFrame] = []
            while let f = try file.read() { frames.append(f) }
            let pictures = frames.compactMap { if case .video(let v) = $0 { v.pts } else { nil } }
            #expect(pictures.count == 1 && abs((pictures.first ?? -1) - 59.0 / 30) < 1e-6, "seek to \(target) s: pictures at \(pictures)")
            guard case .video = frames.first else { Issue.record("seek to \(target) s: the last picture is not first"); continue }
            let sound = frames.compactMap { if case .audio(let a) = $0 { a } else { nil } }
            #expect(sound.allSatisfy { $0.pts + $0.duration > target } && abs((sound.first?.pts ?? -9) - target) < 0.03,
                    "seek to \(target) s: sound from \(sound.first?.pts ?? -1) s")
            // From the key frame at 1.5 s: 1.5 … 1.933 passed over, 1.967 kept.
            #expect(result.framesSkipped == 14, "seek to \(target) s: \(result.framesSkipped) frames passed over")
        }
        // Before the last picture: as before, the frame on screen at the target, and no flag.
        let inside = try file.seek(to: 1.0)
        #expect(!inside.pastLastPicture)
    }

    @Test("video-demo.mpeg (MPEG-1 in MPEG-PS) and video-demo.mp4: seeks land on the frame at the target",
          .enabled(if: RealMedia.available, RealMedia.absent),
          arguments: ["video-demo.mpeg", "video-demo.mp4"])
    func realSeeks(name: String) throws {
        #expect(try Self.check(Fixtures.real(name), targets: [4.14, 20.3, 1.0, 47.5], numbered: false) == 4)
    }
}
