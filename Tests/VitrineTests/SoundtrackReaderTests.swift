import Foundation
import Testing
import VitrineTestSupport
import Media
@testable import Vitrine

/// The soundtrack's looping reader: exact samples across loop points, judged against one pass of
/// the same file decoded on its own.
@Suite("Soundtrack reader: a gapless loop")
struct SoundtrackReaderTests {
    static let stereo48k = AudioFormat(sampleRate: 48000, channels: 2)

    /// One pass of `path` decoded and converted to `format`, without the resampler's flush (the
    /// reader never flushes: the next pass follows).
    static func onePass(_ path: String, _ format: AudioFormat) throws -> [Int16] {
        let file = try MediaFile(path: path, video: false)
        let resampler = Resampler(outputRate: format.sampleRate, outputChannels: format.channels)
        var out: [Int16] = []
        while let f = try file.read() { if case .audio(let a) = f { out += try resampler.convert(a) } }
        return out
    }

    /// Reads `total` frames from `reader` in blocks of `block` frames (the last one shorter).
    static func read(_ reader: SoundtrackReader, total: Int, block: Int) throws -> [Int16] {
        var out: [Int16] = []
        var left = total
        while left > 0 {
            let n = min(block, left)
            let got = try reader.read(frames: n)
            #expect(got.count == n * reader.format.channels)
            out += got
            left -= n
        }
        return out
    }

    /// Largest step between neighbouring left-channel samples in frames `range`.
    static func maxStep(_ s: [Int16], _ range: Range<Int>) -> Int {
        range.dropFirst().map { abs(Int(s[2 * $0]) - Int(s[2 * $0 - 2])) }.max() ?? 0
    }

    @Test("48 kHz stereo WAV of 4799 frames: 3.5 passes read in blocks of 1000 are the pass repeated, sample for sample")
    func exactLoop() throws {
        // Left: a ramp, right: its negative, so any frame lost, doubled or swapped shows.
        let wav = try Harness.clip("loop-ramp-4799.wav", ["-f", "lavfi", "-i",
            "aevalsrc=exprs='mod(n\\,4799)/4799*0.9-0.45|0.45-mod(n\\,4799)/4799*0.9':s=48000:d=1",
            "-af", "atrim=end_sample=4799", "-c:a", "pcm_s16le"])
        let pass = try Self.onePass(wav, Self.stereo48k)
        try #require(pass.count == 4799 * 2, "one pass is \(pass.count / 2) frames")
        let reader = try SoundtrackReader(path: wav, format: Self.stereo48k)
        let total = 4799 * 7 / 2
        let out = try Self.read(reader, total: total, block: 1000)
        var expected: [Int16] = []
        for f in 0..<total {
            let k = 2 * (f % 4799)
            expected.append(pass[k])
            expected.append(pass[k + 1])
        }
        let firstDifference = zip(out, expected).enumerated().first { $1.0 != $1.1 }.map { $0.offset / 2 }
        #expect(firstDifference == nil, "first frame that differs: \(firstDifference ?? -1)")
        #expect(reader.loopPoints == [4799, 9598, 14397])
        #expect(reader.framesProduced == total)
    }

    @Test("44.1 kHz FLAC of 441 whole cycles, resampled to 48 kHz: every pass is 48000 frames and the sine runs through the loop point with no gap or step")
    func resampledLoop() throws {
        let flac = try Harness.clip("loop-441hz-1s.flac", ["-f", "lavfi", "-i", "sine=frequency=441:sample_rate=44100:duration=1",
                                                            "-af", "volume=0.5", "-c:a", "flac"])
        #expect(try Self.checkSineLoop(flac, samePassFrames: 0) == 4)
    }

    @Test("the same sine as MP3 (LAME's encoder delay and padding, trimmed by FFmpeg from the LAME header): passes of 48000 ± 1 frames, no gap at the loop point")
    func mp3Loop() throws {
        let mp3 = try Harness.clip("loop-441hz-1s.mp3", ["-f", "lavfi", "-i", "sine=frequency=441:sample_rate=44100:duration=1",
                                                          "-af", "volume=0.5", "-c:a", "libmp3lame", "-b:a", "192k"])
        #expect(try Self.checkSineLoop(mp3, samePassFrames: 1) == 4)
    }

