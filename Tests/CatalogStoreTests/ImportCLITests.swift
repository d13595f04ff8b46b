import Foundation
import Testing
@testable import CatalogStore
import Crypto
import VitrineCore
import VitrineTestSupport

/// `vitrine import` and `vitrine run` on a library, through the built binary.
@Suite("Import: command line", .enabled(if: VitrineBinary.available, VitrineBinary.absent))
struct ImportCLITests {
    @Test("0 switched (message on stdout), 65 refused (reasons on stderr), 1 busy; --events logs both ends")
    func exitCodes() throws {
        let library = Scratch.folder("cli") + "/lib"
        let events = Scratch.folder("events") + "/events.jsonl"
        let stick = try TestStick(files: 2, size: 100_000, version: 4).write()
        let ok = try VitrineBinary.run(["import", stick.mount, "--library", library, "--events", events, "--quiet"])
        #expect(ok.code == 0)
        #expect(ok.out.hasPrefix("Updated to version 4: 2 items (2 files, 195.3 KiB in "))
        #expect(ok.err == "")

        // The same stick again: up to date, as the player's banner says (the event log records the refusal).
        let again = try VitrineBinary.run(["import", stick.vitrine, "--library", library, "--events", events])
        #expect(again.code == 0)
        #expect(again.out == "Catalog is up to date: version 4 is already playing\n")
        #expect(!again.err.contains("refused"))
        // Another catalog under the same version: refused.
        var same = stick
        same.extra = #", "loop": false"#
        try same.writeManifest()
        let notNewer = try VitrineBinary.run(["import", stick.vitrine, "--library", library])
        #expect(notNewer.code == 65)
        #expect(notNewer.out == "")
        #expect(notNewer.err.contains("vitrine import: USB stick refused: version: version 4 is not newer than the last accepted version 4"))

        var broken = stick
        broken.version = 5
        broken.itemOverrides = [0: ["sha256": "\"\(String(repeating: "0", count: 64))\""], 1: ["size": "1"]]
        try broken.writeManifest()
        let refused = try VitrineBinary.run(["import", stick.mount, "--library", library, "--quiet"])
        #expect(refused.code == 65)
        #expect(refused.err == "vitrine import: USB stick refused: playlist[1].size: media/clip1.mp4: size mismatch (manifest 1, stick 100000 bytes)\n")
        broken.itemOverrides = [0: ["size": "2"], 1: ["size": "1"]]
        try broken.writeManifest()
        let two = try VitrineBinary.run(["import", stick.mount, "--library", library, "--quiet"])
        #expect(two.code == 65)
        #expect(two.err.hasSuffix(" (and 1 more)\n  playlist[0].size: media/clip0.mp4: size mismatch (manifest 2, stick 100000 bytes)\n"
                                  + "  playlist[1].size: media/clip1.mp4: size mismatch (manifest 1, stick 100000 bytes)\n"))

        let lock = try #require(try CatalogLibrary.Lock(library + "/.lock"))
        let busy = try VitrineBinary.run(["import", stick.mount, "--library", library])
        lock.release()
        #expect(busy.code == 1)
        #expect(busy.err.contains("Import failed: another import is running (\(library)/.lock is locked)"))

        let lines = try String(contentsOfFile: events, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 4)
        let finished = try JSONValue(parsing: Array(lines[1].utf8))
        #expect(finished["event"] == .string("importFinished"))
        #expect(finished["result"] == .string("switched"))
        #expect(finished["version"] == .number(JSONNumber(literal: "4")!))
        #expect(finished["items"] == .number(JSONNumber(literal: "2")!))
        #expect(finished["bytes"] == .number(JSONNumber(literal: "200000")!))
        #expect(finished["message"] == .string("Updated to version 4: 2 items"))
        let refusedLine = try JSONValue(parsing: Array(lines[3].utf8))
        #expect(try JSONValue(parsing: Array(lines[2].utf8))["event"] == .string("importStarted"))
        #expect(refusedLine["result"] == .string("refused"))
        #expect(refusedLine["problems"] == .array([.string("version: version 4 is not newer than the last accepted version 4 (import.allowDowngrade allows it)")]))
    }

    @Test("--check cleans up and says what plays; 65 when nothing can")
    func check() throws {
        let library = Scratch.folder("cli") + "/lib"
        let empty = try VitrineBinary.run(["import", "--check", "--library", library])
        #expect(empty.code == 65)
        #expect(empty.out.contains("nothing to play: the player shows its slate"))
        let stick = try TestStick(files: 1, size: 5000, version: 2).write()
        #expect(try VitrineBinary.run(["import", stick.mount, "--library", library, "--quiet"]).code == 0)
        try FileManager.default.createDirectory(atPath: library + "/staging.2", withIntermediateDirectories: false)
        let checked = try VitrineBinary.run(["import", "--check", "--deep", "--library", library])
        #expect(checked.code == 0)
        #expect(checked.out == "removed \(library)/staging.2\nlast accepted version: 2\n"
                + "current: gen.1: version 2, 1 item, 4.9 KiB (sizes and hashes checked) \(library)/gen.1\n")
    }

    @Test("config import.requireSignature refuses an unsigned stick; usage errors exit 64",
          .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/minisign"), "minisign not installed (tools/setup)"))
    func configAndUsage() throws {
        let keys = try Keys()
        defer { keys.remove() }
        let line = try String(contentsOfFile: keys.folder + "/k.pub", encoding: .utf8).split(separator: "\n")[1]
        let config = Scratch.folder("config") + "/config.json"
        try Data(#"{"library": "\#(Scratch.folder("cli"))/lib", "import": {"requireSignature": true, "trustedKeys": ["\#(line)"], "switch": "immediate"}}"#.utf8)
            .write(to: URL(fileURLWithPath: config))
        let stick = try TestStick(files: 1, size: 5000, version: 2).write()
        let unsigned = try VitrineBinary.run(["import", stick.mount, "--config", config])
        #expect(unsigned.code == 65)
        #expect(unsigned.err.contains("manifest.json.minisig: missing, and import.requireSignature is on"))
        try keys.sign(stick)
        let signed = try VitrineBinary.run(["import", stick.mount, "--config", config, "--quiet"])
        #expect(signed.code == 0)
        #expect(signed.out.contains("switch: immediate"))
        #expect(signed.err.contains("note: signature verified with key \(try keys.publicKey().keyID)"))

        #expect(try VitrineBinary.run(["import"]).code == 64)
        #expect(try VitrineBinary.run(["import", "a", "b"]).code == 64)
        #expect(try VitrineBinary.run(["import", "a", "--bogus"]).code == 64)
        let help = try VitrineBinary.run(["import", "--help"])
        #expect(help.code == 0 && help.out.hasPrefix("usage: vitrine import PATH"))
    }

    @Test("vitrine run without --catalog plays the library's current catalog, or the slate when it has none",
          .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/ffmpeg"), "ffmpeg not installed (tools/setup)"))
    func runFromLibrary() throws {
        let library = Scratch.folder("cli") + "/lib"
        let slate = try VitrineBinary.run(["run", "--library", library, "--output", "headless", "--duration", "0.5"])
        #expect(slate.code == 65)
        #expect(slate.err.contains("no playable catalog; showing the slate"))

        var stick = TestStick(files: 0)
        let clip = Scratch.folder("clip") + "/red.mp4"
        try Subprocess.run("/usr/bin/ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "color=c=red:s=160x90:r=30:d=1", "-c:v", "libx264",
                                               "-preset", "ultrafast", "-pix_fmt", "yuv420p", clip])
        stick.media = [("media/red.mp4", [UInt8](try Data(contentsOf: URL(fileURLWithPath: clip))))]
        try stick.write()
        #expect(try VitrineBinary.run(["import", stick.mount, "--library", library, "--quiet"]).code == 0)
        let played = try VitrineBinary.run(["run", "--library", library, "--output", "headless", "--duration", "0.5"])
        #expect(played.code == 0)
        #expect(played.err.contains("library \(library): playing current, gen.1: version 1, 1 item"))
        #expect(played.out.contains("frames presented"))
    }
}

@Suite("Import: command line as root", .enabled(if: VitrineBinary.available && getuid() == 0, "needs root and the vitrine binary"))
struct ImportAsRootTests {
    @Test("run as root on a library another user owns, the import writes that user's files")
    func takesTheLibraryOwnersIdentity() throws {
        let root = Scratch.folder("owner")
        let library = root + "/lib"
        try FileManager.default.createDirectory(atPath: library, withIntermediateDirectories: true)
        #expect(chown(library, 65534, 65534) == 0)
        let stick = try TestStick(files: 1, size: 10_000, version: 1).write()
        // The stick and the folders above the library must be readable by that user.
        for path in [stick.mount, stick.vitrine, stick.vitrine + "/media", stick.vitrine + "/manifest.json", stick.vitrine + "/media/clip0.mp4",
                     root, (root as NSString).deletingLastPathComponent] {
            _ = chmod(path, 0o755)
        }
        let r = try VitrineBinary.run(["import", stick.mount, "--library", library, "--quiet", "--standalone"])
        #expect(r.code == 0, "\(r.err)")
        for path in [library + "/gen.1", library + "/gen.1/catalog.json", library + "/gen.1/media/clip0.mp4", library + "/state.json"] {
            var st = stat()
            #expect(stat(path, &st) == 0 && st.st_uid == 65534, "\(path)")
        }
    }
}
