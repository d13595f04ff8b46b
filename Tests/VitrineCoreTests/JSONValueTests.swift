import Foundation
import Testing
@testable import VitrineCore

private func parse(_ text: String, _ options: JSONValue.ParseOptions = .init()) throws(JSONError) -> JSONValue {
    try JSONValue(parsing: Array(text.utf8), options: options)
}

private func error(_ text: String, _ options: JSONValue.ParseOptions = .init()) -> JSONError? {
    do { _ = try parse(text, options); return nil } catch { return error }
}

private func number(_ literal: String) -> JSONValue { .number(JSONNumber(literal: literal)!) }

@Suite("JSONValue parsing")
struct JSONValueTests {
    @Test func buildsTheTreeInDocumentOrder() throws {
        let value = try parse(#" { "b": [1, -2.5e1, true, null], "a": "x\u00e9\ud83d\ude00\n", "c": {} } "#)
        #expect(value == .object([
            ("b", .array([number("1"), number("-2.5e1"), .bool(true), .null])),
            ("a", .string("xé😀\n")),
            ("c", .object([])),
        ]))
        #expect(value["a"] == .string("xé😀\n"))
        #expect(value["missing"] == nil)
    }

    @Test func numbersKeepTheirLiteral() throws {
        guard case let .number(n) = try parse("-12.50e3") else { Issue.record("not a number"); return }
        #expect(n.literal == "-12.50e3")
        #expect(n.value == -12_500)
        #expect(!n.isIntegerLiteral)
        #expect(n.isIntegral)
        #expect(n.intValue == -12_500)

        guard case let .number(big) = try parse("9007199254740993") else { Issue.record("not a number"); return }
        #expect(big.isIntegerLiteral)
        #expect(big.intValue == 9_007_199_254_740_993)  // exact, though the Double rounds
        #expect(big.value == 9_007_199_254_740_992)

        guard case let .number(half) = try parse("0.5") else { Issue.record("not a number"); return }
        #expect(!half.isIntegral)
        #expect(half.intValue == nil)
        #expect(JSONNumber(literal: "01") == nil)
        #expect(JSONNumber(literal: "1e400") == nil)
    }

    @Test func errorsCarryOffsetLineAndColumn() {
        let e = error("{\n  \"a\": 1,\n  \"é\" 2\n}")
        #expect(e == JSONError(offset: 19, line: 3, column: 7, reason: .unexpectedByte(UInt8(ascii: "2"), expected: "':' after an object key")))
        #expect(e?.description == "line 3, column 7: expected ':' after an object key, found '2'")

        #expect(error("[1,]")?.reason == .unexpectedByte(UInt8(ascii: "]"), expected: "a value"))
        #expect(error("")?.reason == .unexpectedEnd(expected: "a value"))
        #expect(error("[1] x")?.reason == .trailingData)
        #expect(error("[1] x")?.offset == 4)
        #expect(error("\"a\tb\"")?.reason == .controlCharacterInString(0x09))
        #expect(error("\"a\tb\"")?.description == "line 1, column 3: control character U+0009 in a string must be escaped")
        #expect(error("[01]")?.reason == .invalidNumber)
        #expect(error("1e999")?.reason == .numberOutOfRange("1e999"))
        #expect(error("\"\\x\"")?.reason == .invalidEscape)
        #expect(error("\"\\u12G4\"")?.reason == .invalidUnicodeEscape)
        #expect(error("// c\n1")?.reason == .unexpectedByte(UInt8(ascii: "/"), expected: "a value"))
    }

    @Test func rejectsMalformedUTF8() throws {
        #expect(throws: JSONError(offset: 2, line: 1, column: 3, reason: .invalidUTF8)) {
            try JSONValue(parsing: [0x22, 0x61, 0xC0, 0xAF, 0x22])  // overlong "/"
        }
        #expect(throws: JSONError(offset: 1, line: 1, column: 2, reason: .invalidUTF8)) {
            try JSONValue(parsing: [0x22, 0xED, 0xA0, 0x80, 0x22])  // encoded surrogate U+D800
        }
    }

    @Test func rejectsUnpairedSurrogateEscapes() {
        #expect(error(#""\uD800""#)?.reason == .loneSurrogate)
        #expect(error(#""\uDC00\uD800""#)?.reason == .loneSurrogate)
        #expect(error(#""\uD800\u0041""#)?.reason == .loneSurrogate)
        #expect(error(#""\uD800\u0041""#)?.offset == 1)
    }

    @Test func skipsOneLeadingByteOrderMark() throws {
        #expect(try JSONValue(parsing: [0xEF, 0xBB, 0xBF, 0x5B, 0x5D]) == .array([]))
        #expect(throws: JSONError.self) { try JSONValue(parsing: [0xEF, 0xBB, 0xBF]) }
    }

    @Test func duplicateKeysAreRejectedByDefault() throws {
        let text = #"{"a": 1, "b": {"c": 2, "c": 3}}"#
        #expect(error(text) == JSONError(offset: 23, line: 1, column: 24, reason: .duplicateKey("c")))
        #expect(error(text)?.description == #"line 1, column 24: duplicate key "c""#)
        let lenient = try parse(text, .init(rejectDuplicateKeys: false))
        #expect(lenient["b"] == .object([("c", number("2")), ("c", number("3"))]))
    }

    @Test func depthIsLimitedTo32ByDefault() throws {
        let deepest = String(repeating: "[", count: 32) + String(repeating: "]", count: 32)
        #expect(try parse(deepest) != .null)
        let tooDeep = "{\"a\":" + String(repeating: "[", count: 32) + String(repeating: "]", count: 32) + "}"
        #expect(error(tooDeep) == JSONError(offset: 36, line: 1, column: 37, reason: .tooDeep(limit: 32)))
        #expect(try parse(tooDeep, .init(maxDepth: 33))["a"] != nil)
        #expect(error("[[[1]]]", .init(maxDepth: 2))?.reason == .tooDeep(limit: 2))
    }

    @Test func parsingDoesNotRecurse() throws {
        let unclosed = String(repeating: "[", count: 300_000)
        #expect(error(unclosed, .init(maxDepth: .max)) == JSONError(offset: 300_000, line: 1, column: 300_001, reason: .unexpectedEnd(expected: "a value")))
        let deep = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
        var value = try parse(deep, .rfc8259)
        var depth = 1
        while case let .array(elements) = value, let first = elements.first { value = first; depth += 1 }
        #expect(depth == 512)
        #expect(error("[" + deep + "]", .rfc8259)?.reason == .tooDeep(limit: 512))
    }

    @Test func sizeIsLimitedTo1MiBByDefault() throws {
        let fits = "\"" + String(repeating: "a", count: (1 << 20) - 2) + "\""
        #expect(try parse(fits) == .string(String(repeating: "a", count: (1 << 20) - 2)))
        #expect(error(fits + " ") == JSONError(offset: 1 << 20, line: 1, column: (1 << 20) + 1, reason: .tooLarge(limit: 1 << 20)))
        #expect(error("[1, 2]", .init(maxBytes: 5))?.description == "line 1, column 6: text larger than the limit of 5 bytes")
    }
}
