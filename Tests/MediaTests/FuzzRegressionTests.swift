import Foundation
import Testing
import VitrineTestSupport
@testable import Media

/// Inputs the demux/decode fuzz target (`Sources/fuzz-media`, `make fuzz`) found, kept in
/// `Tests/MediaTests/Fixtures/fuzz-media/`: each replays cleanly, and each finding's fix is checked.
@Suite("Fuzz regressions: media")
struct MediaFuzzRegressionTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/fuzz-media").path
    static func fixture(_ name: String) -> String { fixtures + "/" + name }

    /// `fuzz-media`, built beside the test bundle by `swift build` as a replay tool.
    static let replayTool = BuildProducts.path("fuzz-media")

    @Test("every saved input runs through the fuzz target (a subprocess: a crash fails the test, not the run)",
          .enabled(if: BuildProducts.available("fuzz-media"), BuildProducts.absent("fuzz-media")))
    func replayAll() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.fixtures).sorted()
        try #require(!names.isEmpty)
        let r = try Subprocess.run(Self.replayTool, [Self.fixtures], standardError: .discard)
        let text = r.out
        #expect(!r.signaled && r.status == 0, "fuzz-media exited \(r.status) (\(r.signaled ? "signal" : "exit")) after:\n\(text)")
        #expect(text.split(separator: "\n").map { $0.split(separator: " ")[1].split(separator: "/").last.map(String.init) ?? "" } == names)
    }

    @Test("a CRYO APC header claiming 1,163,280,727 Hz: the resampler refuses the rate at once (swr_init took 17 s, then ran out of memory)")
    func absurdSampleRate() throws {
        let file = try MediaFile(path: Self.fixture("apc-rate-1163280727.apc"))
        #expect(file.containerName == "apc")
        #expect(file.audio?.sampleRate == 1_163_280_727)
        let resampler = Resampler(outputRate: 48000, outputChannels: 2)
        var frames = 0
        while let f = try file.read() {
            guard case .audio(let a) = f else { continue }
            frames += 1
            #expect(throws: AVError(operation: "swr_init", message: "sample rate 1163280727 Hz is outside 1000–768000 Hz")) {
                _ = try resampler.convert(a)
            }
        }
        #expect(frames > 0)
        #expect(resampler.flush().isEmpty)
    }
}

extension MediaFuzzRegressionTests {
    @Test("a WebP whose VP8 chunk is corrupt decodes without frame threads: FFmpeg 5.1 aborts on it with them")
    func webpWithoutFrameThreads() throws {
        let file = try MediaFile(path: Self.fixture("webp-corrupt-vp8-frame-threads.webp"), threads: 2)
        #expect(file.containerName == "webp_pipe" && file.video?.codecName == "webp")
        #expect(file.isStillImage)
        var pictures: [String] = []
        while let f = try file.read() { if case .video(let v) = f { pictures.append("\(v.width)x\(v.height)") } }
        // The picture decodes; the bytes after it are one corrupt packet.
        #expect(pictures == ["32x18"])
        #expect(file.corruptPackets == 1)
    }
}
