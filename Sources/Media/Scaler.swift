internal import CAVUtil
internal import CSwScale

/// Converts a decoded picture from its native pixel format (YUV, RGB, paletted…) to XRGB8888
/// (`vt_pix_fmt_bgra()`: bytes B, G, R, A in memory) and scales it into a rectangle of a
/// `PixelTarget`, turned by the frame's `rotation`. Caches its `SwsContext` across frames of the same shape.
///
/// Colours: YUV is converted with the frame's own matrix and range (`AVFrame.colorspace`,
/// `AVFrame.color_range`); when the stream does not say, as mpv does: BT.709 for HD (width ≥ 1280 or
/// height > 576), BT.601 otherwise, and full range for the JPEG formats (`yuvj*`), limited otherwise.
/// The corresponding C functions are `sws_getCachedContext`, `sws_setColorspaceDetails` and `sws_scale`.
// @unchecked: `scale` mutates the cached SwsContext; one owner calls it at a time (it may move between threads, never shared).
public final class Scaler: @unchecked Sendable {
    private var context: OpaquePointer?
    /// The conversion `context` was made and set up for.
    private var shape: Shape?
    /// The straight-to-premultiplied pass for pictures with alpha: BGRA at the source size, scaled by `alphaContext`.
    private var alphaContext: OpaquePointer?
    private var unscaled: ImageBuffer?
    /// The scaled picture before it is turned (rotation) or blended (alpha) into the target.
    private var scaled: ImageBuffer?
    /// `SWS_BILINEAR` by default; `SWS_FAST_BILINEAR` is faster and softer.
    private let flags: Int32

    public init(fast: Bool = false) {
        flags = fast ? Int32(SWS_FAST_BILINEAR) : Int32(SWS_BILINEAR)
    }

    deinit {
        sws_freeContext(context)
        sws_freeContext(alphaContext)
    }

    private struct Shape: Equatable {
        var srcWidth: Int32, srcHeight: Int32, srcFormat: Int32
        var dstWidth: Int32, dstHeight: Int32
        var colorspace: Int32, fullRange: Bool
    }

