// What a stick's manifest asks the importer to copy: every file with its size and hash, checked
// against the stick rules before the stick is read.

/// One file to copy from a stick: a path relative to `vitrine/`, its size and SHA-256, and the manifest
/// fields that declare them (for messages).
public struct StickFile: Sendable, Equatable {
    /// Relative to the stick's `vitrine/` folder and to the generation folder in the library.
    public var path: String
    /// Size in bytes, > 0.
    public var size: Int64
    /// SHA-256, 64 lowercase hex digits.
    public var sha256: String
    /// Where the manifest names the file (`playlist[2].src`, `overlays.promo.image`, `files[0].path`).
    public var pathField: String
    /// Where its size is declared (`playlist[2].size`, `files[0].size`).
    public var sizeField: String
    /// Where its hash is declared (`playlist[2].sha256`, `files[0].sha256`).
    public var hashField: String

    public init(path: String, size: Int64, sha256: String, pathField: String, sizeField: String, hashField: String) {
        self.path = path; self.size = size; self.sha256 = sha256
        self.pathField = pathField; self.sizeField = sizeField; self.hashField = hashField
    }
}

/// The stick rules on top of a valid v1 manifest (README "USB stick updates").
///
/// Every file the manifest names (item `src` in `playlist` and every named playlist, overlay `image`, `soundtrack.src`, `files[].path`) must
/// follow `StickPath`, and must have a `size` (> 0) and a `sha256`: items and the soundtrack carry them
/// inline, overlay images through a `files` entry with the same path (items and the soundtrack may
/// use `files` too). Declarations of one path must agree.
/// No two paths may differ only by case or Unicode normalisation (sticks are usually FAT, which folds
/// case), and no path may be both a file and a folder.
public enum StickManifest {
    /// The files to copy, in manifest order (one entry per distinct path), and every problem found.
    public static func files(of manifest: Manifest) -> (files: [StickFile], problems: [ImportProblem]) {
        struct Reference {
            var path: String, field: String
            var size: Int?, sizeField: String?
            var sha256: String?, hashField: String?
        }
        var references: [Reference] = []
        for (base, item) in manifest.allItemsWithPaths {
            references.append(Reference(path: item.src, field: base + ".src",
                                        size: item.size, sizeField: item.size == nil ? nil : base + ".size",
                                        sha256: item.sha256, hashField: item.sha256 == nil ? nil : base + ".sha256"))
        }
        for id in manifest.overlayIDs {
            if let image = manifest.overlays[id]?.image {
                references.append(Reference(path: image, field: JSONPath.member("overlays", id) + ".image"))
            }
        }
        if let track = manifest.soundtrack {
            references.append(Reference(path: track.src, field: "soundtrack.src",
                                        size: track.size, sizeField: track.size == nil ? nil : "soundtrack.size",
                                        sha256: track.sha256, hashField: track.sha256 == nil ? nil : "soundtrack.sha256"))
        }
        for (index, file) in manifest.files.enumerated() {
            let base = "files[\(index)]"
            references.append(Reference(path: file.path, field: base + ".path", size: file.size, sizeField: base + ".size",
                                        sha256: file.sha256, hashField: base + ".sha256"))
        }

        var problems: [ImportProblem] = []
        // Group by exact bytes: two spellings that compare equal as Swift strings (NFC and NFD) are two
        // different names on disk, and must be caught as a collision below.
        var order: [[UInt8]] = [], groups: [[UInt8]: [Reference]] = [:]
        for reference in references {
            if let rule = StickPath.problem(reference.path) {
                problems.append(ImportProblem(rule.kind, field: reference.field, file: reference.path, rule.reason))
                continue
            }
            let key = Array(reference.path.utf8)
            if groups[key] == nil { order.append(key) }
            groups[key, default: []].append(reference)
        }

        var files: [StickFile] = []
        for key in order {
            let refs = groups[key]!
            let path = refs[0].path
            let sized = refs.filter { $0.size != nil }, hashed = refs.filter { $0.sha256 != nil }
            for other in sized.dropFirst() where other.size != sized[0].size {
                problems.append(ImportProblem(.checksumConflict, field: other.sizeField!, file: path,
                                              "size \(other.size!) differs from \(sized[0].sizeField!) (\(sized[0].size!))"))
            }
            for other in hashed.dropFirst() where other.sha256 != hashed[0].sha256 {
                problems.append(ImportProblem(.checksumConflict, field: other.hashField!, file: path,
                                              "sha256 differs from \(hashed[0].hashField!)"))
            }
            let where_ = refs[0].field.hasPrefix("overlays.") ? "in a \"files\" entry"
                : refs[0].field.hasPrefix("soundtrack.") ? "on the soundtrack or in \"files\"" : "on the item or in \"files\""
            guard let size = sized.first else {
                problems.append(ImportProblem(.missingChecksum, field: Self.owner(refs[0].field) + ".size", file: path,
                                              "size is required on a USB stick (\(where_))"))
                continue
            }
            guard let hash = hashed.first else {
                problems.append(ImportProblem(.missingChecksum, field: Self.owner(refs[0].field) + ".sha256", file: path,
                                              "sha256 is required on a USB stick (\(where_))"))
                continue
            }
            if size.size! == 0 {
                problems.append(ImportProblem(.badPath, field: size.sizeField!, file: path, "an empty file cannot play (size 0)"))
                continue
            }
            files.append(StickFile(path: path, size: Int64(size.size!), sha256: hash.sha256!,
                                   pathField: refs[0].field, sizeField: size.sizeField!, hashField: hash.hashField!))
        }
        problems += collisions(order.map { groups[$0]![0] }.map { ($0.path, $0.field) })
        return (files, problems)
    }

