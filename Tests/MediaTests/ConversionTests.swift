import Foundation
import Testing
@testable import Media
import VitrineTestSupport

@Suite("Conversion: swscale and swresample")
struct ConversionTests {
    @Test("5.1 AAC is downmixed to stereo with the sample count of the rate change", .enabled(if: RealMedia.available, RealMedia.absent))
    func downmix() throws {
        let file = try MediaFile(path: Fixtures.real("bigbuckbunny.mp4"), video: false)
        let r = Resampler(outputRate: 44100, outputChannels: 2)
        var inFrames = 0, outSamples = 0
        while let f = try file.read() {
            guard case .audio(let a) = f else { continue }
            #expect(a.channels == 6)
            inFrames += a.sampleCount
            outSamples += try r.convert(a).count
        }
        outSamples += r.flush().count
        #expect(outSamples % 2 == 0)
        let expected = Double(inFrames) * 44100 / 48000
        #expect(abs(Double(outSamples / 2) - expected) <= 2, "got \(outSamples / 2) stereo frames, expected \(expected)")
    }

    @Test("22.05 kHz audio becomes 48 kHz, 1 s in → 48000 frames out (±2)")
    func upsample() throws {
        let path = try Fixtures.generate("sine22k.wav", ["-f", "lavfi", "-i", "sine=frequency=1000:sample_rate=22050:duration=1", "-ac", "1"])
        let file = try MediaFile(path: path)
        let r = Resampler(outputRate: 48000, outputChannels: 2)
        var out: [Int16] = []
        while let f = try file.read() { if case .audio(let a) = f { out += try r.convert(a) } }
        out += r.flush()
        #expect(abs(out.count / 2 - 48000) <= 2)
        // Mono is copied to both channels.
        #expect(out[2000] == out[2001])
        // lavfi's sine peaks at 1/8 of full scale (4096); mono spreads to both channels at −3 dB (2896).
        #expect(abs(out.map { abs(Int($0)) }.max()! - 2896) < 40)
    }

    @Test("a red frame converts to red XRGB8888 pixels, scaled into a sub-rectangle")
    func scaleIntoRect() throws {
        let path = try Fixtures.generate("red64.mp4", ["-f", "lavfi", "-i", "color=c=red:s=64x48:r=10:d=0.3", "-pix_fmt", "yuv420p"])
        let file = try MediaFile(path: path)
        guard case .video(let frame)? = try file.read() else { Issue.record("no frame"); return }
        let img = ImageBuffer(width: 100, height: 80)
        try img.withTarget { t in
            t.fill(PixelRect(x: 0, y: 0, width: 100, height: 80), with: 0xFF00_FF00)
            try Scaler().scale(frame, into: t, rect: PixelRect(x: 10, y: 20, width: 32, height: 24))
        }
        let inside = img.rgb(x: 26, y: 32)
        #expect(inside.r > 240 && inside.g < 16 && inside.b < 16)
        #expect(img.pixel(x: 5, y: 5) == 0xFF00_FF00)      // untouched outside the rectangle
        #expect(img.pixel(x: 45, y: 30) == 0xFF00_FF00)
    }

    @Test("PNG snapshots round-trip through FFmpeg's encoder and decoder")
    func pngRoundTrip() throws {
        let img = ImageBuffer(width: 8, height: 4)
        img.withTarget { t in
            t.fill(PixelRect(x: 0, y: 0, width: 4, height: 4), with: 0xFF12_3456)
            t.fill(PixelRect(x: 4, y: 0, width: 4, height: 4), with: 0xFFFF_FFFF)
        }
        let path = Fixtures.scratch + "/round.png"
        try img.withTarget { try PNGWriter.write($0, to: path) }
        let file = try MediaFile(path: path)
        guard case .video(let f)? = try file.read() else { Issue.record("no frame"); return }
        let back = ImageBuffer(width: 8, height: 4)
        try back.withTarget { try Scaler().scale(f, into: $0, rect: PixelRect(x: 0, y: 0, width: 8, height: 4)) }
        #expect(back.pixel(x: 1, y: 1) & 0xFFFFFF == 0x123456)
        #expect(back.pixel(x: 6, y: 2) & 0xFFFFFF == 0xFFFFFF)
    }

    @Test("rotated copy: a quarter turn moves the left column to the top row")
    func rotatedCopy() {
        let src = ImageBuffer(width: 4, height: 2)
        src.withTarget { t in
            t.fill(PixelRect(x: 0, y: 0, width: 2, height: 2), with: 0xFFFF_0000)
            t.fill(PixelRect(x: 2, y: 0, width: 2, height: 2), with: 0xFF00_00FF)
        }
        let dst = ImageBuffer(width: 2, height: 4)
        src.withTarget { s in dst.withTarget { d in d.copyRotated(from: s, quarterTurns: 1, x: 0, y: 0) } }
        #expect(dst.pixel(x: 0, y: 0) == 0xFFFF_0000 && dst.pixel(x: 1, y: 1) == 0xFFFF_0000)
        #expect(dst.pixel(x: 0, y: 3) == 0xFF00_00FF && dst.pixel(x: 1, y: 2) == 0xFF00_00FF)
    }

    @Test("a non-media file fails to open with an AVError naming the call")
    func garbage() throws {
        let path = Fixtures.scratch + "/garbage.mp4"
        try Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7919 &+ 13) }).write(to: URL(fileURLWithPath: path))
        #expect {
            _ = try MediaFile(path: path)
        } throws: { error in
            guard let e = error as? AVError else { return false }
            return e.operation.hasPrefix("avformat_") || e.operation == "av_find_best_stream"
        }
    }
}
