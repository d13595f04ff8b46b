import Canvas
import Testing

/// The progress bar and the spinner, read back as 0xAARRGGBB pixels (opaque colours unchanged).
@Suite("Progress widgets")
struct ProgressWidgetTests {
    static let background: UInt32 = 0xFF00_0000
    static let track: UInt32 = 0xFF3A_4450
    static let fill: UInt32 = 0xFF38_8BFD

    @Test("a bar at 0.3: the fill colour inside the done part, the track colour in the rest, rounded ends")
    func barAtThirtyPercent() throws {
        let canvas = try Canvas(width: 240, height: 40)
        canvas.clear(Self.background)
        // Track x 20..<220, y 10..<30; the fill ends at 20 + 0.3 × 200 = 80.
        canvas.draw(ProgressBar(fraction: 0.3, trackColor: Self.track, fillColor: Self.fill), x: 20, y: 10, width: 200, height: 20)
        #expect(canvas.pixel(x: 50, y: 20) == Self.fill)
        #expect(canvas.pixel(x: 78, y: 20) == Self.fill)
        #expect(canvas.pixel(x: 82, y: 20) == Self.track)
        #expect(canvas.pixel(x: 200, y: 20) == Self.track)
        #expect(canvas.pixel(x: 21, y: 11) == Self.background, "the left end is rounded")
        #expect(canvas.pixel(x: 218, y: 28) == Self.background, "the right end is rounded")
        #expect(canvas.pixel(x: 19, y: 20) == Self.background && canvas.pixel(x: 120, y: 9) == Self.background)
    }

    @Test("the fraction is clamped to 0…1 and NaN counts as 0")
    func fractionClamped() throws {
        #expect(ProgressBar(fraction: .nan).fraction == 0)
        #expect(ProgressBar(fraction: -0.5).fraction == 0)
        #expect(ProgressBar(fraction: 1.7).fraction == 1)
        #expect(ProgressBar(fraction: 0.25).fillWidth(forWidth: 200) == 50)
        var bar = ProgressBar(fraction: 0.5)
        bar.fraction = .infinity
        #expect(bar.fraction == 1)

        let canvas = try Canvas(width: 240, height: 40)
        canvas.clear(Self.background)
        canvas.draw(ProgressBar(fraction: .nan, trackColor: Self.track, fillColor: Self.fill), x: 20, y: 10, width: 200, height: 20)
        #expect(canvas.pixel(x: 40, y: 20) == Self.track, "NaN draws no fill")
        canvas.draw(ProgressBar(fraction: 3, trackColor: Self.track, fillColor: Self.fill), x: 20, y: 10, width: 200, height: 20)
        #expect(canvas.pixel(x: 40, y: 20) == Self.fill && canvas.pixel(x: 212, y: 20) == Self.fill, "over 1 fills the track")
        #expect(canvas.pixel(x: 222, y: 20) == Self.background, "and not beyond it")
    }

    @Test("the spinner steps 12 times a second: step and rotation as a function of time")
    func spinnerSteps() {
        let s = Spinner(color: 0xFFFF_FFFF, segments: 12, secondsPerTurn: 1)
        #expect(s.step(at: 0) == 0)
        #expect(s.step(at: 0.08) == 0)
        #expect(s.step(at: 0.09) == 1)
        #expect(s.step(at: 0.5) == 6)
        #expect(s.step(at: 1.0) == 0)
        #expect(s.step(at: 7_200.25) == 3, "a monotonic clock hours after boot")
        #expect(s.step(at: -0.25) == 9)
        #expect(s.step(at: .nan) == 0 && s.step(at: .infinity) == 0)
        #expect(abs(s.rotation(at: 0.25) - .pi / 2) < 1e-12)
        #expect(Spinner(segments: 1).segments == 3)
    }

    @Test("spinner pixels differ between two times: the bright head moves from 12 to 3 o'clock in 0.25 s")
    func spinnerMoves() throws {
        let spinner = Spinner(color: 0xFFFF_FFFF, segments: 12, secondsPerTurn: 1)
        func picture(at t: Double) throws -> Canvas {
            let c = try Canvas(width: 100, height: 100)
            c.clear(Self.background)
            c.draw(spinner, centerX: 50, centerY: 50, radius: 40, at: t)
            return c
        }
        func pixels(_ c: Canvas) -> [UInt32] { (0..<100).flatMap { y in (0..<100).map { c.pixel(x: $0, y: y) } } }
        let (a, b, a2) = (try picture(at: 10.0), try picture(at: 10.25), try picture(at: 10.05))
        // The arcs run at radius 40 − 8.8 / 2 = 35.6: 12 o'clock is (50, 14), 3 o'clock (86, 50).
        #expect(a.pixel(x: 50, y: 14) == 0xFFFF_FFFF)
        #expect(a.pixel(x: 86, y: 50) >> 16 & 0xFF < 0x80, "the 3 o'clock segment trails the head: dim at t = 10")
        #expect(b.pixel(x: 86, y: 50) == 0xFFFF_FFFF)
        #expect(b.pixel(x: 50, y: 14) >> 16 & 0xFF < 0xF0, "12 o'clock is now three segments behind the head")
        #expect(pixels(a) != pixels(b))
        #expect(pixels(a) == pixels(a2), "within one step the picture does not change")
        #expect(a.pixel(x: 50, y: 50) == Self.background, "the centre is empty")
    }
}
