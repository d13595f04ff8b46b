import Foundation
import Testing
@testable import CatalogStore
import Crypto
import FileIO
import VitrineCore

/// Each refusal: exit code 65, the reason with its field and file, and the playing catalog untouched.
@Suite("Import: refused sticks")
struct ImportRefusalTests {
    /// A library playing version 5 of a two-file stick, and a new stick (version 6) to break.
    func setUp() throws -> (CatalogLibrary, LibraryCatalog, TestStick) {
        let old = try TestStick(files: 2, size: 100_000, seed: 5, version: 5).write()
        let (library, playing) = try libraryPlaying(old)
        let new = TestStick(files: 3, size: 150_000, seed: 6, version: 6)
        return (library, playing, new)
    }

    func expectRefused(_ result: ImportResult, _ expected: [String], kinds: [ImportProblem.Kind],
                       sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(result.outcome == .refused, sourceLocation: sourceLocation)
        #expect(result.exitCode == 65, sourceLocation: sourceLocation)
        #expect(result.problems.map(\.description) == expected, sourceLocation: sourceLocation)
        #expect(result.problems.map(\.kind) == kinds, sourceLocation: sourceLocation)
        #expect(result.message.hasPrefix("USB stick refused: " + (expected.first ?? "")), sourceLocation: sourceLocation)
    }

    @Test("hash mismatch: the file copied is hashed and compared; every mismatch is named")
    func hashMismatch() throws {
        let (library, playing, stick) = try setUp()
        try stick.write()
        // The stick's bytes change after the manifest was made (same size): flip one byte in two files.
        var damaged1 = stick.media[1].bytes, damaged2 = stick.media[2].bytes
        damaged1[70_000] ^= 0xFF
        damaged2[0] ^= 0x01
        try Data(damaged1).write(to: URL(fileURLWithPath: stick.vitrine + "/" + stick.media[1].path))
        try Data(damaged2).write(to: URL(fileURLWithPath: stick.vitrine + "/" + stick.media[2].path))
        let result = library.run(stick)
        expectRefused(result, [
            "playlist[1].sha256: media/clip1.mp4: hash mismatch (expected \(SHA256.hash(stick.media[1].bytes).hex), got \(SHA256.hash(damaged1).hex))",
            "playlist[2].sha256: media/clip2.mp4: hash mismatch (expected \(SHA256.hash(stick.media[2].bytes).hex), got \(SHA256.hash(damaged2).hex))",
        ], kinds: [.hashMismatch, .hashMismatch])
        #expect(result.outcome == .refused && result.problems.map(\.kind) == [.hashMismatch, .hashMismatch])
        expectUntouched(library, playing: playing)
    }

    @Test("wrong size and missing files are found before anything is copied")
    func sizeAndMissing() throws {
        var (library, playing, stick) = try setUp()
        stick.itemOverrides[0] = ["size": "150001"]
        try stick.write()
        try FileManager.default.removeItem(atPath: stick.vitrine + "/media/clip2.mp4")
        let result = library.run(stick)
        expectRefused(result, [
            "playlist[0].size: media/clip0.mp4: size mismatch (manifest 150001, stick 150000 bytes)",
            "playlist[2].src: media/clip2.mp4: not found on the stick",
        ], kinds: [.sizeMismatch, .missingFile])
        #expect(result.bytes == 0)
        expectUntouched(library, playing: playing)
    }

    @Test("an older or equal version is refused unless import.allowDowngrade")
    func olderVersion() throws {
        var (library, playing, stick) = try setUp()
        for version in [4, 5] {
            stick.version = version
            try stick.write()
            expectRefused(library.run(stick), [
                "version: version \(version) is not newer than the last accepted version 5 (import.allowDowngrade allows it)",
            ], kinds: [.notNewer])
            expectUntouched(library, playing: playing)
        }
        let allowed = library.run(stick, settings: ImportSettings(allowDowngrade: true))
        #expect(allowed.outcome == .switched && allowed.version == 5)
        #expect(library.lastAcceptedVersion() == 5)
    }

