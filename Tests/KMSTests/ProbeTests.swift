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
