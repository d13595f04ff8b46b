// The network origin of an import: the library's downloads folder, hard-linked into staging (and
// hashed) instead of copied; and `checkManifest`, the checks a network update runs before it downloads.
import Foundation
import Testing
@testable import CatalogStore
import Crypto
import FileIO
import VitrineCore
import VitrineTestSupport

@Suite("Import: the downloads folder of a network update")
struct ImportLinkTests {
    static let url = "https://cms.example/shop-12/"

    /// `stick`'s vitrine/ folder copied into the library's downloads folder, as a network update leaves it.
    static func download(_ stick: TestStick, into library: CatalogLibrary) throws {
        try FileManager.default.createDirectory(atPath: library.downloadsPath, withIntermediateDirectories: true)
        try? FileManager.default.removeItem(atPath: library.downloadsFolder)
        try FileManager.default.copyItem(atPath: stick.vitrine, toPath: library.downloadsFolder)
    }

    static func inode(_ path: String) throws -> UInt64 {
        try #require(try FileSystem.status(path, followLinks: false)).inode
    }

    @Test("files on the library's file system are hard-linked into the generation (one inode), each read once for its hash")
    func linksAndHashes() throws {
        let stick = try TestStick(files: 2, size: 9 << 20, seed: 31).write()
        let library = newLibrary()
        try Self.download(stick, into: library)
        var lastCopy: ImportProgress?
        let result = library.importCatalog(at: library.downloadsPath, origin: .network(url: Self.url)) { p in
            if p.phase == .copying { lastCopy = p }
        }
        #expect(result.outcome == .switched, "\(result.message)")
        #expect(result.files == 2 && result.bytes == 2 * (9 << 20))
        #expect(result.notes.contains("2 of 2 files hard-linked from \(library.downloadsPath), each read once to check its SHA-256"))
        // The progress of the copy phase counts the bytes hashed.
        #expect(lastCopy?.bytesDone == 2 * (9 << 20) && lastCopy?.filesDone == 2)
        for file in stick.media {
            let linked = library.path + "/gen.1/" + file.path
            #expect(try Self.inode(linked) == Self.inode(library.downloadsFolder + "/" + file.path))
            #expect(FileManager.default.contents(atPath: linked).map(Array.init) == file.bytes)
        }
        #expect(library.resolve(verifyHashes: true).catalog?.generation == 1)
    }

    @Test("a linked file whose bytes were damaged (same size) is refused with its hash mismatch; current stays")
    func damagedLinkRefused() throws {
        let first = try TestStick(files: 1, size: 50_000, seed: 40, version: 1).write()
        let (library, playing) = try libraryPlaying(first)
        let next = try TestStick(files: 2, size: 300_000, seed: 41, version: 2).write()
        try Self.download(next, into: library)
        let damaged = library.downloadsFolder + "/media/clip1.mp4"
        var bytes = next.media[1].bytes
        bytes[123_456] ^= 0xFF
        try Data(bytes).write(to: URL(fileURLWithPath: damaged))
        let result = library.importCatalog(at: library.downloadsPath, origin: .network(url: Self.url))
        #expect(result.outcome == .refused)
        #expect(result.problems.map(\.kind) == [.hashMismatch])
        #expect(result.problems.first?.field == "playlist[1].sha256" && result.problems.first?.file == "media/clip1.mp4")
        #expect(result.message.hasPrefix("Catalog from \(Self.url) refused: playlist[1].sha256: media/clip1.mp4: hash mismatch (expected "))
        expectUntouched(library, playing: playing)
        // The downloads stay (a later attempt replaces the damaged file); only staging went.
        #expect(FileManager.default.fileExists(atPath: damaged))
    }

    @Test("a folder imported as a stick is copied even on the library's file system (the library owns its bytes)")
    func stickIsCopied() throws {
        let stick = try TestStick(files: 1, size: 70_000, seed: 42).write()
        let library = newLibrary()
        let libraryDevice = try #require(try FileSystem.status(Scratch.root, followLinks: true)).device
        #expect(try #require(try FileSystem.status(stick.vitrine, followLinks: true)).device == libraryDevice)
        let result = library.importStick(at: stick.mount)
        #expect(result.outcome == .switched)
        #expect(!result.notes.contains { $0.contains("hard-linked") })
        #expect(try Self.inode(library.path + "/gen.1/media/clip0.mp4") != Self.inode(stick.vitrine + "/media/clip0.mp4"))
    }

