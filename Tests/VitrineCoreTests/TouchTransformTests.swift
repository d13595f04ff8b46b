import Testing
@testable import VitrineCore

private func close(_ p: (x: Double, y: Double), _ q: (x: Double, y: Double), _ tolerance: Double = 1e-9) -> Bool {
    abs(p.x - q.x) <= tolerance && abs(p.y - q.y) <= tolerance
}

@Suite("Touch transforms and taps")
struct TouchTransformTests {
    struct Corners: Sendable, CustomTestStringConvertible {
        var rotation: Rotation
        var canvas: (width: Int, height: Int)
        /// Canvas points of the normalized points (0,0), (1,0), (0,1), (1,1) and (0.5,0.5).
        var points: [(x: Double, y: Double)]
        var testDescription: String { "\(rotation.rawValue)°" }
    }

    /// A 1920×1080 panel. With 90° the canvas's top-left corner is drawn at the panel's top-right
    /// (Layout.screenPoint), so that is where a touch must land to hit it; and so on.
    static let corners: [Corners] = [
        Corners(rotation: .none, canvas: (1920, 1080),
                points: [(0, 0), (1920, 0), (0, 1080), (1920, 1080), (960, 540)]),
        Corners(rotation: .clockwise90, canvas: (1080, 1920),
                points: [(0, 1920), (0, 0), (1080, 1920), (1080, 0), (540, 960)]),
        Corners(rotation: .upsideDown, canvas: (1920, 1080),
                points: [(1920, 1080), (0, 1080), (1920, 0), (0, 0), (960, 540)]),
        Corners(rotation: .clockwise270, canvas: (1080, 1920),
                points: [(1080, 0), (1080, 1920), (0, 0), (0, 1920), (540, 960)]),
    ]

    @Test("corners and centre for every rotation", arguments: corners)
    func cornersAndCentre(_ c: Corners) {
        let t = TouchTransform(screenWidth: 1920, screenHeight: 1080, rotation: c.rotation)
        #expect(t.canvasSize == c.canvas)
        let normalized: [(Double, Double)] = [(0, 0), (1, 0), (0, 1), (1, 1), (0.5, 0.5)]
        for (n, expected) in zip(normalized, c.points) {
            let p = t.canvasPoint(normalizedX: n.0, normalizedY: n.1)
            #expect(close(p, expected), "\(n) → \(p), expected \(expected)")
            // And back to the panel.
            let s = t.screenPoint(canvasX: p.x, canvasY: p.y)
            #expect(close(s, (n.0 * 1920, n.1 * 1080)))
        }
    }

    @Test("pixels agree with Layout.screenPoint exactly", arguments: Rotation.allCases)
    func agreesWithLayout(_ rotation: Rotation) {
        let t = TouchTransform(screenWidth: 8, screenHeight: 6, rotation: rotation)
        let canvas = t.canvasSize
        for cy in 0..<canvas.height {
            for cx in 0..<canvas.width {
                let s = Layout.screenPoint(canvasX: cx, canvasY: cy, rotation: rotation, screenWidth: 8, screenHeight: 6)
                #expect((0..<8).contains(s.x) && (0..<6).contains(s.y))
                #expect(t.canvasPixel(screenX: s.x, screenY: s.y) == (cx, cy))
                // A touch in the middle of that panel pixel lands in the middle of the canvas pixel.
                let p = t.canvasPoint(normalizedX: (Double(s.x) + 0.5) / 8, normalizedY: (Double(s.y) + 0.5) / 6)
                #expect(close(p, (Double(cx) + 0.5, Double(cy) + 0.5)))
            }
        }
    }

    @Test func calibrationMatrixParsing() {
        #expect(CalibrationMatrix(parsing: "0 -1 1 1 0 0") == CalibrationMatrix(a: 0, b: -1, c: 1, d: 1, e: 0, f: 0))
        #expect(CalibrationMatrix(parsing: "1.1\t0 -0.05  0 1.1 -0.05")?.values == [1.1, 0, -0.05, 0, 1.1, -0.05])
        #expect(CalibrationMatrix(parsing: "1 0 0 0 1") == nil)
        #expect(CalibrationMatrix(parsing: "1 0 0 0 1 0 0") == nil)
        #expect(CalibrationMatrix(parsing: "a b c d e f") == nil)
        #expect(CalibrationMatrix(parsing: "1 0 0 0 1 nan") == nil)
        #expect(CalibrationMatrix([1, 0, 0, 0, 1, 0]) == .identity)
        #expect(CalibrationMatrix.identity.description == "1.0 0.0 0.0 0.0 1.0 0.0")
    }

