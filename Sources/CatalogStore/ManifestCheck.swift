// The checks a manifest passes before any of its files is read: its signature over the exact bytes,
// the v1 and stick rules, the version. One implementation for a stick (StickImport) and for a
// catalog fetched over the network, which runs them before it downloads anything.
import Crypto
import FileIO
import VitrineCore

/// Where the folder an import reads comes from.
public enum ImportOrigin: Sendable, Equatable {
    /// A USB stick (or any folder given as one): every file is copied into the library.
    case stick
    /// The library's downloads folder (`CatalogLibrary.downloadsFolder`), filled from `url`: a file
    /// on the library's file system is hard-linked into the new generation instead of copied (and
    /// still read once to check its SHA-256), since the library owns it and never writes it again.
    case network(url: String)

    /// The config key that requires a signature for this origin.
    var signatureKey: String {
        switch self {
        case .stick: return "import.requireSignature"
        case .network: return "update.requireSignature"
        }
    }

    /// The words a refusal starts with: `USB stick refused`, `Catalog from https://cms.example/shop-12/ refused`.
    var refusalSubject: String {
        switch self {
        case .stick: return "USB stick"
        case .network(let url): return "Catalog from \(url)"
        }
    }
}

/// A manifest checked before its files are fetched (`CatalogLibrary.checkManifest`).
public struct ManifestCheck: Sendable {
    public enum Outcome: String, Sendable, Equatable {
        /// Signed as required, valid, newer: fetch `files` and import.
        case accepted
        /// Byte for byte the `catalog.json` of `current`, which is whole: nothing to do.
        case upToDate
        /// Refused for good (the same bytes are refused again): `problems` and `result` say why.
        case refused
    }

    public var outcome: Outcome
    /// The validated manifest (accepted or up to date).
    public var manifest: Manifest?
    /// Its files, with sizes and hashes, in manifest order (accepted).
    public var files: [StickFile]
    /// Why it was refused.
    public var problems: [ImportProblem]
    /// What did not stop it (`signature verified with key …`, `… not checked: import.trustedKeys is empty`).
    public var notes: [String]
    /// The manifest's `version`, when it could be read.
    public var version: Int?
    /// For a refusal: the import's result as `importCatalog` would give it (outcome `refused`,
    /// message `Catalog from <url> refused: <first problem>`), for the event log.
    public var result: ImportResult?
}

extension CatalogLibrary {
    /// Checks a manifest exactly as an import of `origin` checks a stick's, before any file is read:
    /// at most 1 MiB; `signature` (the bytes of `manifest.json.minisig`, nil when there is none)
    /// verified over the exact bytes by `settings.trustedKeys` (required with
    /// `settings.requireSignature`); valid v1, then the stick rules (`StickManifest`, `StickPath`);
    /// `version` newer than the last accepted one (`import.allowDowngrade`).
    ///
    /// Only reads the library (`current`, `state.json`); takes no lock.
    /// - Returns: `accepted` with the files to fetch; `upToDate` when the bytes are `current`'s
    ///   `catalog.json` and `current` is whole; `refused` with every problem found.
    public func checkManifest(_ bytes: [UInt8], signature: [UInt8]?, settings: ImportSettings,
                              origin: ImportOrigin) -> ManifestCheck {
        var notes: [String] = []
        var version: Int?
        var items: Int?
        func refused(_ problems: [ImportProblem]) -> ManifestCheck {
            let message = ImportResult.message(for: .refused, problems: problems, version: version, items: items, origin: origin)
            let result = ImportResult(outcome: .refused, message: message, problems: problems, notes: notes, version: version,
                                      items: items, files: 0, bytes: 0, seconds: 0, catalog: nil, switchMode: settings.switchMode)
            return ManifestCheck(outcome: .refused, manifest: nil, files: [], problems: problems, notes: notes, version: version,
                                 result: result)
        }
        do throws(StickImport.Stop) {
            if bytes.count > ManifestParser.jsonOptions.maxBytes {
                throw .refused([ImportProblem(.invalidManifest, file: StickFolder.manifestName, "larger than 1 MiB")])
            }
            if let note = try ManifestGate.verifySignature(bytes, present: signature != nil, read: { signature ?? [] },
                                                           settings: settings, origin: origin) {
                notes.append(note)
            }
            let manifest = try ManifestGate.parse(bytes)
            version = manifest.version
            items = manifest.allItems.count
            let playing = resolve()
            if let catalog = playing.catalog, catalog.slot == .current,
               let current = try? LibraryFiles.readSmallFile(catalog.manifestPath, limit: ManifestParser.jsonOptions.maxBytes),
               current == bytes {
                return ManifestCheck(outcome: .upToDate, manifest: manifest, files: catalog.files, problems: [], notes: notes,
                                     version: version, result: nil)
            }
            var problems: [ImportProblem] = []
            if let problem = ManifestGate.versionProblem(manifest.version, library: self, playing: playing, settings: settings) {
                problems.append(problem)
            }
            let (files, fileProblems) = StickManifest.files(of: manifest)
            problems += fileProblems
            // A download is written to `<path>.part` first: a file of that name would be taken for it.
            if case .network = origin {
                for file in files where file.path.hasSuffix(".part") {
                    problems.append(ImportProblem(.badPath, field: file.pathField, file: file.path,
                                                  "ends in .part, the suffix of partial downloads: rename it"))
                }
            }
            guard problems.isEmpty else { throw .refused(problems) }
            return ManifestCheck(outcome: .accepted, manifest: manifest, files: files, problems: [], notes: notes,
                                 version: version, result: nil)
        } catch {
            switch error {
            case .refused(let problems): return refused(problems)
            case .failed(let problem): return refused([problem])
            }
        }
    }
}

