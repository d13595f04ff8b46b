// Finding a file whose name the manifest spells in one Unicode normalisation form (NFC, as most
// editors write it) and the disk in another (NFD, as macOS writes names on a USB stick).

import Foundation

/// Name lookups that treat canonically equivalent spellings as the same name (`Grüße` with a
/// precomposed `ü`, U+00FC, and with `u` + U+0308): Swift's `String` equality is canonical
/// equivalence (Unicode Standard Annex #15).
public enum FileNames {
    /// `relative` (a `/`-separated path below `folder`) as it is spelled on disk, or nil when no
    /// entry matches.
    ///
    /// An exact match (`lstat(2)` finds the bytes as given) is returned at once, so every ordinary
    /// lookup costs one system call. Otherwise each component is looked up as given, then among the
    /// folder's entries for one canonically equivalent to it (the first in sorted byte order when a
    /// folder holds several, which the stick rules refuse anyway). Symbolic links are followed as
    /// the file system follows them.
    public static func onDisk(_ relative: String, in folder: String) -> String? {
        let base = folder.hasSuffix("/") ? String(folder.dropLast()) : folder
        if exists(base + "/" + relative) { return relative }
        var found: [String] = []
        var current = base
        for component in relative.split(separator: "/", omittingEmptySubsequences: false).map(String.init) {
            let candidate = current + "/" + component
            if component.isEmpty || component == "." || component == ".." || exists(candidate) {
                found.append(component)
                current = candidate
                continue
            }
            let entries = ((try? FileManager.default.contentsOfDirectory(atPath: current)) ?? []).sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
            guard let match = entries.first(where: { $0 == component }) else { return nil }
            found.append(match)
            current += "/" + match
        }
        return found.joined(separator: "/")
    }

    /// The full path of `relative` below `folder` as spelled on disk; `folder + "/" + relative` as
    /// given when nothing matches (so an error names the path the manifest wrote).
    public static func path(_ relative: String, in folder: String) -> String {
        let base = folder.hasSuffix("/") ? String(folder.dropLast()) : folder
        return base + "/" + (onDisk(relative, in: base) ?? relative)
    }

    private static func exists(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0
    }
}
