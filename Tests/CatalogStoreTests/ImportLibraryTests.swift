import Foundation
import Testing
@testable import CatalogStore
import Crypto
import FileIO
import VitrineCore

/// Start-up: what the player finds in the library after a crash, a pulled plug or damage.
@Suite("Import: the library at start-up")
struct ImportLibraryTests {
    /// A library with current (version 2) and previous (version 1).
    func twoGenerations() throws -> CatalogLibrary {
        let library = newLibrary()
        for version in 1...2 {
            let stick = try TestStick(files: 2, size: 20_000, seed: UInt64(version), version: version).write()
            #expect(library.importStick(at: stick.mount).outcome == .switched)
        }
        return library
    }

    @Test("orphans of an interrupted import are removed: staging, unlinked generations, temporary links")
    func orphans() throws {
        let library = try twoGenerations()
        for name in ["staging.3", "staging.7", "gen.5"] {
            try FileManager.default.createDirectory(atPath: library.path + "/" + name + "/media", withIntermediateDirectories: true)
            try Data([1, 2, 3]).write(to: URL(fileURLWithPath: library.path + "/" + name + "/media/x"))
        }
        try FileSystem.symbolicLink(at: library.path + "/.current.tmp", to: "gen.5")
        try Data("{".utf8).write(to: URL(fileURLWithPath: library.path + "/.state.json.tmp"))
        let resolution = library.openForPlayback()
        #expect(resolution.catalog?.generation == 2 && resolution.catalog?.slot == .current)
        #expect(library.entries == [".lock", "current", "gen.1", "gen.2", "previous", "state.json"])
    }

    @Test("current broken → previous plays; the reason names the file", arguments: ["size", "catalog", "link", "missing"])
    func fallsBackToPrevious(damage: String) throws {
        let library = try twoGenerations()
        switch damage {
        case "size":
            try Data([0]).write(to: URL(fileURLWithPath: library.path + "/gen.2/media/clip1.mp4"))
        case "catalog":
            try Data("{\"schema\": 1}".utf8).write(to: URL(fileURLWithPath: library.path + "/gen.2/catalog.json"))
        case "link":
            try FileSystem.unlink(library.path + "/current")
            try FileSystem.symbolicLink(at: library.path + "/current", to: "/etc")
        default:
            try FileSystem.removeTree(library.path + "/gen.2")
        }
        let resolution = library.resolve()
        #expect(resolution.catalog?.slot == .previous && resolution.catalog?.generation == 1)
        #expect(resolution.catalog?.manifest.version == 1)
        let expected: String
        switch damage {
        case "size": expected = "current: (gen.2) media/clip1.mp4: 1 bytes, expected 20000"
        case "catalog": expected = "current: (gen.2) catalog.json: schema: expected a string, found a number"
        case "link": expected = "current: points to \"/etc\", not a gen.<N> folder"
        default: expected = "current: (gen.2) catalog.json: No such file or directory (ENOENT)"
        }
        #expect(resolution.skipped == [expected])
    }

    @Test("a changed byte is found only by the deep check (hashes)")
    func deepCheck() throws {
        let library = try twoGenerations()
        let path = library.path + "/gen.2/media/clip0.mp4"
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        bytes[100] ^= 1
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        #expect(library.resolve().catalog?.generation == 2)
        let deep = library.resolve(verifyHashes: true)
        #expect(deep.catalog?.generation == 1)
        #expect(deep.skipped.first?.hasPrefix("current: (gen.2) media/clip0.mp4: hash mismatch (expected ") == true)
    }

    @Test("both broken → nothing to play (the slate); an empty or missing library too")
    func nothing() throws {
        let library = try twoGenerations()
        try FileSystem.removeTree(library.path + "/gen.1/catalog.json")
        try FileSystem.removeTree(library.path + "/gen.2/media")
        let resolution = library.openForPlayback()
        #expect(resolution.catalog == nil)
        #expect(resolution.skipped.count == 2)
        #expect(newLibrary().openForPlayback().catalog == nil)
        #expect(newLibrary().lastAcceptedVersion() == nil)
    }

    @Test("without state.json the highest whole version counts")
    func versionWithoutState() throws {
        let library = try twoGenerations()
        try FileSystem.unlink(library.path + "/state.json")
        #expect(library.lastAcceptedVersion() == 2)
    }
}