/// The manifest checks shared by `StickImport` and `CatalogLibrary.checkManifest`.
enum ManifestGate {
    /// Verifies a `manifest.json.minisig` over the manifest's exact bytes, before they are parsed.
    /// - Parameters:
    ///   - present: whether there is a signature file.
    ///   - read: its bytes (called only when it is there and keys are configured).
    /// - Returns: a note for the result (`signature verified with key …`, or why it was not checked);
    ///   nil when there is no signature and none is required.
    /// - Throws: a refusal (`missingSignature`, `untrustedKey`, `badSignature`), or what `read` throws.
    static func verifySignature(_ manifest: [UInt8], present: Bool, read: () throws(StickImport.Stop) -> [UInt8],
                                settings: ImportSettings, origin: ImportOrigin) throws(StickImport.Stop) -> String? {
        let name = StickFolder.signatureName
        guard present else {
            if settings.requireSignature {
                throw .refused([ImportProblem(.missingSignature, file: name, "missing, and \(origin.signatureKey) is on")])
            }
            return nil
        }
        guard !settings.trustedKeys.isEmpty else {
            if settings.requireSignature {
                throw .refused([ImportProblem(.untrustedKey, file: name, "\(origin.signatureKey) is on but import.trustedKeys is empty")])
            }
            return "\(name) not checked: import.trustedKeys is empty"
        }
        let bytes = try read()
        do {
            let signature = try MinisignSignature(bytes)
            let key = try signature.verify(manifest, trustedKeys: settings.trustedKeys)
            return "signature verified with key \(key.keyID) (trusted comment: \(signature.trustedComment))"
        } catch {
            if case .untrustedKey = error { throw .refused([ImportProblem(.untrustedKey, file: name, "\(error)")]) }
            throw .refused([ImportProblem(.badSignature, file: name, "\(error)")])
        }
    }

    /// Parses and validates the manifest; when it is invalid, the refusal also carries the stick rules'
    /// problems of the fields that are not already in error, so one pass reports everything.
    static func parse(_ bytes: [UInt8]) throws(StickImport.Stop) -> Manifest {
        let result = ManifestParser.parse(bytes, catalogDirectory: nil)
        guard let manifest = result.manifest else {
            let errors = result.errors.map {
                ImportProblem(.invalidManifest, field: $0.path, file: $0.path.isEmpty ? StickFolder.manifestName : nil, $0.reason)
            }
            var more: [ImportProblem] = []
            if let draft = result.draft {
                func related(_ a: String, _ b: String) -> Bool {
                    a == b || b.hasPrefix(a + ".") || b.hasPrefix(a + "[") || a.hasPrefix(b + ".") || a.hasPrefix(b + "[")
                }
                more = StickManifest.files(of: draft).problems.filter { p in !errors.contains { related($0.field, p.field) } }
            }
            throw .refused(errors + more)
        }
        return manifest
    }

    /// Nil when `version` may be imported: newer than the last accepted one; equal to it when the
    /// catalog of that version is not what plays (a repair); anything with `allowDowngrade`.
    static func versionProblem(_ version: Int, library: CatalogLibrary, playing: LibraryResolution,
                               settings: ImportSettings) -> ImportProblem? {
        guard !settings.allowDowngrade, let last = library.lastAcceptedVersion() else { return nil }
        if version > last { return nil }
        if version == last, playing.catalog?.manifest.version != last { return nil }
        return ImportProblem(.notNewer, field: "version",
                             "version \(version) is not newer than the last accepted version \(last) (import.allowDowngrade allows it)")
    }
}
