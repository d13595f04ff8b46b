/// A rectangle in pixels; `x`, `y` is the top-left corner.
public struct PixelRect: Sendable, Equatable, CustomStringConvertible {
    public var x: Int, y: Int, width: Int, height: Int
    public init(x: Int, y: Int, width: Int, height: Int) { self.x = x; self.y = y; self.width = width; self.height = height }
    public var description: String { "\(width)x\(height)+\(x)+\(y)" }
}

/// A writable view of 32-bit pixels, XRGB8888/ARGB8888 little-endian (bytes B, G, R, A/X in memory),
/// `stride` bytes per row. It does not own its memory: it is valid only inside the closure that made it
/// (`ImageBuffer.withTarget`, or a KMS dumb buffer's `withBackBuffer`).
public struct PixelTarget {
    public let base: UnsafeMutableRawPointer
    public let width: Int
    public let height: Int
    /// Bytes per row.
    public let stride: Int

    public init(base: UnsafeMutableRawPointer, width: Int, height: Int, stride: Int) {
        precondition(stride >= width * 4, "stride too small")
        self.base = base; self.width = width; self.height = height; self.stride = stride
    }

    public init(_ buffer: UnsafeMutableRawBufferPointer, width: Int, height: Int, stride: Int) {
        precondition(buffer.count >= stride * height, "buffer too small")
        self.init(base: buffer.baseAddress!, width: width, height: height, stride: stride)
    }

    /// Fills `rect` (clipped to the target) with one pixel value.
    public func fill(_ rect: PixelRect, with pixel: UInt32) {
        let x0 = max(0, rect.x), y0 = max(0, rect.y)
        let x1 = min(width, rect.x + rect.width), y1 = min(height, rect.y + rect.height)
        guard x1 > x0, y1 > y0 else { return }
        for y in y0..<y1 {
            let row = (base + y * stride).assumingMemoryBound(to: UInt32.self)
            (row + x0).update(repeating: pixel, count: x1 - x0)
        }
    }

    /// Fills everything outside `rect` with `pixel` (letterbox and pillarbox bars).
    public func fill(outside rect: PixelRect, with pixel: UInt32) {
        fill(PixelRect(x: 0, y: 0, width: width, height: max(0, rect.y)), with: pixel)
        fill(PixelRect(x: 0, y: rect.y + rect.height, width: width, height: height - rect.y - rect.height), with: pixel)
        fill(PixelRect(x: 0, y: rect.y, width: max(0, rect.x), height: rect.height), with: pixel)
        fill(PixelRect(x: rect.x + rect.width, y: rect.y, width: width - rect.x - rect.width, height: rect.height), with: pixel)
    }

    /// The pixel at (x, y).
    public func pixel(x: Int, y: Int) -> UInt32 {
        (base + y * stride).assumingMemoryBound(to: UInt32.self)[x]
    }

    /// Copies `source` into this target turned clockwise by `quarterTurns` × 90°, placing the result's
    /// top-left corner at (`x`, `y`). A quarter turn maps source (sx, sy) of an h-row source to (h-1-sy, sx).
    public func copyRotated(from source: PixelTarget, quarterTurns: Int, x: Int, y: Int) {
        let turns = ((quarterTurns % 4) + 4) % 4
        let sw = source.width, sh = source.height
        let outW = turns % 2 == 0 ? sw : sh
        let outH = turns % 2 == 0 ? sh : sw
        guard x >= 0, y >= 0, x + outW <= width, y + outH <= height else {
            preconditionFailure("rotated copy out of bounds")
        }
        let srcStridePx = source.stride / 4
        let src = source.base.assumingMemoryBound(to: UInt32.self)
        for dy in 0..<outH {
            let row = (base + (y + dy) * stride).assumingMemoryBound(to: UInt32.self) + x
            switch turns {
            case 0:
                row.update(from: src + dy * srcStridePx, count: outW)
            case 1: // dst(dx, dy) = src(sx: dy, sy: sh-1-dx)
                for dx in 0..<outW { row[dx] = src[(sh - 1 - dx) * srcStridePx + dy] }
            case 2: // dst(dx, dy) = src(sw-1-dx, sh-1-dy)
                let s = src + (sh - 1 - dy) * srcStridePx
                for dx in 0..<outW { row[dx] = s[sw - 1 - dx] }
            default: // 3: dst(dx, dy) = src(sx: sw-1-dy, sy: dx)
                for dx in 0..<outW { row[dx] = src[dx * srcStridePx + (sw - 1 - dy)] }
            }
        }
    }

