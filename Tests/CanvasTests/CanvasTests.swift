import Foundation
import Canvas
import Testing

/// Pixels are read back as 0xAARRGGBB; opaque colours read back unchanged.
@Suite("Canvas")
struct CanvasTests {
    static let background: UInt32 = 0xFF10_2030
    static let ink: UInt32 = 0xFFFF_FFFF

    @Test("a new canvas has the requested size, 4-byte pixels and transparent black")
    func newCanvas() throws {
        let canvas = try Canvas(width: 321, height: 40)
        #expect(canvas.width == 321)
        #expect(canvas.height == 40)
        #expect(canvas.stride >= 4 * 321)
        #expect(canvas.pixel(x: 0, y: 0) == 0)
        #expect(canvas.pixel(x: 320, y: 39) == 0)
    }

    @Test("a copy holds the same pixels, transparent corners included, and drawing on it leaves the original")
    func copy() throws {
        let canvas = try Canvas(width: 40, height: 20)
        canvas.fillRoundedRect(x: 0, y: 0, width: 40, height: 20, radius: 6, color: 0xFFF4_F6F8)
        let copy = try canvas.copy()
        #expect(copy.width == 40 && copy.height == 20)
        var same = true
        for y in 0..<20 { for x in 0..<40 where copy.pixel(x: x, y: y) != canvas.pixel(x: x, y: y) { same = false } }
        #expect(same)
        #expect(copy.pixel(x: 0, y: 0) == 0, "the rounded corner stays transparent")
        #expect(copy.pixel(x: 20, y: 10) == 0xFFF4_F6F8)
        copy.fillRoundedRect(x: 10, y: 5, width: 20, height: 10, radius: 2, color: 0xFF0B_3D91)
        #expect(copy.pixel(x: 20, y: 10) == 0xFF0B_3D91)
        #expect(canvas.pixel(x: 20, y: 10) == 0xFFF4_F6F8)
    }

    @Test("a size of zero is refused with CAIRO_STATUS_INVALID_SIZE")
    func invalidSize() {
        let error = #expect(throws: CanvasError.self) { try Canvas(width: 0, height: 10) }
        #expect(error?.operation == "cairo_image_surface_create")
        #expect(error?.description.contains("size") == true)
    }

    @Test("clear sets every pixel, alpha included; bytes are B, G, R, A")
    func clearAndByteOrder() throws {
        let canvas = try Canvas(width: 8, height: 4)
        canvas.clear(0xFF11_2233)
        #expect(canvas.pixel(x: 7, y: 3) == 0xFF11_2233)
        canvas.withPixels { pixels, stride in
            #expect(Array(pixels[0..<4]) == [0x33, 0x22, 0x11, 0xFF])
            #expect(Array(pixels[3 * stride + 28..<3 * stride + 32]) == [0x33, 0x22, 0x11, 0xFF])
        }
        canvas.clear(0x0000_0000)
        #expect(canvas.pixel(x: 3, y: 2) == 0)
    }

    @Test("a rounded rectangle: centre and edge midpoints in its colour, corners background, outside untouched")
    func roundedRect() throws {
        let canvas = try Canvas(width: 200, height: 120)
        canvas.clear(Self.background)
        let fill: UInt32 = 0xFF33_66CC
        canvas.fillRoundedRect(x: 20, y: 10, width: 160, height: 100, radius: 24, color: fill)

        #expect(canvas.pixel(x: 100, y: 60) == fill)
        #expect(canvas.pixel(x: 21, y: 60) == fill)      // left edge, middle
        #expect(canvas.pixel(x: 100, y: 10) == fill)     // top edge, middle
        #expect(canvas.pixel(x: 178, y: 108) != fill)    // inside the box, cut by the corner
        for (x, y) in [(20, 10), (179, 10), (20, 109), (179, 109), (23, 13)] {
            #expect(canvas.pixel(x: x, y: y) == Self.background, "corner pixel (\(x), \(y))")
        }
        for (x, y) in [(19, 60), (180, 60), (100, 9), (100, 110), (0, 0), (199, 119)] {
            #expect(canvas.pixel(x: x, y: y) == Self.background, "outside pixel (\(x), \(y))")
        }
    }

    @Test("a translucent fill is blended and stored premultiplied")
    func translucentFill() throws {
        let canvas = try Canvas(width: 4, height: 4)
        canvas.fillRoundedRect(x: 0, y: 0, width: 4, height: 4, radius: 0, color: 0x80FF_0000)
        let pixel = canvas.pixel(x: 1, y: 1)
        #expect(pixel >> 24 == 0x80)
        #expect((pixel >> 16) & 0xFF == 0x80)  // red 0xFF premultiplied by alpha 0x80
        #expect(pixel & 0xFFFF == 0)
    }

