// KMS object properties, resolved by name once into typed structs (as in weston and wlroots).
internal import CDRM
#if canImport(Glibc)
internal import Glibc
#endif

/// The kind of a KMS object, for `drmModeObjectGetProperties`.
struct ObjectType: RawRepresentable, Sendable, CustomStringConvertible {
    var rawValue: UInt32
    static let crtc = ObjectType(rawValue: UInt32(DRM_MODE_OBJECT_CRTC))
    static let connector = ObjectType(rawValue: UInt32(DRM_MODE_OBJECT_CONNECTOR))
    static let plane = ObjectType(rawValue: UInt32(DRM_MODE_OBJECT_PLANE))

    var description: String {
        switch rawValue {
        case Self.crtc.rawValue: "CRTC"
        case Self.connector.rawValue: "connector"
        case Self.plane.rawValue: "plane"
        default: "object"
        }
    }
}

/// The property names this module uses, spelled as the kernel spells them.
enum PropertyName: String, Sendable {
    // CRTC
    case modeID = "MODE_ID"
    case active = "ACTIVE"
    // Connector and plane
    case crtcID = "CRTC_ID"
    // Plane
    case type = "type"
    case fbID = "FB_ID"
    case srcX = "SRC_X", srcY = "SRC_Y", srcW = "SRC_W", srcH = "SRC_H"
    case crtcX = "CRTC_X", crtcY = "CRTC_Y", crtcW = "CRTC_W", crtcH = "CRTC_H"
}

/// All properties of one object: name → (property id, current value).
///
/// This is the one helper that reads properties; everything else asks it by `PropertyName`.
struct ObjectProperties {
    let objectID: UInt32
    let objectType: ObjectType
    private(set) var entries: [String: (id: UInt32, value: UInt64)] = [:]

    /// Reads every property of an object.
    ///
    /// - Throws: `DRMError` from `drmModeObjectGetProperties` or `drmModeGetProperty`.
    /// The corresponding C functions are `drmModeObjectGetProperties` and `drmModeGetProperty`.
    init(fd: Int32, objectID: UInt32, type: ObjectType) throws(DRMError) {
        self.objectID = objectID
        self.objectType = type
        let list = try DRMCall.pointer("drmModeObjectGetProperties(\(type) \(objectID))") {
            drmModeObjectGetProperties(fd, objectID, type.rawValue)
        }
        defer { drmModeFreeObjectProperties(list) }
        for i in 0..<Int(list.pointee.count_props) {
            let propertyID = list.pointee.props[i]
            let property = try DRMCall.pointer("drmModeGetProperty(\(propertyID))") {
                drmModeGetProperty(fd, propertyID)
            }
            defer { drmModeFreeProperty(property) }
            let name = withUnsafeBytes(of: property.pointee.name) { bytes in
                String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
            }
            entries[name] = (propertyID, list.pointee.prop_values[i])
        }
    }

    /// The id of property `name`.
    ///
    /// - Throws: `DRMError` with `ENOENT` when the object has no such property.
    func id(_ name: PropertyName) throws(DRMError) -> UInt32 {
        guard let entry = entries[name.rawValue] else {
            throw DRMError(operation: "find property \(name.rawValue) on \(objectType) \(objectID)", errno: ENOENT,
                           detail: "the driver does not expose this property")
        }
        return entry.id
    }

    /// The current value of property `name`, or `nil` when the object has no such property.
    func value(_ name: PropertyName) -> UInt64? { entries[name.rawValue]?.value }
}

/// The CRTC properties an atomic modeset sets.
struct CRTCProperties: Sendable {
    let modeID: UInt32
    let active: UInt32

    init(_ properties: ObjectProperties) throws(DRMError) {
        modeID = try properties.id(.modeID)
        active = try properties.id(.active)
    }
}

/// The connector property an atomic modeset sets.
struct ConnectorProperties: Sendable {
    let crtcID: UInt32

    init(_ properties: ObjectProperties) throws(DRMError) {
        crtcID = try properties.id(.crtcID)
    }
}

/// The plane properties an atomic commit sets.
struct PlaneProperties: Sendable {
    let fbID, crtcID: UInt32
    /// Source rectangle in the framebuffer, 16.16 fixed point pixels.
    let srcX, srcY, srcW, srcH: UInt32
    /// Destination rectangle on the CRTC, integer pixels.
    let crtcX, crtcY, crtcW, crtcH: UInt32

    init(_ properties: ObjectProperties) throws(DRMError) {
        fbID = try properties.id(.fbID)
        crtcID = try properties.id(.crtcID)
        srcX = try properties.id(.srcX)
        srcY = try properties.id(.srcY)
        srcW = try properties.id(.srcW)
        srcH = try properties.id(.srcH)
        crtcX = try properties.id(.crtcX)
        crtcY = try properties.id(.crtcY)
        crtcW = try properties.id(.crtcW)
        crtcH = try properties.id(.crtcH)
    }
}