    @Test("the same sine as AAC in M4A, 44.1 and 48 kHz (the edit list trims the priming; FFmpeg decodes the last frame whole): each pass is cut at the stated 1 s, with no gap at the loop point",
          arguments: [44100, 48000])
    func aacLoop(rate: Int) throws {
        let m4a = try Harness.clip("loop-441hz-1s-\(rate).m4a", ["-f", "lavfi", "-i", "sine=frequency=441:sample_rate=\(rate):duration=1",
                                                                  "-af", "volume=0.5", "-c:a", "aac", "-b:a", "192k"])
        #expect(try Self.checkSineLoop(m4a, samePassFrames: 1, aac: true) == 4)
    }

    /// Reads 4.2 s of a 1 s, 441 Hz sine looping and checks the pass lengths and the loop points.
    /// - Parameter aac: AAC's coding noise: its steps near the loop point are judged against a pass's
    ///   own, with a wider margin (a gap or a cut mid-cycle is a step of thousands).
    /// - Returns: the loop points checked.
    @discardableResult
    static func checkSineLoop(_ path: String, samePassFrames tolerance: Int, aac: Bool = false) throws -> Int {
        let reader = try SoundtrackReader(path: path, format: stereo48k)
        let out = try read(reader, total: 48000 * 42 / 10, block: 1024)
        try #require(reader.loopPoints.count == 4, "loop points \(reader.loopPoints)")
        let spacing = zip(reader.loopPoints.dropFirst(), reader.loopPoints).map { $0 - $1 }
        #expect(spacing.allSatisfy { abs($0 - 48000) <= tolerance }, "passes of \(spacing) frames")
        let inside = maxStep(out, 10000..<30000)
        for p in reader.loopPoints {
            let across = maxStep(out, (p - 200)..<(p + 200))
            #expect(Double(across) <= Double(inside) * (aac ? 1.5 : 1.1) + 8, "step at the loop point \(p): \(across), inside a pass \(inside)")
            // A gap would be a run of silence: near 0 a 441 Hz sine of amplitude 16384 stays under 64 for one frame at most.
            var run = 0, longest = 0
            for f in (p - 200)..<(p + 200) { if abs(Int(out[2 * f])) < 64 { run += 1; longest = max(longest, run) } else { run = 0 } }
            #expect(longest <= 2, "\(longest) near-silent frames at the loop point \(p)")
        }
        return reader.loopPoints.count
    }

    @Test("real files: audio-demo.opus (48 kHz) loops sample for sample; audio-demo.mp3 (44.1 kHz) gives each pass the length of one decode and resampling",
          .enabled(if: RealMedia.available, RealMedia.absent))
    func realFiles() throws {
        let opus = RealMedia.folder + "/audio-demo.opus"
        let pass = try Self.onePass(opus, Self.stereo48k)
        let frames = pass.count / 2
        let reader = try SoundtrackReader(path: opus, format: Self.stereo48k)
        let out = try Self.read(reader, total: frames * 2 + 12345, block: 4096)
        #expect(reader.loopPoints == [frames, 2 * frames])
        #expect(Array(out[(2 * frames)..<(4 * frames)]) == pass && Array(out[(4 * frames)...]) == Array(pass.prefix(2 * 12345)),
                "the second pass and the start of the third repeat the first exactly")

        // 44.1 kHz → 48 kHz: the resampler holds a few frames when a pass ends, and they come out at
        // the start of the next; so the first loop point is one decode without the resampler's
        // flush, and each pass after it one decode with it.
        let mp3 = RealMedia.folder + "/audio-demo.mp3"
        let file = try MediaFile(path: mp3, video: false)
        let resampler = Resampler(outputRate: 48000, outputChannels: 2)
        var unflushed = 0
        while let f = try file.read() { if case .audio(let a) = f { unflushed += try resampler.convert(a).count / 2 } }
        let flushed = unflushed + resampler.flush().count / 2
        let mp3Reader = try SoundtrackReader(path: mp3, format: Self.stereo48k)
        _ = try Self.read(mp3Reader, total: flushed * 3, block: 4096)
        let spacing = zip(mp3Reader.loopPoints.dropFirst(), mp3Reader.loopPoints).map { $0 - $1 }
        #expect(mp3Reader.loopPoints.first == unflushed && !spacing.isEmpty && spacing.allSatisfy { abs($0 - flushed) <= 1 },
                "one decode gives \(unflushed) frames, \(flushed) with the resampler's tail; loop points \(mp3Reader.loopPoints)")
    }

    @Test("a file without an audio stream, or no file at all, is refused with an AVError")
    func refusals() throws {
        let video = try Harness.colorClip("red", seconds: 1)
        #expect(throws: AVError.self) { try SoundtrackReader(path: video, format: Self.stereo48k) }
        #expect(throws: AVError.self) { try SoundtrackReader(path: "/nonexistent/music.mp3", format: Self.stereo48k) }
    }
}
