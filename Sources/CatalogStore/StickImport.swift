// One import from a stick into the library: check, copy while hashing, switch atomically.
import Foundation
import Crypto
import FileIO
import SystemSupport
import VitrineCore

extension CatalogLibrary {
    /// Imports the catalog on a mounted stick, and makes it `current` when every check passes.
    ///
    /// Steps: take the library lock (a second import fails at once with `busy`); clean up after an
    /// interrupted import; read `vitrine/manifest.json` (≤ 1 MiB) and verify
    /// `manifest.json.minisig` over its exact bytes before parsing it; validate it (v1, then the stick
    /// rules of `StickManifest` and `StickPath`); check that `version` is newer than the last accepted
    /// one; check every file on the stick (there, inside `vitrine/`, a regular file of its manifest
    /// size) and the free space (`ImportSpace`); copy each file into `staging.<N>/`, hashing it on the
    /// way, and fsync it; write `catalog.json`; fsync the folders; rename `staging.<N>` to `gen.<N>`;
    /// point `current` at it (a new link renamed over the old one, then fsync of the library folder);
    /// record the version in `state.json`; point `previous` at the catalog that was playing; delete
    /// any older generation.
    ///
    /// Until `current` is renamed, a failure or a crash at any moment leaves `current` as it was; what
    /// was copied is removed at once, or by the next `cleanUp()`.
    ///
    /// Blocks until done: call it off the presenter thread.
    /// - Parameters:
    ///   - stickPath: the stick's mount point (holding `vitrine/`), or the `vitrine/` folder itself.
    ///   - settings: config `import.*`.
    ///   - progress: called on the calling thread at each phase and after each chunk copied.
    /// - Returns: the outcome; never throws (every error becomes a refusal or a failure with its reason).
    public func importStick(at stickPath: String, settings: ImportSettings = ImportSettings(),
                            progress: ((ImportProgress) -> Void)? = nil) -> ImportResult {
        importStick(at: stickPath, settings: settings, workers: nil, progress: progress)
    }

    /// The same import of a folder with the stick's layout, from `origin`: `.stick` is
    /// `importStick(at:settings:progress:)`; `.network(url:)` is the library's downloads folder
    /// (`downloadsFolder`), filled by a network update. The steps are the same; only two things
    /// differ for `.network`: a file on the library's file system (the same `st_dev`) is
    /// hard-linked into `staging.<N>/` (`link(2)`) instead of copied, and still read once to check
    /// its SHA-256 against the manifest, so a damaged download is refused as a damaged stick would
    /// be (`hashMismatch`); and the free space needed is only that of the files copied. A refusal
    /// says `Catalog from <url> refused: …` instead of `USB stick refused: …`.
    ///
    /// Links are never made for `.stick`, whatever the file system: the library must own the bytes
    /// of its generations, and a folder imported as a stick (`vitrine import DIR`) stays its user's
    /// to change in place.
    public func importCatalog(at folder: String, origin: ImportOrigin, settings: ImportSettings = ImportSettings(),
                              progress: ((ImportProgress) -> Void)? = nil) -> ImportResult {
        importStick(at: folder, settings: settings, origin: origin, workers: nil, progress: progress)
    }

    /// The same, with a number of copy workers (tests; faults come through `FaultInjection`).
    func importStick(at stickPath: String, settings: ImportSettings, origin: ImportOrigin = .stick, workers: Int?,
                     progress: ((ImportProgress) -> Void)?) -> ImportResult {
        var run = StickImport(library: self, stickPath: stickPath, settings: settings, origin: origin, progress: progress)
        run.workers = workers
        return run.execute()
    }
}

/// The state of one import while it runs.
struct StickImport {
    let library: CatalogLibrary
    let stickPath: String
    let settings: ImportSettings
    let origin: ImportOrigin
    let progress: ((ImportProgress) -> Void)?
    /// `MonotonicClock.nanoseconds()` when the import began.
    let started: UInt64

