internal import CAVUtil
internal import CSwScale

/// Converts a decoded picture from its native pixel format (YUV, RGB, paletted…) to XRGB8888
/// (`vt_pix_fmt_bgra()`: bytes B, G, R, A in memory, alpha 0xFF) and scales it into a rectangle of a
/// `PixelTarget` in one pass. Caches its `SwsContext` across frames of the same shape.
/// The corresponding C functions are `sws_getCachedContext` and `sws_scale`.
// @unchecked: `scale` mutates the cached SwsContext; one owner calls it at a time (it may move between threads, never shared).
public final class Scaler: @unchecked Sendable {
    private var context: OpaquePointer?
    /// `SWS_BILINEAR` by default; `SWS_FAST_BILINEAR` is faster and softer.
    private let flags: Int32

    public init(fast: Bool = false) {
        flags = fast ? Int32(SWS_FAST_BILINEAR) : Int32(SWS_BILINEAR)
    }

    deinit { sws_freeContext(context) }

    /// Scales `frame` (optionally cropped to `crop`, in source pixels) into `rect` of `target`.
    /// `rect` must lie inside the target. Crop offsets are rounded down to the chroma grid.
    /// - Throws: `AVError` when no conversion exists for the frame's pixel format or sizes are empty.
    public func scale(_ frame: VideoFrame, crop: PixelRect? = nil, into target: PixelTarget, rect: PixelRect) throws(AVError) {
        let f = frame.frame
        let srcFmt = AVPixelFormat(f.pointee.format)
        var c = crop ?? PixelRect(x: 0, y: 0, width: Int(f.pointee.width), height: Int(f.pointee.height))
        guard let desc = av_pix_fmt_desc_get(srcFmt) else {
            throw AVError(operation: "av_pix_fmt_desc_get", message: "unknown pixel format \(f.pointee.format)")
        }
        let cw = 1 << Int(desc.pointee.log2_chroma_w), ch = 1 << Int(desc.pointee.log2_chroma_h)
        c.x -= c.x % cw
        c.y -= c.y % ch
        guard c.width > 0, c.height > 0, rect.width > 0, rect.height > 0,
              rect.x >= 0, rect.y >= 0, rect.x + rect.width <= target.width, rect.y + rect.height <= target.height else {
            throw AVError(operation: "sws_scale", message: "empty or out-of-bounds rectangle \(rect) in \(target.width)x\(target.height)")
        }
        context = sws_getCachedContext(context, Int32(c.width), Int32(c.height), srcFmt,
                                       Int32(rect.width), Int32(rect.height), vt_pix_fmt_bgra(),
                                       flags, nil, nil, nil)
        guard let ctx = context else {
            throw AVError(operation: "sws_getCachedContext", message: "no conversion from \(frame.pixelFormatName) to bgra")
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
                    let chroma = (i == 1 || i == 2) && desc.pointee.nb_components >= 3 && (desc.pointee.flags & UInt64(AV_PIX_FMT_FLAG_RGB)) == 0
                        && (desc.pointee.flags & UInt64(AV_PIX_FMT_FLAG_PAL)) == 0
                    let bytesPerPixel = i == 0 || chroma ? Int(desc.pointee.comp.0.step) : Int(desc.pointee.comp.0.step)
                    let xOff = (chroma ? c.x / cw : c.x) * max(1, (desc.pointee.flags & UInt64(AV_PIX_FMT_FLAG_PAL)) != 0 ? 1 : bytesPerPixel)
                    let yOff = chroma ? c.y / ch : c.y
                    let isPalette = (desc.pointee.flags & UInt64(AV_PIX_FMT_FLAG_PAL)) != 0 && i == 1
                    src[i] = UnsafePointer(isPalette ? p : p + yOff * Int(lines[i]) + xOff)
                }
            }
        }
        var dst: [UnsafeMutablePointer<UInt8>?] = [
            (target.base + rect.y * target.stride + rect.x * 4).assumingMemoryBound(to: UInt8.self), nil, nil, nil,
        ]
        var dstStride: [Int32] = [Int32(target.stride), 0, 0, 0]
        let r = sws_scale(ctx, src, srcStride, 0, Int32(c.height), &dst, &dstStride)
        if r <= 0 { throw AVError(operation: "sws_scale", code: r < 0 ? r : -1) }
    }
}
