import Testing
@testable import VitrineCore

@Suite("Manifest model values")
struct ManifestModelTests {
    @Test(arguments: [
        ("1920x1080@60", DisplayModeRequest.exact(width: 1920, height: 1080, refresh: 60)),
        ("3840x2160@30", .exact(width: 3840, height: 2160, refresh: 30)),
        ("0800x0600@075", .exact(width: 800, height: 600, refresh: 75)),
        ("preferred", .preferred),
        ("highest", .highest),
    ])
    func displayModeParses(_ text: String, _ mode: DisplayModeRequest) {
        #expect(DisplayModeRequest(parsing: text) == mode)
    }

    @Test(arguments: ["", "1920x1080", "1920x1080@", "x1080@60", "1920x@60", "+1920x1080@60", "1920x-1080@60",
                      "1920X1080@60", "0x1080@60", "1920x1080@0", " 1920x1080@60", "1920x1080@59.94",
                      "1920x1080@60@60", "Preferred", "99999999999999999999x1080@60"])
    func displayModeRejects(_ text: String) {
        #expect(DisplayModeRequest(parsing: text) == nil)
    }

    @Test func displayModeDescriptionRoundTrips() {
        #expect(DisplayModeRequest.exact(width: 1280, height: 720, refresh: 50).description == "1280x720@50")
        #expect(DisplayModeRequest(parsing: DisplayModeRequest.highest.description) == .highest)
    }

    @Test func colourParsesEitherCase() throws {
        let colour = try #require(RGBColor(hex: "#1a2B3c"))
        #expect(colour == RGBColor(red: 0x1A, green: 0x2B, blue: 0x3C))
        #expect(colour.description == "#1A2B3C")
        #expect(colour.xrgb8888 == 0xFF1A_2B3C)
        #expect(RGBColor(hex: "#FFFFFF") == RGBColor(red: 255, green: 255, blue: 255))
        #expect(RGBColor.black.description == "#000000")
    }

    @Test(arguments: ["", "1a2b3c", "#1a2b3", "#1a2b3g", "#1a2b3c4", "#fff", "red", "#１a2b3c"])
    func colourRejects(_ text: String) {
        #expect(RGBColor(hex: text) == nil)
    }

    @Test func rotationSwapsAxesAtQuarterTurns() {
        #expect(Rotation.allCases.map(\.rawValue) == [0, 90, 180, 270])
        #expect(Rotation.allCases.map(\.swapsAxes) == [false, true, false, true])
    }

    @Test func transitionDurationDefaultsByType() {
        #expect(Transition(type: .cut).duration == 0)
        #expect(Transition(type: .crossfade).duration == 0.5)
        #expect(Transition(type: .crossfade, duration: 2).duration == 2)
    }
}
