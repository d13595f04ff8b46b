// Writing JSON values: the control socket's and MQTT's replies and status (RFC 8259 text).

extension JSONValue {
    /// The value as compact RFC 8259 text, on one line: members in their order, strings escaped as
    /// `JSONPath.quoted` does (`"`, `\`, control characters as `\uXXXX`), numbers as their literal.
    public var text: String {
        var out = ""
        write(into: &out, indent: nil, level: 0)
        return out
    }

    /// The value as text indented by two spaces per level (for people: `vitrine ctl`).
    public var prettyText: String {
        var out = ""
        write(into: &out, indent: "  ", level: 0)
        return out
    }

    private func write(into out: inout String, indent: String?, level: Int) {
        func newline(_ l: Int) {
            guard let indent else { return }
            out += "\n" + String(repeating: indent, count: l)
        }
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .number(let n): out += n.literal
        case .string(let s): out += JSONPath.quoted(s)
        case .array(let items):
            guard !items.isEmpty else { out += "[]"; return }
            out += "["
            for (i, item) in items.enumerated() {
                if i > 0 { out += "," }
                newline(level + 1)
                item.write(into: &out, indent: indent, level: level + 1)
            }
            newline(level)
            out += "]"
        case .object(let members):
            guard !members.isEmpty else { out += "{}"; return }
            out += "{"
            for (i, m) in members.enumerated() {
                if i > 0 { out += "," }
                newline(level + 1)
                out += JSONPath.quoted(m.key) + (indent == nil ? ":" : ": ")
                m.value.write(into: &out, indent: indent, level: level + 1)
            }
            newline(level)
            out += "}"
        }
    }

    /// An integer.
    public static func int(_ i: Int) -> JSONValue { .number(JSONNumber(literal: String(i), value: Double(i))) }

    /// A number with up to `digits` decimals (trailing zeros kept off); `null` when not finite.
    public static func double(_ d: Double, digits: Int = 3) -> JSONValue {
        guard d.isFinite else { return .null }
        var s = String(format: "%.\(digits)f", d)
        if s.contains(".") {
            while s.hasSuffix("0") { s.removeLast() }
            if s.hasSuffix(".") { s.removeLast() }
        }
        if s == "-0" { s = "0" }
        return .number(JSONNumber(literal: s, value: Double(s) ?? d))
    }

    /// A string, or `null` for nil.
    public static func text(_ s: String?) -> JSONValue { s.map { .string($0) } ?? .null }

    /// The string inside a `.string`, else nil.
    public var stringValue: String? { if case let .string(s) = self { return s } else { return nil } }

    /// The number inside a `.number`, else nil.
    public var doubleValue: Double? { if case let .number(n) = self { return n.value } else { return nil } }
}
