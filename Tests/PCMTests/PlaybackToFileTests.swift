import Foundation
import PCM
import Testing

/// Playback through real alsa-lib into the `file` plugin; the WAV it writes is the device's output.
@Suite("Playback into a WAV file through alsa-lib")
struct PlaybackToFileTests {
    @Test("1 s of a 440 Hz sine at 48 kHz stereo s16 comes out as 48000 identical frames")
    func sineRoundTrip() throws {
        let capture = try CaptureFixture()
        let tone = sine(frequency: 440, rate: 48_000, channels: 2, frames: 48_000)
        let period: Int
        do {
            let device = try PCMDevice(
                name: "vitrinetest",
                requested: PCMConfiguration(rate: 48_000, channels: 2, format: .s16le, periodFrames: 1_024, bufferFrames: 4_096),
                configText: capture.configText)
            period = try #require(device.negotiated.periodFrames)
            #expect(try write(tone, to: device) == 48_000)
            try device.drain()
        }  // closing the PCM finalises the WAV header

        let wav = try capture.readWAV()
        #expect(wav.rate == 48_000)
        #expect(wav.channels == 2)
        #expect(wav.bitsPerSample == 16)
        #expect(abs(wav.frames - 48_000) <= period)
        for index in [0, 1, 2, 109, 110, 1_000, 24_001, 47_998, 95_999] {
            #expect(wav.int16(at: index) == tone[index], "sample \(index)")
        }
        #expect((0..<tone.count).allSatisfy { wav.int16(at: $0) == tone[$0] })
    }

    @Test("negotiated values are reported, and plug converts 44.1 kHz mono to the 48 kHz stereo file")
    func negotiatedThroughPlug() throws {
        let capture = try CaptureFixture()
        let requested = PCMConfiguration(rate: 44_100, channels: 1, format: .s16le, periodFrames: 441, bufferFrames: 1_764)
        do {
            let device = try PCMDevice(name: "vitrinetest", requested: requested, configText: capture.configText)
            let negotiated = device.negotiated
            #expect(device.name == "vitrinetest")
            #expect(negotiated.rate == 44_100)
            #expect(negotiated.channels == 1)
            #expect(negotiated.format == .s16le)
            #expect(device.bytesPerFrame == 2)
            let period = try #require(negotiated.periodFrames)
            let buffer = try #require(negotiated.bufferFrames)
            #expect(abs(period - 441) <= 441 / 10, "period \(period)")
            #expect(abs(buffer - 1_764) <= 1_764 / 10, "buffer \(buffer)")
            #expect(buffer >= 2 * period)
            #expect(device.state == .prepared)

            let halfSecond = sine(frequency: 440, rate: 44_100, channels: 1, frames: 22_050)
            #expect(try write(halfSecond, to: device) == 22_050)
            try device.drain()
        }
        let wav = try capture.readWAV()
        #expect(wav.rate == 48_000)
        #expect(wav.channels == 2)
        #expect(abs(wav.frames - 24_000) <= 48, "frames \(wav.frames)")
    }

