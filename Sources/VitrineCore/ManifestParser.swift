// Entry points for reading a manifest: bytes or a file in, a `Manifest` and every problem out.

import Foundation

/// Reads and validates catalog manifests (`vitrine.manifest/1`; format in `config/manifest.schema.json`).
///
/// Named `playlists` are checked like `playlist` (paths `playlists.lunch[2].src`), item ids are unique
/// across all of them, and `schedule`, `timezone` and `display.power` are checked as
/// `ManifestValidator+Schedule.swift` says: an unknown playlist, a bad time, date or zone, an empty
/// range and an entry that can never play are errors; an entry always outranked is a warning.
///
/// One pass reports every problem, each located by a JSON path (`playlist[1].duration: required for images`).
/// The JSON must be strict RFC 8259 UTF-8 of at most 1 MiB, nested at most 32 deep, with no key repeated in
/// an object. Unknown fields are errors that name the field. A cue point later than its item's `duration`
/// is only a warning. References (`jump.item`, `showOverlay.overlay`, in cue points and overlay buttons,
/// and `idle.jump`) must name an existing id; an `overlays` object is required for any `showOverlay`.
/// Each overlay's fields are checked (paths like `overlays.promo.buttons[0].action.item`), and its
/// `image` is looked up like a `src`.
public enum ManifestParser {
    /// The JSON limits applied to manifests.
    public static let jsonOptions = JSONValue.ParseOptions(maxDepth: 32, maxBytes: 1 << 20, rejectDuplicateKeys: true)

    /// Parses and validates a manifest.
    /// - Parameters:
    ///   - bytes: the UTF-8 JSON text.
    ///   - catalogDirectory: the folder `src` paths are relative to; when given, every `src` must be a
    ///     non-empty regular file there (`file not found: media/a.mp4`, `file is empty: …`). Nil skips the check.
    ///   - fileStatus: looks up a full path (`catalogDirectory + "/" + src`); the default asks the file system.
    /// - Returns: the manifest (nil if any problem is an error) and all problems. Invalid JSON gives one
    ///   problem with path `""` whose reason carries the line and column.
    public static func parse(_ bytes: [UInt8], catalogDirectory: String? = nil,
                             fileStatus: (String) -> MediaFileStatus = MediaFileStatus.onDisk) -> ManifestResult {
        let root: JSONValue
        do { root = try JSONValue(parsing: bytes, options: jsonOptions) } catch {
            return ManifestResult(manifest: nil, problems: [ManifestProblem(path: "", reason: "invalid JSON at \(error)")])
        }
        return withoutActuallyEscaping(fileStatus) { fileStatus in
            var validator = ManifestValidator { src in
                guard let catalogDirectory else { return nil }
                let folder = catalogDirectory.hasSuffix("/") ? catalogDirectory : catalogDirectory + "/"
                // As spelled on disk: the manifest may write a name in NFC and the stick hold it in NFD.
                switch fileStatus(FileNames.path(src, in: folder)) {
                case .regularFile: return nil
                case .empty: return "file is empty: \(JSONPath.printable(src))"
                case .missing: return "file not found: \(JSONPath.printable(src))"
                case .notRegularFile: return "not a regular file: \(JSONPath.printable(src))"
                }
            }
            let manifest = validator.manifest(root)
            let problems = validator.problems
            return ManifestResult(manifest: problems.contains { $0.severity == .error } ? nil : manifest,
                                  problems: problems, draft: manifest)
        }
    }

    /// Parses and validates a manifest held in `data`; see `parse(_:catalogDirectory:fileStatus:)`.
    public static func parse(_ data: Data, catalogDirectory: String? = nil,
                             fileStatus: (String) -> MediaFileStatus = MediaFileStatus.onDisk) -> ManifestResult {
        parse([UInt8](data), catalogDirectory: catalogDirectory, fileStatus: fileStatus)
    }

    /// Like `parse(_:catalogDirectory:fileStatus:)`, with a yes/no existence check (existing files count as non-empty).
    public static func parse(_ bytes: [UInt8], catalogDirectory: String?,
                             fileExists: (String) -> Bool) -> ManifestResult {
        parse(bytes, catalogDirectory: catalogDirectory) { fileExists($0) ? .regularFile : .missing }
    }

    /// Reads the manifest at `path` and validates it, with its folder as the catalog directory
    /// (`checkingFiles` false: without looking at the files it names, as `vitrine schedule` does).
    ///
    /// A file that is missing or unreadable gives one problem with path `""` naming the file.
    public static func load(path: String, checkingFiles: Bool = true) -> ManifestResult {
        func failure(_ reason: String) -> ManifestResult {
            ManifestResult(manifest: nil, problems: [ManifestProblem(path: "", reason: reason)])
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            return failure("manifest not found: \(path)")
        }
        // A FIFO or a device is never opened: opening a FIFO with no writer blocks.
        guard isDirectory.boolValue || MediaFileStatus.onDisk(path) != .notRegularFile else {
            return failure("cannot read manifest: \(path) (not a regular file)")
        }
        guard !isDirectory.boolValue, let handle = FileHandle(forReadingAtPath: path) else {
            return failure("cannot read manifest: \(path)")
        }
        defer { try? handle.close() }
        let data: Data
        do { data = try handle.read(upToCount: jsonOptions.maxBytes + 1) ?? Data() } catch {
            return failure("cannot read manifest: \(path) (\(error.localizedDescription))")
        }
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        return parse(data, catalogDirectory: checkingFiles ? folder : nil)
    }
}

/// What a media path names, as `ManifestParser` needs to know it.
public enum MediaFileStatus: Sendable, Equatable {
    /// A regular file of at least one byte (after following symbolic links).
    case regularFile
    /// A regular file of zero bytes.
    case empty
    /// Nothing, or a dangling symbolic link.
    case missing
    /// A folder, device, socket or the like.
    case notRegularFile

    /// Asks the file system about `path`, following symbolic links.
    public static func onDisk(_ path: String) -> MediaFileStatus {
        guard FileManager.default.fileExists(atPath: path) else { return .missing }  // follows links
        let resolved = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: resolved),
              attributes[.type] as? FileAttributeType == .typeRegular else { return .notRegularFile }
        return (attributes[.size] as? NSNumber)?.int64Value == 0 ? .empty : .regularFile
    }
}