    var version: Int?
    var items: Int?
    var notes: [String] = []
    var filesCopied = 0
    var bytesCopied: Int64 = 0
    /// Copy threads; nil for `defaultWorkers`.
    var workers: Int?

    /// How the import stops early.
    enum Stop: Error {
        case refused([ImportProblem])
        case failed(ImportProblem)
    }

    init(library: CatalogLibrary, stickPath: String, settings: ImportSettings, origin: ImportOrigin = .stick,
         progress: ((ImportProgress) -> Void)?) {
        self.library = library; self.stickPath = stickPath; self.settings = settings; self.origin = origin
        self.progress = progress
        started = MonotonicClock.nanoseconds()
    }

    /// Seconds since the import began.
    var elapsed: Double { Self.seconds(since: started) }

    mutating func execute() -> ImportResult {
        report(ImportProgress(phase: .checking))
        do {
            return try run()
        } catch {
            switch error {
            case .refused(let problems): return finish(.refused, problems: problems)
            case .failed(let problem): return finish(.failed, problems: [problem])
            }
        }
    }

    private func finish(_ outcome: ImportResult.Outcome, problems: [ImportProblem], catalog: LibraryCatalog? = nil) -> ImportResult {
        let message = ImportResult.message(for: outcome, problems: problems, version: version, items: items, origin: origin)
        return ImportResult(outcome: outcome, message: message, problems: problems, notes: notes, version: version,
                            items: items, files: filesCopied, bytes: bytesCopied, seconds: elapsed, catalog: catalog,
                            switchMode: settings.switchMode)
    }

    private func report(_ p: ImportProgress) {
        guard let progress else { return }
        var p = p
        p.version = version
        p.elapsed = elapsed
        progress(p)
    }

    // MARK: The steps

    private mutating func run() throws(Stop) -> ImportResult {
        let lock = try openLibrary()
        defer { lock.release() }
        let playing = library.resolve()

        guard let stick = StickFolder.locate(stickPath) else {
            throw .refused([ImportProblem(.noManifest, "no vitrine/manifest.json in \(stickPath)")])
        }
        let manifestBytes = try readManifest(stick)
        try verifySignature(stick, manifestBytes)
        let manifest = try ManifestGate.parse(manifestBytes)
        version = manifest.version
        items = manifest.allItems.count

        var problems: [ImportProblem] = []
        if let problem = ManifestGate.versionProblem(manifest.version, library: library, playing: playing, settings: settings) {
            problems.append(problem)
        }
        let (files, fileProblems) = StickManifest.files(of: manifest)
        problems += fileProblems
        var sources: [String: String] = [:]
        // `.network`: the files on the library's own file system, to hard-link instead of copy.
        var linked: Set<String> = []
        let libraryDevice: UInt64? = origin == .stick ? nil : (try? FileSystem.status(library.path, followLinks: true))??.device
        for file in files {
            switch stick.resolve(file.path) {
            case .failure(let p):
                if p.kind == .readError { throw .failed(ImportProblem(.readError, field: file.pathField, file: file.path, p.reason)) }
                problems.append(ImportProblem(p.kind, field: file.pathField, file: file.path, p.reason))
            case .success(let resolved):
                if resolved.size != file.size {
                    problems.append(ImportProblem(.sizeMismatch, field: file.sizeField, file: file.path,
                                                  "size mismatch (manifest \(file.size), stick \(resolved.size) bytes)"))
                }
                sources[file.path] = resolved.path
                if let libraryDevice, resolved.device == libraryDevice { linked.insert(file.path) }
            }
        }
        guard problems.isEmpty else { throw .refused(problems) }
        let total = files.reduce(Int64(0)) { $0 + $1.size }
        // A network update's downloads are linked: only what is copied needs room (and when nothing
        // is, the download already kept the margin free).
        let copied = files.filter { !linked.contains($0.path) }.reduce(Int64(0)) { $0 + $1.size }
        if origin == .stick || copied > 0 { try checkSpace(copied) }

        let generation: Int
        do { generation = try library.nextGeneration() } catch { throw .failed(libraryProblem(error)) }
        let staging = library.stagingPath(generation)
        do {
            try copy(files, sources: sources, linked: linked, into: staging, manifestBytes: manifestBytes, total: total)
        } catch {
            try? FileSystem.removeTree(staging)
            try? FileSystem.syncDirectory(library.path)
            throw error
        }
        let catalog = try switchTo(generation, staging: staging, files: files, manifest: manifest, total: total,
                                   playing: playing.catalog)
        return finish(.switched, problems: [], catalog: catalog)
    }

