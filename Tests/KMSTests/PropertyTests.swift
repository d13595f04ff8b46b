import Testing
@testable import KMS

/// Property lists as `drmModeObjectGetProperties` gives them on virtio-gpu and i915 (ids are the
/// device's; each object type has its own names).
enum PropertyLists {
    static let planeTypeEnum: [UInt64: String] = [0: "Overlay", 1: "Primary", 2: "Cursor"]

    static func plane(type: UInt64, without missing: String? = nil) -> [String: PropertyEntry] {
        var entries: [String: PropertyEntry] = [
            "type": PropertyEntry(id: 8, value: type, enumNames: planeTypeEnum),
            "FB_ID": PropertyEntry(id: 17, value: 0), "CRTC_ID": PropertyEntry(id: 20, value: 0),
            "SRC_X": PropertyEntry(id: 9, value: 0), "SRC_Y": PropertyEntry(id: 10, value: 0),
            "SRC_W": PropertyEntry(id: 11, value: 0), "SRC_H": PropertyEntry(id: 12, value: 0),
            "CRTC_X": PropertyEntry(id: 13, value: 0), "CRTC_Y": PropertyEntry(id: 14, value: 0),
            "CRTC_W": PropertyEntry(id: 15, value: 0), "CRTC_H": PropertyEntry(id: 16, value: 0),
            "IN_FORMATS": PropertyEntry(id: 30, value: 44), "rotation": PropertyEntry(id: 31, value: 1),
        ]
        if let missing { entries[missing] = nil }
        return entries
    }
    static let crtc: [String: PropertyEntry] = [
        "ACTIVE": PropertyEntry(id: 22, value: 1), "MODE_ID": PropertyEntry(id: 23, value: 51),
        "OUT_FENCE_PTR": PropertyEntry(id: 21, value: 0), "VRR_ENABLED": PropertyEntry(id: 24, value: 0),
    ]
    static let connector: [String: PropertyEntry] = [
        "EDID": PropertyEntry(id: 1, value: 52), "DPMS": PropertyEntry(id: 2, value: 0,
                                                                    enumNames: [0: "On", 1: "Standby", 2: "Suspend", 3: "Off"]),
        "CRTC_ID": PropertyEntry(id: 20, value: 36), "link-status": PropertyEntry(id: 5, value: 0, enumNames: [0: "Good", 1: "Bad"]),
    ]
}

@Suite("Properties: read by name once into typed per-object structs (weston, wlroots)")
struct PropertyTests {
    @Test("a plane's property ids resolve into PlaneProperties")
    func plane() throws {
        let properties = ObjectProperties(objectID: 31, type: .plane, entries: PropertyLists.plane(type: 1))
        let plane = try PlaneProperties(properties)
        #expect([plane.fbID, plane.crtcID, plane.srcX, plane.srcY, plane.srcW, plane.srcH,
                 plane.crtcX, plane.crtcY, plane.crtcW, plane.crtcH] == [17, 20, 9, 10, 11, 12, 13, 14, 15, 16])
    }

    @Test("CRTC and connector properties; current values and enum names")
    func crtcAndConnector() throws {
        let crtc = ObjectProperties(objectID: 36, type: .crtc, entries: PropertyLists.crtc)
        let ids = try CRTCProperties(crtc)
        #expect((ids.modeID, ids.active) == (23, 22))
        #expect(crtc.value(.modeID) == 51 && crtc.value(.active) == 1)
        let connector = ObjectProperties(objectID: 42, type: .connector, entries: PropertyLists.connector)
        #expect(try ConnectorProperties(connector).crtcID == 20)
        #expect(connector.value(.crtcID) == 36)
        #expect(connector.value(.fbID) == nil)
        #expect(connector.enumName(.crtcID) == nil)   // not an enum property
    }

    @Test("a missing property is ENOENT naming the property and the object", arguments: [
        "FB_ID", "CRTC_ID", "SRC_W", "CRTC_H",
    ])
    func missing(name: String) {
        let properties = ObjectProperties(objectID: 31, type: .plane, entries: PropertyLists.plane(type: 1, without: name))
        let error = #expect(throws: DRMError.self) { try PlaneProperties(properties) }
        #expect(error == DRMError(operation: "find property \(name) on plane 31", errno: .noSuchFile,
                                  detail: "the driver does not expose this property"))
        #expect(error?.description == "find property \(name) on plane 31: the driver does not expose this property (ENOENT)")
    }

    @Test("the plane type comes from the `type` enum's value name, else its value, else overlay", arguments: [
        (PropertyLists.plane(type: 0), PlaneType.overlay),
        (PropertyLists.plane(type: 1), .primary),
        (PropertyLists.plane(type: 2), .cursor),
        // A driver whose enum numbers differ: the name decides.
        (["type": PropertyEntry(id: 8, value: 7, enumNames: [7: "Primary", 8: "Overlay"])], .primary),
        // No names: DRM_PLANE_TYPE_* values.
        (["type": PropertyEntry(id: 8, value: 2)], .cursor),
        (["type": PropertyEntry(id: 8, value: 5)], PlaneType(rawValue: 5)),
        // No `type` property (no universal planes): an overlay.
        ([:], .overlay),
    ])
    func planeType(entries: [String: PropertyEntry], expected: PlaneType) {
        #expect(PlaneType(ObjectProperties(objectID: 31, type: .plane, entries: entries)) == expected)
    }

    @Test("object kinds, connector and plane names as the kernel spells them")
    func names() {
        #expect([ObjectType.crtc, .connector, .plane].map(\.description) == ["CRTC", "connector", "plane"])
        #expect([ObjectType.crtc, .connector, .plane].map(\.rawValue) == [0xcccc_cccc, 0xc0c0_c0c0, 0xeeee_eeee])  // DRM_MODE_OBJECT_*
        #expect(ObjectType(rawValue: 0x1234_5678).description == "object")
        #expect([ConnectorType.hdmiA, .displayPort, .eDP, .virtual, .dsi].map(\.name) == ["HDMI-A", "DP", "eDP", "Virtual", "DSI"])
        #expect(ConnectorType(rawValue: 99).name == "Unknown99")
        #expect(Connector(id: 42, type: .hdmiA, typeIndex: 2, isConnected: true, modes: [],
                          physicalWidthMM: 600, physicalHeightMM: 340).description
            == "HDMI-A-2 (id 42): connected, 600x340 mm, 0 modes")
        #expect([PlaneType.overlay, .primary, .cursor, PlaneType(rawValue: 9)].map(\.description)
            == ["overlay", "primary", "cursor", "type9"])
        #expect(FourCC.xrgb8888.description == "XR24")
    }
}
