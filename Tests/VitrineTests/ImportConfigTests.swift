import Foundation
import Testing
@testable import Vitrine
import CatalogStore
import VitrineCore

@Suite("Import config")
struct ImportConfigTests {
    /// A real minisign public key line (key ID 1FB6B69070EAF174).
    let key = "RWR08epwkLa2H/IMLA5NqbnEWKAllFDeuhliLKSJaRvH0AEaMIQ/L8CW"

    @Test("import.* sets the policy; the defaults are off, no keys, boundary")
    func parses() throws {
        #expect(PlayerConfig().importSettings == ImportSettings())
        let c = try PlayerConfig(json: Array(#"{"import": {"requireSignature": true, "trustedKeys": ["\#(key)"], "allowDowngrade": true, "switch": "immediate"}}"#.utf8))
        #expect(c.importSettings.requireSignature && c.importSettings.allowDowngrade)
        #expect(c.importSettings.switchMode == .immediate)
        #expect(c.importSettings.trustedKeys.map(\.keyID) == ["1FB6B69070EAF174"])
    }

    @Test("every mistake is named with its path")
    func problems() {
        #expect {
            _ = try PlayerConfig(json: Array(#"{"import": {"requireSignature": "yes", "trustedKeys": ["\#(key)", "RWQnope", 3], "switch": "later", "retries": 2}}"#.utf8))
        } throws: { error in
            (error as? ConfigError)?.problems == [
                "import.requireSignature: expected true or false",
                "import.trustedKeys: expected an array of at most 2 minisign public keys",
                "import.switch: expected \"boundary\" or \"immediate\"",
                "import.retries: unknown field \"retries\"",
            ]
        }
        #expect {
            _ = try PlayerConfig(json: Array(#"{"import": {"trustedKeys": ["RWQnope", 3]}}"#.utf8))
        } throws: { error in
            (error as? ConfigError)?.problems == [
                "import.trustedKeys[0]: not a minisign public key: invalid base64 (give the base64 line of a minisign .pub file)",
                "import.trustedKeys[1]: expected a string",
            ]
        }
        #expect {
            _ = try PlayerConfig(json: Array(#"{"import": {"requireSignature": true}}"#.utf8))
        } throws: { error in
            (error as? ConfigError)?.problems == ["import.requireSignature: needs at least one key in import.trustedKeys"]
        }
    }

    @Test("the shipped config/config.json has the import defaults")
    func shipped() throws {
        let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let c = try PlayerConfig(json: [UInt8](try Data(contentsOf: repo.appendingPathComponent("config/config.json"))))
        #expect(c.importSettings == ImportSettings())
        #expect(c.library == CatalogLibrary.defaultPath)
    }
}

@Suite("Update config")
struct UpdateConfigTests {
    let key = "RWR08epwkLa2H/IMLA5NqbnEWKAllFDeuhliLKSJaRvH0AEaMIQ/L8CW"

    func parse(_ json: String) throws(ConfigError) -> PlayerConfig { try PlayerConfig(json: Array(json.utf8)) }

    func problems(_ json: String) -> [String] {
        do { _ = try parse(json); return [] } catch { return error.problems }
    }

    @Test("update.* sets the network source; no url is no update; the defaults are 300 s ± 10 %, signed, 10 s and 30 s")
    func parses() throws {
        #expect(PlayerConfig().update == nil)
        #expect(try parse(#"{"update": {"interval": 60}}"#).update == nil)
        let c = try parse(#"{"import": {"trustedKeys": ["\#(key)"]}, "update": {"url": "https://cms.example/shop-12"}}"#)
        #expect(c.update == UpdateSettings(url: "https://cms.example/shop-12/"))
        #expect(c.update?.url == "https://cms.example/shop-12/")
        #expect(c.update.map { ($0.interval, $0.jitter, $0.requireSignature, $0.connectTimeout, $0.lowSpeedTimeout) }
                    .map { $0 == (300, 0.1, true, 10, 30) } == true)
        let ca = Harness.scratch + "/update-ca.pem"
        try Data("-----BEGIN CERTIFICATE-----\n".utf8).write(to: URL(fileURLWithPath: ca))
        // `update` before `import`: the keys are still seen.
        let all = try parse(#"{"update": {"url": "http://10.0.0.5/c/", "interval": 10, "jitter": 0, "caFile": "\#(ca)", "allowPlainHTTP": true,"#
                            + #" "bandwidthLimit": 250000, "requireSignature": true, "connectTimeout": 2.5, "lowSpeedTimeout": 1},"#
                            + #" "import": {"trustedKeys": ["\#(key)"]}}"#)
        let u = try #require(all.update)
        #expect(u == UpdateSettings(url: "http://10.0.0.5/c/", interval: 10, jitter: 0, caFile: ca, allowPlainHTTP: true,
                                    bandwidthLimit: 250_000, requireSignature: true, connectTimeout: 2.5, lowSpeedTimeout: 1))
        let f = u.fetchSettings
        #expect(f.caFile == ca && f.allowPlainHTTP && f.bandwidthLimit == 250_000 && f.connectTimeout == 2.5 && f.lowSpeedTimeout == 1)
        // A network catalog's import policy: import.* with update.requireSignature.
        #expect(u.importSettings(from: all.importSettings).requireSignature)
        #expect(!all.importSettings.requireSignature)
        let unsigned = try parse(#"{"update": {"url": "https://cms.example/", "requireSignature": false}}"#)
        #expect(unsigned.update?.requireSignature == false)
    }

    @Test("every mistake is named with its path: plain http, a signature without keys, ranges, types, unknown keys")
    func mistakes() {
        #expect(problems(#"{"update": {"url": "http://cms.example/", "requireSignature": false}}"#)
                    == ["update.url: plain http:// is refused unless update.allowPlainHTTP is true; use https://"])
        #expect(problems(#"{"update": {"url": "https://cms.example/"}}"#)
                    == ["update.requireSignature: needs at least one key in import.trustedKeys (or false to accept unsigned catalogs)"])
        #expect(problems(#"{"update": {"url": "ftp://cms.example/", "requireSignature": false}}"#)
                    == ["update.url: expected the catalog folder's URL, https://host/path/ (no spaces)"])
        #expect(problems(#"{"update": {"url": "https://cms example/", "requireSignature": false}}"#)
                    == ["update.url: expected the catalog folder's URL, https://host/path/ (no spaces)"])
        #expect(problems(#"{"update": {"url": 3, "interval": 9, "jitter": 1.5, "caFile": "/nonexistent/ca.pem", "allowPlainHTTP": "no","#
                         + #" "bandwidthLimit": 0, "connectTimeout": 0, "lowSpeedTimeout": 0.5, "retries": 2}}"#) == [
            "update.url: expected a string (the catalog folder's https:// URL) or null",
            "update.interval: expected a number of seconds ≥ 10 and ≤ 604800",
            "update.jitter: expected a number from 0 to 1",
            "update.caFile: cannot read /nonexistent/ca.pem (a PEM file of certificate authorities)",
            "update.allowPlainHTTP: expected true or false",
            "update.bandwidthLimit: expected an integer number of bytes per second ≥ 1, or null",
            "update.connectTimeout: expected a number of seconds > 0 and ≤ 3600",
            "update.lowSpeedTimeout: expected a number of seconds ≥ 1 and ≤ 3600",
            "update.retries: unknown field \"retries\"",
        ])
        // Numbers too large for a timer are refused, not a crash at the first poll.
        #expect(problems(#"{"update": {"interval": 1e10, "connectTimeout": 1e300, "lowSpeedTimeout": 1e300}}"#) == [
            "update.interval: expected a number of seconds ≥ 10 and ≤ 604800",
            "update.connectTimeout: expected a number of seconds > 0 and ≤ 3600",
            "update.lowSpeedTimeout: expected a number of seconds ≥ 1 and ≤ 3600",
        ])
        // Credentials in the URL would be logged.
        #expect(problems(#"{"update": {"url": "https://user:s3cret@cms.example/", "requireSignature": false}}"#)
                    == ["update.url: credentials in the URL are not accepted (they would be logged); use a token in the path, or TLS client certificates"])
        #expect(problems(#"{"update": "https://cms.example/"}"#) == ["update: expected an object"])
        // A bad key list is reported once, under import.trustedKeys.
        #expect(problems(#"{"update": {"url": "https://cms.example/"}, "import": {"trustedKeys": ["RWQnope"]}}"#)
                    == ["import.trustedKeys[0]: not a minisign public key: invalid base64 (give the base64 line of a minisign .pub file)"])
    }
}
