import Foundation
import Testing
@testable import Vitrine
import VitrineCore
import VitrineTestSupport

/// The installer's documents agree with the program: the README with the Makefile and the manifest
/// parser, the man page with every command's help, the config reference with every key of
/// config.json; and every file the docs name exists.
@Suite("Docs: the README, the man page, the config reference and the paths they name")
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
        for command in ["run", "import", "play", "validate", "schedule", "probe", "bench", "ctl", "chrony-config"] {
            #expect(page.contains("\\fB\(command)\\fR") || page.contains("\\fBvitrine \(command)\\fR"), "command \(command)")
            let help = try VitrineBinary.run([command, "--help"]).out
            let options = Set(help.matches(of: #/--[a-z][a-z-]*[a-z]/#).map { String($0.output) })
            #expect(!options.isEmpty)
            for option in options { #expect(page.contains("\\fB\(option)\\fR"), "\(command): \(option) is not in the man page") }
        }
        let exitStatus = try #require(page.components(separatedBy: ".SH EXIT STATUS").last?.components(separatedBy: ".SH ").first)
        for code in ["0", "1", "64", "65", "66", "69"] { #expect(exitStatus.contains("\n\\fB\(code)\\fR\n"), "exit status \(code)") }
    }

    @Test("the man page documents no option that no command takes",
          .enabled(if: FileManager.default.isExecutableFile(atPath: scdoc), "scdoc not installed (tools/setup)"),
          .enabled(if: VitrineBinary.available, VitrineBinary.absent))
    func manPageHasNoStaleOption() throws {
        let page = try Self.roff()
        var known: Set<String> = ["--help", "--version"]
        for command in ["run", "import", "play", "validate", "schedule", "probe", "bench", "ctl", "chrony-config"] {
            let help = try VitrineBinary.run([command, "--help"]).out
            known.formUnion(help.matches(of: #/--[a-z][a-z-]*[a-z]/#).map { String($0.output) })
        }
        let documented = Set(page.matches(of: #/\\fB(--[a-z][a-z-]*[a-z])\\fR/#).map { String($0.output.1) })
        #expect(documented.count > 20, "\(documented.sorted())")
        #expect(documented.subtracting(known).sorted() == [], "in the man page, in no command's --help")
    }

    static func readme() throws -> String {
        try String(contentsOfFile: Repository.path("README.md"), encoding: .utf8)
    }

    @Test("the README tells a newcomer both commands, make demo and make test, near its top, and both are Makefile targets")
    func readmeNamesTheTwoCommands() throws {
        let readme = try Self.readme()
        let top = String(readme.prefix(2000))
        #expect(top.contains("make demo") && top.contains("make test"), "the first 2000 characters of README.md")
        let makefile = try String(contentsOfFile: Repository.path("Makefile"), encoding: .utf8)
        for target in ["demo:", "test:", "man:"] {
            #expect(makefile.split(separator: "\n").contains { $0.hasPrefix(target) }, "Makefile target \(target)")
        }
    }

    @Test("the README's example manifest is valid, with no warning, and uses what its text says it shows")
    func readmeExampleManifest() throws {
        let readme = try Self.readme()
        let block = try #require(readme.components(separatedBy: "```json\n").dropFirst().first?.components(separatedBy: "```").first)
        let result = ManifestParser.parse(Array(block.utf8), catalogDirectory: "/catalog", fileExists: { _ in true })
        #expect(result.problems == [])
        let manifest = try #require(result.manifest)
        #expect(manifest.playlist.map(\.type) == [.video, .image, .audio])
        #expect(manifest.playlist.contains { !$0.cuePoints.isEmpty } && manifest.playlist.contains { $0.transition != nil })
        #expect(!manifest.overlays.isEmpty && manifest.tap != nil && manifest.idle != nil)
    }

    @Test("the README lists the exit codes the man page does")
    func readmeExitCodes() throws {
        let readme = try Self.readme()
        let rows = readme.split(separator: "\n").filter { $0.hasPrefix("| ") }.map { $0.split(separator: "|").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? "" }
        for code in ["0", "1", "64", "65", "66", "69"] { #expect(rows.contains(code), "exit code \(code) in the README's table") }
    }

    /// Repository paths named in `text` (`docs/…`, `tools/…`, `config/…`, `rootfs/…`, `Tests/…`,
    /// `Sources/…`, with `*` as a wildcard in the last component), minus build output.
    static func namedPaths(_ text: String) -> Set<String> {
        let found = text.matches(of: #/[\s`(]((?:docs|tools|config|rootfs|Tests|Sources)/[A-Za-z0-9_.+*\/-]+)/#).map { String($0.output.1) }
        return Set(found.map { $0.trimmingCharacters(in: CharacterSet(charactersIn: ".,:;)")) }
            .filter { !$0.hasPrefix("tools/vm/cache/") && !$0.hasPrefix("tools/vm/out/") && !$0.contains("…") })
    }

    /// Folders the docs tell where to put a file, which appear with the first one.
    static let foldersMadeOnFirstUse: Set<String> = ["Tests/VitrineCoreTests/Fixtures/fuzz-manifest/"]

    /// Whether `path` is in the checkout; `dir/a*b` when some entry of `dir` starts with `a` and ends with
    /// `b`; `dir/**/name` when `name` is anywhere below `dir`.
    static func exists(_ path: String) -> Bool {
        guard path.contains("*") else { return FileManager.default.fileExists(atPath: Repository.path(path)) }
        if let range = path.range(of: "/**/") {
            let below = FileManager.default.enumerator(atPath: Repository.path(String(path[..<range.lowerBound])))
            let name = String(path[range.upperBound...])
            return (below?.allObjects as? [String] ?? []).contains { $0 == name || $0.hasSuffix("/" + name) }
        }
        let folder = (path as NSString).deletingLastPathComponent, pattern = (path as NSString).lastPathComponent
        let parts = pattern.split(separator: "*", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: Repository.path(folder))) ?? []
        return entries.contains { $0.hasPrefix(parts[0]) && $0.hasSuffix(parts.count > 1 ? parts[1] : "") }
    }

    @Test("every repository path the README and docs/ name exists, and docs/README.md indexes every file in docs/")
    func namedPathsExist() throws {
        var documents = ["README.md", "config/examples/README.md", "rootfs/README.md", "tools/vm/README.md"]
        let docs = try FileManager.default.contentsOfDirectory(atPath: Repository.path("docs")).filter { $0.hasSuffix(".md") }
        documents += docs.map { "docs/" + $0 }
        for document in documents {
            let text = try String(contentsOfFile: Repository.path(document), encoding: .utf8)
            let paths = Self.namedPaths(text)
            if document == "README.md" { #expect(paths.contains("docs/config.md") && paths.contains("docs/vitrine.1.scd")) }
            for path in paths.sorted() where !Self.foldersMadeOnFirstUse.contains(path) {
                #expect(Self.exists(path), "\(document) names \(path)")
            }
        }
        // The index: each `name` in its table is a file or folder in docs/, and each file in docs/ is in it.
        let index = try String(contentsOfFile: Repository.path("docs/README.md"), encoding: .utf8)
        let listed = index.split(separator: "\n").filter { $0.hasPrefix("| `") }.map { String($0.split(separator: "`")[1]) }
        for name in listed { #expect(FileManager.default.fileExists(atPath: Repository.path("docs/" + name)), "docs/README.md lists \(name)") }
        let present = try FileManager.default.contentsOfDirectory(atPath: Repository.path("docs")).filter { $0 != "README.md" }
        for name in present { #expect(listed.contains(name) || listed.contains(name + "/"), "docs/\(name) is not in docs/README.md") }
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
        // `mqtt` is absent by default (no broker), `wall` too (no video wall), `clock` too (Debian's pool),
        // `outputs` too (one screen):
        // documented, not shipped.
        let optional = ["mqtt", "wall", "clock", "outputs"]
        let documented = rows.map { row in String(row.split(separator: "`")[1]) }
            .filter { key in !optional.contains { key == $0 || key.hasPrefix($0 + ".") } }
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
