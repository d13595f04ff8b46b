import Foundation
import Synchronization
import Testing
@testable import CatalogStore
import Crypto
import FileIO
import SystemSupport
import VitrineCore
import VitrineTestSupport

/// Scratch folders for one test process.
enum Scratch {
    static let root: String = {
        let dir = NSTemporaryDirectory() + "vitrine-import-tests-\(getpid())"
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }()

    static func folder(_ name: String) -> String {
        let dir = root + "/" + name + "-" + UUID().uuidString.prefix(8)
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }
}

/// Random bytes, deterministic per seed (SplitMix64), so tests can make megabytes quickly.
func randomBytes(_ count: Int, seed: UInt64) -> [UInt8] {
    var state = seed &+ 0x9E37_79B9_7F4A_7C15
    var out = [UInt8](repeating: 0, count: count)
    var i = 0
    while i < count {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        for b in 0..<8 where i < count { out[i] = UInt8(truncatingIfNeeded: z >> (8 * UInt64(b))); i += 1 }
    }
    return out
}

/// A USB stick as a plain folder: `<mount>/vitrine/manifest.json` and media, with sizes and hashes filled in.
struct TestStick {
    let mount: String
    var vitrine: String { mount + "/vitrine" }
    /// Media path → content.
    var media: [(path: String, bytes: [UInt8])] = []
    var version = 1
    /// Overrides of item fields, by item index (`"size": 3`, `"sha256": "…"`).
    var itemOverrides: [Int: [String: String]] = [:]
    /// Extra top-level members, JSON text starting with a comma.
    var extra = ""

    /// A stick with `files` media files (`media/clip<i>.mp4`), each `size` bytes of random data.
    init(files: Int = 2, size: Int = 200_000, seed: UInt64 = 1, version: Int = 1) {
        mount = Scratch.folder("stick")
        self.version = version
        for i in 0..<files {
            media.append(("media/clip\(i).mp4", randomBytes(size, seed: seed &* 1000 &+ UInt64(i))))
        }
    }

    /// The manifest text: one video item per media file, with its size and sha256 (unless overridden).
    var manifestText: String {
        let items = media.enumerated().map { index, file -> String in
            var fields: [(String, String)] = [("id", "\"item\(index)\""), ("type", "\"video\""), ("src", "\"\(file.path)\""),
                                              ("size", String(file.bytes.count)), ("sha256", "\"\(SHA256.hash(file.bytes).hex)\"")]
            for (key, value) in itemOverrides[index] ?? [:] {
                if let at = fields.firstIndex(where: { $0.0 == key }) {
                    if value.isEmpty { fields.remove(at: at) } else { fields[at].1 = value }
                } else { fields.append((key, value)) }
            }
            return "{" + fields.map { "\"\($0.0)\": \($0.1)" }.joined(separator: ", ") + "}"
        }
        return "{\"schema\": \"vitrine.manifest/1\", \"version\": \(version), \"title\": \"test\",\n \"playlist\": [\n  "
            + items.joined(separator: ",\n  ") + "]\(extra)}\n"
    }

    /// Writes the media and the manifest (and removes any old signature).
    @discardableResult
    func write() throws -> TestStick {
        try FileManager.default.createDirectory(atPath: vitrine, withIntermediateDirectories: true)
        for file in media {
            let path = vitrine + "/" + file.path
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try Data(file.bytes).write(to: URL(fileURLWithPath: path))
        }
        try writeManifest()
        return self
    }

    /// Rewrites only the manifest.
    func writeManifest(_ text: String? = nil) throws {
        try Data((text ?? manifestText).utf8).write(to: URL(fileURLWithPath: vitrine + "/manifest.json"))
        try? FileManager.default.removeItem(atPath: vitrine + "/manifest.json.minisig")
    }

    var manifestBytes: [UInt8] { (try? [UInt8](Data(contentsOf: URL(fileURLWithPath: vitrine + "/manifest.json")))) ?? [] }
}

/// A library in a scratch folder.
func newLibrary() -> CatalogLibrary { CatalogLibrary(path: Scratch.folder("library") + "/lib") }

extension CatalogLibrary {
    /// The names in the library folder, sorted, hidden ones included.
    var entries: [String] { ((try? FileSystem.contentsOfDirectory(path)) ?? []).sorted() }

    /// `current`'s target text, or nil.
    var currentTarget: String? { try? FileSystem.readLink(path + "/current") }
    var previousTarget: String? { try? FileSystem.readLink(path + "/previous") }

    /// Every file under `gen.<n>`, relative, sorted.
    func files(inGeneration n: Int) -> [String] {
        let base = path + "/gen.\(n)"
        let e = FileManager.default.enumerator(atPath: base)
        var out: [String] = []
        while let p = e?.nextObject() as? String {
            var isDir: ObjCBool = false
            if FileManager.default.fileExists(atPath: base + "/" + p, isDirectory: &isDir), !isDir.boolValue { out.append(p) }
        }
        return out.sorted()
    }

    /// Imports with `faults` injected into the C calls it makes, on every copy thread (internal API).
    func run(_ stick: TestStick, settings: ImportSettings = .init(), faults: FaultPlan = FaultPlan(), workers: Int? = nil,
             progress: ((ImportProgress) -> Void)? = nil) -> ImportResult {
        FaultInjection.withPlan(faults) {
            importStick(at: stick.mount, settings: settings, workers: workers, progress: progress)
        }
    }
}

extension SystemCall {
    /// Whether this is a call of `function` on a path ending in `/suffix`: `"media/clip1.mp4"` (on the
    /// stick for `read`, in staging for `write` and `fsync`), `"media"` (a folder), `"catalog.json"`.
    func `is`(_ function: String, _ suffix: String) -> Bool {
        self.function == function && subject?.hasSuffix("/" + suffix) == true
    }
}

/// A library that already plays `stick` (imported once): the "playing catalog" the fault tests protect.
func libraryPlaying(_ stick: TestStick) throws -> (CatalogLibrary, LibraryCatalog) {
    let library = newLibrary()
    let result = library.importStick(at: stick.mount)
    #expect(result.outcome == .switched, "\(result.message)")
    let playing = try #require(library.resolve(verifyHashes: true).catalog)
    return (library, playing)
}

/// Checks that `library` still plays `playing`, whole (every size and hash), with no staging folder
/// and no generation besides current and previous.
func expectUntouched(_ library: CatalogLibrary, playing: LibraryCatalog, sourceLocation: SourceLocation = #_sourceLocation) {
    let now = library.resolve(verifyHashes: true)
    #expect(now.catalog == playing, "current changed: \(now.skipped)", sourceLocation: sourceLocation)
    #expect(library.currentTarget == "gen.\(playing.generation)", sourceLocation: sourceLocation)
    let leftovers = library.entries.filter { $0.hasPrefix("staging.") || ($0.hasPrefix("gen.") && $0 != "gen.\(playing.generation)"
                                                                            && $0 != library.previousTarget) }
    #expect(leftovers == [], "left in the library: \(leftovers)", sourceLocation: sourceLocation)
}

/// Thread-safe counters for fault hooks.
final class Counter: Sendable {
    private let values = Mutex<[String: Int]>([:])
    func bump(_ key: String) -> Int { values.withLock { $0[key, default: 0] += 1; return $0[key]! } }
    func value(_ key: String) -> Int { values.withLock { $0[key, default: 0] } }
}
