// The `vitrine/` folder of a mounted stick: finding it, and resolving the paths its manifest names.
import FileIO
import VitrineCore

/// A stick's `vitrine/` folder: the manifest, its optional signature and the media.
struct StickFolder: Sendable {
    /// The folder as found (`<mount>/vitrine`).
    let root: String
    /// `root` with every symbolic link resolved: paths must stay inside it.
    let realRoot: String

    static let manifestName = "manifest.json"
    static let signatureName = "manifest.json.minisig"

    /// `path/vitrine` when that is a folder; else `path` itself when it holds `manifest.json`
    /// (the `vitrine/` folder was given). Nil when neither is there.
    static func locate(_ path: String) -> StickFolder? {
        var path = path
        while path.count > 1, path.hasSuffix("/") { path.removeLast() }
        for candidate in [path + "/vitrine", path] {
            guard (try? FileSystem.status(candidate, followLinks: true))??.kind == .directory,
                  (try? FileSystem.status(candidate + "/" + manifestName, followLinks: false)) ?? nil != nil,
                  let real = try? FileSystem.realPath(candidate) else { continue }
            return StickFolder(root: candidate, realRoot: real)
        }
        return nil
    }

    /// A file named by the manifest, resolved on the stick.
    struct Resolved: Sendable {
        /// The real path to open (no symbolic links left in it).
        var path: String
        /// Its size in bytes.
        var size: Int64
        /// The file system it is on (`st_dev`).
        var device: UInt64 = 0
    }

    /// Resolves `relative` (already checked by `StickPath`): it must exist, lead (through any symbolic
    /// links) to a regular file inside `vitrine/` that is not hidden. A name the manifest spells in
    /// NFC is found in NFD (a stick written by a Mac) and the other way round (`FileNames`); the
    /// import copies it under the manifest's spelling.
    /// - Returns: the file, or the problem's kind and reason.
    func resolve(_ relative: String) -> Result<Resolved, ResolveProblem> {
        let full = FileNames.path(relative, in: realRoot)
        let real: String
        do { real = try FileSystem.realPath(full) } catch {
            switch error.errno {
            case .noSuchFile, .notDirectory: return .failure(.init(.missingFile, "not found on the stick"))
            case .tooManySymbolicLinks: return .failure(.init(.badPath, "symbolic link loop"))
            default: return .failure(.init(.readError, "cannot be read: \(error.errno)"))
            }
        }
        guard real.hasPrefix(realRoot + "/") else {
            return .failure(.init(.outsideFolder, "is a symbolic link that leads outside vitrine/ (to \(real))"))
        }
        let inner = real.dropFirst(realRoot.count + 1)
        if inner.split(separator: "/").contains(where: { $0.hasPrefix(".") }) {
            return .failure(.init(.hiddenFile, "is a symbolic link to a hidden file (\(inner))"))
        }
        let status: FileStatus?
        do { status = try FileSystem.status(real, followLinks: false) } catch {
            return .failure(.init(.readError, "cannot be read: \(error.errno)"))
        }
        guard let status else { return .failure(.init(.missingFile, "not found on the stick")) }
        guard status.kind == .regular else { return .failure(.init(.notRegularFile, "is not a regular file")) }
        return .success(Resolved(path: real, size: status.size, device: status.device))
    }

    struct ResolveProblem: Error, Sendable {
        var kind: ImportProblem.Kind
        var reason: String
        init(_ kind: ImportProblem.Kind, _ reason: String) { self.kind = kind; self.reason = reason }
    }
}
