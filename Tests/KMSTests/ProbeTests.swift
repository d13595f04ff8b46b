import Foundation
import Testing
@testable import KMS

/// `vitrine probe` and `KMSDevice(path:)` when a card cannot be opened: the real `open` for a node
/// that is not there, and the bindings' fault seam for the errors a real card gives (debug builds).
@Suite("KMS open errors and the probe report")
struct ProbeTests {
    let missing = "/dev/dri/card-vitrine-test-\(UUID().uuidString.prefix(8))"

    @Test("a node that is not there: DRMError from open, ENOENT")
    func missingNode() {
        let error = #expect(throws: DRMError.self) { try KMSDevice(path: missing) }
        #expect(error == DRMError(operation: "open \(missing)", errno: .noSuchFile))
        #expect(error?.description == "open \(missing): No such file or directory (ENOENT)")
    }

    @Test("no card: headless only")
    func noCard() {
        #expect(KMSProbe.report(cardPaths: []) == """

            DRM output: unavailable, headless only
            Missing:
              - no /dev/dri/card*: DRM output unavailable, headless only

            """)
    }

    @Test("a card the user may not open (EACCES from open) names the video group", arguments: [
        (Errno.permissionDenied, "permission denied: add the user to the 'video' group"),
        (.notPermitted, "permission denied: add the user to the 'video' group"),
        (.busy, "cannot open (EBUSY)"),
    ])
    func cannotOpen(errno: Errno, problem: String) {
        let card = missing
        let plan = FaultPlan { call in call.function == "open" && call.subject == card ? .fail(errno) : nil }
        let report = FaultInjection.withPlan(plan) { KMSProbe.report(cardPaths: [card]) }
        #expect(report == """
            \(card): cannot open: open \(card): \(errno)

            DRM output: unavailable, headless only
            Missing:
              - \(card): \(problem)
              - no card has a connected display it can drive: DRM output unavailable, headless only

            """)
    }

    @Test("an operation's text names the call the seam sees: function, then its arguments")
    func callNames() {
        #expect(SystemCall(operation: "drmModeGetConnector(42)") == SystemCall("drmModeGetConnector", "42"))
        #expect(SystemCall(operation: "open /dev/dri/card0") == SystemCall("open", "/dev/dri/card0"))
        #expect(SystemCall(operation: "drmModeAtomicCommit(TEST_ONLY, ALLOW_MODESET)")
            == SystemCall("drmModeAtomicCommit", "TEST_ONLY, ALLOW_MODESET"))
        #expect(SystemCall(operation: "drmHandleEvent") == SystemCall("drmHandleEvent"))
    }
}

@Suite("vitrine probe: a connector's line")
struct ProbeConnectorLineTests {
    static let preferred = Mode(name: "1920x1080", width: 1920, height: 1080, refreshRate: 60, isPreferred: true)
    static let small = Mode(name: "1280x720", width: 1280, height: 720, refreshRate: 50, isPreferred: false)

    @Test("state, size, modes count and the mode OutputPlanner picks (preferred, or the exact one asked for)")
    func connected() {
        let tv = Connector(id: 42, type: .hdmiA, typeIndex: 1, isConnected: true, modes: [Self.preferred, Self.small],
                           physicalWidthMM: 600, physicalHeightMM: 340)
        #expect(KMSProbe.connectorLine(tv) == "    HDMI-A-1 (id 42): connected, 600x340 mm, 2 modes, player mode 1920x1080@60.00*")
        #expect(KMSProbe.connectorLine(tv, mode: .exact(width: 1280, height: 720, refresh: 50))
                == "    HDMI-A-1 (id 42): connected, 600x340 mm, 2 modes, player mode 1280x720@50.00")
    }

    @Test("disconnected, unknown, connected without modes: no player mode, and why")
    func notDrivable() {
        let off = Connector(id: 43, type: .displayPort, typeIndex: 1, isConnected: false, modes: [])
        #expect(KMSProbe.connectorLine(off) == "    DP-1 (id 43): disconnected, 0 modes, player mode none (not connected)")
        let unknown = Connector(id: 44, type: .vga, typeIndex: 1, connection: .unknown, modes: [Self.small])
        #expect(KMSProbe.connectorLine(unknown) == "    VGA-1 (id 44): unknown, 1 mode, player mode none (not connected)")
        let noModes = Connector(id: 45, type: .virtual, typeIndex: 1, isConnected: true, modes: [])
        #expect(KMSProbe.connectorLine(noModes) == "    Virtual-1 (id 45): connected, 0 modes, player mode none (no modes)")
    }
}