    @Test func calibrationIsAppliedBeforeScaling() {
        // Upside-down touch glass on an upright panel.
        let flipped = TouchTransform(screenWidth: 1920, screenHeight: 1080, calibration: CalibrationMatrix(parsing: "-1 0 1 0 -1 1")!)
        #expect(close(flipped.screenPoint(normalizedX: 0.25, normalizedY: 0.1), (1440, 972)))
        #expect(close(flipped.canvasPoint(normalizedX: 0, normalizedY: 0), (1920, 1080)))
        // A slightly oversized glass: the centre stays, the edges fall off the panel (not clamped).
        let scaled = TouchTransform(screenWidth: 1920, screenHeight: 1080, calibration: CalibrationMatrix(parsing: "1.1 0 -0.05 0 1.1 -0.05")!)
        #expect(close(scaled.canvasPoint(normalizedX: 0.5, normalizedY: 0.5), (960, 540)))
        #expect(close(scaled.canvasPoint(normalizedX: 0, normalizedY: 0), (-96, -54)))
    }

    @Test func calibrationThenRotation() {
        // Glass turned 90° clockwise relative to the panel, and the picture rotated 90° as well.
        let t = TouchTransform(screenWidth: 1920, screenHeight: 1080, rotation: .clockwise90,
                               calibration: CalibrationMatrix(parsing: "0 -1 1 1 0 0")!)
        #expect(close(t.screenPoint(normalizedX: 0.25, normalizedY: 0.1), (1728, 270)))
        #expect(close(t.canvasPoint(normalizedX: 0.25, normalizedY: 0.1), (270, 192)))
    }

    // MARK: Taps

    /// A 300 × 200 mm screen: 10 mm is 1/30 of the width and 1/20 of the height.
    static func recognizer() -> TapRecognizer { TapRecognizer(deviceWidthMM: 300, deviceHeightMM: 200) }

    @Test func aQuickTouchIsATapAtWhereItWentDown() {
        var r = Self.recognizer()
        r.touchDown(slot: 0, x: 0.5, y: 0.5, at: 10)
        #expect(r.isTracking)
        r.touchMotion(slot: 0, x: 0.51, y: 0.5, at: 10.1)      // 3 mm wobble
        #expect(r.touchUp(slot: 0, at: 10.2) == Tap(x: 0.5, y: 0.5, time: 10.2))
        #expect(!r.isTracking)
    }

    @Test func theTimeLimitIs300ms() {
        var r = Self.recognizer()
        r.touchDown(slot: 0, x: 0.5, y: 0.5, at: 1)
        #expect(r.touchUp(slot: 0, at: 1.3) != nil)
        r.touchDown(slot: 0, x: 0.5, y: 0.5, at: 2)
        #expect(r.touchUp(slot: 0, at: 2.31) == nil)             // a long press is not a tap
    }

    @Test func theDistanceLimitIs10mm() {
        var r = Self.recognizer()
        #expect(abs(r.distance(fromX: 0, y: 0, toX: 0.02, y: 0.04) - 10) < 1e-9)  // 6 mm across, 8 mm down
        r.touchDown(slot: 0, x: 0.5, y: 0.5, at: 0)
        r.touchMotion(slot: 0, x: 0.5 + 9.0 / 300, y: 0.5, at: 0.1)   // 9 mm
        #expect(r.touchUp(slot: 0, at: 0.2) != nil)
        r.touchDown(slot: 0, x: 0.5, y: 0.5, at: 1)
        r.touchMotion(slot: 0, x: 0.5 + 11.0 / 300, y: 0.5, at: 1.1)  // 11 mm
        #expect(r.touchUp(slot: 0, at: 1.2) == nil)
        r.touchDown(slot: 0, x: 0.5, y: 0.5, at: 2)
        r.touchMotion(slot: 0, x: 0.5, y: 0.5 + 0.06, at: 2.1)        // 12 mm down
        #expect(r.touchUp(slot: 0, at: 2.2) == nil)
        r.touchDown(slot: 0, x: 0.5, y: 0.5, at: 3)
        r.touchMotion(slot: 0, x: 0.5, y: 0.5 + 0.04, at: 3.1)        // 8 mm down
        #expect(r.touchUp(slot: 0, at: 3.2) != nil)
        r.touchDown(slot: 0, x: 0.5, y: 0.5, at: 4)
        r.touchMotion(slot: 0, x: 0.5 + 8.0 / 300, y: 0.5 + 0.04, at: 4.1)  // 8 mm each way: 11.3 mm
        #expect(r.touchUp(slot: 0, at: 4.2) == nil)
    }

