// Display modes and the rule that picks one.
internal import CDRM

/// Which display mode to use, from the configuration.
public enum ModeRequest: Sendable, Equatable {
    /// The mode the sink marks PREFERRED (its native resolution), else the largest.
    case preferred
    /// The largest mode: most pixels, then highest refresh rate.
    case highest
    /// A mode of exactly `width` x `height` pixels whose refresh rate rounds to `refresh` Hz;
    /// if the sink has none, the PREFERRED mode, else the largest.
    case exact(width: Int, height: Int, refresh: Int)
}

/// A display mode a connector supports (a `drmModeModeInfo`).
public struct Mode: Sendable, Equatable, CustomStringConvertible {
    /// The kernel's name for the mode, e.g. `"1920x1080"` or `"1920x1080i"`.
    public var name: String
    /// Visible width in pixels (`hdisplay`).
    public var width: Int
    /// Visible height in pixels (`vdisplay`).
    public var height: Int
    /// Frames per second in Hz, computed from the pixel clock and totals, e.g. 59.94.
    public var refreshRate: Double
    /// Whether the sink marks this mode PREFERRED (`DRM_MODE_TYPE_PREFERRED`).
    public var isPreferred: Bool
    /// The full timings as the kernel reported them; `nil` for a mode built by hand.
    /// `Scanout` needs them to program the CRTC.
    public var timing: Timing?

    /// Creates a mode, e.g. for tests or configuration; `timing` is `nil` unless given.
    public init(name: String, width: Int, height: Int, refreshRate: Double, isPreferred: Bool, timing: Timing? = nil) {
        self.name = name
        self.width = width
        self.height = height
        self.refreshRate = refreshRate
        self.isPreferred = isPreferred
        self.timing = timing
    }

    /// Creates a mode from its kernel timings: size from `hdisplay`/`vdisplay`, refresh rate computed.
    public init(timing: Timing) {
        self.init(name: timing.name, width: timing.hdisplay, height: timing.vdisplay,
                  refreshRate: timing.refreshRate, isPreferred: timing.type & Timing.typePreferred != 0,
                  timing: timing)
    }

    /// Whether the mode is interlaced (`DRM_MODE_FLAG_INTERLACE`); `false` without timings.
    public var isInterlaced: Bool { (timing?.flags ?? 0) & Timing.flagInterlace != 0 }

    /// `1920x1080@60.00` with a trailing `*` when preferred.
    public var description: String {
        let hz = (refreshRate * 100).rounded() / 100
        var text = "\(width)x\(height)\(isInterlaced ? "i" : "")@\(Self.twoDecimals(hz))"
        if isPreferred { text += "*" }
        return text
    }

    private static func twoDecimals(_ value: Double) -> String {
        let hundredths = Int((value * 100).rounded())
        let fraction = hundredths % 100
        return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)"
    }
}

extension Mode {
    /// The raw timings of a mode, field for field as in `struct drm_mode_modeinfo`.
    ///
    /// Horizontal values are in pixels, vertical values in lines, `clock` in kHz.
    public struct Timing: Sendable, Equatable {
        public var clock: UInt32
        public var hdisplay, hsyncStart, hsyncEnd, htotal, hskew: Int
        public var vdisplay, vsyncStart, vsyncEnd, vtotal, vscan: Int
        /// The kernel's rounded refresh rate in Hz (`vrefresh`); prefer `refreshRate`.
        public var vrefresh: UInt32
        /// `DRM_MODE_FLAG_*` bits (sync polarity, interlace, double scan, ...).
        public var flags: UInt32
        /// `DRM_MODE_TYPE_*` bits (preferred, driver, user).
        public var type: UInt32
        public var name: String

        public init(clock: UInt32, hdisplay: Int, hsyncStart: Int, hsyncEnd: Int, htotal: Int, hskew: Int = 0,
                    vdisplay: Int, vsyncStart: Int, vsyncEnd: Int, vtotal: Int, vscan: Int = 0,
                    vrefresh: UInt32 = 0, flags: UInt32 = 0, type: UInt32 = 0, name: String = "") {
            self.clock = clock
            self.hdisplay = hdisplay; self.hsyncStart = hsyncStart; self.hsyncEnd = hsyncEnd
            self.htotal = htotal; self.hskew = hskew
            self.vdisplay = vdisplay; self.vsyncStart = vsyncStart; self.vsyncEnd = vsyncEnd
            self.vtotal = vtotal; self.vscan = vscan
            self.vrefresh = vrefresh; self.flags = flags; self.type = type
            self.name = name.isEmpty ? "\(hdisplay)x\(vdisplay)" : name
        }

        /// `DRM_MODE_TYPE_PREFERRED`.
        public static let typePreferred = UInt32(DRM_MODE_TYPE_PREFERRED)
        /// `DRM_MODE_FLAG_INTERLACE`.
        public static let flagInterlace = UInt32(DRM_MODE_FLAG_INTERLACE)
        /// `DRM_MODE_FLAG_DBLSCAN`.
        public static let flagDoubleScan = UInt32(DRM_MODE_FLAG_DBLSCAN)