    @Test("text is drawn inside the box it reports, and nothing is drawn outside it")
    func textStaysInItsBox() throws {
        let canvas = try Canvas(width: 640, height: 200)
        canvas.clear(Self.background)
        let (x, y, width) = (40.0, 30.0, 400.0)
        let size = canvas.drawText("No playable media on the USB stick", x: x, y: y, width: width, maxHeight: nil,
                                   font: "DejaVu Sans 20", color: Self.ink, alignment: .left)
        #expect(size.width > 100 && size.width <= width)
        #expect(size.height > 20 && size.height < 150)
        #expect(canvas.measureText("No playable media on the USB stick", width: width, font: "DejaVu Sans 20") == size)

        let box = (minX: Int(x), minY: Int(y), maxX: Int((x + size.width).rounded(.up)), maxY: Int((y + size.height).rounded(.up)))
        var inside = 0
        var outside: [(Int, Int)] = []
        for py in 0..<canvas.height {
            for px in 0..<canvas.width where canvas.pixel(x: px, y: py) != Self.background {
                if (box.minX..<box.maxX).contains(px) && (box.minY..<box.maxY).contains(py) {
                    inside += 1
                } else {
                    outside.append((px, py))
                }
            }
        }
        #expect(inside > 200, "ink pixels inside the box: \(inside)")
        #expect(outside.isEmpty, "ink outside the box, first: \(outside.prefix(5))")
    }

    @Test("long text wraps to the width; maxHeight ellipsizes it; measure matches draw")
    func wrappingAndEllipsis() throws {
        let canvas = try Canvas(width: 400, height: 400)
        let sentence = String(repeating: "The schedule has nothing to play right now. ", count: 8)
        let oneLine = canvas.measureText("The schedule", width: 300, font: "DejaVu Sans 16")
        let wrapped = canvas.measureText(sentence, width: 300, font: "DejaVu Sans 16")
        #expect(wrapped.width <= 300)
        #expect(wrapped.height > 4 * oneLine.height)

        let cut = canvas.measureText(sentence, width: 300, maxHeight: 3 * oneLine.height, font: "DejaVu Sans 16")
        #expect(cut.height <= 3 * oneLine.height)
        #expect(cut.height >= 2 * oneLine.height)
        let drawn = canvas.drawText(sentence, x: 0, y: 0, width: 300, maxHeight: 3 * oneLine.height,
                                    font: "DejaVu Sans 16", color: Self.ink)
        #expect(drawn == cut)
    }

    @Test("centred text sits in the middle of its width")
    func centred() throws {
        let canvas = try Canvas(width: 600, height: 80)
        canvas.clear(Self.background)
        canvas.drawText("Vitrine", x: 0, y: 10, width: 600, maxHeight: nil, font: "DejaVu Sans 24",
                        color: Self.ink, alignment: .center)
        var columns: [Int] = []
        for px in 0..<600 where (0..<80).contains(where: { canvas.pixel(x: px, y: $0) != Self.background }) {
            columns.append(px)
        }
        let first = try #require(columns.first)
        let last = try #require(columns.last)
        #expect(abs((first + last) / 2 - 300) <= 3, "ink spans \(first)...\(last)")
    }
}

@Suite("Text: scripts")
struct TextScriptTests {
    static var hasCJKFont: Bool {
        FileManager.default.fileExists(atPath: "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc")
    }

    @Test("Latin, Greek, Cyrillic, Hebrew and Arabic need only DejaVu: every character has a glyph")
    func dejaVuScripts() throws {
        let c = try Canvas(width: 8, height: 8)
        for text in ["Opening hours", "Ώρες λειτουργίας", "Часы работы", "שעות פתיחה", "ساعات العمل"] {
            #expect(c.unknownGlyphCount(text, font: "DejaVu Sans 20px") == 0, "\(text)")
        }
    }

    @Test("Chinese, Japanese and Korean get glyphs from fonts-noto-cjk through fontconfig's fallback",
          .enabled(if: TextScriptTests.hasCJKFont, "fonts-noto-cjk is not installed (tools/setup installs it)"))
    func cjkWithNoto() throws {
        let c = try Canvas(width: 240, height: 60)
        for text in ["营业时间", "営業時間のご案内", "영업 시간"] {
            #expect(c.unknownGlyphCount(text, font: "DejaVu Sans 20px") == 0, "\(text)")
        }
        // And ink is drawn: dark pixels on a white canvas.
        c.clear(0xFFFF_FFFF)
        c.drawText("营业时间", x: 4, y: 4, width: 232, font: "DejaVu Sans 32px", color: 0xFF00_0000)
        var dark = 0
        for y in 0..<60 { for x in 0..<240 where c.pixel(x: x, y: y) & 0xFF < 128 { dark += 1 } }
        #expect(dark > 200, "\(dark) dark pixels")
    }
}
