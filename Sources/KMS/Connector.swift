// Connectors: the physical (or virtual) outputs a display plugs into.
internal import CDRM

/// The kind of a connector (`DRM_MODE_CONNECTOR_*`). An open set: unknown codes are kept as is.
public struct ConnectorType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt32

    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let unknown = ConnectorType(rawValue: UInt32(DRM_MODE_CONNECTOR_Unknown))
    public static let vga = ConnectorType(rawValue: UInt32(DRM_MODE_CONNECTOR_VGA))
    public static let dviI = ConnectorType(rawValue: UInt32(DRM_MODE_CONNECTOR_DVII))
    public static let dviD = ConnectorType(rawValue: UInt32(DRM_MODE_CONNECTOR_DVID))
    public static let dviA = ConnectorType(rawValue: UInt32(DRM_MODE_CONNECTOR_DVIA))
    public static let composite = ConnectorType(rawValue: UInt32(DRM_MODE_CONNECTOR_Composite))
    public static let sVideo = ConnectorType(rawValue: UInt32(DRM_MODE_CONNECTOR_SVIDEO))
    public static let lvds = ConnectorType(rawValue: UInt32(DRM_MODE_CONNECTOR_LVDS))
    public static let component = ConnectorType(rawValue: UInt32(DRM_MODE_CONNECTOR_Component))
    public static let din9Pin = ConnectorType(rawValue: UInt32(DRM_MODE_CONNECTOR_9PinDIN))
    public static let displayPort = ConnectorType(rawValue: UInt32(DRM_MODE_CONNECTOR_DisplayPort))
    public static let hdmiA = ConnectorType(rawValue: UInt32(DRM_MODE_CONNECTOR_HDMIA))
    public static let hdmiB = ConnectorType(rawValue: UInt32(DRM_MODE_CONNECTOR_HDMIB))
    public static let tv = ConnectorType(rawValue: UInt32(DRM_MODE_CONNECTOR_TV))
    public static let eDP = ConnectorType(rawValue: UInt32(DRM_MODE_CONNECTOR_eDP))
    public static let virtual = ConnectorType(rawValue: UInt32(DRM_MODE_CONNECTOR_VIRTUAL))
    public static let dsi = ConnectorType(rawValue: UInt32(DRM_MODE_CONNECTOR_DSI))
    public static let dpi = ConnectorType(rawValue: UInt32(DRM_MODE_CONNECTOR_DPI))
    public static let writeback = ConnectorType(rawValue: UInt32(DRM_MODE_CONNECTOR_WRITEBACK))
    public static let spi = ConnectorType(rawValue: UInt32(DRM_MODE_CONNECTOR_SPI))
    public static let usb = ConnectorType(rawValue: UInt32(DRM_MODE_CONNECTOR_USB))

    /// The kernel's name for the type, as in `/sys/class/drm/card0-HDMI-A-1`: `"HDMI-A"`, `"DP"`,
    /// `"eDP"`, `"Virtual"`; `"Unknown<n>"` for a code newer than this module.
    public var name: String {
        Self.names[rawValue] ?? "Unknown\(rawValue)"
    }

    public var description: String { name }

    // The kernel's drm_connector_enum_list (drivers/gpu/drm/drm_connector.c).
    private static let names: [UInt32: String] = [
        0: "Unknown", 1: "VGA", 2: "DVI-I", 3: "DVI-D", 4: "DVI-A", 5: "Composite", 6: "SVIDEO",
        7: "LVDS", 8: "Component", 9: "DIN", 10: "DP", 11: "HDMI-A", 12: "HDMI-B", 13: "TV",
        14: "eDP", 15: "Virtual", 16: "DSI", 17: "DPI", 18: "Writeback", 19: "SPI", 20: "USB",
    ]
}

/// Whether a sink is plugged into a connector (`drmModeConnection`).
public enum ConnectionState: Sendable, Equatable, CustomStringConvertible {
    /// `DRM_MODE_CONNECTED` (1): a sink answered (hot-plug detect, EDID).
    case connected
    /// `DRM_MODE_DISCONNECTED` (2): nothing is plugged in, or the sink is off and drops HPD.
    case disconnected
    /// `DRM_MODE_UNKNOWNCONNECTION` (3), or any other value: the driver cannot tell (e.g. VGA
    /// without load detection, some virtual connectors before their first probe).
    case unknown

    /// The state for a kernel `connection` value.
    public init(drmValue: UInt32) {
        switch drmValue {
        case 1: self = .connected
        case 2: self = .disconnected
        default: self = .unknown
        }
    }

