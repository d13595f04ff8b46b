import Foundation
import Synchronization
import Testing
#if DEBUG
@testable import PCM
#else
import PCM
#endif

/// Collects what `onXrun` reports; written on the writing thread, read by the test.
final class XrunLog: Sendable {
    private let kinds = Mutex<[XrunKind]>([])
    func record(_ kind: XrunKind) { kinds.withLock { $0.append(kind) } }
    var recorded: [XrunKind] { kinds.withLock { $0 } }
}

@Suite("Underrun and suspend recovery")
struct XrunRecoveryTests {
    #if DEBUG
    // alsa-lib's `null` and `file` PCMs have no clock, so they never underrun by themselves
    // (`null` reports the whole buffer free at all times). These tests make `snd_pcm_writei`
    // report the error once through the bindings' debug-only fault seam (`FaultInjection`); the
    // recovery that follows is real: `snd_pcm_recover` on the real PCM, and the frames must still
    // all reach the file.

    @Test("-EPIPE and -ESTRPIPE are recovered, counted, reported, and writing continues")
    func recoversAndKeepsWriting() throws {
        let capture = try CaptureFixture()
        let tone = sine(frequency: 440, rate: 48_000, channels: 2, frames: 24_000)
        let log = XrunLog()
        do {
            let device = try PCMDevice(
                name: "vitrinetest", requested: PCMConfiguration(rate: 48_000, channels: 2, format: .s16le),
                configText: capture.configText)
            device.onXrun = { log.record($0) }
            #expect(try write(Array(tone[0..<2 * 12_000]), to: device) == 12_000)
            let faults = FaultPlan.sequence("snd_pcm_writei", [.fail(.brokenPipe), .fail(.wouldBlock),
                                                               .fail(.interrupted), .fail(.streamPipe)])
            #expect(try FaultInjection.withPlan(faults) { try write(Array(tone[2 * 12_000..<tone.count]), to: device) } == 12_000)
            #expect(device.xrunCount == 2)
        }
        #expect(log.recorded == [.underrun, .suspend])
        let wav = try capture.readWAV()
        #expect(wav.frames == 24_000)
        #expect((0..<tone.count).allSatisfy { wav.int16(at: $0) == tone[$0] })
    }

    @Test("a short write is continued from where it stopped")
    func shortWrite() throws {
        let capture = try CaptureFixture()
        let tone = sine(frequency: 440, rate: 48_000, channels: 1, frames: 1_000)
        do {
            let device = try PCMDevice(
                name: "vitrine_file", requested: PCMConfiguration(rate: 48_000, channels: 1, format: .s16le),
                configText: capture.configText)
            // Pretend alsa-lib took 300 frames without writing them: the next call must start at frame 300.
            let faults = FaultPlan.sequence("snd_pcm_writei", [.result(300)])
            #expect(try FaultInjection.withPlan(faults) { try device.write(tone) } == 1_000)
        }
        let wav = try capture.readWAV()
        #expect(wav.frames == 700)
        #expect((0..<700).allSatisfy { wav.int16(at: $0) == tone[300 + $0] })
    }

    @Test("other errors are thrown as snd_pcm_writei failures and do not count as xruns")
    func otherErrorsThrow() throws {
        let capture = try CaptureFixture()
        let device = try PCMDevice(
            name: "vitrinetest", requested: PCMConfiguration(rate: 48_000, channels: 2, format: .s16le),
            configText: capture.configText)
        let faults = FaultPlan.sequence("snd_pcm_writei", [.fail(.noSuchDevice)])
        let error = #expect(throws: ALSAError.self) {
            try FaultInjection.withPlan(faults) { try device.write([Int16](repeating: 0, count: 2 * 480)) }
        }
        #expect(error?.operation == "snd_pcm_writei")
        #expect(error?.code == -ENODEV)
        #expect(device.xrunCount == 0)
        #expect(try device.write([Int16](repeating: 0, count: 2 * 480)) == 480)
    }
    #endif

    /// A real underrun needs a PCM with a clock. Set `VITRINE_TEST_PCM` to one (`hw:0,0`,
    /// `plughw:0`, `default` in the QEMU guest of testing.md §2) to run this.
    @Test("a real underrun: write, starve the device past its buffer, write again",
          .enabled(if: ProcessInfo.processInfo.environment["VITRINE_TEST_PCM"] != nil,
                   "needs a PCM with a clock: set VITRINE_TEST_PCM (hw:0,0, plughw:0, default in the VM guest)"))
    func realUnderrun() throws {
        let name = try #require(ProcessInfo.processInfo.environment["VITRINE_TEST_PCM"])
        let log = XrunLog()
        let device = try PCMDevice(
            name: name,
            requested: PCMConfiguration(rate: 48_000, channels: 2, format: .s16le, periodFrames: 480, bufferFrames: 1_920))
        device.onXrun = { log.record($0) }
        let rate = device.negotiated.rate
        let buffer = try #require(device.negotiated.bufferFrames)
        #expect(buffer <= rate / 5)
        let tone = sine(frequency: 440, rate: rate, channels: device.negotiated.channels, frames: rate / 5)

        #expect(try write(tone, to: device) == rate / 5)
        // A real device's delay includes its own latency past the ring buffer (a sound server's
        // sink, a codec FIFO), so only the lower bound is certain.
        #expect(device.delay() >= 0)
        let starve = 3 * Double(buffer) / Double(rate) + 0.2
        Thread.sleep(forTimeInterval: starve)
        #expect(try write(tone, to: device) == rate / 5)
        #expect(device.xrunCount >= 1)
        #expect(log.recorded.contains(.underrun))
        try device.drain()
    }
}