    /// `playlist[2].src` → `playlist[2]`, `soundtrack.src` → `soundtrack`; `overlays.promo.image` →
    /// `overlays.promo.image` (no size field there).
    private static func owner(_ field: String) -> String {
        field.hasSuffix(".src") ? String(field.dropLast(4)) : field
    }

    /// Paths that differ only by case or normalisation, and paths that are both a file and a folder.
    static func collisions(_ paths: [(path: String, field: String)]) -> [ImportProblem] {
        var problems: [ImportProblem] = []
        // Folded spelling → (exact spelling, field), for files and for every folder on their way.
        var fileNames: [String: (exact: [UInt8], path: String, field: String)] = [:]
        var folderNames: [String: (exact: [UInt8], path: String, field: String)] = [:]
        for (path, field) in paths {
            let components = path.split(separator: "/").map(String.init)
            var prefix = ""
            for component in components.dropLast() {
                prefix += (prefix.isEmpty ? "" : "/") + component
                let folded = prefix.lowercased()
                if let seen = folderNames[folded] {
                    if seen.exact != Array(prefix.utf8) {
                        problems.append(ImportProblem(.caseCollision, field: field, file: path,
                                                      "folder \"\(prefix)\" differs only by case from a folder of \"\(seen.path)\" (\(seen.field))"))
                        break
                    }
                } else {
                    folderNames[folded] = (Array(prefix.utf8), path, field)
                }
            }
            let folded = path.lowercased()
            if let seen = fileNames[folded] {
                problems.append(ImportProblem(.caseCollision, field: field, file: path,
                                              "differs only by case from \"\(seen.path)\" (\(seen.field))"))
            } else {
                fileNames[folded] = (Array(path.utf8), path, field)
            }
        }
        for (folded, file) in fileNames.sorted(by: { $0.value.field < $1.value.field }) {
            if let folder = folderNames[folded] {
                problems.append(ImportProblem(.caseCollision, field: file.field, file: file.path,
                                              "is also a folder in \"\(folder.path)\" (\(folder.field))"))
            }
        }
        return problems
    }
}

/// How much free space an import needs in the library: the files plus a margin of 5 % of their size,
/// at least 64 MiB (room for the file-system's own blocks and for the player's logs meanwhile).
public enum ImportSpace {
    /// The smallest margin, in bytes (64 MiB).
    public static let minimumMargin: Int64 = 64 << 20

    /// Bytes that must be free before copying `total` bytes: `total + max(64 MiB, total / 20)`.
    public static func required(forCopying total: Int64) -> Int64 { total + max(minimumMargin, total / 20) }
}
