// A parsed JSON document: the tree `JSONValue(parsing:)` builds and `ManifestParser` walks.

import Foundation

/// One JSON value (RFC 8259). Objects keep their members in document order.
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case number(JSONNumber)
    case string(String)
    case array([JSONValue])
    /// Members in document order. Keys are unique unless parsed with `rejectDuplicateKeys: false`.
    case object([(key: String, value: JSONValue)])

    public static func == (a: JSONValue, b: JSONValue) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case let (.bool(x), .bool(y)): return x == y
        case let (.number(x), .number(y)): return x == y
        case let (.string(x), .string(y)): return x == y
        case let (.array(x), .array(y)): return x == y
        case let (.object(x), .object(y)):
            return x.count == y.count && zip(x, y).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        default: return false
        }
    }

    /// The first member named `key` when this is an object; nil otherwise.
    public subscript(key: String) -> JSONValue? {
        guard case let .object(members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    /// The JSON type with an article, for messages: "an object", "a string", "null"…
    public var typeDescription: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}

/// A JSON number: its value as a `Double` and the literal as written.
public struct JSONNumber: Sendable, Hashable, CustomStringConvertible {
    /// The literal exactly as it appeared in the text, e.g. `"-12.50e3"`.
    public var literal: String
    /// The nearest finite `Double`.
    public var value: Double

    public init(literal: String, value: Double) { self.literal = literal; self.value = value }

    /// Parses a literal that follows the RFC 8259 number grammar; nil if it is malformed or not finite.
    public init?(literal: String) {
        guard JSONNumber.isWellFormed(Array(literal.utf8)), let value = Double(literal), value.isFinite else { return nil }
        self.init(literal: literal, value: value)
    }

    /// Whether the literal has neither a fraction nor an exponent (`42`, `-7`).
    public var isIntegerLiteral: Bool { !literal.utf8.contains { $0 == UInt8(ascii: ".") || $0 | 0x20 == UInt8(ascii: "e") } }

    /// Whether the value has no fractional part (`42`, `42.0`, `4.2e1`), as JSON Schema's "integer".
    public var isIntegral: Bool { value.rounded(.towardZero) == value }

    /// The value as an `Int` when it is integral and fits: exact from an integer literal, and from
    /// the `Double` otherwise (within ±2⁵³, where a `Double` holds every integer). Nil otherwise.
    public var intValue: Int? {
        if isIntegerLiteral { return Int(literal) }
        guard isIntegral, abs(value) <= 9_007_199_254_740_992 else { return nil }
        return Int(value)
    }

    public var description: String { literal }

    /// `-? (0 | [1-9][0-9]*) (\.[0-9]+)? ([eE][+-]?[0-9]+)?`
    static func isWellFormed(_ u: [UInt8]) -> Bool {
        var i = 0
        func digits() -> Int { let start = i; while i < u.count, (48...57).contains(u[i]) { i += 1 }; return i - start }
        if i < u.count, u[i] == UInt8(ascii: "-") { i += 1 }
        guard i < u.count else { return false }
        if u[i] == UInt8(ascii: "0") { i += 1 } else if digits() == 0 { return false }
        if i < u.count, u[i] == UInt8(ascii: ".") { i += 1; if digits() == 0 { return false } }
        if i < u.count, u[i] | 0x20 == UInt8(ascii: "e") {
            i += 1
            if i < u.count, u[i] == UInt8(ascii: "+") || u[i] == UInt8(ascii: "-") { i += 1 }
            if digits() == 0 { return false }
        }
        return i == u.count
    }
}

extension JSONValue {
    /// Limits and strictness for `JSONValue(parsing:options:)`.
    public struct ParseOptions: Sendable, Equatable {
        /// Deepest nesting of arrays and objects; a top-level `[]` is depth 1. Default 32. Keep it in the
        /// hundreds at most: freeing or comparing a tree recurses once per level.
        public var maxDepth: Int
        /// Longest accepted text in bytes. Default 1 MiB.
        public var maxBytes: Int
        /// Whether a key repeated within one object is an error. Default true.
        public var rejectDuplicateKeys: Bool

        public init(maxDepth: Int = 32, maxBytes: Int = 1 << 20, rejectDuplicateKeys: Bool = true) {
            self.maxDepth = maxDepth; self.maxBytes = maxBytes; self.rejectDuplicateKeys = rejectDuplicateKeys
        }

        /// RFC 8259 as written: duplicate keys allowed (every member is kept, in order) and no size
        /// limit. Depth stays capped, at 512, as §9 permits: parsing never recurses, but freeing or
        /// comparing a tree does, so an unbounded depth could exhaust a thread's stack.
        public static let rfc8259 = ParseOptions(maxDepth: 512, maxBytes: .max, rejectDuplicateKeys: false)
    }

    /// Parses one JSON text (RFC 8259, UTF-8).
    ///
    /// Strict: only the four JSON whitespace bytes, no comments or trailing commas, well-formed
    /// UTF-8 only, and no unpaired surrogates in `\u` escapes (a Swift `String` cannot hold them).
    /// One leading UTF-8 byte-order mark is skipped, as RFC 8259 §8.1 permits. Numbers must fit a
    /// finite `Double`. Parsing never recurses; `maxDepth` bounds the recursion of freeing and
    /// comparing the tree it returns.
    /// - Throws: `JSONError` with the offset, line and column of the first offending byte.
    public init(parsing bytes: [UInt8], options: ParseOptions = .init()) throws(JSONError) {
        self = try bytes.withUnsafeBufferPointer { (buffer) throws(JSONError) in
            var parser = JSONParser(buffer, options: options)
            return try parser.parseDocument()
        }
    }

    /// Parses one JSON text held in `data`; see `init(parsing:options:)` for `[UInt8]`.
    public init(parsing data: Data, options: ParseOptions = .init()) throws(JSONError) {
        try self.init(parsing: [UInt8](data), options: options)
    }
}
