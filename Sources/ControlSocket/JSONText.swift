// JSON text from a `JSONValue`: one line for the socket, indented for people (`vitrine ctl`).
import VitrineCore

/// Writes a `JSONValue` as RFC 8259 text.
///
/// Numbers keep their literal as parsed or made (`JSONNumber.literal`: `0.50` stays `0.50`),
/// strings are escaped by `JSONPath.quoted` (control characters, U+2028/U+2029 and other format
/// characters as `\n`, `\u2028`…), object members keep their order. The compact form never holds
/// a newline, so it is one line of the control protocol.
public enum JSONText {
    /// `{"a":[1,"x"],"b":null}`: no whitespace, no newline.
    public static func compact(_ value: JSONValue) -> String {
        var out = ""
        write(value, into: &out, indent: nil, level: 0)
        return out
    }

    /// Indented by two spaces per level, `"key": value`, empty containers as `[]` and `{}`; no
    /// final newline.
    public static func pretty(_ value: JSONValue) -> String {
        var out = ""
        write(value, into: &out, indent: "  ", level: 0)
        return out
    }

    private static func write(_ value: JSONValue, into out: inout String, indent: String?, level: Int) {
        switch value {
        case .null: out += "null"
        case .bool(let flag): out += flag ? "true" : "false"
        case .number(let number): out += number.literal
        case .string(let text): out += JSONPath.quoted(text)
        case .array(let elements):
            guard !elements.isEmpty else { out += "[]"; return }
            out += "["
            for (i, element) in elements.enumerated() {
                if i > 0 { out += "," }
                newline(&out, indent, level + 1)
                write(element, into: &out, indent: indent, level: level + 1)
            }
            newline(&out, indent, level)
            out += "]"
        case .object(let members):
            guard !members.isEmpty else { out += "{}"; return }
            out += "{"
            for (i, member) in members.enumerated() {
                if i > 0 { out += "," }
                newline(&out, indent, level + 1)
                out += JSONPath.quoted(member.key)
                out += indent == nil ? ":" : ": "
                write(member.value, into: &out, indent: indent, level: level + 1)
            }
            newline(&out, indent, level)
            out += "}"
        }
    }

    private static func newline(_ out: inout String, _ indent: String?, _ level: Int) {
        guard let indent else { return }
        out += "\n"
        for _ in 0..<level { out += indent }
    }
}
