import Testing
import VitrineCore

@Suite("Spelling suggestions")
struct SpellingTests {
    @Test("edit distance: insertions, deletions, substitutions and neighbour swaps cost 1 each",
          arguments: [("catalog", "catalog", 0), ("catalg", "catalog", 1), ("catalogg", "catalog", 1), ("cataloq", "catalog", 1),
                      ("ctaalog", "catalog", 1), ("", "abc", 3), ("abc", "", 3), ("library", "catalog", 7),
                      ("snapshot-dir", "snapshot-at", 3), ("ca", "abc", 3), ("Grüße", "Grusse", 3)])
    func distance(a: String, b: String, expected: Int) {
        #expect(Spelling.distance(a, b) == expected)
        #expect(Spelling.distance(b, a) == expected, "symmetric")
    }

    static let runOptions = ["catalog", "library", "media-root", "events", "output", "record", "snapshot-at", "snapshot-dir",
                             "duration", "realtime", "audio-device", "connector", "card", "config", "verbose", "log-file", "help"]

    @Test("the nearest option is suggested; nothing when no option is close",
          arguments: [("catalg", "catalog"), ("libary", "library"), ("snapshot-a", "snapshot-at"), ("durration", "duration"),
                      ("realtim", "realtime"), ("audio-devcie", "audio-device"), ("hepl", "help"), ("conector", "connector"),
                      ("snapshot", nil), ("frobnicate", nil), ("x", nil), ("media", "media-root"), ("log", "log-file")] as [(String, String?)])
    func suggestion(typed: String, expected: String?) {
        #expect(Spelling.suggestion(for: typed, among: Self.runOptions) == expected)
    }
}
