// One generation folder of the library, inspected: its manifest, its files, and whether they are whole.
import Crypto
import FileIO
import VitrineCore

/// A playable generation of the library: `<library>/gen.<N>/` with `catalog.json` and its media.
public struct LibraryCatalog: Sendable, Equatable {
    /// Which link led to it.
    public enum Slot: String, Sendable, Equatable { case current, previous }

    public var slot: Slot
    /// N in `gen.<N>`.
    public var generation: Int
    /// The generation folder (`<library>/gen.<N>`): give it to the player as the catalog folder. It stays
    /// put while `current` moves on, until a later import retires it.
    public var directory: String
    /// `<directory>/catalog.json`: the stick's manifest, byte for byte.
    public var manifestPath: String
    public var manifest: Manifest
    /// Every media file, with its size and hash.
    public var files: [StickFile]
    /// Total size of the files in bytes.
    public var bytes: Int64

    /// `gen.7: version 42, 12 items, 1.2 GiB`.
    public var summary: String {
        "gen.\(generation): version \(manifest.version), \(ImportResult.itemsText(manifest.allItems.count)), \(ByteCount.text(bytes))"
    }

    /// Reads and checks `directory`: `catalog.json` must be a valid manifest that follows the stick rules,
    /// and every file it names must be a regular file (not a link) of its manifest size there; with
    /// `verifyHashes`, of its manifest SHA-256 too.
    /// - Returns: the catalog, or the first reason it is not whole (`media/a.mp4: 12 bytes, expected 13`).
    static func inspect(directory: String, generation: Int, slot: Slot, verifyHashes: Bool) -> Result<LibraryCatalog, InspectionError> {
        let manifestPath = directory + "/catalog.json"
        let bytes: [UInt8]
        do { bytes = try LibraryFiles.readSmallFile(manifestPath, limit: ManifestParser.jsonOptions.maxBytes) } catch {
            return .failure(InspectionError("catalog.json: \(error.errno)"))
        }
        let parsed = ManifestParser.parse(bytes, catalogDirectory: nil)
        guard let manifest = parsed.manifest else {
            return .failure(InspectionError("catalog.json: \(parsed.errors.first.map(\.description) ?? "invalid")"))
        }
        let (files, problems) = StickManifest.files(of: manifest)
        if let first = problems.first { return .failure(InspectionError("catalog.json: \(first)")) }
        var total: Int64 = 0
        for file in files {
            let path = directory + "/" + file.path
            let status: FileStatus?
            do { status = try FileSystem.status(path, followLinks: false) } catch {
                return .failure(InspectionError("\(file.path): \(error.errno)"))
            }
            guard let status else { return .failure(InspectionError("\(file.path): missing")) }
            guard status.kind == .regular else { return .failure(InspectionError("\(file.path): not a regular file")) }
            guard status.size == file.size else {
                return .failure(InspectionError("\(file.path): \(status.size) bytes, expected \(file.size)"))
            }
            if verifyHashes {
                do {
                    let digest = try hashFile(path)
                    if digest.hex != file.sha256 {
                        return .failure(InspectionError("\(file.path): hash mismatch (expected \(file.sha256), got \(digest.hex))"))
                    }
                } catch {
                    return .failure(InspectionError("\(file.path): \(error.errno)"))
                }
            }
            total += file.size
        }
        return .success(LibraryCatalog(slot: slot, generation: generation, directory: directory, manifestPath: manifestPath,
                                       manifest: manifest, files: files, bytes: total))
    }

    /// SHA-256 of a whole file, read in 1 MiB pieces.
    static func hashFile(_ path: String) throws(FileError) -> SHA256.Digest {
        let fd = try FileDescriptor(opening: path, .readOnly, options: [.noFollow])
        let hasher = SHA256()
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let n = try fd.read(into: &buffer, count: buffer.count)
            if n == 0 { break }
            hasher.update(buffer, range: 0..<n)
        }
        try fd.close()
        return hasher.finalize()
    }
}

/// Why a generation is not playable.
struct InspectionError: Error, Sendable, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// What the library offers to play, and why other generations were passed over.
public struct LibraryResolution: Sendable {
    /// `current` when it is whole, else `previous` when that is, else nil (the player shows its slate).
    public var catalog: LibraryCatalog?
    /// One line per link that was passed over: `current (gen.7): media/a.mp4: 12 bytes, expected 13`.
    public var skipped: [String]
}
