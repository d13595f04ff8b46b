// The library folder: generations, the current and previous links, the lock, start-up cleanup.
import FileIO
import VitrineCore

/// The catalog library (`/var/lib/vitrine` by default, config `library`):
///
/// ```
/// <library>/gen.<N>/catalog.json, media/…   a verified catalog (N counts up, one per import)
/// <library>/current -> gen.<N>              what plays; switched atomically by rename(2)
/// <library>/previous -> gen.<M>             the last known-good catalog before it
/// <library>/staging.<N>/                    an import in progress (deleted at start-up if orphaned)
/// <library>/state.json                      the last accepted version (anti-rollback)
/// <library>/.lock                           flock(2) held during an import and a cleanup
/// <library>/downloads/vitrine/              a network update's download, laid out as a stick
/// <library>/downloads/update-state.json     the validators of the last manifest fetched (`CatalogPoller`)
/// ```
/// At most two generations stay on disk: `current` and `previous`.
///
/// Cheap to create; holds no open files between calls. Safe to use from several processes at once:
/// imports and cleanups take the lock, and `resolve` only reads.
public final class CatalogLibrary: Sendable {
    /// The library folder, as given.
    public let path: String

    /// The default location on an appliance.
    public static let defaultPath = "/var/lib/vitrine"

    /// A library at `path`. Nothing is read or created until a method needs it.
    public init(path: String) {
        var p = path
        while p.count > 1, p.hasSuffix("/") { p.removeLast() }
        self.path = p
    }

    var currentLink: String { path + "/current" }
    var previousLink: String { path + "/previous" }
    var statePath: String { path + "/state.json" }
    var lockPath: String { path + "/.lock" }
    func generationPath(_ n: Int) -> String { path + "/gen.\(n)" }
    func stagingPath(_ n: Int) -> String { path + "/staging.\(n)" }

    /// `<library>/downloads`: what network updates keep between polls (never touched by `cleanUp()`).
    public var downloadsPath: String { path + "/downloads" }
    /// `<library>/downloads/vitrine`: a network update's files in the stick's layout (`manifest.json`,
    /// `manifest.json.minisig`, the media at their manifest paths), imported with
    /// `importCatalog(at: downloadsPath, origin: .network(url:))`.
    public var downloadsFolder: String { downloadsPath + "/vitrine" }

    // MARK: Start-up

    /// What the player calls at start-up: cleans up after an interrupted import (when no import is
    /// running), then resolves what to play. See `cleanUp()` and `resolve(verifyHashes:)`.
    public func openForPlayback() -> LibraryResolution {
        _ = try? cleanUp()
        return resolve()
    }

    /// The catalog to play: `current` when it is whole, else `previous`, else none.
    ///
    /// A link is whole when it names a `gen.<N>` folder whose `catalog.json` is a valid manifest that
    /// follows the stick rules and whose every file is there with its manifest size (and, with
    /// `verifyHashes`, its SHA-256: slow, it reads every byte). Only reads; takes no lock.
    public func resolve(verifyHashes: Bool = false) -> LibraryResolution {
        var skipped: [String] = []
        for slot in [LibraryCatalog.Slot.current, .previous] {
            switch inspect(slot, verifyHashes: verifyHashes) {
            case .success(let catalog): return LibraryResolution(catalog: catalog, skipped: skipped)
            case .failure(let error): skipped.append("\(slot.rawValue): \(error)")
            }
        }
        return LibraryResolution(catalog: nil, skipped: skipped)
    }

    func inspect(_ slot: LibraryCatalog.Slot, verifyHashes: Bool) -> Result<LibraryCatalog, InspectionError> {
        guard let generation = linkedGeneration(slot) else {
            return .failure(InspectionError(linkDescription(slot)))
        }
        return LibraryCatalog.inspect(directory: generationPath(generation), generation: generation, slot: slot,
                                      verifyHashes: verifyHashes)
            .mapError { InspectionError("(gen.\(generation)) \($0)") }
    }

    /// N when the link `slot` is a symbolic link to `gen.<N>` in the library; nil otherwise.
    func linkedGeneration(_ slot: LibraryCatalog.Slot) -> Int? {
        let link = slot == .current ? currentLink : previousLink
        guard let target = try? FileSystem.readLink(link) else { return nil }
        return Self.generationNumber(target, prefix: "gen.")
    }

    private func linkDescription(_ slot: LibraryCatalog.Slot) -> String {
        let link = slot == .current ? currentLink : previousLink
        guard let status = try? FileSystem.status(link, followLinks: false) else { return "missing" }
        guard status.kind == .symbolicLink, let target = try? FileSystem.readLink(link) else { return "not a symbolic link" }
        return "points to \"\(target)\", not a gen.<N> folder"
    }