    /// `connected`, `disconnected` or `unknown`, as `vitrine probe` prints it.
    public var description: String {
        switch self {
        case .connected: return "connected"
        case .disconnected: return "disconnected"
        case .unknown: return "unknown"
        }
    }
}

/// A connector and what is plugged into it, as read by `KMSDevice.connectors()`.
public struct Connector: Sendable, Equatable, CustomStringConvertible {
    /// The kernel object id.
    public var id: UInt32
    public var type: ConnectorType
    /// 1-based index among connectors of the same type (the `1` in `HDMI-A-1`).
    public var typeIndex: UInt32
    /// The name used in configuration and in `/sys/class/drm`, e.g. `"HDMI-A-1"`, `"Virtual-1"`.
    public var name: String
    /// Whether a sink is plugged in, as the kernel last probed it (`drmModeConnector.connection`).
    public var connection: ConnectionState
    /// Whether a sink is plugged in (`DRM_MODE_CONNECTED`); setting it sets `connection` to
    /// `.connected` or `.disconnected`.
    public var isConnected: Bool {
        get { connection == .connected }
        set { connection = newValue ? .connected : .disconnected }
    }
    /// The modes the sink supports, in the kernel's order (usually the preferred one first).
    public var modes: [Mode]
    /// Physical size of the sink in millimetres; 0 when unknown.
    public var physicalWidthMM: Int
    public var physicalHeightMM: Int
    /// The encoders this connector can use (their `possible_crtcs` decide the CRTC).
    public var encoderIDs: [UInt32]
    /// The encoder currently driving the connector, 0 if none.
    public var currentEncoderID: UInt32

    /// A connector whose `connection` is `.connected` or `.disconnected` (tests, hand-made lists).
    public init(id: UInt32, type: ConnectorType, typeIndex: UInt32, isConnected: Bool, modes: [Mode],
                physicalWidthMM: Int = 0, physicalHeightMM: Int = 0,
                encoderIDs: [UInt32] = [], currentEncoderID: UInt32 = 0) {
        self.init(id: id, type: type, typeIndex: typeIndex, connection: isConnected ? .connected : .disconnected,
                  modes: modes, physicalWidthMM: physicalWidthMM, physicalHeightMM: physicalHeightMM,
                  encoderIDs: encoderIDs, currentEncoderID: currentEncoderID)
    }

    /// A connector in any `ConnectionState`; `name` is `"<type name>-<typeIndex>"`.
    public init(id: UInt32, type: ConnectorType, typeIndex: UInt32, connection: ConnectionState, modes: [Mode],
                physicalWidthMM: Int = 0, physicalHeightMM: Int = 0,
                encoderIDs: [UInt32] = [], currentEncoderID: UInt32 = 0) {
        self.id = id
        self.type = type
        self.typeIndex = typeIndex
        self.name = "\(type.name)-\(typeIndex)"
        self.connection = connection
        self.modes = modes
        self.physicalWidthMM = physicalWidthMM
        self.physicalHeightMM = physicalHeightMM
        self.encoderIDs = encoderIDs
        self.currentEncoderID = currentEncoderID
    }

    /// `HDMI-A-1 (id 42): connected, 600x340 mm, 12 modes`.
    public var description: String {
        var text = "\(name) (id \(id)): \(connection)"
        if physicalWidthMM > 0 || physicalHeightMM > 0 { text += ", \(physicalWidthMM)x\(physicalHeightMM) mm" }
        text += ", \(modes.count) mode\(modes.count == 1 ? "" : "s")"
        return text
    }
}

extension Connector {
    /// Copies a kernel connector.
    init(_ c: drmModeConnector) {
        let modes = (0..<Int(max(c.count_modes, 0))).compactMap { i in
            c.modes.map { Mode(timing: Mode.Timing($0[i])) }
        }
        let encoders = c.encoders.map { Array(UnsafeBufferPointer(start: $0, count: Int(max(c.count_encoders, 0)))) } ?? []
        self.init(id: c.connector_id, type: ConnectorType(rawValue: c.connector_type),
                  typeIndex: c.connector_type_id, connection: ConnectionState(drmValue: UInt32(c.connection.rawValue)),
                  modes: modes, physicalWidthMM: Int(c.mmWidth), physicalHeightMM: Int(c.mmHeight),
                  encoderIDs: encoders, currentEncoderID: c.encoder_id)
    }
}

extension Connector {
    /// The connector called `name` in `connectors`: the exact name first, else the same name in
    /// another case (`"hdmi-a-1"` finds `HDMI-A-1`); nil when there is none.
    public static func named(_ name: String, in connectors: [Connector]) -> Connector? {
        connectors.first(where: { $0.name == name })
            ?? connectors.first(where: { $0.name.lowercased() == name.lowercased() })
    }
}
