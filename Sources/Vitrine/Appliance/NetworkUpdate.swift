// A network catalog update of the library: poll the catalog folder, check the manifest, download
// what the library does not hold into <library>/downloads/vitrine/ (the stick's layout), then import
// that folder through the same code as a stick. docs/network.md.
import Foundation
import CatalogStore
import FileIO
import HTTPFetch
import VitrineCore

/// What a network update reports while it fetches and imports.
public enum NetworkUpdateProgress: Sendable, Equatable {
    /// Downloading: body bytes of the files to fetch done and in all, and how many files that is.
    case downloading(bytesDone: Int, bytesTotal: Int, filesTotal: Int)
    /// The import of the downloads folder (`CatalogLibrary.importCatalog`): checking, linking and
    /// hashing (phase `copying`), saving, switching.
    case importing(ImportProgress)
}

/// What `NetworkUpdate.fetchAndImport` did.
public struct NetworkImport: Sendable {
    /// The import's result: `switched`; `refused` (a file the server gives is not the manifest's:
    /// another size or hash, or missing, 404); `failed` (the server unreachable, a timeout, a 5xx,
    /// a full disk). `source` in its messages is the URL.
    public var result: ImportResult
    /// Files hard-linked from the library's `current` generation into the downloads folder (their
    /// SHA-256 is one of `current`'s): not requested.
    public var linkedFromCurrent: Int
    /// The downloads, over every file fetched (`downloaded`, `alreadyPresent`: verified files left by
    /// an earlier attempt, `bytesTransferred`, `retries`).
    public var download: MediaFetchSummary
    /// The error that stopped the download, if one did.
    public var fetchError: FetchError?
}

/// Network catalog updates of one library from one catalog folder (`UpdateSettings.url`), in steps
/// the caller sequences (`NetworkUpdateService` on a thread of its own, `vitrine import URL`):
///
/// 1. `poll()`: a conditional GET of `manifest.json` (and its `.minisig`), `CatalogPoller`.
/// 2. `check(manifest:signature:)`: `CatalogLibrary.checkManifest`, the checks of a stick import
///    (signature over the exact bytes, v1 and stick rules, version) before anything is downloaded.
/// 3. `fetchAndImport(_:manifest:signature:progress:)`: hard-links into the downloads folder every
///    file whose SHA-256 is a file of `current` (`link(2)`), downloads the others into it
///    (`CatalogPoller.fetchMedia`: `Range` resumes, retries, size and SHA-256 while writing), writes
///    `manifest.json.minisig` and `manifest.json` last, and imports the folder with
///    `CatalogLibrary.importCatalog(at:origin: .network(url:))`: the stick's code, which links
///    (and hashes) instead of copying. After a switch, files the manifest does not list are removed
///    from the downloads folder.
/// 4. `commit()` after a switch, or a refusal of the manifest itself (`check`), so the next poll is a 304.
///
/// Not thread-safe: one thread at a time (it drives one `HTTPClient`); `cancellation` from any thread.
public final class NetworkUpdate {
    public let library: CatalogLibrary
    public let settings: UpdateSettings
    /// The import policy: config `import.*` with `requireSignature` from `update.requireSignature`.
    public let importSettings: ImportSettings
    public let poller: CatalogPoller
    /// Attempts per file on a passing fault (timeout, lost connection, 5xx), and the seconds between.
    public var attempts = 3
    public var retryDelay = 2.0
    /// SHA-256s whose copy in `current` failed the import's hash check once: downloaded from now on.
    private var distrusted: Set<String> = []

    /// `<library>/downloads/update-state.json`: the poller's validators.
    public static func statePath(library: CatalogLibrary) -> String { library.downloadsPath + "/update-state.json" }

    /// - Parameters:
    ///   - importSettings: config `import.*`; `requireSignature` is taken from `settings`.
    /// - Throws: `FetchError.io` when the downloads folder cannot be made or `settings.caFile` read;
    ///   `FetchError.other` when libcurl cannot make a handle.
    public init(library: CatalogLibrary, settings: UpdateSettings, importSettings: ImportSettings) throws(FetchError) {
        self.library = library
        self.settings = settings
        self.importSettings = settings.importSettings(from: importSettings)
        do { try FileSystem.makeDirectories(library.downloadsFolder) } catch {
            throw error.errno.isOutOfSpace ? .noSpace(path: error.path) : .io(path: error.path, errno: error.errno)
        }
        let client = try HTTPClient(settings: settings.fetchSettings)
        poller = CatalogPoller(baseURL: settings.url, client: client, statePath: Self.statePath(library: library))
    }

    /// Cancels the running request from any thread (`FetchError.cancelled`).
    public var cancellation: FetchCancellation { poller.client.cancellation }

    /// `CatalogPoller.poll(conditional:)`.
    public func poll(conditional: Bool = true) throws(FetchError) -> PollOutcome {
        try poller.poll(conditional: conditional)
    }