    @Test("without plug the file PCM takes the request as is; defaults are 20 ms periods, 4 per buffer")
    func negotiatedWithoutPlug() throws {
        let capture = try CaptureFixture()
        let device = try PCMDevice(
            name: "vitrine_file",
            requested: PCMConfiguration(rate: 32_000, channels: 6, format: .s32le),
            configText: capture.configText)
        #expect(device.negotiated == PCMConfiguration(rate: 32_000, channels: 6, format: .s32le,
                                                      periodFrames: 640, bufferFrames: 2_560))
        #expect(device.bytesPerFrame == 24)
    }

    @Test("a refused format falls back to s16le")
    func formatFallback() throws {
        let capture = try CaptureFixture()
        let device = try PCMDevice(
            name: "vitrine_linear_only",
            requested: PCMConfiguration(rate: 48_000, channels: 2, format: .floatLE),
            configText: capture.configText)
        #expect(device.negotiated.format == .s16le)
        #expect(device.bytesPerFrame == 4)
    }

    @Test("Int16 samples are converted when the device negotiated s32le")
    func int16ConvenienceConvertsToS32() throws {
        let capture = try CaptureFixture()
        let samples: [Int16] = [0, 1, -1, 16_383, -16_384, .max, .min, 12_345]
        do {
            let device = try PCMDevice(
                name: "vitrine_file", requested: PCMConfiguration(rate: 48_000, channels: 2, format: .s32le),
                configText: capture.configText)
            #expect(try device.write(samples) == 4)
        }
        let wav = try capture.readWAV()
        #expect(wav.bitsPerSample == 32)
        #expect((0..<samples.count).map(wav.int32(at:)) == samples.map { Int32($0) << 16 })
    }

    @Test("raw bytes: whole frames in, frame count out")
    func rawBytes() throws {
        let capture = try CaptureFixture()
        let frames: [Int16] = (0..<4_800).map { Int16(truncatingIfNeeded: $0 * 7) }
        do {
            let device = try PCMDevice(
                name: "vitrinetest", requested: PCMConfiguration(rate: 48_000, channels: 2, format: .s16le),
                configText: capture.configText)
            let written = try frames.withUnsafeBytes { bytes in try device.write(bytes) }
            #expect(written == 2_400)
            #expect(try device.write(UnsafeRawBufferPointer(start: nil, count: 0)) == 0)
        }
        let wav = try capture.readWAV()
        #expect(wav.frames == 2_400)
        #expect((0..<frames.count).allSatisfy { wav.int16(at: $0) == frames[$0] })
    }

    @Test("state follows the stream; drain and drop stop it and the next write prepares it again")
    func lifecycle() throws {
        let capture = try CaptureFixture()
        let tone = sine(frequency: 1_000, rate: 48_000, channels: 2, frames: 9_600)
        do {
            let device = try PCMDevice(
                name: "vitrinetest",
                requested: PCMConfiguration(rate: 48_000, channels: 2, format: .s16le, periodFrames: 960, bufferFrames: 3_840),
                configText: capture.configText)
            #expect(device.state == .prepared)
            // Below the start threshold (buffer − period = 2880 frames) the stream waits.
            #expect(try device.write(Array(tone[0..<2 * 1_000])) == 1_000)
            #expect(device.state == .prepared)
            #expect(try device.write(Array(tone[2_000..<2 * 4_800])) == 3_800)
            #expect(device.state == .running)

            device.pause(true)
            #expect([PCMState.paused, .setup].contains(device.state))
            device.pause(false)
            #expect([PCMState.running, .prepared].contains(device.state))

            try device.drain()
            #expect(device.state == .setup)
            try device.drain()  // already stopped: nothing to do
            #expect(try device.write(Array(tone[2 * 4_800..<2 * 7_200])) == 2_400)
            #expect(device.state != .setup)

            device.drop()
            #expect(device.state == .setup)
            #expect(device.delay() == 0)
            #expect(try device.write(Array(tone[2 * 7_200..<2 * 9_600])) == 2_400)
            try device.prepare()  // preparing a prepared or running stream is allowed
        }
        // The file plugin flushes on drop, so every frame written reaches the file.
        let wav = try capture.readWAV()
        #expect(wav.frames == 9_600)
        #expect((0..<tone.count).allSatisfy { wav.int16(at: $0) == tone[$0] })
    }

    @Test("delay() stays within 0...bufferFrames while writing")
    func delayIsBounded() throws {
        let capture = try CaptureFixture()
        let device = try PCMDevice(
            name: "vitrinetest",
            requested: PCMConfiguration(rate: 48_000, channels: 2, format: .s16le, periodFrames: 480, bufferFrames: 1_920),
            configText: capture.configText)
        let buffer = try #require(device.negotiated.bufferFrames)
        let tone = sine(frequency: 440, rate: 48_000, channels: 2, frames: 4_800)
        var delays: [Int] = [device.delay()]
        for start in stride(from: 0, to: tone.count, by: 2 * 480) {
            try device.write(Array(tone[start..<start + 2 * 480]))
            delays.append(device.delay())
        }
        #expect(delays.allSatisfy { (0...buffer).contains($0) }, "\(delays)")
    }
}
