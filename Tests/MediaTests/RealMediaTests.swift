import Foundation
import Testing
@testable import Media
import VitrineTestSupport

/// Every file of the real corpus (`../shared/media/real/`) opens, decodes to the end, and lasts what
/// ffprobe says, within one frame.
@Suite("Real media corpus", .enabled(if: RealMedia.available, RealMedia.absent))
struct RealMediaTests {
    static let files = [
        "bigbuckbunny.mp4", "bikes.mp4", "carphone_pristine.mp4",
        "video-demo.mp4", "video-demo.mkv", "video-demo.webm", "video-demo.ogv", "video-demo.avi", "video-demo.mpeg",
        "audio-demo.mp3", "audio-demo.opus", "audio-short.wav",
    ]

    struct Decoded {
        var videoFrames = 0
        var videoEnd = 0.0
        var frameInterval = 0.0
        var audioSamples = 0
        var audioStart: Double?
        var audioRate = 0
        var longestAudioFrame = 0.0
    }

    static func decodeAll(_ path: String) throws -> (MediaFile, Decoded) {
        let file = try MediaFile(path: path)
        var d = Decoded()
        while let f = try file.read() {
            switch f {
            case .video(let v):
                d.videoFrames += 1
                d.videoEnd = max(d.videoEnd, v.pts + v.duration)
                d.frameInterval = max(d.frameInterval, v.duration)
            case .audio(let a):
                if d.audioStart == nil { d.audioStart = a.pts }
                d.audioSamples += a.sampleCount
                d.audioRate = a.sampleRate
                d.longestAudioFrame = max(d.longestAudioFrame, a.duration)
            }
        }
        return (file, d)
    }

    @Test("decodes to its ffprobe duration within one frame", arguments: files)
    func decodesToFFprobeDuration(name: String) throws {
        let path = Fixtures.real(name)
        let (file, d) = try Self.decodeAll(path)
        if file.video != nil {
            let expected = try #require(try Fixtures.ffprobeDecodedEnd(path, stream: "v:0"), "ffprobe decodes no video from \(name)")
            #expect(d.videoFrames > 0)
            #expect(abs(d.videoEnd - expected) <= d.frameInterval + 1e-3,
                    "\(name): decoded video ends at \(d.videoEnd) s, ffprobe at \(expected) s (one frame is \(d.frameInterval) s)")
        }
        if file.audio != nil {
            let expected = try #require(try Fixtures.ffprobeDecodedEnd(path, stream: "a:0"), "ffprobe decodes no audio from \(name)")
            let decoded = Double(d.audioSamples) / Double(d.audioRate) + (d.audioStart ?? 0)
            #expect(d.audioSamples > 0)
            #expect(abs(decoded - expected) <= d.longestAudioFrame + 1e-3,
                    "\(name): decoded audio ends at \(decoded) s, ffprobe at \(expected) s")
        }
    }

    @Test("stills decode to one picture of the right size", arguments: [("image-demo.jpg", "mjpeg"), ("image-demo.png", "png")])
    func stills(name: String, codec: String) throws {
        let (file, d) = try Self.decodeAll(Fixtures.real(name))
        #expect(file.isStillImage)
        #expect(file.video?.codecName == codec)
        #expect(file.video?.width == 200 && file.video?.height == 133)
        #expect(d.videoFrames == 1)
    }

    @Test("stream facts match the corpus README")
    func streamFacts() throws {
        let bbb = try MediaFile(path: Fixtures.real("bigbuckbunny.mp4"))
        #expect(bbb.video?.width == 1280 && bbb.video?.height == 720)
        #expect(bbb.audio?.channels == 6 && bbb.audio?.sampleRate == 48000)
        let bikes = try MediaFile(path: Fixtures.real("bikes.mp4"))
        #expect(bikes.audio == nil && bikes.video?.width == 640 && bikes.video?.height == 272)
        let demo = try MediaFile(path: Fixtures.real("video-demo.mp4"))
        #expect(demo.audio?.sampleRate == 22050 && demo.audio?.channels == 2)
    }
}
