// The RFC 8259 parser behind `JSONValue(parsing:)`: one pass over the bytes, an explicit stack of
// open containers instead of recursion, positions kept for errors.

/// Parses one JSON text from a byte buffer that outlives the parser.
struct JSONParser {
    /// An array or object that is still open, with what it holds so far.
    private final class Container {
        let isObject: Bool
        var elements: [JSONValue] = []
        var members: [(key: String, value: JSONValue)] = []
        /// Keys seen so far (only when rejecting duplicates).
        var seen: Set<String> = []
        /// The key whose value is being parsed.
        var key = ""
        init(isObject: Bool) { self.isObject = isObject }
    }

    private let bytes: UnsafeBufferPointer<UInt8>
    private let options: JSONValue.ParseOptions
    private var index = 0
    private var stack: [Container] = []

    init(_ bytes: UnsafeBufferPointer<UInt8>, options: JSONValue.ParseOptions) {
        self.bytes = bytes; self.options = options
    }

    mutating func parseDocument() throws(JSONError) -> JSONValue {
        guard bytes.count <= options.maxBytes else { throw fail(at: options.maxBytes, .tooLarge(limit: options.maxBytes)) }
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
        let value = try parseValue()
        skipWhitespace()
        guard index == bytes.count else { throw fail(.trailingData) }
        return value
    }

    /// Parses the value at `index`, containers included, without recursion.
    private mutating func parseValue() throws(JSONError) -> JSONValue {
        var value: JSONValue
        nextValue: while true {
            skipWhitespace()
            guard index < bytes.count else { throw fail(.unexpectedEnd(expected: "a value")) }
            switch bytes[index] {
            case UInt8(ascii: "["):
                try open(Container(isObject: false))
                if consume(UInt8(ascii: "]")) { stack.removeLast(); value = .array([]) } else { continue nextValue }
            case UInt8(ascii: "{"):
                let object = Container(isObject: true)
                try open(object)
                if consume(UInt8(ascii: "}")) { stack.removeLast(); value = .object([]) } else {
                    try readKey(into: object)
                    continue nextValue
                }
            default:
                value = try parseScalar()
            }
            // Hand the finished value to the innermost container, closing containers as they end.
            while let container = stack.last {
                skipWhitespace()
                if container.isObject {
                    container.members.append((container.key, value))
                    guard index < bytes.count else { throw fail(.unexpectedEnd(expected: "',' or '}'")) }
                    switch bytes[index] {
                    case UInt8(ascii: ","): index += 1; try readKey(into: container); continue nextValue
                    case UInt8(ascii: "}"): index += 1; stack.removeLast(); value = .object(container.members)
                    case let byte: throw fail(.unexpectedByte(byte, expected: "',' or '}' in an object"))
                    }
                } else {
                    container.elements.append(value)
                    guard index < bytes.count else { throw fail(.unexpectedEnd(expected: "',' or ']'")) }
                    switch bytes[index] {
                    case UInt8(ascii: ","): index += 1; continue nextValue
                    case UInt8(ascii: "]"): index += 1; stack.removeLast(); value = .array(container.elements)
                    case let byte: throw fail(.unexpectedByte(byte, expected: "',' or ']' in an array"))
                    }
                }
            }
            return value
        }
    }

    /// Consumes an opening bracket and pushes its container, enforcing `maxDepth`.
    private mutating func open(_ container: Container) throws(JSONError) {
        guard stack.count < options.maxDepth else { throw fail(.tooDeep(limit: options.maxDepth)) }
        index += 1
        stack.append(container)
    }