    /// Blends premultiplied ARGB8888 `source` over this target at (`x`, `y`), clipped.
    public func blend(premultiplied source: PixelTarget, x: Int, y: Int, opacity: Double = 1, tint: Tint? = nil) {
        let a = UInt32(max(0, min(255, (opacity * 255).rounded())))
        let t = tint?.packed
        // The source columns that land on the target (clipped once, not per pixel).
        let sx0 = max(0, -x), sx1 = min(source.width, width - x)
        guard sx1 > sx0 else { return }
        for sy in 0..<source.height {
            let dy = y + sy
            guard dy >= 0, dy < height else { continue }
            let srow = (source.base + sy * source.stride).assumingMemoryBound(to: UInt32.self)
            let drow = (base + dy * stride).assumingMemoryBound(to: UInt32.self)
            for sx in sx0..<sx1 {
                let dx = x + sx
                var s = srow[sx]
                if a != 255 { s = PixelTarget.scale(s, a) }
                if let t { s = PixelTarget.tinted(s, t) }
                let sa = s >> 24
                if sa == 0 { continue }
                if sa == 255 { drow[dx] = s | 0xFF00_0000; continue }
                let d = PixelTarget.scale(drow[dx], 255 - sa)
                drow[dx] = (s &+ d) | 0xFF00_0000
            }
        }
    }

    /// A dimming applied to a source while it is blended: the source as if a layer of `color`
    /// (`0x00RRGGBB`) at `alpha` 0…1 lay over it, its own alpha unchanged. A popup under another
    /// popup's dimming is drawn this way, so the target is dimmed in one pass (`copyDimmed`).
    public struct Tint: Sendable, Equatable {
        public var color: UInt32
        public var alpha: Double
        public init(color: UInt32, alpha: Double) { self.color = color; self.alpha = alpha }

        /// Several dimmings one over the other (the first lowest) as one: alpha 1 − Π(1 − aᵢ), and the
        /// colour that gives the same result; nil when there are none or all are clear.
        public static func combined(_ layers: [Tint]) -> Tint? {
            var keep = 1.0, add = (r: 0.0, g: 0.0, b: 0.0)
            for l in layers {
                let a = max(0, min(1, l.alpha))
                add = (add.r * (1 - a) + Double((l.color >> 16) & 0xFF) * a,
                       add.g * (1 - a) + Double((l.color >> 8) & 0xFF) * a,
                       add.b * (1 - a) + Double(l.color & 0xFF) * a)
                keep *= 1 - a
            }
            let alpha = 1 - keep
            guard alpha > 0.5 / 255 else { return nil }
            func c(_ v: Double) -> UInt32 { UInt32(max(0, min(255, (v / alpha).rounded()))) }
            return Tint(color: c(add.r) << 16 | c(add.g) << 8 | c(add.b), alpha: alpha)
        }

        /// (premultiplied opaque colour × alpha, 255 − alpha) in 8 bits.
        var packed: (color: UInt32, keep: UInt32) {
            let a = UInt32(max(0, min(255, (alpha * 255).rounded())))
            return (PixelTarget.scale(color | 0xFF00_0000, a), 255 - a)
        }
    }

    @inline(__always)
    static func tinted(_ s: UInt32, _ t: (color: UInt32, keep: UInt32)) -> UInt32 {
        let sa = s >> 24
        if sa == 0 { return s }
        return PixelTarget.scale(s, t.keep) &+ PixelTarget.scale(t.color, sa)
    }