    /// `CatalogLibrary.checkManifest` with this update's settings and origin.
    public func check(manifest: [UInt8], signature: [UInt8]?) -> ManifestCheck {
        library.checkManifest(manifest, signature: signature, settings: importSettings, origin: .network(url: settings.url))
    }

    /// `CatalogPoller.commit()`: the manifest of the last poll is done with (switched, up to date,
    /// or refused for good). - Throws: `FetchError.noSpace` or `.io` writing the state file.
    public func commit() throws(FetchError) { try poller.commit() }

    /// Links, downloads and imports the files of an accepted `check` (step 3 of the type's comment).
    /// Blocks until done; never throws (a failure is in the result, with the playing catalog untouched).
    /// - Parameter progress: called on this thread: `downloading` as bytes arrive, then `importing`.
    public func fetchAndImport(_ check: ManifestCheck, manifest: [UInt8], signature: [UInt8]?,
                               progress: ((NetworkUpdateProgress) -> Void)? = nil) -> NetworkImport {
        let start = monotonicNow()
        let folder = library.downloadsFolder
        var summary = MediaFetchSummary()
        func failure(_ outcome: ImportResult.Outcome, _ problem: ImportProblem, error: FetchError?, linked: Int) -> NetworkImport {
            let message = ImportResult.message(for: outcome, problems: [problem], version: check.version,
                                               items: check.manifest?.allItems.count, origin: .network(url: settings.url))
            let result = ImportResult(outcome: outcome, message: message, problems: [problem], notes: check.notes,
                                      version: check.version, items: check.manifest?.allItems.count, files: summary.downloaded,
                                      bytes: Int64(summary.bytesTransferred), seconds: monotonicNow() - start, catalog: nil,
                                      switchMode: importSettings.switchMode)
            return NetworkImport(result: result, linkedFromCurrent: linked, download: summary, fetchError: error)
        }
        // The manifest goes last: until then the folder holds no manifest that its files do not match.
        for name in ["manifest.json", "manifest.json.minisig"] { try? FileSystem.unlink(folder + "/" + name) }
        let (toFetch, linked) = linkFromCurrent(check.files)

        // Room for what is left to download (parts already there count as done), with the import's margin.
        var needed: Int64 = 0
        for file in toFetch {
            let path = folder + "/" + file.path
            if let st = try? FileSystem.status(path, followLinks: false), st.isRegularFile, st.size == file.size { continue }
            let part = (try? FileSystem.status(path + ".part", followLinks: false))?.map(\.size) ?? 0
            needed += max(0, file.size - part)
        }
        if needed > 0, let space = try? FileSystem.space(library.path) {
            let required = ImportSpace.required(forCopying: needed)
            if space.available < required {
                return failure(.failed, ImportProblem(.noSpace, "not enough free space in \(library.path): \(ByteCount.text(needed)) "
                    + "to download plus a \(ByteCount.text(required - needed)) margin, \(ByteCount.text(space.available)) free"),
                               error: nil, linked: linked)
            }
        }

        let total = toFetch.reduce(0) { $0 + Int($1.size) }
        var before = 0
        if !toFetch.isEmpty { progress?(.downloading(bytesDone: 0, bytesTotal: total, filesTotal: toFetch.count)) }
        for file in toFetch {
            do {
                // One file at a time, so a failure names its file and manifest field.
                let one = try poller.fetchMedia(files: [MediaFile(path: file.path, size: Int(file.size), sha256: file.sha256)],
                                                into: folder, under: "", attempts: attempts, retryDelay: retryDelay) { done, _ in
                    progress?(.downloading(bytesDone: before + done, bytesTotal: total, filesTotal: toFetch.count))
                }
                summary.downloaded += one.downloaded
                summary.alreadyPresent += one.alreadyPresent
                summary.bytesTransferred += one.bytesTransferred
                summary.retries += one.retries
            } catch {
                let (outcome, problem) = Self.problem(for: error, file: file)
                return failure(outcome, problem, error: error, linked: linked)
            }
            before += Int(file.size)
        }

        do {
            if let signature {
                try FileSystem.writeAtomically(signature, to: folder + "/manifest.json.minisig")
            }
            try FileSystem.writeAtomically(manifest, to: folder + "/manifest.json")
        } catch {
            return failure(.failed, ImportProblem(error.errno.isOutOfSpace ? .noSpace : .writeError, file: "manifest.json",
                                                  "\(library.downloadsFolder): \(error)"), error: nil, linked: linked)
        }

        var result = library.importCatalog(at: library.downloadsPath, origin: .network(url: settings.url),
                                           settings: importSettings) { progress?(.importing($0)) }
        result.notes = check.notes.filter { !result.notes.contains($0) } + result.notes
        switch result.outcome {
        case .switched:
            removeUnlisted(check.files)
        case .refused:
            // A file whose bytes are not the manifest's (damaged on disk since it was linked or
            // downloaded): fetched again next time.
            for p in result.problems where p.kind == .hashMismatch || p.kind == .sizeMismatch {
                guard let path = p.file else { continue }
                try? FileSystem.unlink(folder + "/" + path)
                if let f = check.files.first(where: { $0.path == path }) { distrusted.insert(f.sha256) }
            }
        case .failed:
            break
        }
        return NetworkImport(result: result, linkedFromCurrent: linked, download: summary, fetchError: nil)
    }