    /// Creates the library folder if needed, takes its lock and cleans up.
    private func openLibrary() throws(Stop) -> CatalogLibrary.Lock {
        do {
            try FileSystem.makeDirectories(library.path)
            guard let lock = try CatalogLibrary.Lock(library.lockPath) else {
                throw Stop.failed(ImportProblem(.busy, "another import is running (\(library.lockPath) is locked)"))
            }
            do { _ = try library.cleanUpLocked() } catch {
                lock.release()
                throw Stop.failed(libraryProblem(error))
            }
            return lock
        } catch let error as FileError {
            throw .failed(libraryProblem(error))
        } catch let stop as Stop {
            throw stop
        } catch {
            throw .failed(ImportProblem(.libraryError, "\(error)"))
        }
    }

    private func libraryProblem(_ error: FileError) -> ImportProblem {
        ImportProblem(error.errno.isOutOfSpace ? .noSpace : .libraryError, "library \(library.path): \(error)")
    }

    private func readManifest(_ stick: StickFolder) throws(Stop) -> [UInt8] {
        let limit = ManifestParser.jsonOptions.maxBytes
        let path: String
        switch stick.resolve(StickFolder.manifestName) {
        case .failure(let p):
            if p.kind == .readError { throw .failed(ImportProblem(.readError, file: StickFolder.manifestName, p.reason)) }
            throw .refused([ImportProblem(p.kind == .missingFile ? .noManifest : p.kind, file: StickFolder.manifestName, p.reason)])
        case .success(let resolved): path = resolved.path
        }
        let bytes: [UInt8]
        do { bytes = try LibraryFiles.readSmallFile(path, limit: limit) } catch {
            throw .failed(ImportProblem(.readError, file: StickFolder.manifestName, "cannot be read: \(error.errno)"))
        }
        if bytes.count > limit {
            throw .refused([ImportProblem(.invalidManifest, file: StickFolder.manifestName, "larger than 1 MiB")])
        }
        return bytes
    }

    /// Verifies `manifest.json.minisig` over the manifest's exact bytes, before they are parsed
    /// (`ManifestGate.verifySignature`, which a network update's `checkManifest` runs too).
    private mutating func verifySignature(_ stick: StickFolder, _ manifest: [UInt8]) throws(Stop) {
        let name = StickFolder.signatureName
        let signaturePath: String?
        switch stick.resolve(name) {
        case .success(let resolved): signaturePath = resolved.path
        case .failure(let p) where p.kind == .missingFile: signaturePath = nil
        case .failure(let p): throw .refused([ImportProblem(.badSignature, file: name, p.reason)])
        }
        let note = try ManifestGate.verifySignature(manifest, present: signaturePath != nil, read: { () throws(Stop) in
            do throws(FileError) { return try LibraryFiles.readSmallFile(signaturePath!, limit: 64 * 1024) } catch {
                throw .failed(ImportProblem(.readError, file: name, "cannot be read: \(error.errno)"))
            }
        }, settings: settings, origin: origin)
        if let note { notes.append(note) }
    }