    @Test("linked files need no free space: a library with room for the margin only takes the download, not the stick",
          .enabled(if: SmallTmpfs.canMount, "mounting a tmpfs needs root and a system that allows mount(2)"))
    func linkedFilesNeedNoSpace() throws {
        let disk = try SmallTmpfs(megabytes: 80)
        defer { disk.unmount() }
        let library = CatalogLibrary(path: disk.path + "/lib")
        // 24 MiB of files: the download is on the disk already; copying them again would need
        // 24 MiB + the 64 MiB margin, more than the 80 MiB disk has left.
        let stick = try TestStick(files: 2, size: 12 << 20, seed: 43).write()
        try Self.download(stick, into: library)
        let asStick = library.importStick(at: library.downloadsPath)
        #expect(asStick.outcome == .failed && asStick.problems.map(\.kind) == [.noSpace], "\(asStick.message)")
        let asDownload = library.importCatalog(at: library.downloadsPath, origin: .network(url: Self.url))
        #expect(asDownload.outcome == .switched, "\(asDownload.message)")
        #expect(library.resolve(verifyHashes: true).catalog?.generation != nil)
    }
}

@Suite("checkManifest: a network manifest checked before anything is downloaded")
struct CheckManifestTests {
    static let network = ImportOrigin.network(url: ImportLinkTests.url)

    @Test("accepted with its files; the catalog playing is up to date; an older version is refused")
    func outcomes() throws {
        let stick = try TestStick(files: 2, size: 1000, seed: 50, version: 3).write()
        let library = newLibrary()
        let accepted = library.checkManifest(stick.manifestBytes, signature: nil, settings: ImportSettings(), origin: Self.network)
        #expect(accepted.outcome == .accepted && accepted.version == 3)
        #expect(accepted.files.map(\.path) == ["media/clip0.mp4", "media/clip1.mp4"])
        #expect(accepted.files.map(\.sha256) == stick.media.map { SHA256.hash($0.bytes).hex })
        #expect(library.importStick(at: stick.mount).outcome == .switched)
        #expect(library.checkManifest(stick.manifestBytes, signature: nil, settings: ImportSettings(), origin: Self.network).outcome == .upToDate)
        let older = try TestStick(files: 1, size: 1000, seed: 51, version: 2).write()
        let refused = library.checkManifest(older.manifestBytes, signature: nil, settings: ImportSettings(), origin: Self.network)
        #expect(refused.outcome == .refused && refused.problems.map(\.kind) == [.notNewer])
        #expect(refused.result?.message == "Catalog from \(ImportLinkTests.url) refused: version: version 2 is not newer than the last accepted version 3 (import.allowDowngrade allows it)")
        #expect(refused.result?.exitCode == 65)
    }

    @Test("unsigned with a signature required, or not JSON: refused, naming update.requireSignature and the manifest")
    func refusals() throws {
        let stick = try TestStick(files: 1, size: 1000, seed: 52).write()
        let library = newLibrary()
        let unsigned = library.checkManifest(stick.manifestBytes, signature: nil, settings: ImportSettings(requireSignature: true),
                                             origin: Self.network)
        #expect(unsigned.problems.map(\.description) == ["manifest.json.minisig: missing, and update.requireSignature is on"])
        let garbage = library.checkManifest(Array("{\"schema\": ".utf8), signature: nil, settings: ImportSettings(), origin: Self.network)
        #expect(garbage.outcome == .refused && garbage.problems.first?.kind == .invalidManifest)
        let notSignature = library.checkManifest(stick.manifestBytes, signature: Array("nonsense".utf8),
                                                 settings: ImportSettings(requireSignature: true, trustedKeys: [try Self.someKey()]),
                                                 origin: Self.network)
        #expect(notSignature.problems.map(\.kind) == [.badSignature])
    }

    static func someKey() throws -> MinisignPublicKey { try MinisignPublicKey("RWR08epwkLa2H/IMLA5NqbnEWKAllFDeuhliLKSJaRvH0AEaMIQ/L8CW") }

    @Test("a signature by a trusted key is verified over the exact bytes, as on a stick",
          .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/minisign"), "minisign not installed (tools/setup)"))
    func signed() throws {
        let keys = try Keys()
        defer { keys.remove() }
        let stick = try TestStick(files: 1, size: 1000, seed: 53, version: 4).write()
        try keys.sign(stick)
        let signature = try [UInt8](Data(contentsOf: URL(fileURLWithPath: stick.vitrine + "/manifest.json.minisig")))
        let settings = ImportSettings(requireSignature: true, trustedKeys: [try keys.publicKey()])
        let library = newLibrary()
        let good = library.checkManifest(stick.manifestBytes, signature: signature, settings: settings, origin: Self.network)
        #expect(good.outcome == .accepted)
        #expect(good.notes == ["signature verified with key \(try keys.publicKey().keyID) (trusted comment: vitrine version 4)"])
        var changed = stick.manifestBytes
        changed[changed.count - 2] = UInt8(ascii: " ")
        let tampered = library.checkManifest(changed, signature: signature, settings: settings, origin: Self.network)
        #expect(tampered.problems.map(\.kind) == [.badSignature])
    }
}
