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
    // Connector, legacy path (an enum: On 0, Standby 1, Suspend 2, Off 3)
    case dpms = "DPMS"
    // Plane
    case type = "type"
    case fbID = "FB_ID"
    case srcX = "SRC_X", srcY = "SRC_Y", srcW = "SRC_W", srcH = "SRC_H"
    case crtcX = "CRTC_X", crtcY = "CRTC_Y", crtcW = "CRTC_W", crtcH = "CRTC_H"
}

/// One property of one object, as `drmModeGetProperty` and `drmModeObjectGetProperties` describe it.
struct PropertyEntry: Sendable, Equatable {
    /// The property id, the same on every object of the device.
    var id: UInt32
    /// The object's current value: a number, a blob id, an object id, or one of `enumNames`' keys.
    var value: UInt64
    /// For an enum property (`DRM_MODE_PROP_ENUM`), each value's name: `[0: "Overlay", 1: "Primary", 2: "Cursor"]`.
    var enumNames: [UInt64: String] = [:]
}

/// All properties of one object: name → id, current value and enum names.
///
/// This is the one helper that reads properties; everything else asks it by `PropertyName`, and
/// the typed per-object structs (`CRTCProperties`, `ConnectorProperties`, `PlaneProperties`,
/// `PlaneType`) are resolved from it once.
struct ObjectProperties {
    let objectID: UInt32
    let objectType: ObjectType
    private(set) var entries: [String: PropertyEntry]

    /// Properties as the kernel listed them, by name (device-free: built by tests, or by `init(fd:…)`).
    init(objectID: UInt32, type: ObjectType, entries: [String: PropertyEntry]) {
        self.objectID = objectID
        self.objectType = type
        self.entries = entries
    }

    /// Reads every property of an object, with the names of enum values.
    ///
    /// - Throws: `DRMError` from `drmModeObjectGetProperties` or `drmModeGetProperty`.
    /// The corresponding C functions are `drmModeObjectGetProperties` and `drmModeGetProperty`.
    init(fd: Int32, objectID: UInt32, type: ObjectType) throws(DRMError) {
        let list = try DRMCall.pointer("drmModeObjectGetProperties(\(type) \(objectID))") {
            drmModeObjectGetProperties(fd, objectID, type.rawValue)
        }
        defer { drmModeFreeObjectProperties(list) }
        var entries: [String: PropertyEntry] = [:]
        for i in 0..<Int(list.pointee.count_props) {
            let propertyID = list.pointee.props[i]
            let property = try DRMCall.pointer("drmModeGetProperty(\(propertyID))") {
                drmModeGetProperty(fd, propertyID)
            }
            defer { drmModeFreeProperty(property) }
            var entry = PropertyEntry(id: propertyID, value: list.pointee.prop_values[i])
            if property.pointee.flags & UInt32(DRM_MODE_PROP_ENUM) != 0, let enums = property.pointee.enums {
                for e in UnsafeBufferPointer(start: enums, count: Int(max(property.pointee.count_enums, 0))) {
                    entry.enumNames[e.value] = Self.string(e.name)
                }
            }
            entries[Self.string(property.pointee.name)] = entry
        }
        self.init(objectID: objectID, type: type, entries: entries)
    }

    /// A NUL-padded C name field (`char name[DRM_PROP_NAME_LEN]`) as a string.
    private static func string<T>(_ field: T) -> String {
        withUnsafeBytes(of: field) { bytes in String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self) }
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

    /// The name of the current value of enum property `name` (`"Primary"` for a plane's `type`),
    /// or `nil` when the object has no such property or the value has no name.
    func enumName(_ name: PropertyName) -> String? {
        guard let entry = entries[name.rawValue] else { return nil }
        return entry.enumNames[entry.value]
    }
}

extension PlaneType {
    /// The role from a plane's `type` enum property: by the value's name, `Overlay`, `Primary` or
    /// `Cursor`, as weston resolves it, else by the value (`DRM_PLANE_TYPE_*`); overlay when the
    /// plane has no `type` property (a kernel without universal planes lists overlays only).
    init(_ properties: ObjectProperties) {
        switch properties.enumName(.type) {
        case "Overlay": self = .overlay
        case "Primary": self = .primary
        case "Cursor": self = .cursor
        default: self.init(rawValue: properties.value(.type) ?? PlaneType.overlay.rawValue)
        }
    }
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
