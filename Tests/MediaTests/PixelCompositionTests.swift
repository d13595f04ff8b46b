import Testing
import Media

@Suite("Pixel composition")
struct PixelCompositionTests {
    /// A 7×3 picture with a different colour in every pixel.
    static func picture() -> ImageBuffer {
        let b = ImageBuffer(width: 7, height: 3)
        b.withTarget { t in
            for y in 0..<3 { for x in 0..<7 { t.fill(PixelRect(x: x, y: y, width: 1, height: 1), with: 0xFF00_0000 | UInt32(x * 36) << 16 | UInt32(y * 120) << 8 | 0x40) } }
        }
        return b
    }

    @Test("copyDimmed writes exactly what copy followed by dim gives, for alphas 0, 0.5 and 1")
    func copyDimmedMatchesCopyThenDim() {
        let source = Self.picture()
        for alpha in [0.0, 0.5, 1.0] {
            let a = ImageBuffer(width: 7, height: 3), b = ImageBuffer(width: 7, height: 3)
            source.withTarget { s in
                a.withTarget { $0.copy(from: s); $0.dim(PixelRect(x: 0, y: 0, width: 7, height: 3), color: 0x0010_2030, alpha: alpha) }
                b.withTarget { $0.copyDimmed(from: s, color: 0x0010_2030, alpha: alpha) }
            }
            for y in 0..<3 { for x in 0..<7 { #expect(a.pixel(x: x, y: y) == b.pixel(x: x, y: y), "(\(x), \(y)) at alpha \(alpha)") } }
        }
        // Black at 0.5 over #FC7840 (x = 7th column, row 1: red 216, green 120): each channel halves.
        let d = ImageBuffer(width: 7, height: 3)
        source.withTarget { s in d.withTarget { $0.copyDimmed(from: s, color: 0, alpha: 0.5) } }
        #expect(d.rgb(x: 6, y: 1) == (r: 108, g: 60, b: 32))
        #expect(source.rgb(x: 6, y: 1) == (r: 216, g: 120, b: 64))
    }
}