    @inline(__always)
    static func scale(_ p: UInt32, _ a: UInt32) -> UInt32 {
        // Per-channel p * a / 255 on all four bytes, two channels at a time.
        var rb = (p & 0x00FF_00FF) &* a &+ 0x0080_0080
        rb = ((rb &+ ((rb >> 8) & 0x00FF_00FF)) >> 8) & 0x00FF_00FF
        var ag = ((p >> 8) & 0x00FF_00FF) &* a &+ 0x0080_0080
        ag = (ag &+ ((ag >> 8) & 0x00FF_00FF)) & 0xFF00_FF00
        return rb | ag
    }
}

/// An owned XRGB8888 image in memory (bytes B, G, R, X), rows `stride` bytes apart, 64-byte aligned.
/// The headless output presents into these, and snapshots and recordings read them.
// @unchecked: the sizes are `let`s; the pixels are raw memory that only the thread owning the image at the time reads or writes.
public final class ImageBuffer: @unchecked Sendable {
    public let width: Int
    public let height: Int
    /// Bytes per row (a multiple of 64).
    public let stride: Int
    private let storage: UnsafeMutableRawPointer

    public init(width: Int, height: Int) {
        precondition(width > 0 && height > 0, "empty image")
        self.width = width
        self.height = height
        stride = (width * 4 + 63) & ~63
        storage = UnsafeMutableRawPointer.allocate(byteCount: stride * height, alignment: 64)
        storage.initializeMemory(as: UInt8.self, repeating: 0, count: stride * height)
    }

    deinit { storage.deallocate() }

    /// Gives a `PixelTarget` over the whole image, valid only inside `body`.
    public func withTarget<R, E: Error>(_ body: (PixelTarget) throws(E) -> R) throws(E) -> R {
        try body(PixelTarget(base: storage, width: width, height: height, stride: stride))
    }

    /// The pixel at (x, y) as 0xXXRRGGBB.
    public func pixel(x: Int, y: Int) -> UInt32 {
        precondition(x >= 0 && x < width && y >= 0 && y < height)
        return storage.load(fromByteOffset: y * stride + x * 4, as: UInt32.self)
    }

    /// Red, green and blue of the pixel at (x, y).
    public func rgb(x: Int, y: Int) -> (r: UInt8, g: UInt8, b: UInt8) {
        let p = pixel(x: x, y: y)
        return (UInt8(truncatingIfNeeded: p >> 16), UInt8(truncatingIfNeeded: p >> 8), UInt8(truncatingIfNeeded: p))
    }
}

extension PixelTarget {
    /// Copies `source` (the same width and height; strides may differ) row by row: a picture kept in
    /// memory written to a scanout buffer without reading the buffer back.
    public func copy(from source: PixelTarget) {
        precondition(source.width == width && source.height == height, "copy between different sizes")
        for y in 0..<height {
            (base + y * stride).copyMemory(from: source.base + y * source.stride, byteCount: width * 4)
        }
    }

    /// Writes `source` (the same size) dimmed by `color` at `alpha` 0…1, as `copy(from:)` followed by
    /// `dim(_:color:alpha:)` over everything, in one pass that never reads this target.
    public func copyDimmed(from source: PixelTarget, color: UInt32, alpha: Double) {
        precondition(source.width == width && source.height == height, "copy between different sizes")
        let t = Tint(color: color, alpha: alpha).packed
        guard t.keep < 255 else { copy(from: source); return }
        for y in 0..<height {
            let src = (source.base + y * source.stride).assumingMemoryBound(to: UInt32.self)
            let dst = (base + y * stride).assumingMemoryBound(to: UInt32.self)
            for x in 0..<width { dst[x] = PixelTarget.dimmed(src[x], t) }
        }
    }

    /// An opaque pixel under a dimming layer (`Tint.packed`): colour·alpha + pixel·(1 − alpha).
    @inline(__always)
    static func dimmed(_ p: UInt32, _ t: (color: UInt32, keep: UInt32)) -> UInt32 {
        (t.color &+ PixelTarget.scale(p, t.keep)) | 0xFF00_0000
    }

