import Foundation
import Testing
@testable import CatalogStore
import Crypto
import FileIO
import VitrineCore
import VitrineTestSupport

@Suite("Import: a good stick")
struct ImportTests {
    @Test("switches: gen.1 holds the media and catalog.json byte for byte, current points at it, the version is recorded")
    func firstImport() throws {
        let stick = try TestStick(files: 3, size: 300_000, version: 3).write()
        let library = newLibrary()
        var phases: [ImportProgress.Phase] = [], copied: [Int64] = []
        let result = library.importStick(at: stick.mount) { p in
            if phases.last != p.phase { phases.append(p.phase) }
            if p.phase == .copying { copied.append(p.bytesDone) }
            #expect(p.bytesTotal == (p.phase == .checking ? 0 : 900_000))
        }
        #expect(result.outcome == .switched)
        #expect(result.exitCode == 0)
        #expect(result.message == "Updated to version 3: 3 items")
        #expect(result.version == 3 && result.items == 3 && result.files == 3 && result.bytes == 900_000)
        #expect(result.problems == [])
        #expect(phases == [.checking, .copying, .syncing, .switching])
        #expect(copied == copied.sorted() && copied.last == 900_000)

        #expect(library.entries == [".lock", "current", "gen.1", "state.json"])
        #expect(library.currentTarget == "gen.1")
        #expect(library.files(inGeneration: 1) == ["catalog.json", "media/clip0.mp4", "media/clip1.mp4", "media/clip2.mp4"])
        let gen = library.path + "/gen.1/"
        #expect([UInt8](try Data(contentsOf: URL(fileURLWithPath: gen + "catalog.json"))) == stick.manifestBytes)
        for file in stick.media {
            #expect([UInt8](try Data(contentsOf: URL(fileURLWithPath: gen + file.path))) == file.bytes)
        }
        #expect(try String(contentsOfFile: library.path + "/state.json", encoding: .utf8)
                == "{\"schema\": \"vitrine.library/1\", \"version\": 3, \"generation\": 1}\n")
        #expect(library.lastAcceptedVersion() == 3)