    /// Scales `frame`, turned clockwise by its `rotation` and optionally cropped to `crop`, into `rect` of `target`.
    /// - Parameters:
    ///   - crop: the part of the picture to use, in pixels of the picture as displayed (after
    ///     `rotation`: a 1920x1080 frame turned 90° is 1080 wide); nil for all of it. Offsets are rounded
    ///     down to the chroma grid.
    ///   - rect: where the picture goes; it must lie inside the target.
    ///   - background: an opaque colour `0x00RRGGBB`. A picture with an alpha channel is blended over it
    ///     (straight alpha, premultiplied before scaling so transparent pixels leave no fringe) and the
    ///     result is opaque. Nil writes the picture's own alpha (`0xFF` for pictures without one).
    ///   - quarterTurns: further clockwise quarter turns after `rotation` (a rotated display's), so the
    ///     picture is turned once; `rect` is in the target's own pixels, `crop` still in the displayed
    ///     picture's. Turns that add up to a whole turn cost nothing.
    /// - Throws: `AVError` when no conversion exists for the frame's pixel format or sizes are empty.
    public func scale(_ frame: VideoFrame, crop: PixelRect? = nil, into target: PixelTarget, rect: PixelRect,
                      over background: UInt32? = nil, quarterTurns: Int = 0) throws(AVError) {
        let f = frame.frame
        var srcFmt = AVPixelFormat(f.pointee.format)
        guard let desc = av_pix_fmt_desc_get(srcFmt) else {
            throw AVError(operation: "av_pix_fmt_desc_get", message: "unknown pixel format \(f.pointee.format)")
        }
        let shown = crop ?? PixelRect(x: 0, y: 0, width: frame.displayWidth, height: frame.displayHeight)
        var c = Scaler.codedRect(shown, turns: frame.rotation / 90, width: Int(f.pointee.width), height: Int(f.pointee.height))
        let turns = ((frame.rotation / 90 + quarterTurns) % 4 + 4) % 4
        let cw = 1 << Int(desc.pointee.log2_chroma_w), ch = 1 << Int(desc.pointee.log2_chroma_h)
        c.x -= c.x % cw
        c.y -= c.y % ch
        guard c.width > 0, c.height > 0, rect.width > 0, rect.height > 0,
              rect.x >= 0, rect.y >= 0, rect.x + rect.width <= target.width, rect.y + rect.height <= target.height else {
            throw AVError(operation: "sws_scale", message: "empty or out-of-bounds rectangle \(rect) in \(target.width)x\(target.height)")
        }
        let flagsOf = desc.pointee.flags
        let isRGB = (flagsOf & UInt64(AV_PIX_FMT_FLAG_RGB)) != 0
        let isPalette = (flagsOf & UInt64(AV_PIX_FMT_FLAG_PAL)) != 0
        let blendAlpha = background != nil && frame.hasAlpha
        // The JPEG formats are their plain twins at full range; naming them so keeps the cached context.
        var fullRange = f.pointee.color_range.rawValue == Scaler.rangeFull
        if let name = av_get_pix_fmt_name(srcFmt).map({ String(cString: $0) }), name.hasPrefix("yuvj") {
            let plain = av_get_pix_fmt("yuv" + name.dropFirst(4))
            if plain.rawValue >= 0 { srcFmt = plain }
            if f.pointee.color_range.rawValue != Scaler.rangeLimited { fullRange = true }
        }
        // Bytes from one pixel to the next on each plane (the step of a component stored there).
        var steps = [1, 1, 1, 1]
        withUnsafeBytes(of: desc.pointee.comp) { raw in
            let comps = raw.bindMemory(to: AVComponentDescriptor.self)
            for k in 0..<Int(desc.pointee.nb_components) where comps[k].plane < 4 {
                steps[Int(comps[k].plane)] = max(1, Int(comps[k].step))
            }
        }
        // Source plane pointers, moved to the crop origin.
        var src: [UnsafePointer<UInt8>?] = Array(repeating: nil, count: 4)
        var srcStride: [Int32] = Array(repeating: 0, count: 4)
        withUnsafeBytes(of: f.pointee.data) { data in
            withUnsafeBytes(of: f.pointee.linesize) { ls in
                let planes = data.bindMemory(to: UnsafeMutablePointer<UInt8>?.self)
                let lines = ls.bindMemory(to: Int32.self)
                for i in 0..<4 {
                    guard let p = planes[i] else { continue }
                    srcStride[i] = lines[i]
                    if isPalette && i == 1 { src[i] = UnsafePointer(p); continue }
                    let chroma = (i == 1 || i == 2) && desc.pointee.nb_components >= 3 && !isRGB && !isPalette
                    let xOff = (chroma ? c.x / cw : c.x) * (isPalette ? 1 : steps[i])
                    let yOff = chroma ? c.y / ch : c.y
                    src[i] = UnsafePointer(p + yOff * Int(lines[i]) + xOff)
                }
            }
        }
        // The size of the scaled picture before it is turned.
        let outW = turns % 2 == 0 ? rect.width : rect.height
        let outH = turns % 2 == 0 ? rect.height : rect.width
        let direct = turns == 0 && !blendAlpha
        let space = Scaler.colorspace(f.pointee.colorspace, width: Int(f.pointee.width), height: Int(f.pointee.height))
        let wanted = Shape(srcWidth: Int32(c.width), srcHeight: Int32(c.height), srcFormat: srcFmt.rawValue,
                           dstWidth: Int32(blendAlpha ? c.width : outW), dstHeight: Int32(blendAlpha ? c.height : outH),
                           colorspace: isRGB || isPalette ? -1 : space, fullRange: fullRange)
        try configure(wanted)
        guard let ctx = context else {
            throw AVError(operation: "sws_getCachedContext", message: "no conversion from \(frame.pixelFormatName) to bgra")
        }
        if direct {
            var dst: [UnsafeMutablePointer<UInt8>?] = [
                (target.base + rect.y * target.stride + rect.x * 4).assumingMemoryBound(to: UInt8.self), nil, nil, nil,
            ]
            var dstStride: [Int32] = [Int32(target.stride), 0, 0, 0]
            let r = sws_scale(ctx, src, srcStride, 0, Int32(c.height), &dst, &dstStride)
            if r <= 0 { throw AVError(operation: "sws_scale", code: r < 0 ? r : -1) }
            return
        }
        let picture: ImageBuffer
        if blendAlpha {
            // Straight alpha to premultiplied at the source size, then scaled: scaling premultiplied
            // pixels keeps the colour of transparent ones out of their neighbours.
            let straight = Scaler.buffer(&unscaled, c.width, c.height)
            try Scaler.run(ctx, src, srcStride, c.height, into: straight)
            straight.withTarget { $0.premultiplyAlpha() }
            if c.width == outW && c.height == outH {
                picture = straight
            } else {
                alphaContext = sws_getCachedContext(alphaContext, Int32(c.width), Int32(c.height), vt_pix_fmt_bgra(),
                                                    Int32(outW), Int32(outH), vt_pix_fmt_bgra(), flags, nil, nil, nil)
                guard let actx = alphaContext else {
                    throw AVError(operation: "sws_getCachedContext", message: "no bgra scaler for \(outW)x\(outH)")
                }
                picture = Scaler.buffer(&scaled, outW, outH)
                try straight.withTarget { s throws(AVError) in
                    let p: [UnsafePointer<UInt8>?] = [UnsafePointer(s.base.assumingMemoryBound(to: UInt8.self)), nil, nil, nil]
                    try Scaler.run(actx, p, [Int32(s.stride), 0, 0, 0], c.height, into: picture)
                }
            }
            picture.withTarget { $0.flattenPremultiplied(over: background!) }
        } else {
            picture = Scaler.buffer(&scaled, outW, outH)
            try Scaler.run(ctx, src, srcStride, c.height, into: picture)
        }
        picture.withTarget { p in
            let source = PixelTarget(base: p.base, width: outW, height: outH, stride: p.stride)
            target.copyRotated(from: source, quarterTurns: turns, x: rect.x, y: rect.y)
        }
    }

