import Foundation
import PCM

/// A scratch directory and the ALSA configuration text that routes playback into a WAV file there.
///
/// The text is passed to `PCMDevice.init(name:requested:configText:)`, which loads it on top of a
/// private copy of the global configuration (`snd_pcm_open_lconf`). No environment variable
/// (`ALSA_CONFIG_PATH`) or global alsa-lib state is touched, so tests can run in parallel, each
/// with its own file. PCMs defined:
///
/// - `vitrine_file`: the `file` plugin over `null`; writes exactly what it is given to `out.wav`.
/// - `vitrinetest`: `plug` in front of `vitrine_file`, whose side is fixed to 48 kHz, stereo,
///   S16_LE, so any requested rate, channel count or format is converted by alsa-lib.
/// - `vitrine_linear_only`: the `linear` plugin in front of `vitrine_file`; it takes integer
///   formats only, so a float request must fall back.
struct CaptureFixture: ~Copyable {
    let directory: URL
    var wavPath: String { directory.appendingPathComponent("out.wav").path }

    init() throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("vitrine-pcm-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    var configText: String {
        """
        pcm.vitrine_file {
            type file
            slave.pcm "null"
            file "\(wavPath)"
            format "wav"
        }
        pcm.vitrinetest {
            type plug
            slave {
                pcm "vitrine_file"
                rate 48000
                channels 2
                format S16_LE
            }
        }
        pcm.vitrine_linear_only {
            type linear
            slave {
                pcm "vitrine_file"
                format S16_LE
            }
        }
        """
    }

    func readWAV() throws -> WAVFile { try WAVFile(contentsOf: wavPath) }
}

/// The parts of a PCM WAV file the tests check.
struct WAVFile {
    var channels: Int
    var rate: Int
    var bitsPerSample: Int
    var data: [UInt8]

    var bytesPerFrame: Int { channels * bitsPerSample / 8 }
    var frames: Int { data.count / bytesPerFrame }

    init(contentsOf path: String) throws {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        func u16(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }
        func u32(_ at: Int) -> Int { u16(at) | u16(at + 2) << 16 }
        guard bytes.count >= 12, bytes[0..<4] == [0x52, 0x49, 0x46, 0x46] else { throw WAVError.notRIFF }

        var channels = 0, rate = 0, bits = 0
        var data: [UInt8]?
        var offset = 12
        while offset + 8 <= bytes.count {
            let id = String(decoding: bytes[offset..<offset + 4], as: UTF8.self)
            let size = u32(offset + 4)
            let body = offset + 8
            switch id {
            case "fmt ":
                channels = u16(body + 2)
                rate = u32(body + 4)
                bits = u16(body + 14)
            case "data":
                data = Array(bytes[body..<min(body + size, bytes.count)])
            default:
                break
            }
            offset = body + size + (size & 1)
        }
        guard let data, channels > 0 else { throw WAVError.missingChunk }
        self.channels = channels
        self.rate = rate
        self.bitsPerSample = bits
        self.data = data
    }

    /// Sample `index` (counting across channels) as a signed 16-bit value.
    func int16(at index: Int) -> Int16 {
        Int16(bitPattern: UInt16(data[2 * index]) | UInt16(data[2 * index + 1]) << 8)
    }

    /// Sample `index` (counting across channels) as a signed 32-bit value.
    func int32(at index: Int) -> Int32 {
        let b = (0..<4).map { UInt32(data[4 * index + $0]) << (8 * UInt32($0)) }
        return Int32(bitPattern: b[0] | b[1] | b[2] | b[3])
    }
}

enum WAVError: Error { case notRIFF, missingChunk }

/// Interleaved signed 16-bit sine, the same value on every channel, at half of full scale.
func sine(frequency: Double, rate: Int, channels: Int, frames: Int) -> [Int16] {
    var samples: [Int16] = []
    samples.reserveCapacity(frames * channels)
    for frame in 0..<frames {
        let value = Int16((sin(2 * .pi * frequency * Double(frame) / Double(rate)) * 16_383).rounded())
        for _ in 0..<channels { samples.append(value) }
    }
    return samples
}

/// Writes `samples` in chunks of `chunkFrames`, as a decoder would, and returns the frames written.
func write(_ samples: [Int16], to device: PCMDevice, chunkFrames: Int = 1_000) throws -> Int {
    let chunk = chunkFrames * device.negotiated.channels
    var written = 0
    for start in stride(from: 0, to: samples.count, by: chunk) {
        written += try device.write(Array(samples[start..<min(start + chunk, samples.count)]))
    }
    return written
}
