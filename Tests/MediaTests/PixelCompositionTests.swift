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

@Suite("Pixel composition: tints")
struct TintTests {
    @Test("two dimmings combine into one: black 0.5 then black 0.5 is black 0.75; a clear one changes nothing")
    func combined() throws {
        let c = try #require(PixelTarget.Tint.combined([.init(color: 0, alpha: 0.5), .init(color: 0, alpha: 0.5)]))
        #expect(abs(c.alpha - 0.75) < 1e-9)
        #expect(c.color == 0)
        #expect(PixelTarget.Tint.combined([.init(color: 0xFFFFFF, alpha: 0)]) == nil)
        // White 0.5 over black 0.5: x → 127.5 + 0.25·x, i.e. alpha 0.75 of #AAAAAA (170 = 127.5 / 0.75).
        let w = try #require(PixelTarget.Tint.combined([.init(color: 0, alpha: 0.5), .init(color: 0xFFFFFF, alpha: 0.5)]))
        #expect(w.color == 0xAA_AAAA)
    }

    @Test("a tinted blend of an opaque pixel equals the blend followed by the same dimming")
    func tintedBlend() {
        let src = ImageBuffer(width: 4, height: 1), a = ImageBuffer(width: 4, height: 1), b = ImageBuffer(width: 4, height: 1)
        src.withTarget { $0.fill(PixelRect(x: 0, y: 0, width: 4, height: 1), with: 0xFFF4_F6F8) }
        src.withTarget { s in
            a.withTarget { t in
                t.fill(PixelRect(x: 0, y: 0, width: 4, height: 1), with: 0xFF10_2030)
                t.blend(premultiplied: s, x: 0, y: 0)
                t.dim(PixelRect(x: 0, y: 0, width: 4, height: 1), color: 0, alpha: 0.5)
            }
            b.withTarget { t in
                t.fill(PixelRect(x: 0, y: 0, width: 4, height: 1), with: 0xFF10_2030)
                t.blend(premultiplied: s, x: 0, y: 0, tint: .init(color: 0, alpha: 0.5))
            }
        }
        for x in 0..<4 {
            let p = a.rgb(x: x, y: 0), q = b.rgb(x: x, y: 0)
            #expect(abs(Int(p.r) - Int(q.r)) <= 1 && abs(Int(p.g) - Int(q.g)) <= 1 && abs(Int(p.b) - Int(q.b)) <= 1)
        }
        #expect(b.rgb(x: 0, y: 0) == (r: 122, g: 123, b: 124))
    }
}