    /// Blends one premultiplied ARGB colour (`0xAARRGGBB`, alpha `alpha` 0…1) over `rect` (clipped):
    /// the dimming layer behind a popup.
    public func dim(_ rect: PixelRect, color: UInt32, alpha: Double) {
        let t = Tint(color: color, alpha: alpha).packed
        guard t.keep < 255 else { return }
        let x0 = max(0, rect.x), y0 = max(0, rect.y)
        let x1 = min(width, rect.x + rect.width), y1 = min(height, rect.y + rect.height)
        guard x1 > x0, y1 > y0 else { return }
        for y in y0..<y1 {
            let row = (base + y * stride).assumingMemoryBound(to: UInt32.self)
            for x in x0..<x1 { row[x] = PixelTarget.dimmed(row[x], t) }
        }
    }

    /// Blends premultiplied ARGB8888 `source` scaled to `width`×`height` at (`x`, `y`) (nearest
    /// sample; fractional positions round), clipped, at `opacity`: a popup while it animates.
    public func blend(premultiplied source: PixelTarget, x: Double, y: Double, width: Double, height: Double, opacity: Double,
                      tint: Tint? = nil) {
        let w = Int(width.rounded()), h = Int(height.rounded())
        guard w > 0, h > 0 else { return }
        if w == source.width && h == source.height {
            blend(premultiplied: source, x: Int(x.rounded()), y: Int(y.rounded()), opacity: opacity, tint: tint)
            return
        }
        let a = UInt32(max(0, min(255, (opacity * 255).rounded())))
        let t = tint?.packed
        let ox = Int(x.rounded()), oy = Int(y.rounded())
        // The columns on the target, and the source column each samples (worked out once, not per pixel).
        let dx0 = max(0, -ox), dx1 = min(w, self.width - ox)
        guard dx1 > dx0 else { return }
        let columns = (dx0..<dx1).map { min(source.width - 1, $0 * source.width / w) }
        for dy in 0..<h {
            let ty = oy + dy
            guard ty >= 0, ty < self.height else { continue }
            let sy = min(source.height - 1, dy * source.height / h)
            let srow = (source.base + sy * source.stride).assumingMemoryBound(to: UInt32.self)
            let drow = (base + ty * stride).assumingMemoryBound(to: UInt32.self) + (ox + dx0)
            for (i, sx) in columns.enumerated() {
                var s = srow[sx]
                if a != 255 { s = PixelTarget.scale(s, a) }
                if let t { s = PixelTarget.tinted(s, t) }
                let sa = s >> 24
                if sa == 0 { continue }
                drow[i] = sa == 255 ? s | 0xFF00_0000 : (s &+ PixelTarget.scale(drow[i], 255 - sa)) | 0xFF00_0000
            }
        }
    }
}

extension PixelTarget {
    /// Turns straight-alpha ARGB8888 pixels into premultiplied ones in place: each colour channel
    /// times alpha / 255 (rounded), alpha kept.
    func premultiplyAlpha() {
        for y in 0..<height {
            let row = (base + y * stride).assumingMemoryBound(to: UInt32.self)
            for x in 0..<width {
                let p = row[x], a = p >> 24
                if a == 255 { continue }
                row[x] = a == 0 ? 0 : (PixelTarget.scale(p, a) & 0x00FF_FFFF) | (a << 24)
            }
        }
    }

    /// Blends premultiplied ARGB8888 pixels in place over the opaque colour `background`
    /// (`0x00RRGGBB`): colour + background × (255 − alpha) / 255 per channel (at most 255), alpha 0xFF.
    func flattenPremultiplied(over background: UInt32) {
        for y in 0..<height {
            let row = (base + y * stride).assumingMemoryBound(to: UInt32.self)
            for x in 0..<width {
                let p = row[x], a = p >> 24
                if a == 255 { continue }
                let b = PixelTarget.scale(background, 255 - a)
                let r = min(255, (p >> 16 & 0xFF) + (b >> 16 & 0xFF))
                let g = min(255, (p >> 8 & 0xFF) + (b >> 8 & 0xFF))
                let bl = min(255, (p & 0xFF) + (b & 0xFF))
                row[x] = 0xFF00_0000 | r << 16 | g << 8 | bl
            }
        }
    }
}
