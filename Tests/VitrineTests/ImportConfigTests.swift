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
