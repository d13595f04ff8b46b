// The config's `clock` object: its problems as `path: reason`, and the chrony lines made from it.
import Testing
import Foundation
@testable import Vitrine

@Suite("ClockConfig: clock.servers, clock.serve, and the chrony fragment")
struct ClockConfigTests {
    func problems(_ json: String) -> [String] {
        do { _ = try PlayerConfig(json: Array(json.utf8)); return [] } catch { return error.problems }
    }

    func clock(_ json: String) throws -> ClockConfig? { try PlayerConfig(json: Array(json.utf8)).clock }

    @Test("a box that follows two servers and serves its LAN")
    func fullConfig() throws {
        let c = try clock(#"{"clock": {"servers": ["10.0.0.5", "ntp.example.net", "fd00::1"], "serve": {"allow": ["10.0.0.0/24", "192.168.1.17", "fd00::/8", "::ffff:10.0.0.0/104"], "localStratum": 8}}}"#)
        #expect(c == ClockConfig(servers: ["10.0.0.5", "ntp.example.net", "fd00::1"],
                                 serve: .init(allow: ["10.0.0.0/24", "192.168.1.17", "fd00::/8", "::ffff:10.0.0.0/104"], localStratum: 8)))
        let fragment = ClockConfig.chronyFragment(for: c, source: "/etc/vitrine/config.json")
        #expect(fragment.split(separator: "\n").filter { !$0.hasPrefix("#") } == [
            "server 10.0.0.5 iburst", "server ntp.example.net iburst", "server fd00::1 iburst",
            "allow 10.0.0.0/24", "allow 192.168.1.17", "allow fd00::/8", "allow ::ffff:10.0.0.0/104", "local stratum 8",
        ])
        #expect(fragment.hasPrefix("# Written by `vitrine chrony-config` from /etc/vitrine/config.json"))
        #expect(fragment.hasSuffix("local stratum 8\n"))
    }

    @Test("no clock key, {}, null servers: Debian's pool; serve without localStratum: stratum 10; servers []: no source line")
    func defaults() throws {
        #expect(try clock("{}") == nil)
        #expect(try clock(#"{"clock": null}"#) == nil)
        for json in ["{}", #"{"clock": {}}"#, #"{"clock": {"servers": null, "serve": null}}"#] {
            let lines = ClockConfig.chronyFragment(for: try clock(json)).split(separator: "\n").filter { !$0.hasPrefix("#") }
            #expect(lines == ["pool 2.debian.pool.ntp.org iburst"], "\(json)")
        }
        let master = try clock(#"{"clock": {"servers": [], "serve": {"allow": ["10.1.0.0/16"]}}}"#)
        #expect(master?.serve?.localStratum == 10)
        #expect(ClockConfig.chronyFragment(for: master).split(separator: "\n").filter { !$0.hasPrefix("#") }
                == ["allow 10.1.0.0/16", "local stratum 10"])
    }

    @Test("each bad value is a problem naming its JSON path")
    func problemsNameThePath() {
        #expect(problems(#"{"clock": 3}"#) == ["clock: expected an object"])
        #expect(problems(#"{"clock": {"server": ["a"]}}"#) == [#"clock.server: unknown field "server""#])
        #expect(problems(#"{"clock": {"servers": "10.0.0.5"}}"#)
                == ["clock.servers: expected an array of at most 32 host names or addresses, or null"])
        let servers = problems(#"{"clock": {"servers": ["ok.example", "two words", "tab\there", "nl\nx", 5, "", "-x", "a..b", "10.0.0.256", "ok.example", "é.example"]}}"#)
        #expect(servers.map { $0.prefix(while: { $0 != ":" }) } == ["clock.servers[1]", "clock.servers[2]", "clock.servers[3]", "clock.servers[4]",
                                                                   "clock.servers[5]", "clock.servers[6]", "clock.servers[7]", "clock.servers[8]",
                                                                   "clock.servers[9]", "clock.servers[10]"])
        #expect(servers[8] == #"clock.servers[9]: "ok.example" is listed twice"#)
        #expect(servers[0].contains("no spaces or control characters"))
        #expect(problems(#"{"clock": {"serve": {"localStratum": 8}}}"#).first?.hasPrefix("clock.serve.allow: required") == true)
        #expect(problems(#"{"clock": {"serve": {"allow": []}}}"#)
                == [#"clock.serve.allow: expected an array of 1 to 32 addresses or networks such as "10.0.0.0/24""#])
        let allow = problems(#"{"clock": {"serve": {"allow": ["10.0.0.0/24", "10.0.0.0/33", "10.0.0/24", "fd00::/129", "host.example", "10.0.0.0/", "10.0.0.0/x", "1:2:3:4:5:6:7:8:9", "fe80::1%eth0", "010.0.0.1", "all"]}}}"#)
        #expect(allow.map { $0.prefix(while: { $0 != ":" }) } == (1...10).map { "clock.serve.allow[\($0)]" })
        for (value, ok) in [(0, false), (1, true), (15, true), (16, false)] {
            let p = problems(#"{"clock": {"serve": {"allow": ["127.0.0.1"], "localStratum": \#(value)}}}"#)
            #expect(p == (ok ? [] : ["clock.serve.localStratum: expected an integer stratum from 1 to 15"]), "\(value)")
        }
        #expect(problems(#"{"clock": {"serve": {"allow": ["127.0.0.1"], "localStratum": 8.5}}}"#)
                == ["clock.serve.localStratum: expected an integer stratum from 1 to 15"])
        #expect(problems(#"{"clock": {"serve": {"allow": ["127.0.0.1"], "orphan": true}}}"#) == [#"clock.serve.orphan: unknown field "orphan""#])
        #expect(problems(#"{"clock": {"serve": ["10.0.0.0/24"]}}"#).first?.hasPrefix("clock.serve: expected an object") == true)
    }

    @Test("addresses and networks: IPv4, IPv6 with ::, embedded IPv4 and prefix lengths")
    func addressForms() {
        for good in ["0.0.0.0/0", "255.255.255.255", "::", "::1", "::/0", "fe80::/10", "2001:db8::8:800:200c:417a", "1:2:3:4:5:6:7:8/128",
                     "::ffff:192.0.2.128"] {
            #expect(ClockConfig.isAddressOrNetwork(good), "\(good)")
        }
        for bad in ["", "/24", "1.2.3", "1.2.3.4.5", "1:2:3:4:5:6:7", "1::2::3", ":::", "12345::", "g::1", "1.2.3.4/-1", "::1/0129"] {
            #expect(!ClockConfig.isAddressOrNetwork(bad), "\(bad)")
        }
    }
}
