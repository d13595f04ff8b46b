import Testing
import VitrineCore

@Suite("Volume: one Q15 scaler")
struct VolumeTests {
    @Test("gain 1 leaves every sample as it is, gain 0 silences every one")
    func unityAndSilence() {
        let all = (Int32(Int16.min)...Int32(Int16.max)).map { Int16($0) }
        var same = all
        Volume(1).scale(&same)
        #expect(same == all)
        #expect(Volume(1).isUnity && Volume(1).q15 == 32768)
        var silent = all
        Volume(0).scale(&silent)
        #expect(silent.allSatisfy { $0 == 0 })
    }

    @Test("exact sample values: (sample × ⌊gain × 32768⌋) >> 15, rounding toward −∞", arguments: [
        // gain, input, expected
        (0.5, [1000, -1000, 1, -1, 32767, -32768, 0], [500, -500, 0, -1, 16383, -16384, 0]),
        (0.3, [1000, -1000, 32767, -32768, 3], [299, -300, 9829, -9830, 0]),
        (0.25, [4, -4, 5, -5, 7], [1, -1, 1, -2, 1]),
        (0.999, [32767, -32768, 1000], [32734, -32735, 998]),
    ] as [(Double, [Int], [Int])])
    func exactValues(gain: Double, input: [Int], expected: [Int]) {
        var s = input.map { Int16($0) }
        Volume(gain).scale(&s)
        #expect(s.map(Int.init) == expected)
    }

    @Test("the gain is clamped to 0…1 and kept in Q15")
    func clamping() {
        #expect(Volume(2).q15 == 32768)
        #expect(Volume(-1).q15 == 0)
        #expect(Volume(0.3).q15 == 9830)
        #expect(Volume(q15: 40000).isUnity)
        #expect(Volume(0.5).gain == 0.5)
    }
}
