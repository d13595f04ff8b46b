import Testing
@testable import VitrineCore

@Suite("Layout: fit and rotation")
struct LayoutTests {
    @Test("contain: 2.35:1 on 16:9 keeps the full width and centres vertically")
    func containLetterbox() {
        let p = Layout.place(sourceWidth: 640, sourceHeight: 272, canvasWidth: 1280, canvasHeight: 720, fit: .contain)
        #expect(p.crop == Rect(x: 0, y: 0, width: 640, height: 272))
        #expect(p.destination == Rect(x: 0, y: 88, width: 1280, height: 544))
    }

    @Test("contain: 4:3 on 16:9 pillarboxes")
    func containPillarbox() {
        let p = Layout.place(sourceWidth: 640, sourceHeight: 480, canvasWidth: 1920, canvasHeight: 1080, fit: .contain)
        #expect(p.destination == Rect(x: 240, y: 0, width: 1440, height: 1080))
    }

    @Test("cover: the source is cropped equally on both sides and fills the canvas")
    func cover() {
        let p = Layout.place(sourceWidth: 640, sourceHeight: 272, canvasWidth: 1280, canvasHeight: 720, fit: .cover)
        #expect(p.destination == Rect(x: 0, y: 0, width: 1280, height: 720))
        // 272 rows at 16:9 need 483.6 → 484 columns of the 640.
        #expect(p.crop == Rect(x: 78, y: 0, width: 484, height: 272))
    }

    @Test("stretch ignores aspect; a matching aspect is the whole canvas in every mode")
    func stretchAndExact() {
        for fit in Fit.allCases {
            let p = Layout.place(sourceWidth: 1280, sourceHeight: 720, canvasWidth: 1920, canvasHeight: 1080, fit: fit)
            #expect(p.destination == Rect(x: 0, y: 0, width: 1920, height: 1080))
            #expect(p.crop == Rect(x: 0, y: 0, width: 1280, height: 720))
        }
        let s = Layout.place(sourceWidth: 100, sourceHeight: 100, canvasWidth: 320, canvasHeight: 180, fit: .stretch)
        #expect(s.destination == Rect(x: 0, y: 0, width: 320, height: 180))
    }

    @Test("anamorphic sources use their sample aspect ratio")
    func sampleAspect() {
        // 720x576 with 16:15 pixels is 4:3 → pillarboxed on 16:9.
        let p = Layout.place(sourceWidth: 720, sourceHeight: 576, sampleAspect: 16.0 / 15.0, canvasWidth: 1280, canvasHeight: 720, fit: .contain)
        #expect(p.destination == Rect(x: 160, y: 0, width: 960, height: 720))
    }

    @Test("the canvas swaps width and height for 90° and 270°")
    func canvas() {
        #expect(Layout.canvasSize(screenWidth: 1920, screenHeight: 1080, rotation: .none) == (1920, 1080))
        #expect(Layout.canvasSize(screenWidth: 1920, screenHeight: 1080, rotation: .clockwise90) == (1080, 1920))
        #expect(Layout.canvasSize(screenWidth: 1920, screenHeight: 1080, rotation: .upsideDown) == (1920, 1080))
        #expect(Layout.canvasSize(screenWidth: 1920, screenHeight: 1080, rotation: .clockwise270) == (1080, 1920))
    }

    @Test("canvas corners land on the right screen corners for every rotation", arguments: Rotation.allCases)
    func corners(rotation: Rotation) {
        let (w, h) = (1920, 1080)
        let c = Layout.canvasSize(screenWidth: w, screenHeight: h, rotation: rotation)
        let topLeft = Layout.screenPoint(canvasX: 0, canvasY: 0, rotation: rotation, screenWidth: w, screenHeight: h)
        let bottomRight = Layout.screenPoint(canvasX: c.width - 1, canvasY: c.height - 1, rotation: rotation, screenWidth: w, screenHeight: h)
        switch rotation {
        case .none: #expect(topLeft == (0, 0) && bottomRight == (1919, 1079))
        case .clockwise90: #expect(topLeft == (1919, 0) && bottomRight == (0, 1079))
        case .upsideDown: #expect(topLeft == (1919, 1079) && bottomRight == (0, 0))
        case .clockwise270: #expect(topLeft == (0, 1079) && bottomRight == (1919, 0))
        }
    }
}
