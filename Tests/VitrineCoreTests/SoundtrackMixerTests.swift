import Foundation
import Testing
@testable import VitrineCore

/// A soundtrack that hands out consecutive frames of `frame(n)`, and counts what it was asked for.
private final class Bed {
    let channels: Int
    let frame: (Int) -> Int16
    private(set) var position = 0
    private(set) var requests: [Int] = []
    init(channels: Int = 2, _ frame: @escaping (Int) -> Int16) { self.channels = channels; self.frame = frame }
    func take(_ n: Int) -> [Int16] {
        requests.append(n)
        defer { position += n }
        return (position..<(position + n)).flatMap { f in [Int16](repeating: frame(f), count: channels) }
    }
}

/// The left channel of interleaved stereo.
private func left(_ s: [Int16]) -> [Int16] { stride(from: 0, to: s.count, by: 2).map { s[$0] } }

/// `n` stereo frames of one value.
private func block(_ n: Int, _ value: Int16 = 0) -> [Int16] { [Int16](repeating: value, count: 2 * n) }

@Suite("Soundtrack mixer")
struct SoundtrackMixerTests {
    /// 8 frames a second, so a 0.5 s fade is exactly 4 frames.
    static func mixer(_ settings: Soundtrack, initial: Double) -> SoundtrackMixer {
        SoundtrackMixer(settings: settings, sampleRate: 8, channels: 2, initialGain: SampleGain(initial))
    }

    @Test("gains round to the nearest 1/65536 and scale samples exactly, halves towards +∞")
    func gains() {
        #expect(SampleGain(0.5).q16 == 32768 && SampleGain(1.5) == .unity && SampleGain(-1) == .zero && SampleGain(.nan) == .zero)
        #expect(SampleGain(0.2).q16 == 13107)
        #expect(SampleGain.unity.scale(-32768) == -32768 && SampleGain.unity.scale(32767) == 32767)
        #expect(SampleGain(q16: 32768).scale(3) == 2 && SampleGain(q16: 32768).scale(-3) == -1)   // 1.5 → 2, −1.5 → −1
        #expect(SampleGain(q16: 49152).scale(4096) == 3072 && SampleGain.zero.scale(32767) == 0)
    }

    @Test("under a silent item the soundtrack plays at its volume, added to the item's samples")
    func steady() {
        var m = Self.mixer(Soundtrack(src: "m", volume: 0.5), initial: 0.5)
        let bed = Bed { _ in 1000 }
        let out = m.mix(item: block(5, 100), itemHasSound: false, soundtrack: bed.take)
        #expect(out == block(5, 600))
        #expect(bed.requests == [5])
    }

    @Test("ducking ramps linearly to duckVolume over fade, one step per frame, on every channel alike, and back")
    func duckAndBack() {
        var m = Self.mixer(Soundtrack(src: "m", volume: 1, itemSound: .duck, duckVolume: 0.25, fade: 0.5), initial: 1)
        let bed = Bed { _ in 4096 }
        // Gains 53248, 40960, 28672, 16384 (a quarter of the way each frame), then 16384.
        let down = m.mix(item: block(6), itemHasSound: true, soundtrack: bed.take)
        #expect(down == [3328, 3328, 2560, 2560, 1792, 1792, 1024, 1024, 1024, 1024, 1024, 1024])
        #expect(m.gain.q16 == 16384)
        // Back up over the next 4 frames: 28672, 40960, 53248, 65536.
        let up = m.mix(item: block(5, -10), itemHasSound: false, soundtrack: bed.take)
        #expect(left(up) == [1782, 2550, 3318, 4086, 4086])
        #expect(bed.requests == [6, 5], "the soundtrack runs on while ducked")
    }

    @Test("negative samples scale the same way; the sum saturates at 16 bits")
    func negativeAndSaturation() {
        var m = Self.mixer(Soundtrack(src: "m", volume: 1, duckVolume: 0.25), initial: 1)
        #expect(left(m.mix(item: block(2), itemHasSound: true, soundtrack: Bed { _ in -4096 }.take)) == [-3328, -2560])
        var full = Self.mixer(Soundtrack(src: "m", volume: 1), initial: 1)
        #expect(full.mix(item: [30000, -30000], itemHasSound: false, soundtrack: { _ in [10000, -10000] }) == [32767, -32768])
    }

    @Test("a ramp that changes target half-way starts again from the gain it reached")
    func rampRestarts() {
        var m = Self.mixer(Soundtrack(src: "m", volume: 1, duckVolume: 0, fade: 0.5), initial: 1)
        let bed = Bed { _ in 8192 }
        #expect(left(m.mix(item: block(2), itemHasSound: true, soundtrack: bed.take)) == [6144, 4096])   // 49152, 32768
        #expect(m.gain.q16 == 32768)
        // Up again from 32768: 40960, 49152, 57344, 65536.
        #expect(left(m.mix(item: block(4), itemHasSound: false, soundtrack: bed.take)) == [5120, 6144, 7168, 8192])
    }