    /// N in `<prefix><N>` (decimal digits only, no leading zero); nil for anything else.
    static func generationNumber(_ name: String, prefix: String) -> Int? {
        guard name.hasPrefix(prefix) else { return nil }
        let digits = name.dropFirst(prefix.count)
        guard !digits.isEmpty, digits.utf8.allSatisfy({ (48...57).contains($0) }), digits.count <= 9,
              digits == "0" || !digits.hasPrefix("0") else { return nil }
        return Int(digits)
    }

    // MARK: Versions

    /// The last accepted manifest `version`: `state.json`, unless `current` is a newer generation than
    /// the one it records (an import that stopped between switching and recording), or it is missing
    /// (then the highest version among the whole generations). Nil for an empty library.
    public func lastAcceptedVersion() -> Int? {
        let state = LibraryState.read(statePath)
        let current = linkedGeneration(.current)
        if let state, current.map({ $0 <= state.generation }) ?? true { return state.version }
        if let state {
            // `current` is newer than the record: the import switched, then stopped before recording.
            return (try? inspect(.current, verifyHashes: false).get().manifest.version) ?? state.version
        }
        return [LibraryCatalog.Slot.current, .previous]
            .compactMap { try? inspect($0, verifyHashes: false).get().manifest.version }.max()
    }

    // MARK: Lock and cleanup

    /// Holds `<library>/.lock` with `flock(LOCK_EX)` until released or deallocated. Both unlock
    /// before closing, so a process spawned meanwhile (which shares the descriptor until it execs)
    /// cannot keep the next import out.
    final class Lock {
        private let descriptor: FileDescriptor
        private var released = false
        init?(_ path: String) throws(FileError) {
            let fd = try FileDescriptor(opening: path, .readWrite, options: [.create, .noFollow], permissions: 0o644)
            guard try fd.tryLockExclusive() else { return nil }
            descriptor = fd
        }
        func release() {
            guard !released else { return }
            released = true
            try? descriptor.unlock()
            try? descriptor.close()
        }
        deinit { release() }
    }

    /// What `cleanUp` removed.
    public struct Cleanup: Sendable, Equatable {
        /// Names removed from the library folder (`staging.8`, `gen.5`, `.current.tmp`).
        public var removed: [String] = []
    }

    /// Removes what an interrupted import left: `staging.*` folders, temporary links and files, and
    /// generations that neither `current` nor `previous` names. Records the current version in
    /// `state.json` when an import stopped before doing so.
    /// - Returns: what was removed, or nil when an import holds the lock (then nothing is touched).
    /// - Throws: `FileError` when the library cannot be read or a leftover cannot be removed.
    @discardableResult
    public func cleanUp() throws(FileError) -> Cleanup? {
        guard try FileSystem.status(path, followLinks: true) != nil else { return Cleanup() }
        guard let lock = try Lock(lockPath) else { return nil }
        defer { lock.release() }
        return try cleanUpLocked()
    }

    func cleanUpLocked() throws(FileError) -> Cleanup {
        var cleanup = Cleanup()
        let keep = Set([linkedGeneration(.current), linkedGeneration(.previous)].compactMap { $0 })
        for name in try FileSystem.contentsOfDirectory(path).sorted() {
            let orphan: Bool
            if Self.generationNumber(name, prefix: "staging.") != nil {
                orphan = true
            } else if let n = Self.generationNumber(name, prefix: "gen.") {
                orphan = !keep.contains(n)
            } else {
                orphan = [".current.tmp", ".previous.tmp", FileSystem.atomicWriteTemporary(for: "state.json")].contains(name)
            }
            guard orphan else { continue }
            try FileSystem.removeTree(path + "/" + name)
            cleanup.removed.append(name)
        }
        if !cleanup.removed.isEmpty { try FileSystem.syncDirectory(path) }
        // An import that switched `current` but stopped before recording it: record it now.
        if let current = linkedGeneration(.current), LibraryState.read(statePath).map({ $0.generation < current }) ?? true,
           case .success(let catalog) = inspect(.current, verifyHashes: false) {
            try LibraryState(version: catalog.manifest.version, generation: current).write(statePath)
        }
        return cleanup
    }

    /// The next generation number: one more than any `gen.*`, `staging.*` or recorded generation.
    func nextGeneration() throws(FileError) -> Int {
        var highest = LibraryState.read(statePath)?.generation ?? 0
        for name in try FileSystem.contentsOfDirectory(path) {
            if let n = Self.generationNumber(name, prefix: "gen.") ?? Self.generationNumber(name, prefix: "staging.") {
                highest = max(highest, n)
            }
        }
        return highest + 1
    }
}