        let resolution = library.openForPlayback()
        let catalog = try #require(resolution.catalog)
        #expect(catalog.slot == .current && catalog.generation == 1 && catalog.directory == library.path + "/gen.1")
        #expect(catalog.manifest.version == 3 && catalog.bytes == 900_000)
        #expect(result.catalog == catalog)
        #expect(resolution.skipped == [])
    }

    @Test("later imports move current on, keep the one before as previous, and delete older generations")
    func retention() throws {
        var stick = try TestStick(files: 1, size: 50_000, seed: 7, version: 1).write()
        let library = newLibrary()
        for version in 1...4 {
            stick.version = version
            stick.media[0].bytes = randomBytes(50_000 + version, seed: UInt64(version))
            try stick.write()
            let result = library.importStick(at: stick.mount)
            #expect(result.outcome == .switched, "\(result.message)")
            #expect(library.currentTarget == "gen.\(version)")
            #expect(library.previousTarget == (version == 1 ? nil : "gen.\(version - 1)"))
            #expect(library.entries.filter { $0.hasPrefix("gen.") } == (version == 1 ? ["gen.1"] : ["gen.\(version - 1)", "gen.\(version)"]))
        }
        #expect(library.resolve(verifyHashes: true).catalog?.manifest.version == 4)
    }

    @Test("the stick may be given as its mount point or as its vitrine/ folder")
    func pathForms() throws {
        let stick = try TestStick(files: 1, size: 1000).write()
        #expect(newLibrary().importStick(at: stick.mount).outcome == .switched)
        #expect(newLibrary().importStick(at: stick.vitrine + "/").outcome == .switched)
        let missing = newLibrary().importStick(at: stick.mount + "/nowhere")
        #expect(missing.outcome == .refused && missing.problems.map(\.kind) == [.noManifest])
    }

    @Test("only the files the manifest names are copied: hidden, AppleDouble and other files stay on the stick")
    func onlyNamedFiles() throws {
        var stick = TestStick(files: 1, size: 1000)
        let logo = randomBytes(777, seed: 99)
        stick.media.append(("media/logo.png", logo))
        stick.extra = #", "overlays": {"promo": {"title": "Hi", "image": "media/logo.png"}}, "files": [{"path": "media/logo.png", "size": 777, "sha256": "\#(SHA256.hash(logo).hex)"}]"#
        try stick.write()
        // The playlist has one item; logo.png comes from overlays + files. Put junk beside them.
        for junk in ["._manifest.json", ".DS_Store", "media/._clip0.mp4", "media/unused.mp4", ".Trashes/x"] {
            let path = stick.vitrine + "/" + junk
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try Data("junk".utf8).write(to: URL(fileURLWithPath: path))
        }
        // The manifest lists item0 (clip0) and item1 (logo) as items; drop the logo item, keep it in files.
        try stick.writeManifest(stick.manifestText.replacingOccurrences(
            of: #",\#n  {"id": "item1", "type": "video", "src": "media/logo.png", "size": 777, "sha256": "\#(SHA256.hash(logo).hex)"}"#, with: ""))
        let library = newLibrary()
        let result = library.importStick(at: stick.mount)
        #expect(result.outcome == .switched, "\(result.message)")
        #expect(result.message == "Updated to version 1: 1 item")
        #expect(library.files(inGeneration: 1) == ["catalog.json", "media/clip0.mp4", "media/logo.png"])
    }

    @Test("a symbolic link inside vitrine/ is followed and copied as a plain file")
    func symlinkInside() throws {
        let stick = try TestStick(files: 1, size: 5000).write()
        try FileManager.default.moveItem(atPath: stick.vitrine + "/media/clip0.mp4", toPath: stick.vitrine + "/real.bin")
        try FileManager.default.createSymbolicLink(atPath: stick.vitrine + "/media/clip0.mp4", withDestinationPath: "../real.bin")
        let library = newLibrary()
        #expect(library.importStick(at: stick.mount).outcome == .switched)
        let status = try #require(try FileSystem.status(library.path + "/gen.1/media/clip0.mp4", followLinks: false))
        #expect(status.kind == .regular && status.size == 5000)
    }

    @Test("a signature by a trusted key is verified (minisign, prehashed and legacy)",
          .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/minisign"), "minisign not installed (tools/setup)"),
          arguments: [false, true])
    func signed(legacy: Bool) throws {
        let keys = try Keys()
        defer { keys.remove() }
        let stick = try TestStick(files: 1, size: 2000, version: 5).write()
        try keys.sign(stick, legacy: legacy)
        let settings = ImportSettings(requireSignature: true, trustedKeys: [try keys.publicKey()])
        let result = newLibrary().importStick(at: stick.mount, settings: settings)
        #expect(result.outcome == .switched, "\(result.message)")
        #expect(result.notes == ["signature verified with key \(try keys.publicKey().keyID) (trusted comment: vitrine version 5)"])
    }

    @Test("a repair: the last accepted version may be imported again when current is broken")
    func repairSameVersion() throws {
        let stick = try TestStick(files: 1, size: 4000, version: 9).write()
        let library = newLibrary()
        #expect(library.importStick(at: stick.mount).outcome == .switched)
        #expect(library.importStick(at: stick.mount).problems.map(\.kind) == [.notNewer])
        // Damage current: truncate its media file.
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: library.path + "/gen.1/media/clip0.mp4"))
        #expect(library.resolve().catalog == nil)
        let repaired = library.importStick(at: stick.mount)
        #expect(repaired.outcome == .switched, "\(repaired.message)")
        #expect(library.resolve(verifyHashes: true).catalog?.generation == 2)
    }
}

/// A minisign key pair made by the CLI.
struct Keys {
    let folder = Scratch.folder("keys")
    init() throws { try Keys.minisign(["-G", "-W", "-p", folder + "/k.pub", "-s", folder + "/k.key"]) }

    func publicKey() throws -> MinisignPublicKey {
        try MinisignPublicKey(String(contentsOfFile: folder + "/k.pub", encoding: .utf8))
    }

    /// Signs the stick's manifest.json into manifest.json.minisig, as tools/sign-manifest does.
    func sign(_ stick: TestStick, legacy: Bool = false) throws {
        try Keys.minisign(["-S", "-s", folder + "/k.key", "-m", stick.vitrine + "/manifest.json",
                           "-t", "vitrine version \(stick.version)"] + (legacy ? ["-l"] : []))
    }

    func remove() { try? FileManager.default.removeItem(atPath: folder) }

    static func minisign(_ args: [String]) throws {
        let r = try Subprocess.run("/usr/bin/minisign", args, standardOutput: .discard, standardError: .discard)
        if r.code != 0 { throw CocoaError(.executableLoad) }
    }
}