    @Test("a boundary between two items with sound changes nothing: the soundtrack stays ducked")
    func staysDucked() {
        var m = Self.mixer(Soundtrack(src: "m", volume: 0.8, duckVolume: 0.2), initial: 0.2)
        let bed = Bed { _ in 10000 }
        let a = m.mix(item: block(3), itemHasSound: true, soundtrack: bed.take)
        let b = m.mix(item: block(3), itemHasSound: true, soundtrack: bed.take)
        #expect(left(a + b) == [Int16](repeating: 2000, count: 6))
    }

    @Test("pause: fades out, then holds (no frames taken), and resumes from the frame after the last one it played")
    func pauseHoldsAndResumes() {
        var m = Self.mixer(Soundtrack(src: "m", volume: 1, itemSound: .pause, fade: 0.5), initial: 1)
        let bed = Bed { Int16(1000 + $0 * 4) }   // frame n of the soundtrack is 1000 + 4n
        // Gains 49152, 32768, 16384, then 0 from the fourth frame: three frames of the soundtrack played.
        let fading = m.mix(item: block(6), itemHasSound: true, soundtrack: bed.take)
        #expect(left(fading) == [750, 502, 252, 0, 0, 0])
        #expect(bed.requests == [3] && m.isHolding(itemHasSound: true))
        let held = m.mix(item: block(4, 7), itemHasSound: true, soundtrack: bed.take)
        #expect(held == block(4, 7) && bed.requests == [3, 0])
        // Back under a silent item: soundtrack frames 3, 4, 5, 6 at gains 16384, 32768, 49152, 65536.
        let back = m.mix(item: block(5), itemHasSound: false, soundtrack: bed.take)
        #expect(left(back) == [253, 508, 765, 1024, 1028])
        #expect(bed.requests == [3, 0, 5] && bed.position == 8)
    }

    @Test("mix: the soundtrack keeps its volume under an item with sound")
    func mixMode() {
        var m = Self.mixer(Soundtrack(src: "m", volume: 0.5, itemSound: .mix), initial: 0.5)
        #expect(m.mix(item: block(3, 1000), itemHasSound: true, soundtrack: Bed { _ in 2000 }.take) == block(3, 2000))
    }

    @Test("the soundtrack fades in when playback begins; disabled, it fades out and holds until enabled")
    func fadeInAndDisable() {
        var m = SoundtrackMixer(settings: Soundtrack(src: "m", volume: 1, fade: 0.5), sampleRate: 8, channels: 2)
        let bed = Bed { _ in 4096 }
        #expect(left(m.mix(item: block(5), itemHasSound: false, soundtrack: bed.take)) == [1024, 2048, 3072, 4096, 4096])
        m.enabled = false
        #expect(left(m.mix(item: block(6), itemHasSound: false, soundtrack: bed.take)) == [3072, 2048, 1024, 0, 0, 0])
        #expect(m.isHolding(itemHasSound: false) && bed.requests == [5, 3])
        m.enabled = true
        #expect(left(m.mix(item: block(2), itemHasSound: false, soundtrack: bed.take)) == [1024, 2048])
    }

    @Test("no click: ducking a full-scale 440 Hz sine over 0.5 s at 48 kHz never steps more than the sine itself does")
    func noClick() {
        var m = SoundtrackMixer(settings: Soundtrack(src: "m", volume: 1, duckVolume: 0.1, fade: 0.5), sampleRate: 48000, channels: 2,
                                initialGain: .unity)
        #expect(m.fadeFrames == 24000)
        let sine = Bed { Int16((32000 * sin(2 * Double.pi * 440 * Double($0) / 48000)).rounded()) }
        var out: [Int16] = []
        // 0.2 s steady, then a video with sound for 1 s, in blocks of 1024 frames as a sound card takes them.
        for n in 0..<(48000 * 12 / 10 / 1024) {
            out += m.mix(item: block(1024), itemHasSound: n >= 9, soundtrack: sine.take)
        }
        let l = left(out)
        let sineStep = Int((32000 * 2 * Double.pi * 440 / 48000).rounded(.up))   // the sine's steepest step
        let steps = zip(l.dropFirst(), l).map { abs(Int($0) - Int($1)) }
        #expect(steps.max()! <= sineStep, "largest step \(steps.max()!), the sine's own \(sineStep)")
        #expect(m.gain == SampleGain(0.1))
        // The level after the ramp is 0.1 of the sine: its peaks are 3200 ± 1.
        #expect(abs(Int(l.suffix(4800).map { abs(Int($0)) }.max()!) - 3200) <= 1)
    }
}
