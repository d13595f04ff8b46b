// The rules a path on a USB stick must follow before anything is read or copied.

/// Path rules for files named by a stick's manifest (relative to the stick's `vitrine/` folder).
///
/// A path is `/`-separated components, each made of ASCII letters, digits, `.`, `_`, `-` and spaces, or
/// printable non-ASCII characters (no control, format, private-use or unassigned code points). It must
/// not be absolute, contain a backslash or NUL, an empty, `.` or `..` component, or a hidden component
/// (one starting with `.`, which includes AppleDouble `._*` files). Components are at most 255 bytes of
/// UTF-8 and the whole path at most 1024. The top-level names `catalog.json`, `manifest.json` and
/// `manifest.json.minisig` are reserved (in any case).
public enum StickPath {
    /// Names a stick path may not take at the top level, compared case-insensitively.
    public static let reservedNames: Set<String> = ["catalog.json", "manifest.json", "manifest.json.minisig"]
    /// Longest component in UTF-8 bytes (`NAME_MAX`).
    public static let maximumComponentBytes = 255
    /// Longest path in UTF-8 bytes.
    public static let maximumPathBytes = 1024

    /// Why `path` breaks the rules (kind `.badPath` or `.hiddenFile`, and the reason), or nil when it follows them.
    public static func problem(_ path: String) -> (kind: ImportProblem.Kind, reason: String)? {
        if path.isEmpty { return (.badPath, "must not be empty") }
        if path.utf8.contains(0) { return (.badPath, "must not contain a NUL character") }
        if path.hasPrefix("/") { return (.badPath, "must be a relative path, not absolute") }
        if path.contains("\\") { return (.badPath, "must use \"/\" between folders, not \"\\\"") }
        if path.utf8.count > maximumPathBytes { return (.badPath, "longer than \(maximumPathBytes) bytes") }
        let components = path.split(separator: "/", omittingEmptySubsequences: false)
        for component in components {
            switch component {
            case "": return (.badPath, "has an empty component (\"//\", or \"/\" at the end)")
            case ".": return (.badPath, "must not contain a \".\" component")
            case "..": return (.badPath, "must not contain a \"..\" component")
            default: break
            }
            if component.hasPrefix(".") {
                return (.hiddenFile, "names a hidden file (\"\(component)\"); hidden and AppleDouble \"._\" files are never copied")
            }
            if component.utf8.count > maximumComponentBytes {
                return (.badPath, "has a name longer than \(maximumComponentBytes) bytes")
            }
            if let bad = component.unicodeScalars.first(where: { !isAllowed($0) }) {
                return (.badPath, "character \(codePoint(bad)) is not allowed (use letters, digits, \".\", \"_\", \"-\" and spaces)")
            }
        }
        if reservedNames.contains(components[0].lowercased()) {
            return (.badPath, "\"\(components[0])\" is a reserved name")
        }
        return nil
    }

    /// Whether a name is hidden on the stick: it starts with `.` (AppleDouble `._*` included).
    public static func isHidden(_ name: String) -> Bool { name.hasPrefix(".") }

    /// ASCII `[A-Za-z0-9._ -]`, or a printable non-ASCII scalar.
    static func isAllowed(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: return true
        case 0x2E, 0x5F, 0x20, 0x2D: return true
        case 0..<0x80: return false
        default:
            switch scalar.properties.generalCategory {
            case .control, .format, .surrogate, .privateUse, .unassigned, .lineSeparator, .paragraphSeparator:
                return false
            default:
                return true
            }
        }
    }

    static func codePoint(_ scalar: Unicode.Scalar) -> String {
        var hex = String(scalar.value, radix: 16, uppercase: true)
        while hex.count < 4 { hex = "0" + hex }
        return "U+" + hex
    }
}
