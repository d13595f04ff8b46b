import Foundation
import Testing
@testable import Vitrine
import VitrineCore
import VitrineTestSupport

/// The installer's documents agree with the program: the man page with every command's help, the
/// config reference with every key of config.json.
@Suite("Docs: the man page and the config reference")
struct DocsTests {
    static let scdoc = "/usr/bin/scdoc"

    /// `docs/vitrine.1.scd` through scdoc, as `make man` and `tools/mkimage` run it.
    static func roff() throws -> String {
        let source = try Data(contentsOf: URL(fileURLWithPath: Repository.path("docs/vitrine.1.scd")))
        let r = try Subprocess.run(scdoc, [], input: source)
        #expect(r.code == 0, "scdoc: \(r.err)")
        return r.out
    }

    @Test("the man page builds with scdoc and names every command, every option each one's --help lists, and every exit code",
          .enabled(if: FileManager.default.isExecutableFile(atPath: scdoc), "scdoc not installed (tools/setup)"),
          .enabled(if: VitrineBinary.available, VitrineBinary.absent))
    func manPage() throws {
        let page = try Self.roff()
        #expect(page.contains(".TH \"vitrine\" \"1\""))
        for command in ["run", "import", "play", "validate", "probe", "bench"] {
            #expect(page.contains("\\fB\(command)\\fR") || page.contains("\\fBvitrine \(command)\\fR"), "command \(command)")
            let help = try VitrineBinary.run([command, "--help"]).out
            let options = Set(help.matches(of: #/--[a-z][a-z-]*[a-z]/#).map { String($0.output) })
            #expect(!options.isEmpty)
            for option in options { #expect(page.contains("\\fB\(option)\\fR"), "\(command): \(option) is not in the man page") }
        }
        let exitStatus = try #require(page.components(separatedBy: ".SH EXIT STATUS").last?.components(separatedBy: ".SH ").first)
        for code in ["0", "1", "64", "65", "66", "69"] { #expect(exitStatus.contains("\n\\fB\(code)\\fR\n"), "exit status \(code)") }
    }

    @Test("man renders it", .enabled(if: FileManager.default.isExecutableFile(atPath: scdoc) && FileManager.default.isExecutableFile(atPath: "/usr/bin/man"),
                                     "scdoc or man not installed"))
    func manRenders() throws {
        let file = Harness.scratch + "/vitrine.1"
        try Data(try Self.roff().utf8).write(to: URL(fileURLWithPath: file))
        let r = try Subprocess.run("/usr/bin/man", ["-l", "-P", "cat", file], environment: ["MANWIDTH": "100"])
        #expect(r.code == 0, "\(r.err)")
        #expect(r.out.contains("EXIT STATUS") && r.out.contains("vitrine validate MANIFEST"))
    }

    /// The keys of config/config.json, as dotted paths, with their values' JSON text.
    static func shippedKeys() throws -> [(key: String, value: JSONValue)] {
        let data = try Data(contentsOf: URL(fileURLWithPath: Repository.path("config/config.json")))
        guard case let .object(top) = try JSONValue(parsing: [UInt8](data)) else { return [] }
        var keys: [(String, JSONValue)] = []
        for (k, v) in top {
            if case let .object(inner) = v { for (ik, iv) in inner { keys.append((k + "." + ik, iv)) } } else { keys.append((k, v)) }
        }
        return keys
    }

    static func text(_ v: JSONValue) -> String {
        switch v {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .number(let n): return "\(n)"
        case .string(let s): return "\"\(s)\""
        case .array(let a): return "[" + a.map(text).joined(separator: ", ") + "]"
        case .object: return "{…}"
        }
    }

    @Test("docs/config.md documents every key of config.json with its default, input.calibration included, and nothing else")
    func configReference() throws {
        let doc = try String(contentsOfFile: Repository.path("docs/config.md"), encoding: .utf8)
        let rows = doc.split(separator: "\n").filter { $0.hasPrefix("| `") }
        let documented = rows.map { row in String(row.split(separator: "`")[1]) }
        let shipped = try Self.shippedKeys()
        #expect(documented.sorted() == shipped.map(\.key).sorted())
        #expect(documented.contains("input.calibration"))
        for (key, value) in shipped {
            let row = try #require(rows.first { $0.hasPrefix("| `\(key)` |") })
            #expect(row.contains("| `\(Self.text(value))` |"), "\(key): the default \(Self.text(value)) is not in \(row)")
            #expect(row.split(separator: "|").last.map { $0.trimmingCharacters(in: .whitespaces).count > 40 } == true, "\(key) has an effect")
        }
        // What the reference documents is what the player accepts: each key alone, at its default.
        for (key, value) in shipped {
            let parts = key.split(separator: ".")
            let json = parts.count == 2 ? "{\"\(parts[0])\": {\"\(parts[1])\": \(Self.text(value))}}" : "{\"\(key)\": \(Self.text(value))}"
            #expect(throws: Never.self, "\(json)") { _ = try PlayerConfig(json: Array(json.utf8)) }
        }
        // config.json holds the defaults (its identity calibration is what no calibration does).
        var defaults = PlayerConfig()
        defaults.touchCalibration = .identity
        #expect(try PlayerConfig(json: Array(try Data(contentsOf: URL(fileURLWithPath: Repository.path("config/config.json"))))) == defaults)
    }
}
