import Testing
@testable import KMS

/// A two-head card as the kernel describes it: CRTCs 40, 41, 42; encoders 50 (HDMI, any CRTC),
/// 51 (DP, CRTCs 1 and 2) and 52 (eDP, CRTC 0 only).
enum Card {
    static let crtcs: [UInt32] = [40, 41, 42]
    static let encoders: [UInt32: (crtcID: UInt32, possibleCRTCs: UInt32)] = [
        50: (0, 0b111), 51: (0, 0b110), 52: (40, 0b001),
    ]
    static func encoder(_ id: UInt32) throws(DRMError) -> (crtcID: UInt32, possibleCRTCs: UInt32) {
        guard let e = encoders[id] else { throw DRMError(operation: "drmModeGetEncoder(\(id))", errno: .noSuchFile) }
        return e
    }
    static let mode = Mode(timing: Timings.p1080at60)
    static let hdmi = Connector(id: 60, type: .hdmiA, typeIndex: 1, isConnected: true, modes: [mode], encoderIDs: [50])
    static let dp = Connector(id: 61, type: .displayPort, typeIndex: 1, isConnected: true, modes: [mode], encoderIDs: [51])
    static let eDP = Connector(id: 62, type: .eDP, typeIndex: 1, isConnected: true, modes: [mode],
                               encoderIDs: [52], currentEncoderID: 52)
    static let unplugged = Connector(id: 63, type: .hdmiA, typeIndex: 2, isConnected: false, modes: [], encoderIDs: [50])
}

@Suite("Choosing connector, CRTC and primary plane (kmscube's discovery, without a device)")
struct OutputChoiceTests {
    @Test("the named connector (case-insensitive), else the first connected one with modes")
    func connector() throws {
        let all = [Card.unplugged, Card.dp, Card.hdmi]
        #expect(try Scanout.chooseConnector(nil, from: all).name == "DP-1")
        #expect(try Scanout.chooseConnector("HDMI-A-1", from: all).id == 60)
        #expect(try Scanout.chooseConnector("hdmi-a-1", from: all).id == 60)
    }

    @Test("an unknown name, an unplugged one, or nothing connected: ENOENT / ENODEV with the connectors listed")
    func connectorErrors() {
        let all = [Card.unplugged, Card.hdmi]
        let unknown = #expect(throws: DRMError.self) { try Scanout.chooseConnector("DP-9", from: all) }
        #expect(unknown?.errno == .noSuchFile)
        #expect(unknown?.description == "find connector DP-9: no such connector (have: HDMI-A-2 disconnected, HDMI-A-1 connected) (ENOENT)")
        let unplugged = #expect(throws: DRMError.self) { try Scanout.chooseConnector("HDMI-A-2", from: all) }
        #expect(unplugged?.description == "use connector HDMI-A-2: nothing is connected to it (ENODEV)")
        let none = #expect(throws: DRMError.self) { try Scanout.chooseConnector(nil, from: [Card.unplugged]) }
        #expect(none?.description == "find a connected connector: no display is connected (connectors: HDMI-A-2 disconnected) (ENODEV)")
        let empty = #expect(throws: DRMError.self) { try Scanout.chooseConnector(nil, from: []) }
        #expect(empty?.errno == .noSuchDevice)
    }

    @Test("the CRTC already driving the connector, else the first allowed one no other connector uses", arguments: [
        (Card.eDP, [Card.hdmi], UInt32(40), 0),     // eDP's encoder drives CRTC 40 now
        (Card.hdmi, [Card.eDP], 41, 1),             // 40 is the eDP's: the next one HDMI's encoder allows
        (Card.dp, [Card.eDP], 41, 1),               // DP's encoder cannot use CRTC 0 anyway
        (Card.hdmi, [], 40, 0),
    ])
    func crtc(connector: Connector, others: [Connector], id: UInt32, index: Int) throws {
        let choice = try Scanout.chooseCRTC(for: connector, among: Card.crtcs, others: others + [connector],
                                            encoder: Card.encoder)
        #expect(choice.id == id && choice.index == index)
    }