        /// Frames per second in Hz: `clock * 1000 / (htotal * vtotal)`, doubled for interlaced
        /// modes (two fields per frame period), halved for double-scan, divided by `vscan` > 1.
        /// The same rule as the kernel's `drm_mode_vrefresh()`, without its rounding. 0 if a total is 0.
        public var refreshRate: Double {
            var numerator = Double(clock) * 1000
            var denominator = Double(htotal) * Double(vtotal)
            if flags & Self.flagInterlace != 0 { numerator *= 2 }
            if flags & Self.flagDoubleScan != 0 { denominator *= 2 }
            if vscan > 1 { denominator *= Double(vscan) }
            return denominator > 0 ? numerator / denominator : 0
        }
    }
}

extension Mode {
    /// Picks the mode for `request`: the exact mode asked for, else the PREFERRED one, else the largest.
    ///
    /// An `.exact` request matches `width` and `height` exactly and compares `refresh` with each
    /// mode's rate rounded to the nearest Hz (59.94 matches 60). Among several matches it takes a
    /// progressive mode before an interlaced one, then the rate closest to `refresh`, then the
    /// PREFERRED one. "Largest" means most pixels, then the highest refresh rate. `.highest` is
    /// always the largest, `.preferred` the PREFERRED mode else the largest.
    ///
    /// - Returns: the chosen element of `modes`, or `nil` if `modes` is empty.
    public static func select(_ request: ModeRequest, from modes: [Mode]) -> Mode? {
        switch request {
        case .highest:
            return largest(of: modes)
        case .preferred:
            return modes.first(where: \.isPreferred) ?? largest(of: modes)
        case let .exact(width, height, refresh):
            let matches = modes.filter {
                $0.width == width && $0.height == height && Int($0.refreshRate.rounded()) == refresh
            }
            let best = matches.min { a, b in
                if a.isInterlaced != b.isInterlaced { return !a.isInterlaced }
                let da = abs(a.refreshRate - Double(refresh)), db = abs(b.refreshRate - Double(refresh))
                if da != db { return da < db }
                return a.isPreferred && !b.isPreferred
            }
            return best ?? select(.preferred, from: modes)
        }
    }

    /// Most pixels, then highest refresh rate, then progressive before interlaced; the first on a tie.
    private static func largest(of modes: [Mode]) -> Mode? {
        modes.max { a, b in
            let pa = a.width * a.height, pb = b.width * b.height
            if pa != pb { return pa < pb }
            if a.refreshRate != b.refreshRate { return a.refreshRate < b.refreshRate }
            if a.isInterlaced != b.isInterlaced { return a.isInterlaced }
            return false
        }
    }
}

// MARK: - Conversion to and from drmModeModeInfo

extension Mode.Timing {
    /// Copies a kernel mode.
    init(_ info: drmModeModeInfo) {
        let name = withUnsafeBytes(of: info.name) { bytes in
            String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
        self.init(clock: info.clock,
                  hdisplay: Int(info.hdisplay), hsyncStart: Int(info.hsync_start), hsyncEnd: Int(info.hsync_end),
                  htotal: Int(info.htotal), hskew: Int(info.hskew),
                  vdisplay: Int(info.vdisplay), vsyncStart: Int(info.vsync_start), vsyncEnd: Int(info.vsync_end),
                  vtotal: Int(info.vtotal), vscan: Int(info.vscan),
                  vrefresh: info.vrefresh, flags: info.flags, type: info.type, name: name)
    }

    /// The size of `struct drm_mode_modeinfo`: the `MODE_ID` property blob (68 bytes).
    static let modeInfoSize = MemoryLayout<drmModeModeInfo>.size

    /// The `MODE_ID` property blob: `struct drm_mode_modeinfo` byte for byte, in native byte order
    /// (`clock` u32; `hdisplay`…`hskew`, `vdisplay`…`vscan` u16; `vrefresh`, `flags`, `type` u32;
    /// `name` 32 bytes, NUL-padded).
    var modeInfoBytes: [UInt8] { withUnsafeBytes(of: modeInfo) { Array($0) } }

    /// Reads a `MODE_ID` property blob (`drmModeGetPropertyBlob`); nil unless it is exactly
    /// `modeInfoSize` bytes.
    init?(modeInfoBytes bytes: [UInt8]) {
        guard bytes.count == Self.modeInfoSize else { return nil }
        var info = drmModeModeInfo()
        withUnsafeMutableBytes(of: &info) { $0.copyBytes(from: bytes) }
        self.init(info)
    }

    /// The kernel structure for `drmModeSetCrtc` and the `MODE_ID` blob.
    var modeInfo: drmModeModeInfo {
        var info = drmModeModeInfo()
        info.clock = clock
        info.hdisplay = UInt16(clamping: hdisplay); info.hsync_start = UInt16(clamping: hsyncStart)
        info.hsync_end = UInt16(clamping: hsyncEnd); info.htotal = UInt16(clamping: htotal)
        info.hskew = UInt16(clamping: hskew)
        info.vdisplay = UInt16(clamping: vdisplay); info.vsync_start = UInt16(clamping: vsyncStart)
        info.vsync_end = UInt16(clamping: vsyncEnd); info.vtotal = UInt16(clamping: vtotal)
        info.vscan = UInt16(clamping: vscan)
        info.vrefresh = vrefresh
        info.flags = flags
        info.type = type
        withUnsafeMutableBytes(of: &info.name) { bytes in
            for (i, byte) in name.utf8.prefix(bytes.count - 1).enumerated() { bytes[i] = byte }
        }
        return info
    }
}
