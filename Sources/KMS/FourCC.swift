// Pixel format codes (drm_fourcc.h).
internal import CDRM

/// A DRM pixel format code: four ASCII characters packed little-endian, as in `drm_fourcc.h`.
///
/// An open set: any code the kernel reports fits, the static members name the ones Vitrine uses.
public struct FourCC: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt32

    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Packs four ASCII characters, e.g. `FourCC("XR24")`; the same as C's `fourcc_code()`.
    ///
    /// - Precondition: `code` is exactly four ASCII characters.
    public init(_ code: String) {
        let bytes = Array(code.utf8)
        precondition(bytes.count == 4 && bytes.allSatisfy { $0 < 0x80 }, "a fourcc is four ASCII characters: \(code)")
        rawValue = UInt32(bytes[0]) | UInt32(bytes[1]) << 8 | UInt32(bytes[2]) << 16 | UInt32(bytes[3]) << 24
    }

    /// 32 bits per pixel, bytes B, G, R, X in memory (`DRM_FORMAT_XRGB8888`, "XR24").
    public static let xrgb8888 = FourCC(rawValue: vt_drm_format_xrgb8888())
    /// 32 bits per pixel, bytes B, G, R, A in memory (`DRM_FORMAT_ARGB8888`, "AR24").
    public static let argb8888 = FourCC(rawValue: vt_drm_format_argb8888())
    /// 4:2:0 YCbCr, a Y plane then an interleaved CbCr plane (`DRM_FORMAT_NV12`).
    public static let nv12 = FourCC(rawValue: vt_drm_format_nv12())
    /// 32 bits per pixel, bytes R, G, B, X in memory (`DRM_FORMAT_XBGR8888`, "XB24").
    public static let xbgr8888 = FourCC("XB24")
    /// 32 bits per pixel, bytes R, G, B, A in memory (`DRM_FORMAT_ABGR8888`, "AB24").
    public static let abgr8888 = FourCC("AB24")
    /// 16 bits per pixel, 5-6-5 (`DRM_FORMAT_RGB565`, "RG16").
    public static let rgb565 = FourCC("RG16")
    /// 4:2:0 YCbCr in three planes (`DRM_FORMAT_YUV420`, "YU12").
    public static let yuv420 = FourCC("YU12")

    /// The four characters, e.g. `"XR24"`; non-printable bytes appear as `?`.
    /// A big-endian code (bit 31, `DRM_FORMAT_BIG_ENDIAN`) gets a `-BE` suffix.
    public var description: String {
        let value = rawValue & 0x7fff_ffff
        let scalars = (0..<4).map { i -> Character in
            let byte = UInt8(truncatingIfNeeded: value >> (8 * UInt32(i)))
            return (0x20..<0x7f).contains(byte) ? Character(Unicode.Scalar(byte)) : "?"
        }
        return String(scalars) + (rawValue & 0x8000_0000 != 0 ? "-BE" : "")
    }
}