    private func checkSpace(_ total: Int64) throws(Stop) {
        let needed = ImportSpace.required(forCopying: total)
        let space: FileSystem.Space
        do { space = try FileSystem.space(library.path) } catch { throw .failed(libraryProblem(error)) }
        let available = space.available
        if available < needed {
            throw .failed(ImportProblem(.noSpace, "not enough free space in \(library.path): \(ByteCount.text(total)) to copy "
                + "plus a \(ByteCount.text(needed - total)) margin, \(ByteCount.text(available)) free"))
        }
    }

    // MARK: Copy

    /// Copy workers: two when there are two cores and two files (SHA-256 is one core's work per file).
    static func defaultWorkers(files: Int) -> Int {
        max(1, min(2, ProcessInfo.processInfo.activeProcessorCount, files))
    }

    static func writeFailure(_ error: FileError, file: String?, field: String = "") -> Stop {
        .failed(ImportProblem(error.errno.isOutOfSpace ? .noSpace : .writeError, field: field, file: file,
                              "\(error.operation) failed: \(error.errno)"))
    }

    /// The refusal or failure for a file copy that stopped.
    static func stop(for failure: FileCopier.Failure, file: StickFile) -> Stop {
        switch failure {
        case .source(let e):
            let gone: Set<Errno> = [.noSuchFile, .notDirectory, .noDevice, .noSuchDevice, .noMedium, .staleHandle]
            if gone.contains(e.errno) {
                return .failed(ImportProblem(.stickRemoved, field: file.pathField, file: file.path,
                                             "vanished from the stick while copying (was it pulled out?): \(e.errno)"))
            }
            return .failed(ImportProblem(.readError, field: file.pathField, file: file.path,
                                         "read error on the stick (was it pulled out?): \(e.errno)"))
        case .destination(let e):
            return writeFailure(e, file: file.path, field: file.pathField)
        case .sizeChanged(let actual):
            return .refused([ImportProblem(.sizeMismatch, field: file.sizeField, file: file.path,
                                           "changed size while copying (manifest \(file.size), read \(actual) bytes)")])
        case .cancelled:
            return .failed(ImportProblem(.writeError, file: file.path, "cancelled"))
        }
    }

    private mutating func copy(_ files: [StickFile], sources: [String: String], linked: Set<String>, into staging: String,
                               manifestBytes: [UInt8], total: Int64) throws(Stop) {
        do { try FileSystem.makeDirectory(staging) } catch { throw Self.writeFailure(error, file: nil) }
        let board = CopyBoard(files: files, sources: sources, linked: linked, staging: staging)
        let copyStart = MonotonicClock.nanoseconds()
        var lastReport = -1.0
        let workers = self.workers ?? Self.defaultWorkers(files: files.count)
        board.run(workers: workers) {
            let seconds = Self.seconds(since: copyStart)
            guard seconds - lastReport >= 0.05 else { return }
            lastReport = seconds
            let (done, filesDone) = board.totals
            let rate = seconds >= 0.2 ? Double(done) / seconds : nil
            report(ImportProgress(phase: .copying, bytesDone: done, bytesTotal: total, filesDone: filesDone,
                                  filesTotal: files.count, bytesPerSecond: rate, eta: rate.map { Double(total - done) / $0 }))
        }
        let (done, filesDone) = board.totals
        filesCopied = filesDone
        bytesCopied = done
        if let failure = board.failure { throw failure }
        let linkedCount = board.linkedCount
        if linkedCount > 0 {
            notes.append("\(linkedCount) of \(files.count) files hard-linked from \(stickPath), each read once to check its SHA-256")
        }
        let seconds = Self.seconds(since: copyStart)
        report(ImportProgress(phase: .copying, bytesDone: done, bytesTotal: total, filesDone: filesDone, filesTotal: files.count,
                              bytesPerSecond: seconds > 0 ? Double(done) / seconds : nil, eta: 0))
        let mismatches = board.hashProblems
        guard mismatches.isEmpty else { throw .refused(mismatches) }

        report(ImportProgress(phase: .syncing, bytesDone: total, bytesTotal: total, filesDone: files.count, filesTotal: files.count))
        do {
            let catalogPath = staging + "/catalog.json"
            let fd = try FileDescriptor(opening: catalogPath, .writeOnly, options: [.create, .exclusive, .noFollow])
            try fd.write(manifestBytes, count: manifestBytes.count)
            try fd.sync()
            try fd.close()
            for folder in board.createdFolders {
                try FileSystem.syncDirectory(staging + "/" + folder)
            }
            try FileSystem.syncDirectory(staging)
        } catch {
            throw Self.writeFailure(error, file: "catalog.json")
        }
    }

