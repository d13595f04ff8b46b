import Foundation
import Testing
import VitrineCore
import VitrineTestSupport

/// `tools/stick-checksums` and `tools/sign-manifest`, the two tools an installer runs on a stick
/// before delivering it: bad input gets one line and exit 64 or 65, never a traceback.
@Suite("Stick tools: stick-checksums and sign-manifest", .serialized)
struct StickToolsTests {
    static let checksums = Repository.path("tools/stick-checksums")
    static let sign = Repository.path("tools/sign-manifest")

    /// A stick with one real clip under `media/<name>` and `manifest` as its vitrine/manifest.json.
    static func stick(_ manifest: String, clipName: String = "red.mp4") throws -> String {
        let mount = try Harness.newFolder("tools-stick")
        try FileManager.default.createDirectory(atPath: mount + "/vitrine/media", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: try Harness.colorClip("red", seconds: 1), toPath: mount + "/vitrine/media/" + clipName)
        try Data(manifest.utf8).write(to: URL(fileURLWithPath: mount + "/vitrine/manifest.json"))
        return mount
    }

    static let good = #"{"schema": "vitrine.manifest/1", "version": 2, "playlist": [{"id": "r", "type": "video", "src": "media/red.mp4"}]}"#

    @Test("stick-checksums fills in sizes and hashes; the stick then validates (found in NFD too)",
          .enabled(if: VitrineBinary.available, VitrineBinary.absent), arguments: [false, true])
    func fills(nfd: Bool) throws {
        let nfc = "Gr\u{00FC}\u{00DF}e.mp4", decomposed = "Gru\u{0308}\u{00DF}e.mp4"
        let manifest = nfd ? Self.good.replacingOccurrences(of: "red.mp4", with: nfc) : Self.good
        let mount = try Self.stick(manifest, clipName: nfd ? decomposed : "red.mp4")
        let r = try Subprocess.run(Self.checksums, [mount])
        #expect(r.code == 0, "\(r.err)")
        #expect(r.out == "\(mount)/vitrine/manifest.json: 1 items, 0 files entries\n")
        let v = try VitrineBinary.run(["validate", mount])
        #expect(v.code == 0, "\(v.out)")
        #expect(v.out.hasSuffix("a USB stick (sizes and hashes checked)\n"))
    }

    @Test("stick-checksums refuses bad input with one line on stderr and 64 or 65, never a traceback",
          arguments: [("{\"schema\": ", "invalid JSON at line 1, column 12: Expecting value", 65),
                      ("[1, 2]", "the manifest must be a JSON object at its root, found list", 65),
                      (#"{"version": NaN}"#, "invalid JSON: NaN is not JSON", 65),
                      (#"{"version": 1, "version": 2}"#, #"invalid JSON: duplicate key "version""#, 65),
                      (#"{"playlist": {"a": 1}}"#, "playlist: expected an array", 65),
                      (#"{"playlist": [{"src": "media/none.mp4"}]}"#, "playlist[0].src: media/none.mp4: not found on the stick", 65),
                      (#"{"playlist": [{"src": 7}]}"#, "playlist[0].src: expected a relative path, found 7", 65),
                      ("\u{FF}\u{FE}", "not UTF-8", 65)] as [(String, String, Int32)])
    func refuses(manifest: String, message: String, code: Int32) throws {
        let mount = try Self.stick("{}")
        var bytes = Array(manifest.utf8)
        if manifest == "\u{FF}\u{FE}" { bytes = [0xFF, 0xFE, 0x7B] }
        try Data(bytes).write(to: URL(fileURLWithPath: mount + "/vitrine/manifest.json"))
        let r = try Subprocess.run(Self.checksums, [mount])
        #expect(r.code == code)
        #expect(r.err.hasPrefix("stick-checksums: ") && r.err.contains(message), "\(r.err)")
        #expect(r.err.split(separator: "\n").count == 1, "one line: \(r.err)")
        #expect(!r.err.contains("Traceback"))
        #expect(r.out == "")
        #expect(try Data(contentsOf: URL(fileURLWithPath: mount + "/vitrine/manifest.json")) == Data(bytes), "left as it was")
    }

    @Test("stick-checksums: no argument or a folder without a manifest is a usage error (64); -h is help (0)")
    func checksumsUsage() throws {
        let none = try Subprocess.run(Self.checksums, [])
        #expect(none.code == 64 && none.err.contains("usage: tools/stick-checksums STICK") && none.out == "")
        let help = try Subprocess.run(Self.checksums, ["-h"])
        #expect(help.code == 0 && help.out.contains("usage: tools/stick-checksums STICK"))
        let empty = try Harness.newFolder("tools-empty")
        let r = try Subprocess.run(Self.checksums, [empty])
        #expect(r.code == 64 && r.err == "stick-checksums: no vitrine/manifest.json in \(empty)\n")
    }

    @Test("sign-manifest: no argument is a usage error (64); its help is the comment, without the script's first line of code")
    func signUsage() throws {
        let none = try Subprocess.run(Self.sign, [])
        #expect(none.code == 64)
        #expect(none.err.contains("tools/sign-manifest KEY STICK") && none.out == "")
        let help = try Subprocess.run(Self.sign, ["--help"])
        #expect(help.code == 0)
        #expect(help.out.hasPrefix("Signs a USB stick's vitrine/manifest.json with minisign"))
        #expect(!help.out.contains("set -euo pipefail") && !help.out.contains("#"), "\(help.out)")
        #expect(try Subprocess.run(Self.sign, ["--bogus"]).code == 64)
    }

    @Test("sign-manifest refuses a manifest that is not valid JSON (65, nothing signed); signs and verifies a good one",
          .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/minisign"), "minisign not installed (tools/setup)"))
    func signs() throws {
        let keys = try Harness.newFolder("tools-keys")
        try Subprocess.output(Self.sign, ["--new-key", keys, "-W"])
        for bad in ["{\"version\": 1,", "[]", #"{"version": "two"}"#, #"{"version": 1, "version": 1}"#] {
            let mount = try Self.stick(bad)
            let r = try Subprocess.run(Self.sign, [keys + "/vitrine.key", mount])
            #expect(r.code == 65, "\(bad): \(r.err)")
            #expect(r.err.hasPrefix("sign-manifest: ") && r.err.hasSuffix("not signed\n") && r.err.split(separator: "\n").count == 1, "\(r.err)")
            #expect(!FileManager.default.fileExists(atPath: mount + "/vitrine/manifest.json.minisig"))
        }
        let mount = try Self.stick(Self.good)
        let signed = try Subprocess.run(Self.sign, [keys + "/vitrine.key", mount])
        #expect(signed.code == 0, "\(signed.err)")
        #expect(signed.out == "signed \(mount)/vitrine/manifest.json (version 2) -> \(mount)/vitrine/manifest.json.minisig\n")
        #expect(try Subprocess.run(Self.sign, ["--verify", keys + "/vitrine.pub", mount]).code == 0)
        try Data((Self.good + " ").utf8).write(to: URL(fileURLWithPath: mount + "/vitrine/manifest.json"))
        #expect(try Subprocess.run(Self.sign, ["--verify", keys + "/vitrine.pub", mount]).code == 65, "a changed manifest does not verify")
        #expect(try Subprocess.run(Self.sign, [keys + "/vitrine.key", keys]).code == 64, "no manifest there")
    }
}