    @Test func aDragThatComesBackIsStillADrag() {
        var r = Self.recognizer()
        r.touchDown(slot: 0, x: 0.5, y: 0.5, at: 0)
        r.touchMotion(slot: 0, x: 0.6, y: 0.5, at: 0.05)             // 30 mm away
        r.touchMotion(slot: 0, x: 0.5, y: 0.5, at: 0.1)              // and back
        #expect(r.touchUp(slot: 0, at: 0.15) == nil)
        // The next touch starts afresh.
        r.touchDown(slot: 0, x: 0.2, y: 0.2, at: 1)
        #expect(r.touchUp(slot: 0, at: 1.1) == Tap(x: 0.2, y: 0.2, time: 1.1))
    }

    @Test func twoFingersAreNotATap() {
        var r = Self.recognizer()
        r.touchDown(slot: 0, x: 0.5, y: 0.5, at: 0)
        r.touchDown(slot: 1, x: 0.7, y: 0.5, at: 0.05)
        #expect(r.touchUp(slot: 1, at: 0.1) == nil)
        #expect(r.touchUp(slot: 0, at: 0.15) == nil)
        // Nor is the second finger, lifted after the first.
        r.touchDown(slot: 0, x: 0.5, y: 0.5, at: 1)
        r.touchDown(slot: 1, x: 0.7, y: 0.5, at: 1.05)
        #expect(r.touchUp(slot: 0, at: 1.1) == nil)
        #expect(r.touchUp(slot: 1, at: 1.15) == nil)
        #expect(!r.isTracking)
    }

    @Test func aCancelledTouchIsNotATap() {
        var r = Self.recognizer()
        r.touchDown(slot: 0, x: 0.5, y: 0.5, at: 0)
        r.touchCancel()
        #expect(r.touchUp(slot: 0, at: 0.1) == nil)
        #expect(!r.isTracking)
    }

    @Test("end to end: a tap on a rotated panel hits the popup's button")
    func tapHitsTheRotatedButton() {
        // Portrait signage: a 1920×1080 panel turned 90°, so the canvas is 1080×1920.
        let t = TouchTransform(screenWidth: 1920, screenHeight: 1080, rotation: .clockwise90)
        let canvas = t.canvasSize
        let g = OverlayLayout.layout(canvasWidth: canvas.width, canvasHeight: canvas.height,
                                     buttonLabelWidths: [400, 700, 300]) { _, _ in (500, 300) }
        let button = g.buttons[1]                                      // 174,1090 732×56 (see the layout tests)
        let centre = t.screenPoint(canvasX: Double(button.x) + Double(button.width) / 2,
                                   canvasY: Double(button.y) + Double(button.height) / 2)
        var r = TapRecognizer(deviceWidthMM: 476, deviceHeightMM: 268)
        r.touchDown(slot: 0, x: centre.x / 1920, y: centre.y / 1080, at: 0)
        let tap = r.touchUp(slot: 0, at: 0.1)!
        let p = t.canvasPoint(normalizedX: tap.x, normalizedY: tap.y)
        #expect(close(p, (540, 1118)))
        #expect(g.hitTest(x: p.x, y: p.y) == .button(1))

        // A drag across the same button triggers nothing.
        r.touchDown(slot: 0, x: centre.x / 1920, y: centre.y / 1080, at: 1)
        r.touchMotion(slot: 0, x: centre.x / 1920 + 0.1, y: centre.y / 1080, at: 1.05)
        #expect(r.touchUp(slot: 0, at: 1.1) == nil)
    }
}

extension TouchTransformTests {
    @Test func exactlyTheLimitsStillCount() {
        var r = Self.recognizer()
        r.touchDown(slot: 0, x: 0, y: 0, at: 0.1)
        r.touchMotion(slot: 0, x: 0.02, y: 0.04, at: 0.2)            // exactly 10 mm
        #expect(r.touchUp(slot: 0, at: 0.4) != nil)                  // exactly 300 ms (0.4 − 0.1 in binary is a hair more)
    }
}
