// A real chronyd started from the lines `vitrine chrony-config` writes: with clock.serve it answers
// NTP on loopback (chronyd -Q measures a real offset, tiny since it is this machine's own clock);
// without it, it answers nobody. chronyd runs with -x and -Q sets nothing: this machine's clock is
// never touched.
import Testing
import Foundation
@testable import Vitrine
import VitrineTestSupport

@Suite("chronyd serves time from the generated fragment", .serialized,
       .enabled(if: Chrony.installed, Chrony.absent))
struct ChronyServeTests {
    @Test("clock.serve {allow 127.0.0.1, localStratum 8}: chronyd -Q gets an offset under 50 ms from it")
    func servesTheLAN() throws {
        let config = try PlayerConfig(json: Array(#"{"clock": {"servers": [], "serve": {"allow": ["127.0.0.1"], "localStratum": 8}}}"#.utf8))
        let fragment = ClockConfig.chronyFragment(for: config.clock, source: "test")
        #expect(fragment.contains("\nallow 127.0.0.1\nlocal stratum 8\n"))
        let server = try ChronyServer(directives: fragment)
        defer { server.stop() }
        let q = try server.query(timeout: 10)
        let offset = try #require(q.offset, "chronyd -Q exit \(q.result.code): \(q.result.err)")
        // The same clock on both ends: only the loopback round trip and the sampling differ.
        #expect(abs(offset) < 0.05, "offset \(offset) s")
        #expect(q.result.code == 0)
        // The server ran the whole time (it is stopped by its PID by `stop`).
        #expect(server.process?.isRunning == true)
    }

    @Test("no clock.serve: the same chronyd opens no NTP port and answers nobody (chronyd -Q times out with no offset)")
    func servesNobodyWithoutServe() throws {
        let fragment = ClockConfig.chronyFragment(for: ClockConfig(servers: []), source: "test")
        #expect(!fragment.contains("allow") && !fragment.contains("local"))
        // A clock to serve, but no `allow`.
        let server = try ChronyServer(directives: fragment + "local stratum 8\n", serves: false)
        defer { server.stop() }
        #expect(server.process?.isRunning == true)
        #expect(!Chrony.udpBound(server.port), "chronyd bound 127.0.0.1:\(server.port) with no allow line")
        let q = try server.query(timeout: 3)
        #expect(q.offset == nil, "an offset from a server with no allow line: \(q.result.err)")
        #expect(q.result.code != 0)
        #expect((q.result.out + q.result.err).contains("Timeout reached"))
    }
}
