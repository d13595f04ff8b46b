// Why a USB stick import was refused or failed: one problem, tied to a manifest field and a file.

/// One reason an import did not switch to the stick's catalog.
///
/// `description` reads `playlist[2].sha256: media/b.mp4: hash mismatch (expected 9f2c…, got 1b7e…)`:
/// the JSON path of the manifest field, the file on the stick, and the reason. Either of the first
/// two is left out when it does not apply.
public struct ImportProblem: Sendable, Equatable, CustomStringConvertible {
    /// What kind of problem: a refusal of the stick's content, or a failure of the import itself.
    public enum Kind: String, Sendable, Equatable, CaseIterable {
        // Refusals: the stick's content is wrong; the same stick will be refused again.
        /// No `vitrine/manifest.json` on the stick.
        case noManifest
        /// The manifest is not valid JSON or not a valid v1 manifest, or is larger than 1 MiB.
        case invalidManifest
        /// `import.requireSignature` is on and there is no `manifest.json.minisig`.
        case missingSignature
        /// The signature file is malformed, or does not match the manifest's bytes or its trusted comment.
        case badSignature
        /// The signature was made with a key that is not in `import.trustedKeys`.
        case untrustedKey
        /// `version` is not greater than the last accepted version (and downgrades are not allowed).
        case notNewer
        /// A path breaks the stick's path rules (absolute, `..`, backslash, characters, length).
        case badPath
        /// A path names a hidden file (a component starting with `.`, AppleDouble `._*` included).
        case hiddenFile
        /// Two paths differ only by case (or Unicode normalisation), or one is both a file and a folder.
        case caseCollision
        /// A file has no `size` or no `sha256`.
        case missingChecksum
        /// Two declarations of one file disagree on its size or hash.
        case checksumConflict
        /// A named file is not on the stick.
        case missingFile
        /// A named path is a folder, device or other non-regular file.
        case notRegularFile
        /// A symbolic link leads outside the stick's `vitrine/` folder.
        case outsideFolder
        /// The file on the stick has another size than the manifest says.
        case sizeMismatch
        /// The file's SHA-256 differs from the manifest's.
        case hashMismatch

        // Failures: the import could not run to the end; trying again may work.
        /// Not enough free space in the library, or the disk filled up (`ENOSPC`).
        case noSpace
        /// Reading the stick failed (`EIO`).
        case readError
        /// Writing or syncing the library failed.
        case writeError
        /// Files vanished while copying: the stick was pulled out.
        case stickRemoved
        /// Another import holds the library's lock.
        case busy
        /// A network update could not download a file or its manifest: the server unreachable, a
        /// timeout, a 5xx status, a refused certificate (`HTTPFetch.FetchError`).
        case downloadFailed
        /// The library folder itself is unusable (permissions, not a folder).
        case libraryError

        /// Whether this kind is a failure of the import (exit 1) rather than a refusal of the stick (exit 65).
        public var isFailure: Bool {
            switch self {
            case .noSpace, .readError, .writeError, .stickRemoved, .busy, .libraryError, .downloadFailed: return true
            default: return false
            }
        }
    }

    public var kind: Kind
    /// The manifest field, as a JSON path (`playlist[2].sha256`, `files[0].path`); `""` when the problem
    /// is not about one field.
    public var field: String
    /// The file, relative to the stick's `vitrine/` folder (`media/b.mp4`); nil when none applies.
    public var file: String?
    /// What is wrong, e.g. `hash mismatch (expected …, got …)`.
    public var reason: String

    public init(_ kind: Kind, field: String = "", file: String? = nil, _ reason: String) {
        self.kind = kind; self.field = field; self.file = file; self.reason = reason
    }

    public var description: String {
        var parts: [String] = []
        if !field.isEmpty { parts.append(field) }
        if let file { parts.append(file) }
        parts.append(reason)
        return parts.joined(separator: ": ")
    }
}
