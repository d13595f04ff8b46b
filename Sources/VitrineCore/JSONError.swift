// Why and where a JSON text was rejected: the error `JSONValue(parsing:)` throws.

/// A JSON text that could not be parsed, with the position of the first offending byte.
///
/// `description` reads `line 3, column 14: expected ':' after an object key, found '}'`.
public struct JSONError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Why the text was rejected.
    public enum Reason: Sendable, Equatable, CustomStringConvertible {
        /// The text ended inside a value (or was empty); `expected` names what was wanted.
        case unexpectedEnd(expected: String)
        /// A byte that cannot start or continue the value; `expected` names what was wanted.
        case unexpectedByte(UInt8, expected: String)
        /// A backslash escape other than `\" \\ \/ \b \f \n \r \t \uXXXX`.
        case invalidEscape
        /// A `\u` escape without four hex digits.
        case invalidUnicodeEscape
        /// A `\uD800`–`\uDFFF` escape that is not half of a high+low surrogate pair.
        case loneSurrogate
        /// A raw byte below 0x20 inside a string (it must be escaped).
        case controlCharacterInString(UInt8)
        /// Bytes that are not well-formed UTF-8 (RFC 3629).
        case invalidUTF8
        /// A number that breaks the RFC 8259 grammar (leading zero, missing digits…).
        case invalidNumber
        /// A number whose magnitude does not fit a finite `Double`.
        case numberOutOfRange(String)
        /// Arrays and objects nested deeper than `ParseOptions.maxDepth`.
        case tooDeep(limit: Int)
        /// A text longer than `ParseOptions.maxBytes`.
        case tooLarge(limit: Int)
        /// A key that appears twice in one object (with `rejectDuplicateKeys`).
        case duplicateKey(String)
        /// Non-whitespace after the single top-level value.
        case trailingData

        public var description: String {
            switch self {
            case let .unexpectedEnd(expected): return "unexpected end of text, expected \(expected)"
            case let .unexpectedByte(byte, expected): return "expected \(expected), found \(Self.show(byte))"
            case .invalidEscape: return "invalid escape sequence in a string"
            case .invalidUnicodeEscape: return "\\u must be followed by four hex digits"
            case .loneSurrogate: return "unpaired UTF-16 surrogate in a \\u escape"
            case let .controlCharacterInString(byte):
                return "control character U+00\(Self.hex(byte)) in a string must be escaped"
            case .invalidUTF8: return "invalid UTF-8"
            case .invalidNumber: return "invalid number"
            case let .numberOutOfRange(literal): return "number out of range: \(literal)"
            case let .tooDeep(limit): return "arrays and objects nested deeper than \(limit) levels"
            case let .tooLarge(limit): return "text larger than the limit of \(limit) bytes"
            case let .duplicateKey(key): return "duplicate key \"\(key)\""
            case .trailingData: return "unexpected data after the JSON value"
            }
        }

        private static func hex(_ byte: UInt8) -> String {
            let s = String(byte, radix: 16, uppercase: true)
            return s.count == 1 ? "0" + s : s
        }

        private static func show(_ byte: UInt8) -> String {
            (0x21...0x7E).contains(byte) ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x\(hex(byte))"
        }
    }

    /// Offset of the offending byte from the start of the text (0-based).
    public var offset: Int
    /// 1-based line; lines end at LF.
    public var line: Int
    /// 1-based column, counted in Unicode scalars from the start of the line.
    public var column: Int
    public var reason: Reason

    public init(offset: Int, line: Int, column: Int, reason: Reason) {
        self.offset = offset; self.line = line; self.column = column; self.reason = reason
    }

    /// Locates `offset` in `bytes` (line and column) and wraps `reason`.
    init(at offset: Int, in bytes: UnsafeBufferPointer<UInt8>, _ reason: Reason) {
        var line = 1, column = 1
        for byte in bytes[..<min(offset, bytes.count)] {
            if byte == 0x0A { line += 1; column = 1 } else if byte & 0xC0 != 0x80 { column += 1 }
        }
        self.init(offset: offset, line: line, column: column, reason: reason)
    }

    public var description: String { "line \(line), column \(column): \(reason)" }
}