    /// The refusal or failure for a download that stopped with `error`.
    static func problem(for error: FetchError, file: StickFile) -> (ImportResult.Outcome, ImportProblem) {
        switch error {
        case .hashMismatch(_, let expected, let got):
            return (.refused, ImportProblem(.hashMismatch, field: file.hashField, file: file.path,
                                            "hash mismatch: the server's file is not the manifest's (expected \(expected), got \(got))"))
        case .sizeMismatch(_, let expected, let got):
            return (.refused, ImportProblem(.sizeMismatch, field: file.sizeField, file: file.path,
                                            "size mismatch: the server's file is not the manifest's (manifest \(expected), server \(got) bytes)"))
        case .http(let status, let url) where status == 404 || status == 410:
            return (.refused, ImportProblem(.missingFile, field: file.pathField, file: file.path, "not on the server (HTTP \(status) for \(url))"))
        case .unsafePath(let path):
            return (.refused, ImportProblem(.badPath, field: file.pathField, file: file.path, "refused path \(path)"))
        case .noSpace(let path):
            return (.failed, ImportProblem(.noSpace, file: file.path, "no space left on the device (\(path))"))
        case .io(let path, let errno):
            return (.failed, ImportProblem(.writeError, file: file.path, "\(path): \(errno)"))
        default:
            return (.failed, ImportProblem(.downloadFailed, file: file.path, "\(error)"))
        }
    }

    /// Hard-links into the downloads folder every file whose SHA-256 is a file of the library's
    /// `current` generation (already there as the same inode: nothing to do), and removes a file
    /// there that is a link to a `current` file of another hash (a name reused for new bytes), so
    /// the download does not read it first.
    /// - Returns: the files left to download, and how many were linked or already linked.
    private func linkFromCurrent(_ files: [StickFile]) -> (toFetch: [StickFile], linked: Int) {
        let folder = library.downloadsFolder
        var byHash: [String: String] = [:]
        var currentInodes: Set<String> = []
        if let current = library.resolve().catalog, current.slot == .current {
            for f in current.files where !distrusted.contains(f.sha256) {
                let path = current.directory + "/" + f.path
                byHash[f.sha256] = byHash[f.sha256] ?? path
                if let st = try? FileSystem.status(path, followLinks: false) { currentInodes.insert("\(st.device):\(st.inode)") }
            }
        }
        var toFetch: [StickFile] = []
        var linked = 0
        for file in files {
            let target = folder + "/" + file.path
            let there = try? FileSystem.status(target, followLinks: false)
            if let source = byHash[file.sha256], let src = try? FileSystem.status(source, followLinks: false), src.size == file.size {
                if let there, there.device == src.device, there.inode == src.inode { linked += 1; continue }
                do {
                    if there != nil { try FileSystem.removeTree(target) }
                    try FileSystem.makeDirectories(FileSystem.parentPath(target))
                    try FileSystem.hardLink(at: target, to: source)
                    linked += 1
                    continue
                } catch {
                    // Another file system, or no hard links there: downloaded instead.
                }
            } else if let there, currentInodes.contains("\(there.device):\(there.inode)") {
                try? FileSystem.unlink(target)
            }
            toFetch.append(file)
        }
        return (toFetch, linked)
    }

    /// After a switch: removes from the downloads folder every file and folder that the manifest does
    /// not list (parts of files no longer listed included), keeping the manifest and its signature.
    private func removeUnlisted(_ files: [StickFile]) {
        let keep = Set(files.map(\.path) + ["manifest.json", "manifest.json.minisig"])
        func walk(_ relative: String) -> Bool {  // true when the folder is left empty
            let path = relative.isEmpty ? library.downloadsFolder : library.downloadsFolder + "/" + relative
            guard let names = try? FileSystem.contentsOfDirectory(path) else { return false }
            var left = names.count
            for name in names {
                let inner = relative.isEmpty ? name : relative + "/" + name
                let full = path + "/" + name
                if (try? FileSystem.status(full, followLinks: false))??.kind == .directory {
                    if walk(inner), (try? FileSystem.removeDirectory(full)) != nil { left -= 1 }
                } else if !keep.contains(inner), (try? FileSystem.unlink(full)) != nil {
                    left -= 1
                }
            }
            return left == 0
        }
        _ = walk("")
        try? FileSystem.syncDirectory(library.downloadsFolder)
    }
}
