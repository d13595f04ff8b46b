import Foundation
import PCM
import Testing

@Suite("Opening errors")
struct OpenErrorTests {
    @Test("an unknown PCM name throws ALSAError from snd_pcm_open with -ENOENT")
    func unknownName() throws {
        let error = #expect(throws: ALSAError.self) {
            try PCMDevice(name: "vitrine_no_such_pcm", requested: PCMConfiguration(rate: 48_000, channels: 2, format: .s16le))
        }
        #expect(error?.operation == "snd_pcm_open")
        #expect(error?.code == -ENOENT)
        #expect(error?.subject == "vitrine_no_such_pcm")
    }

    @Test("with config text the open goes through snd_pcm_open_lconf and fails the same way")
    func unknownNameWithConfigText() throws {
        let capture = try CaptureFixture()
        let error = #expect(throws: ALSAError.self) {
            try PCMDevice(name: "vitrine_no_such_pcm", requested: PCMConfiguration(rate: 48_000, channels: 2, format: .s16le),
                          configText: capture.configText)
        }
        #expect(error?.operation == "snd_pcm_open_lconf")
        #expect(error?.code == -ENOENT)
    }

    @Test("config text that does not parse throws from snd_config_load")
    func badConfigText() {
        let error = #expect(throws: ALSAError.self) {
            try PCMDevice(name: "null", requested: PCMConfiguration(rate: 48_000, channels: 2, format: .s16le),
                          configText: "pcm.broken { type file ")
        }
        #expect(error?.operation == "snd_config_load")
        #expect((error?.code ?? 0) < 0)
    }

    @Test("config text is private to the open: other opens do not see it")
    func configTextIsNotGlobal() throws {
        let capture = try CaptureFixture()
        _ = try PCMDevice(name: "vitrinetest", requested: PCMConfiguration(rate: 48_000, channels: 2, format: .s16le),
                          configText: capture.configText)
        #expect(throws: ALSAError.self) {
            try PCMDevice(name: "vitrinetest", requested: PCMConfiguration(rate: 48_000, channels: 2, format: .s16le))
        }
    }

    @Test("the built-in null PCM opens without any config text")
    func nullOpens() throws {
        let device = try PCMDevice(name: "null", requested: PCMConfiguration(rate: 48_000, channels: 2, format: .s16le))
        #expect(device.negotiated.rate == 48_000)
        #expect(try device.write([Int16](repeating: 0, count: 2 * 4_800)) == 4_800)
    }

    @Test("ALSAError describes the call, its subject and snd_strerror's message")
    func errorDescription() {
        #expect(ALSAError(operation: "snd_pcm_open", code: -ENOENT, subject: "x").description
                    == #"snd_pcm_open("x"): No such file or directory (-2)"#)
        #expect(ALSAError(operation: "snd_pcm_writei", code: -EPIPE).description == "snd_pcm_writei: Broken pipe (-32)")
    }
}

@Suite("Sample formats and states")
struct SampleFormatTests {
    @Test("the formats Vitrine negotiates have alsa-lib's names and widths")
    func formats() {
        #expect(SampleFormat.s16le.bytesPerSample == 2)
        #expect(SampleFormat.s32le.bytesPerSample == 4)
        #expect(SampleFormat.floatLE.bytesPerSample == 4)
        #expect(SampleFormat.s16le.description == "S16_LE")
        #expect(SampleFormat.floatLE.description == "FLOAT_LE")
        #expect(PCMConfiguration(rate: 48_000, channels: 6, format: .s32le).bytesPerFrame == 24)
    }

    @Test("states have alsa-lib's names; unknown values still fit")
    func states() {
        #expect(PCMState.running.description == "RUNNING")
        #expect(PCMState.xrun.description == "XRUN")
        #expect(PCMState(rawValue: 1_000) != .running)
        #expect(PCMState(rawValue: -1).description == "state -1")
        #expect(SampleFormat(rawValue: -7).description == "format -7")
        #expect(SampleFormat(rawValue: -7).bytesPerSample == 0)
    }
}
