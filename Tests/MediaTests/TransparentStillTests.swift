import Foundation
import Testing
@testable import Media

/// Pictures with alpha (a PNG with transparency) are blended over a background colour with straight
/// alpha maths: transparent shows the background, 50 % red over black is half red.
@Suite("Transparent stills: alpha over the background")
struct TransparentStillTests {
    /// 48x16 RGBA: a transparent white square (255,255,255,0), a 50 % red one (255,0,0,127), an opaque green one.
    static func png() throws -> String {
        try Fixtures.generate("alpha-squares.png", [
            "-filter_complex", "color=c=white@0.0:s=16x16,format=rgba[a];color=c=red@0.5:s=16x16,format=rgba[b];"
                + "color=c=0x00FF00:s=16x16,format=rgba[c];[a][b][c]hstack=3", "-frames:v", "1"])
    }

    /// The expected channel: `c` at alpha `a` over background channel `bg`, in 8 bits.
    static func over(_ c: Int, _ a: Int, _ bg: Int) -> Int { (c * a + bg * (255 - a) + 127) / 255 }

    @Test("transparent → the background exactly; 50 % red → half red; opaque unchanged", arguments: [0x000000, 0x2040C0] as [UInt32])
    func exactPixels(background: UInt32) throws {
        let frame = try Fixtures.firstVideoFrame(try Self.png())
        #expect(frame.hasAlpha)
        let img = ImageBuffer(width: 48, height: 16)
        try img.withTarget { try Scaler().scale(frame, into: $0, rect: PixelRect(x: 0, y: 0, width: 48, height: 16), over: background) }
        let bg = (r: Int(background >> 16), g: Int(background >> 8 & 0xFF), b: Int(background & 0xFF))
        #expect(img.pixel(x: 8, y: 8) == 0xFF00_0000 | background, "transparent shows the background")
        let half = img.rgb(x: 24, y: 8)
        let want = (Self.over(255, 127, bg.r), Self.over(0, 127, bg.g), Self.over(0, 127, bg.b))
        #expect(abs(Int(half.r) - want.0) <= 1 && abs(Int(half.g) - want.1) <= 1 && abs(Int(half.b) - want.2) <= 1,
                "50 % red over \(String(background, radix: 16)): got \(half), want \(want)")
        #expect(img.pixel(x: 40, y: 8) == 0xFF00_FF00, "opaque green stays")
        if background == 0 { #expect(half.r >= 126 && half.r <= 129, "about 128,0,0 over black") }
    }

    @Test("scaled up 5x over black, the transparent white leaves no pale fringe on the red")
    func noFringe() throws {
        let frame = try Fixtures.firstVideoFrame(try Self.png())
        let img = ImageBuffer(width: 240, height: 80)
        try img.withTarget { try Scaler().scale(frame, into: $0, rect: PixelRect(x: 0, y: 0, width: 240, height: 80), over: 0) }
        // Across the edge between the transparent and the red squares, and the red and green ones:
        // green and blue come only from the green square, never from the transparent white.
        for x in 60..<100 {
            let p = img.rgb(x: x, y: 40)
            #expect(p.g <= 1 && p.b <= 1, "x \(x): \(p)")
            #expect(p.r <= 128, "x \(x): never more than the half red (\(p.r))")
        }
    }

    @Test("without a background the picture's own alpha is written, as before")
    func ownAlpha() throws {
        let frame = try Fixtures.firstVideoFrame(try Self.png())
        let img = ImageBuffer(width: 48, height: 16)
        try img.withTarget { try Scaler().scale(frame, into: $0, rect: PixelRect(x: 0, y: 0, width: 48, height: 16)) }
        #expect(img.pixel(x: 8, y: 8) >> 24 == 0 && img.pixel(x: 24, y: 8) >> 24 == 127)
    }
}
