// JSON paths in messages (`playlist[2].src`, `overlays["opening hours"].title`) and user text
// quoted so that no key or value can break a message over lines or pass for another field.

/// Renders the locations and strings of a JSON document for one-line messages.
public enum JSONPath {
    /// `base.key` when `key` is a plain name (ASCII letters, digits, `_` and `-`, not starting with a
    /// digit or `-`), else `base["key"]` with the key as a JSON string literal (`quoted`), so a key
    /// holding `: `, a dot, a newline or a NUL cannot forge a field or an output line. `base` `""`
    /// is the document's root: `key` alone, or `["key"]`.
    public static func member(_ base: String, _ key: String) -> String {
        if isPlainName(key) { return base.isEmpty ? key : base + "." + key }
        return base + "[" + quoted(key) + "]"
    }

    /// `base[index]`.
    public static func element(_ base: String, _ index: Int) -> String { "\(base)[\(index)]" }

    /// `text` as a JSON string literal (RFC 8259): in double quotes, with `"` and `\` escaped, and
    /// control characters, U+2028, U+2029 and other format characters as `\n`, `\t`, `\u0000`…
    public static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if needsEscape(scalar) {
                    // Above U+FFFF as its UTF-16 surrogate pair (RFC 8259 §7): `\ud83d\ude00`.
                    for unit in String(scalar).utf16 {
                        let hex = String(unit, radix: 16)
                        out += "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
                    }
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }

    /// `text` as it is when it holds no control, format or line-separator character; else `quoted`.
    /// For file names in messages: `media/a.mp4` reads as written, `media/a\nb.mp4` cannot split a line.
    public static func printable(_ text: String) -> String {
        text.unicodeScalars.contains(where: needsEscape) ? quoted(text) : text
    }

    static func isPlainName(_ key: String) -> Bool {
        guard let first = key.unicodeScalars.first, !("0"..."9").contains(first), first != "-" else { return false }
        return key.unicodeScalars.allSatisfy { s in
            ("a"..."z").contains(s) || ("A"..."Z").contains(s) || ("0"..."9").contains(s) || s == "_" || s == "-"
        }
    }

    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .unassigned: return true
        default: return false
        }
    }
}
