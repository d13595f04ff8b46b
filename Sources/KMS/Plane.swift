// Planes and CRTCs: the scanout engines and the layers they blend.

/// The role of a plane (its `type` property, `DRM_PLANE_TYPE_*`). An open set.
public struct PlaneType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt64

    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// An extra layer above (or below) the primary plane (`DRM_PLANE_TYPE_OVERLAY`, 0).
    public static let overlay = PlaneType(rawValue: 0)
    /// The plane a CRTC's legacy framebuffer goes to (`DRM_PLANE_TYPE_PRIMARY`, 1).
    public static let primary = PlaneType(rawValue: 1)
    /// The hardware cursor (`DRM_PLANE_TYPE_CURSOR`, 2).
    public static let cursor = PlaneType(rawValue: 2)

    /// `"overlay"`, `"primary"`, `"cursor"`, or `"type<n>"`.
    public var description: String {
        switch self {
        case .overlay: "overlay"
        case .primary: "primary"
        case .cursor: "cursor"
        default: "type\(rawValue)"
        }
    }
}

/// A plane, as read by `KMSDevice.planes()`.
public struct Plane: Sendable, Equatable {
    /// The kernel object id.
    public var id: UInt32
    /// Primary, overlay or cursor. Without universal planes the kernel lists overlays only.
    public var type: PlaneType
    /// The pixel formats the plane can scan out.
    public var formats: [FourCC]
    /// Bit `i` set means the plane can be used with the CRTC at index `i` of the device's CRTC list.
    public var possibleCRTCs: UInt32
    /// The CRTC the plane is attached to now, 0 if none.
    public var crtcID: UInt32
    /// The framebuffer the plane shows now, 0 if none.
    public var framebufferID: UInt32

    public init(id: UInt32, type: PlaneType, formats: [FourCC], possibleCRTCs: UInt32,
                crtcID: UInt32 = 0, framebufferID: UInt32 = 0) {
        self.id = id
        self.type = type
        self.formats = formats
        self.possibleCRTCs = possibleCRTCs
        self.crtcID = crtcID
        self.framebufferID = framebufferID
    }

    /// Whether the plane can be used with the CRTC at `crtcIndex` (its position in `KMSDevice.crtcs()`).
    public func canUse(crtcIndex: Int) -> Bool {
        crtcIndex >= 0 && crtcIndex < 32 && possibleCRTCs & (1 << UInt32(crtcIndex)) != 0
    }
}

/// A CRTC (scanout engine), as read by `KMSDevice.crtcs()`.
public struct CRTC: Sendable, Equatable {
    /// The kernel object id.
    public var id: UInt32
    /// Position in the device's CRTC list; the bit used by `possibleCRTCs` masks.
    public var index: Int
    /// The framebuffer it scans out now, 0 if none.
    public var framebufferID: UInt32
    /// The mode it runs now, `nil` if it is off.
    public var mode: Mode?
    /// Offset of the visible area in the framebuffer, in pixels.
    public var x: Int
    public var y: Int

    public init(id: UInt32, index: Int, framebufferID: UInt32, mode: Mode?, x: Int = 0, y: Int = 0) {
        self.id = id
        self.index = index
        self.framebufferID = framebufferID
        self.mode = mode
        self.x = x
        self.y = y
    }
}