    /// Seconds on `CLOCK_MONOTONIC` since `start` (a `MonotonicClock.nanoseconds()` value).
    static func seconds(since start: UInt64) -> Double {
        Double(MonotonicClock.nanoseconds() &- start) / 1e9
    }

    // MARK: Switch

    /// Renames staging into place, switches `current`, records the version, moves `previous`, retires
    /// older generations. Nothing after the rename of `current` can undo the switch: later errors
    /// become notes.
    private mutating func switchTo(_ generation: Int, staging: String, files: [StickFile], manifest: Manifest,
                                   total: Int64, playing: LibraryCatalog?) throws(Stop) -> LibraryCatalog {
        report(ImportProgress(phase: .switching, bytesDone: total, bytesTotal: total, filesDone: files.count, filesTotal: files.count))
        let name = "gen.\(generation)"
        let directory = library.generationPath(generation)
        do {
            try FileSystem.rename(staging, to: directory)
            try FileSystem.syncDirectory(library.path)
        } catch {
            try? FileSystem.removeTree(staging)
            try? FileSystem.removeTree(directory)
            throw .failed(ImportProblem(error.errno.isOutOfSpace ? .noSpace : .writeError, file: name, "\(error)"))
        }
        do {
            try pointLink(library.currentLink, at: name, temporary: ".current.tmp")
        } catch {
            try? FileSystem.removeTree(directory)
            try? FileSystem.syncDirectory(library.path)
            throw .failed(ImportProblem(error.errno.isOutOfSpace ? .noSpace : .writeError, file: "current", "\(error)"))
        }
        // Switched. From here on, errors are notes: the next cleanUp() repairs what is left.
        do { try LibraryState(version: manifest.version, generation: generation).write(library.statePath) } catch {
            notes.append("state.json not written (\(error)); it is repaired at the next start-up")
        }
        let previous = playing.map(\.generation)
        do {
            if let previous {
                try pointLink(library.previousLink, at: "gen.\(previous)", temporary: ".previous.tmp")
            } else if try FileSystem.status(library.previousLink, followLinks: false) != nil {
                try FileSystem.unlink(library.previousLink)
                try FileSystem.syncDirectory(library.path)
            }
            for entry in try FileSystem.contentsOfDirectory(library.path) {
                if let n = CatalogLibrary.generationNumber(entry, prefix: "gen."), n != generation, n != previous {
                    try FileSystem.removeTree(library.path + "/" + entry)
                }
            }
            try FileSystem.syncDirectory(library.path)
        } catch {
            notes.append("older catalogs not retired (\(error)); they are removed at the next start-up")
        }
        return LibraryCatalog(slot: .current, generation: generation, directory: directory,
                              manifestPath: directory + "/catalog.json", manifest: manifest, files: files, bytes: total)
    }

    /// Points the link `link` at `target` atomically: a new link at `temporary`, renamed over `link`,
    /// then fsync of the library folder.
    private func pointLink(_ link: String, at target: String, temporary: String) throws(FileError) {
        let temp = library.path + "/" + temporary
        try FileSystem.removeTree(temp)
        try FileSystem.symbolicLink(at: temp, to: target)
        try FileSystem.rename(temp, to: link)
        try FileSystem.syncDirectory(library.path)
    }
}
