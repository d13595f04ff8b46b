import Foundation
import Testing
@testable import VitrineCore

/// Nicolas Seriot's JSONTestSuite (`test_parsing/`): y_ must parse, n_ must fail, i_ may do either but not crash.
/// Set `VITRINE_JSONTESTSUITE` to the `test_parsing` folder to use another copy.
private let suiteFolder = ProcessInfo.processInfo.environment["VITRINE_JSONTESTSUITE"]
    ?? "/work/shared/data/JSONTestSuite/test_parsing"

private func cases(_ prefix: String) throws -> [(name: String, bytes: [UInt8])] {
    try FileManager.default.contentsOfDirectory(atPath: suiteFolder)
        .filter { $0.hasPrefix(prefix) && $0.hasSuffix(".json") }
        .sorted()
        .map { ($0, [UInt8](try Data(contentsOf: URL(fileURLWithPath: suiteFolder + "/" + $0)))) }
}

@Suite("JSONTestSuite", .enabled(if: FileManager.default.fileExists(atPath: suiteFolder),
                                 "JSONTestSuite not found; set VITRINE_JSONTESTSUITE"))
struct JSONTestSuiteTests {
    @Test func acceptsEveryYCase() throws {
        let all = try cases("y_")
        #expect(all.count == 95)
        let rejected = all.compactMap { c -> String? in
            do { _ = try JSONValue(parsing: c.bytes, options: .rfc8259); return nil } catch { return "\(c.name): \(error)" }
        }
        #expect(rejected == [])
    }

    @Test func rejectsEveryNCase() throws {
        let all = try cases("n_")
        #expect(all.count == 188)
        let accepted = all.compactMap { c -> String? in
            (try? JSONValue(parsing: c.bytes, options: .rfc8259)) == nil ? nil : c.name
        }
        #expect(accepted == [])
    }

    /// Implementation-defined cases, with this parser's choices: numbers that round to zero or to a
    /// finite `Double`, a leading UTF-8 BOM and the 500-deep arrays (within `.rfc8259`'s 512) are
    /// accepted; numbers beyond `Double`, unpaired surrogates, malformed UTF-8 and UTF-16 are rejected.
    @Test func decidesEveryICaseWithoutCrashing() throws {
        let all = try cases("i_")
        #expect(all.count == 35)
        let accepted = all.filter { (try? JSONValue(parsing: $0.bytes, options: .rfc8259)) != nil }.map(\.name)
        #expect(accepted == [
            "i_number_double_huge_neg_exp.json", "i_number_real_underflow.json", "i_number_too_big_neg_int.json",
            "i_number_too_big_pos_int.json", "i_number_very_big_negative_int.json", "i_structure_500_nested_arrays.json", "i_structure_UTF-8_BOM_empty_object.json",
        ])
        // The strict defaults decide them too, and refuse the 500-deep arrays.
        let strict = all.filter { (try? JSONValue(parsing: $0.bytes)) != nil }.map(\.name)
        #expect(strict == accepted.filter { $0 != "i_structure_500_nested_arrays.json" })
    }
}