    /// Skips whitespace and consumes `byte` if it comes next.
    private mutating func consume(_ byte: UInt8) -> Bool {
        skipWhitespace()
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    /// Reads `"key" :` into `object`, enforcing `rejectDuplicateKeys`.
    private mutating func readKey(into object: Container) throws(JSONError) {
        skipWhitespace()
        guard index < bytes.count else { throw fail(.unexpectedEnd(expected: "a string key")) }
        guard bytes[index] == UInt8(ascii: "\"") else { throw fail(.unexpectedByte(bytes[index], expected: "a string key")) }
        let keyStart = index
        let key = try parseString()
        if options.rejectDuplicateKeys, !object.seen.insert(key).inserted { throw fail(at: keyStart, .duplicateKey(key)) }
        skipWhitespace()
        guard index < bytes.count else { throw fail(.unexpectedEnd(expected: "':'")) }
        guard bytes[index] == UInt8(ascii: ":") else { throw fail(.unexpectedByte(bytes[index], expected: "':' after an object key")) }
        index += 1
        object.key = key
    }

    private mutating func parseScalar() throws(JSONError) -> JSONValue {
        switch bytes[index] {
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case let byte: throw fail(.unexpectedByte(byte, expected: "a value"))
        }
    }

    private mutating func literal(_ word: String) throws(JSONError) {
        for expected in word.utf8 {
            guard index < bytes.count else { throw fail(.unexpectedEnd(expected: "'\(word)'")) }
            guard bytes[index] == expected else { throw fail(.unexpectedByte(bytes[index], expected: "'\(word)'")) }
            index += 1
        }
    }

    private mutating func parseNumber() throws(JSONError) -> JSONNumber {
        let start = index
        while index < bytes.count, Self.isNumberByte(bytes[index]) { index += 1 }
        let text = Array(bytes[start..<index])
        guard JSONNumber.isWellFormed(text) else { throw fail(at: start, .invalidNumber) }
        let literal = String(decoding: text, as: UTF8.self)
        guard let value = Double(literal), value.isFinite else { throw fail(at: start, .numberOutOfRange(literal)) }
        return JSONNumber(literal: literal, value: value)
    }

    private static func isNumberByte(_ b: UInt8) -> Bool {
        (48...57).contains(b) || b == UInt8(ascii: "-") || b == UInt8(ascii: "+") || b == UInt8(ascii: ".")
            || b | 0x20 == UInt8(ascii: "e")
    }

    /// Parses the string whose opening quote is at `index`.
    private mutating func parseString() throws(JSONError) -> String {
        index += 1
        var utf8: [UInt8] = []
        while true {
            guard index < bytes.count else { throw fail(.unexpectedEnd(expected: "'\"' to end the string")) }
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return String(decoding: utf8, as: UTF8.self)  // already validated
            case UInt8(ascii: "\\"):
                try parseEscape(into: &utf8)
            case 0..<0x20:
                throw fail(.controlCharacterInString(byte))
            case 0..<0x80:
                utf8.append(byte); index += 1
            default:
                let length = try validUTF8Length()
                utf8.append(contentsOf: bytes[index..<index + length]); index += length
            }
        }
    }

    /// The length of the well-formed UTF-8 sequence at `index` (RFC 3629 table 3-7), or an error.
    private func validUTF8Length() throws(JSONError) -> Int {
        let lead = bytes[index]
        let length: Int, second: ClosedRange<UInt8>
        switch lead {
        case 0xC2...0xDF: length = 2; second = 0x80...0xBF
        case 0xE0: length = 3; second = 0xA0...0xBF
        case 0xE1...0xEC, 0xEE...0xEF: length = 3; second = 0x80...0xBF
        case 0xED: length = 3; second = 0x80...0x9F  // excludes surrogates
        case 0xF0: length = 4; second = 0x90...0xBF
        case 0xF1...0xF3: length = 4; second = 0x80...0xBF
        case 0xF4: length = 4; second = 0x80...0x8F  // up to U+10FFFF
        default: throw fail(.invalidUTF8)
        }
        guard index + length <= bytes.count, second.contains(bytes[index + 1]),
              bytes[(index + 2)..<(index + length)].allSatisfy({ $0 & 0xC0 == 0x80 })
        else { throw fail(.invalidUTF8) }
        return length
    }

    /// Decodes the escape at `index` (a backslash) and appends its UTF-8.
    private mutating func parseEscape(into utf8: inout [UInt8]) throws(JSONError) {
        let start = index
        guard index + 1 < bytes.count else { throw fail(.unexpectedEnd(expected: "an escape sequence")) }
        let simple: UInt8?
        switch bytes[index + 1] {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): simple = bytes[index + 1]
        case UInt8(ascii: "b"): simple = 0x08
        case UInt8(ascii: "f"): simple = 0x0C
        case UInt8(ascii: "n"): simple = 0x0A
        case UInt8(ascii: "r"): simple = 0x0D
        case UInt8(ascii: "t"): simple = 0x09
        case UInt8(ascii: "u"): simple = nil
        default: throw fail(.invalidEscape)
        }
        if let simple { utf8.append(simple); index += 2; return }
        var scalar = try hex4(at: index + 2)
        index += 6
        if (0xDC00...0xDFFF).contains(scalar) { throw fail(at: start, .loneSurrogate) }
        if (0xD800...0xDBFF).contains(scalar) {
            guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
            else { throw fail(at: start, .loneSurrogate) }
            let low = try hex4(at: index + 2)
            guard (0xDC00...0xDFFF).contains(low) else { throw fail(at: start, .loneSurrogate) }
            index += 6
            scalar = 0x10000 + (scalar - 0xD800) << 10 + (low - 0xDC00)
        }
        UTF8.encode(Unicode.Scalar(scalar)!) { utf8.append($0) }
    }

    private func hex4(at position: Int) throws(JSONError) -> UInt32 {
        guard position + 4 <= bytes.count else { throw fail(at: position - 2, .invalidUnicodeEscape) }
        var value: UInt32 = 0
        for byte in bytes[position..<position + 4] {
            let digit: UInt8
            switch byte {
            case 48...57: digit = byte - 48
            case 65...70: digit = byte - 55
            case 97...102: digit = byte - 87
            default: throw fail(at: position - 2, .invalidUnicodeEscape)
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private func fail(_ reason: JSONError.Reason) -> JSONError { fail(at: index, reason) }

    private func fail(at offset: Int, _ reason: JSONError.Reason) -> JSONError {
        JSONError(at: offset, in: bytes, reason)
    }
}
