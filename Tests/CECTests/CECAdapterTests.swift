import Testing
import CEC

/// libcec for real: on a machine with no CEC adapter (CI, the VMs) detection finds none and
/// opening fails with `.noAdapter`; with one, the adapter opens and the TV's power is switched.
@Suite("CEC adapter (libcec)")
struct CECAdapterTests {
    static let adapters = CECAdapter.detect()

    @Test("with no adapter, detect() finds none and opening the first one throws .noAdapter",
          .enabled(if: CECAdapter.detect().isEmpty, "a CEC adapter is attached to this machine"))
    func noAdapter() {
        #expect(CECAdapter.detect() == [])
        #expect(throws: CECError.noAdapter) { _ = try CECAdapter() }
    }

    @Test("a port that is not a CEC adapter fails to open, naming the port")
    func notAnAdapter() {
        #expect(throws: CECError.openFailed("/dev/null")) { _ = try CECAdapter(port: "/dev/null", timeoutMilliseconds: 500) }
    }

    @Test("errors read as one line naming the call or the port")
    func descriptions() {
        #expect(CECError.noAdapter.description == "no CEC adapter found")
        #expect(CECError.openFailed("/dev/ttyACM0").description == "cannot open the CEC adapter at /dev/ttyACM0")
        #expect(CECError.commandFailed("libcec_standby_devices").description
                == "libcec_standby_devices failed: the command was not acknowledged on the CEC bus")
    }

    @Test("with an adapter, the first one opens and the TV takes power-on and standby",
          .enabled(if: !CECAdapter.detect().isEmpty, "no CEC adapter on this machine"))
    func realAdapter() throws {
        let first = try #require(CECAdapter.detect().first)
        #expect(!first.port.isEmpty)
        let adapter = try CECAdapter()
        #expect(adapter.port == first.port)
        try adapter.powerOn()
        try adapter.standby()
    }
}