    /// Makes (or keeps) the cached context for `wanted` and sets its colour matrix and range.
    private func configure(_ wanted: Shape) throws(AVError) {
        context = sws_getCachedContext(context, wanted.srcWidth, wanted.srcHeight, AVPixelFormat(wanted.srcFormat),
                                       wanted.dstWidth, wanted.dstHeight, vt_pix_fmt_bgra(), flags, nil, nil, nil)
        guard let ctx = context, shape != wanted else { return }
        shape = wanted
        // RGB sources keep swscale's defaults: an RGB-to-RGB scale goes through YUV and back with one matrix.
        guard wanted.colorspace >= 0 else { return }
        let r = sws_setColorspaceDetails(ctx, sws_getCoefficients(wanted.colorspace), wanted.fullRange ? 1 : 0,
                                         sws_getCoefficients(SWS_CS_DEFAULT), 1, 0, 1 << 16, 1 << 16)
        if r < 0 { shape = nil; throw AVError(operation: "sws_setColorspaceDetails", code: r) }
    }

    /// The matrix (`AVColorSpace`, which `sws_getCoefficients` takes) for a frame's `colorspace`:
    /// its own when set, else BT.709 for HD and BT.601 for SD, by mpv's rule (`mp_csp_guess_colorspace`).
    static func colorspace(_ space: AVColorSpace, width: Int, height: Int) -> Int32 {
        let v = Int32(space.rawValue)
        if matrices.contains(v) { return v }
        return width >= 1280 || height > 576 ? bt709 : bt601
    }

    // Values of `enum AVColorRange` and `enum AVColorSpace` (libavutil/pixfmt.h), whose enumerators
    // Swift does not import from these headers.
    static let rangeLimited: UInt32 = 1     // AVCOL_RANGE_MPEG
    static let rangeFull: UInt32 = 2        // AVCOL_RANGE_JPEG
    static let bt709: Int32 = 1             // AVCOL_SPC_BT709
    static let bt601: Int32 = 5             // AVCOL_SPC_BT470BG (SWS_CS_ITU601)
    /// The matrices `sws_getCoefficients` has: BT.709, FCC, BT.470BG, SMPTE 170M, SMPTE 240M, BT.2020 NCL and CL.
    static let matrices: Set<Int32> = [1, 4, 5, 6, 7, 9, 10]

    /// Maps a rectangle of the picture as displayed (turned `turns` quarter turns clockwise) back to the
    /// coded picture of `width`×`height`.
    static func codedRect(_ r: PixelRect, turns: Int, width: Int, height: Int) -> PixelRect {
        switch ((turns % 4) + 4) % 4 {
        case 1: return PixelRect(x: r.y, y: height - r.x - r.width, width: r.height, height: r.width)
        case 2: return PixelRect(x: width - r.x - r.width, y: height - r.y - r.height, width: r.width, height: r.height)
        case 3: return PixelRect(x: width - r.y - r.height, y: r.x, width: r.height, height: r.width)
        default: return r
        }
    }

    private static func buffer(_ slot: inout ImageBuffer?, _ width: Int, _ height: Int) -> ImageBuffer {
        if let b = slot, b.width == width, b.height == height { return b }
        let b = ImageBuffer(width: width, height: height)
        slot = b
        return b
    }

    private static func run(_ ctx: OpaquePointer, _ src: [UnsafePointer<UInt8>?], _ srcStride: [Int32], _ srcHeight: Int,
                            into buffer: ImageBuffer) throws(AVError) {
        var dst: [UnsafeMutablePointer<UInt8>?] = [nil, nil, nil, nil]
        var dstStride: [Int32] = [Int32(buffer.stride), 0, 0, 0]
        let r = buffer.withTarget { t -> Int32 in
            dst[0] = t.base.assumingMemoryBound(to: UInt8.self)
            return sws_scale(ctx, src, srcStride, 0, Int32(srcHeight), &dst, &dstStride)
        }
        if r <= 0 { throw AVError(operation: "sws_scale", code: r < 0 ? r : -1) }
    }
}