    @Test("signatures: missing when required, bad bytes, wrong key, malformed; each leaves current alone",
          .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/minisign"), "minisign not installed (tools/setup)"))
    func signatures() throws {
        let trusted = try Keys(), stranger = try Keys()
        defer { trusted.remove(); stranger.remove() }
        let (library, playing, stick) = try setUp()
        try stick.write()
        let required = ImportSettings(requireSignature: true, trustedKeys: [try trusted.publicKey()])

        expectRefused(library.run(stick, settings: required),
                      ["manifest.json.minisig: missing, and import.requireSignature is on"], kinds: [.missingSignature])

        try stranger.sign(stick)
        expectRefused(library.run(stick, settings: required), [
            "manifest.json.minisig: signed with key \(try stranger.publicKey().keyID), which is not trusted (trusted: \(try trusted.publicKey().keyID))",
        ], kinds: [.untrustedKey])

        // Signed, then one byte of the manifest changes: the signature covers the exact bytes.
        try trusted.sign(stick)
        var bytes = stick.manifestBytes
        let at = try #require(bytes.firstIndex(of: UInt8(ascii: "6")))
        bytes[at] = UInt8(ascii: "7")  // version 6 → 7
        try Data(bytes).write(to: URL(fileURLWithPath: stick.vitrine + "/manifest.json"))
        expectRefused(library.run(stick, settings: required), [
            "manifest.json.minisig: signature by key \(try trusted.publicKey().keyID) does not match the file",
        ], kinds: [.badSignature])
        // Also when signatures are optional: a signature that is there must be right.
        expectRefused(library.run(stick, settings: ImportSettings(trustedKeys: [try trusted.publicKey()])), [
            "manifest.json.minisig: signature by key \(try trusted.publicKey().keyID) does not match the file",
        ], kinds: [.badSignature])

        try Data("untrusted comment: x\n".utf8).write(to: URL(fileURLWithPath: stick.vitrine + "/manifest.json.minisig"))
        expectRefused(library.run(stick, settings: required), [
            "manifest.json.minisig: not a minisign signature: expected 4 lines, found 1",
        ], kinds: [.badSignature])
        expectUntouched(library, playing: playing)

        // Key rotation: the stranger's key as a second trusted key.
        try stranger.sign(stick)
        let rotated = ImportSettings(requireSignature: true, trustedKeys: [try trusted.publicKey(), try stranger.publicKey()])
        #expect(library.run(stick, settings: rotated).outcome == .switched)
    }

    @Test("paths: absolute, .., hidden, outside vitrine/ through a link, case collisions")
    func paths() throws {
        var (library, playing, stick) = try setUp()
        try stick.write()
        let outside = Scratch.folder("outside")
        try Data(randomBytes(150_000, seed: 1)).write(to: URL(fileURLWithPath: outside + "/secret"))
        try FileManager.default.removeItem(atPath: stick.vitrine + "/media/clip1.mp4")
        try FileManager.default.createSymbolicLink(atPath: stick.vitrine + "/media/clip1.mp4", withDestinationPath: outside + "/secret")
        stick.itemOverrides[0] = ["src": "\"../clip0.mp4\""]
        stick.itemOverrides[2] = ["src": "\"media/.hidden.mp4\""]
        try stick.writeManifest()
        // ".." breaks the v1 rules (an invalid manifest); the hidden file only the stick rules, reported in the same pass.
        expectRefused(library.run(stick), [
            "playlist[0].src: must not contain a \"..\" component: ../clip0.mp4",
            "playlist[2].src: media/.hidden.mp4: names a hidden file (\".hidden.mp4\"); hidden and AppleDouble \"._\" files are never copied",
        ], kinds: [.invalidManifest, .hiddenFile])
        stick.itemOverrides = [2: ["src": "\"media/.hidden.mp4\""]]
        try stick.writeManifest()
        expectRefused(library.run(stick), [
            "playlist[2].src: media/.hidden.mp4: names a hidden file (\".hidden.mp4\"); hidden and AppleDouble \"._\" files are never copied",
            "playlist[1].src: media/clip1.mp4: is a symbolic link that leads outside vitrine/ (to \(try FileSystem.realPath(outside + "/secret")))",
        ], kinds: [.hiddenFile, .outsideFolder])

        stick.itemOverrides = [1: ["src": "\"MEDIA/clip0.mp4\""]]
        try stick.writeManifest()
        let collided = library.run(stick)
        #expect(collided.problems.map(\.kind).contains(.caseCollision))
        expectUntouched(library, playing: playing)
    }

    @Test("a manifest over 1 MiB, nested over 32 deep, with a duplicate key, or not v1")
    func invalidManifests() throws {
        let (library, playing, stick) = try setUp()
        try stick.write()
        let big = "{\"schema\": \"vitrine.manifest/1\", \"title\": \"" + String(repeating: "x", count: 1 << 20) + "\"}"
        try stick.writeManifest(big)
        let tooBig = library.run(stick)
        #expect(tooBig.outcome == .refused && tooBig.exitCode == 65)
        expectRefused(tooBig, ["manifest.json: larger than 1 MiB"], kinds: [.invalidManifest])

        try stick.writeManifest(String(repeating: "[", count: 33) + String(repeating: "]", count: 33))
        expectRefused(library.run(stick), ["manifest.json: invalid JSON at line 1, column 33: arrays and objects nested deeper than 32 levels"],
                      kinds: [.invalidManifest])

        try stick.writeManifest(#"{"schema": "vitrine.manifest/1", "version": 7, "version": 8, "playlist": []}"#)
        expectRefused(library.run(stick), [#"manifest.json: invalid JSON at line 1, column 48: duplicate key "version""#],
                      kinds: [.invalidManifest])

        try stick.writeManifest(#"{"schema": "vitrine.manifest/2", "version": 7, "playlist": []}"#)
        expectRefused(library.run(stick), [
            #"schema: unsupported schema "vitrine.manifest/2" (expected "vitrine.manifest/1")"#,
            "playlist: must contain at least one item",
        ], kinds: [.invalidManifest, .invalidManifest])
        expectUntouched(library, playing: playing)
    }
}

/// Nicolas Seriot's JSONTestSuite as stick manifests.
private let suiteFolder = ProcessInfo.processInfo.environment["VITRINE_JSONTESTSUITE"]
    ?? "/work/shared/data/JSONTestSuite/test_parsing"

@Suite("Import: JSONTestSuite manifests", .enabled(if: FileManager.default.fileExists(atPath: suiteFolder),
                                                   "JSONTestSuite not found; set VITRINE_JSONTESTSUITE"))
struct ImportJSONTestSuiteTests {
    func cases(_ prefix: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: suiteFolder).filter { $0.hasPrefix(prefix) && $0.hasSuffix(".json") }.sorted()
    }

    @Test("every n_ case as the stick's manifest is refused as an invalid manifest (65); current untouched")
    func nCases() throws {
        let old = try TestStick(files: 1, size: 10_000).write()
        let (library, playing) = try libraryPlaying(old)
        let stick = try TestStick(files: 1, size: 10_000, version: 2).write()
        let names = try cases("n_")
        #expect(names.count == 188)
        var wrong: [String] = []
        for name in names {
            try FileManager.default.removeItem(atPath: stick.vitrine + "/manifest.json")
            try FileManager.default.copyItem(atPath: suiteFolder + "/" + name, toPath: stick.vitrine + "/manifest.json")
            let result = library.run(stick)
            if result.exitCode != 65 || result.problems.map(\.kind) != [.invalidManifest] || !result.problems[0].reason.hasPrefix("invalid JSON") {
                wrong.append("\(name): \(result.message)")
            }
        }
        #expect(wrong == [])
        expectUntouched(library, playing: playing)
    }

    @Test("every i_ case is refused without a crash (none is a v1 manifest); y_ cases too")
    func iAndYCases() throws {
        let library = newLibrary()
        let stick = try TestStick(files: 1, size: 1000).write()
        let names = try cases("i_") + cases("y_")
        #expect(names.count == 35 + 95)
        var outcomes: [ImportResult.Outcome: Int] = [:]
        for name in names {
            try FileManager.default.removeItem(atPath: stick.vitrine + "/manifest.json")
            try FileManager.default.copyItem(atPath: suiteFolder + "/" + name, toPath: stick.vitrine + "/manifest.json")
            let result = library.run(stick)
            outcomes[result.outcome, default: 0] += 1
            #expect(result.problems.allSatisfy { $0.kind == .invalidManifest }, "\(name): \(result.message)")
        }
        #expect(outcomes == [.refused: names.count])
        #expect(library.resolve().catalog == nil)
    }
}
