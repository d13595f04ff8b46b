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

    /// A 7×3 premultiplied source with opaque, half-transparent and clear pixels.
    static func panel() -> ImageBuffer {
        let b = ImageBuffer(width: 7, height: 3)
        b.withTarget { t in
            for y in 0..<3 { for x in 0..<7 {
                let a: UInt32 = [255, 128, 0][(x + y) % 3]
                let c = UInt32(x * 30) * a / 255 << 16 | UInt32(y * 100) * a / 255 << 8 | 0x20 * a / 255
                t.fill(PixelRect(x: x, y: y, width: 1, height: 1), with: a << 24 | c)
            } }
        }
        return b
    }

    /// What a blend at (x, y) scaled to w×h gives at target pixel (tx, ty), written pixel by pixel:
    /// nearest sample, source over target, nil where the source does not land.
    static func expected(_ src: PixelTarget, _ under: UInt32, x: Int, y: Int, w: Int, h: Int, tx: Int, ty: Int) -> UInt32? {
        let dx = tx - x, dy = ty - y
        guard dx >= 0, dx < w, dy >= 0, dy < h else { return nil }
        let s = src.base.load(fromByteOffset: min(src.height - 1, dy * src.height / h) * src.stride
                              + min(src.width - 1, dx * src.width / w) * 4, as: UInt32.self)
        let sa = s >> 24
        if sa == 0 { return under }
        var out: UInt32 = 0xFF00_0000
        for shift: UInt32 in [0, 8, 16] {
            let sc = (s >> shift) & 0xFF, dc = (under >> shift) & 0xFF
            let x = dc * (255 - sa) + 128
            out |= (sc + (x + (x >> 8)) >> 8) << shift
        }
        return out
    }

    @Test("blends clipped at every edge and scaled up and down give, pixel for pixel, the source over the target")
    func blendClippedAndScaled() {
        let source = Self.panel()
        let under: UInt32 = 0xFF40_5060
        // (x, y, w, h): inside, off each edge, scaled up, scaled down, entirely outside.
        let cases = [(2, 1, 7, 3), (-3, -1, 7, 3), (8, 4, 7, 3), (-2, 2, 14, 6), (5, -1, 3, 2), (1, 0, 11, 5), (20, 20, 7, 3), (-9, 0, 7, 3)]
        for (x, y, w, h) in cases {
            let target = ImageBuffer(width: 12, height: 6)
            target.withTarget { t in
                t.fill(PixelRect(x: 0, y: 0, width: 12, height: 6), with: under)
                source.withTarget { s in t.blend(premultiplied: s, x: Double(x), y: Double(y), width: Double(w), height: Double(h), opacity: 1) }
            }
            source.withTarget { s in
                for ty in 0..<6 { for tx in 0..<12 {
                    let want = Self.expected(s, under, x: x, y: y, w: w, h: h, tx: tx, ty: ty) ?? under
                    #expect(target.pixel(x: tx, y: ty) == want, "(\(tx), \(ty)) for a blend at (\(x), \(y)) \(w)x\(h)")
                } }
            }
        }
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