    @Test("every allowed CRTC busy: the first allowed one anyway; none allowed: ENOSPC")
    func crtcFallbacks() throws {
        let busy = Connector(id: 64, type: .dsi, typeIndex: 1, isConnected: true, modes: [], encoderIDs: [52], currentEncoderID: 52)
        let alone = Connector(id: 65, type: .dpi, typeIndex: 1, isConnected: true, modes: [], encoderIDs: [52])
        let choice = try Scanout.chooseCRTC(for: alone, among: Card.crtcs, others: [busy, alone], encoder: Card.encoder)
        #expect(choice.id == 40 && choice.index == 0)
        let stranded = Connector(id: 66, type: .vga, typeIndex: 1, isConnected: true, modes: [], encoderIDs: [])
        let error = #expect(throws: DRMError.self) {
            try Scanout.chooseCRTC(for: stranded, among: Card.crtcs, others: [stranded], encoder: Card.encoder)
        }
        #expect(error?.description == "find a CRTC for VGA-1: none of its encoders can use any CRTC (ENOSPC)")
        let lost = Connector(id: 67, type: .vga, typeIndex: 1, isConnected: true, modes: [], encoderIDs: [59])
        let lookup = #expect(throws: DRMError.self) {
            try Scanout.chooseCRTC(for: lost, among: Card.crtcs, others: [], encoder: Card.encoder)
        }
        #expect(lookup?.operation == "drmModeGetEncoder(59)")
    }

    @Test("two screens on one card: a CRTC the other output drives is never chosen, not even the one already driving the connector")
    func reservedCRTCs() throws {
        // HDMI and DP both unlit: the first output takes 40 for HDMI, the second then 41 for DP.
        let first = try Scanout.chooseCRTC(for: Card.hdmi, among: Card.crtcs, others: [Card.hdmi, Card.dp], encoder: Card.encoder)
        #expect(first.id == 40)
        let second = try Scanout.chooseCRTC(for: Card.dp, among: Card.crtcs, others: [Card.hdmi, Card.dp],
                                            reserved: [first.id], encoder: Card.encoder)
        #expect(second.id == 41 && second.index == 1)
        // The eDP's encoder drives 40 now, but another output holds 40, and 40 is all it may use: ENOSPC.
        let error = #expect(throws: DRMError.self) {
            try Scanout.chooseCRTC(for: Card.eDP, among: Card.crtcs, others: [Card.eDP], reserved: [40], encoder: Card.encoder)
        }
        #expect(error?.description == "find a CRTC for eDP-1: none of its encoders can use a CRTC that another output does not drive (ENOSPC)")
        // DP with 41 and 42 both reserved: nothing left (the busy fallback never takes a reserved one).
        let full = #expect(throws: DRMError.self) {
            try Scanout.chooseCRTC(for: Card.dp, among: Card.crtcs, others: [Card.dp], reserved: [41, 42], encoder: Card.encoder)
        }
        #expect(full?.errno == .noSpace)
    }

    @Test("the primary plane: the one on the CRTC, else a free one, else any allowed; it must take XRGB8888")
    func primaryPlane() throws {
        let onCRTC = Plane(id: 31, type: .primary, formats: [.xrgb8888, .argb8888], possibleCRTCs: 0b010, crtcID: 41)
        let free = Plane(id: 32, type: .primary, formats: [.xrgb8888], possibleCRTCs: 0b010)
        let overlay = Plane(id: 33, type: .overlay, formats: [.xrgb8888, .nv12], possibleCRTCs: 0b111)
        let elsewhere = Plane(id: 34, type: .primary, formats: [.xrgb8888], possibleCRTCs: 0b001, crtcID: 40)
        #expect(try Scanout.choosePrimaryPlane(crtcID: 41, crtcIndex: 1, planes: [overlay, free, onCRTC, elsewhere])?.id == 31)
        #expect(try Scanout.choosePrimaryPlane(crtcID: 41, crtcIndex: 1, planes: [overlay, free, elsewhere])?.id == 32)
        #expect(try Scanout.choosePrimaryPlane(crtcID: 42, crtcIndex: 2, planes: [overlay, elsewhere]) == nil)
        let rgb565 = Plane(id: 35, type: .primary, formats: [.rgb565], possibleCRTCs: 0b100)
        let error = #expect(throws: DRMError.self) { try Scanout.choosePrimaryPlane(crtcID: 42, crtcIndex: 2, planes: [rgb565]) }
        #expect(error?.description == "use primary plane 35: it cannot show XRGB8888 (formats: RG16) (EINVAL)")
        #expect(overlay.canUse(crtcIndex: 2) && !free.canUse(crtcIndex: 0) && !free.canUse(crtcIndex: 40) && !free.canUse(crtcIndex: -1))
    }
}
