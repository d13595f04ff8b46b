import Foundation
import Testing
@testable import Vitrine
import VitrineCore
import CatalogStore
import VitrineTestSupport

/// A manifest that names `Grüße.mp4` in NFC (as editors write it) and a disk that holds it in NFD
/// (as a Mac writes a stick), and the other way round: run, validate and import find the file.
@Suite("File names across Unicode normalisation (NFC and NFD)", .serialized, .enabled(if: VitrineBinary.available, VitrineBinary.absent))
struct UnicodeNameTests {
    /// `Grüße.mp4` with a precomposed ü (U+00FC): NFC.
    static let nfc = "Gr\u{00FC}\u{00DF}e.mp4"
    /// `Grüße.mp4` with u + combining diaeresis (U+0308): NFD.
    static let nfd = "Gru\u{0308}\u{00DF}e.mp4"

    /// The names in `folder`, as their UTF-8 bytes (a `String` compares NFC and NFD as equal).
    static func names(_ folder: String) throws -> [[UInt8]] {
        try FileManager.default.contentsOfDirectory(atPath: folder).map { Array($0.utf8) }.sorted { $0.lexicographicallyPrecedes($1) }
    }

    /// A catalog whose manifest names `media/<manifestName>` and whose disk holds `media/<diskName>`.
    static func catalog(manifestName: String, diskName: String, checksums: Bool = false, in folder: String? = nil) throws -> String {
        let dir = try folder ?? Harness.newFolder("unicode")
        try FileManager.default.createDirectory(atPath: dir + "/media", withIntermediateDirectories: true)
        let clip = dir + "/media/" + diskName
        try FileManager.default.copyItem(atPath: try Harness.colorClip("red", seconds: 1), toPath: clip)
        #expect(try names(dir + "/media") == [Array(diskName.utf8)], "the disk holds the bytes asked for")
        var fields = ""
        if checksums {
            let size = try #require(try FileManager.default.attributesOfItem(atPath: clip)[.size] as? Int)
            fields = #", "size": \#(size), "sha256": "\#(try Subprocess.output("/usr/bin/sha256sum", [clip]).prefix(64))""#
        }
        let json = #"{"schema": "vitrine.manifest/1", "version": 1, "playlist": [{"id": "g", "type": "video", "src": "media/\#(manifestName)"\#(fields)}]}"#
        #expect(json.utf8.contains(0xCC) == (Array(manifestName.utf8) == Array(Self.nfd.utf8)), "the manifest holds the bytes asked for")
        try Data(json.utf8).write(to: URL(fileURLWithPath: dir + "/manifest.json"))
        return dir
    }

    static let forms = [(nfc, nfd), (nfd, nfc)]

    @Test("run plays the file whichever form the manifest and the disk use", arguments: [0, 1])
    func run(form: Int) throws {
        let (manifestName, diskName) = Self.forms[form]
        let dir = try Self.catalog(manifestName: manifestName, diskName: diskName)
        let r = try VitrineBinary.run(["run", "--catalog", dir, "--output", "headless", "--duration", "1",
                                       // On the virtual clock (a snapshot run): exactly 30 frames, however busy the machine.
                                       "--snapshot-at", "0.5", "--snapshot-dir", Harness.scratch + "/cli-shots"])
        #expect(r.code == 0, "\(r.err)")
        #expect(r.out.contains("frames presented: 30"), "\(r.out)")
        #expect(!r.err.contains("file not found") && !r.err.contains("skipping"), "\(r.err)")
    }

    @Test("validate finds the file (and its size and hash on a stick) whichever form each uses", arguments: [0, 1])
    func validate(form: Int) throws {
        let (manifestName, diskName) = Self.forms[form]
        let plain = try Self.catalog(manifestName: manifestName, diskName: diskName)
        let r = try VitrineBinary.run(["validate", plain])
        #expect(r.code == 0, "\(r.out)")
        let stick = try Harness.newFolder("unicode-stick")
        _ = try Self.catalog(manifestName: manifestName, diskName: diskName, checksums: true, in: stick + "/vitrine")
        let s = try VitrineBinary.run(["validate", stick])
        #expect(s.code == 0, "\(s.out)")
        #expect(s.out.hasSuffix("valid: 1 item(s), version 1, a USB stick (sizes and hashes checked)\n"))
    }

    @Test("import copies the file under the manifest's spelling (NFC from a Mac's NFD stick, and the other way), verified; the library plays it", arguments: [0, 1])
    func importStick(form: Int) throws {
        let (manifestName, diskName) = Self.forms[form]
        let stick = try Harness.newFolder("unicode-import")
        _ = try Self.catalog(manifestName: manifestName, diskName: diskName, checksums: true, in: stick + "/vitrine")
        let library = try Harness.newFolder("unicode-library") + "/lib"
        let r = try VitrineBinary.run(["import", stick, "--library", library, "--quiet"])
        #expect(r.code == 0, "\(r.err)")
        #expect(r.out.hasPrefix("Updated to version 1: 1 item"))
        // The library holds the file under the manifest's spelling: its catalog.json names it so.
        #expect(try Self.names(library + "/gen.1/media") == [Array(manifestName.utf8)])
        let check = try VitrineBinary.run(["import", "--check", "--deep", "--library", library])
        #expect(check.code == 0, "\(check.out)")
        let played = try VitrineBinary.run(["run", "--library", library, "--output", "headless", "--duration", "1",
                                       // On the virtual clock (a snapshot run): exactly 30 frames, however busy the machine.
                                       "--snapshot-at", "0.5", "--snapshot-dir", Harness.scratch + "/cli-shots"])
        #expect(played.code == 0 && played.out.contains("frames presented: 30"), "\(played.err)")
    }
}
