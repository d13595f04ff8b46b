// Spelling suggestions: "did you mean --catalog?" for an unknown command-line option.

/// Edit distances between names, and the known name a mistyped one most likely meant.
public enum Spelling {
    /// The optimal-string-alignment distance between `a` and `b`, in Unicode scalars: the fewest
    /// insertions, deletions, substitutions and swaps of two neighbours that turn one into the other
    /// (Damerau–Levenshtein without repeated edits of one substring). `catalg` → `catalog` is 1,
    /// `ctaalog` → `catalog` is 1, `library` → `catalog` is 7.
    public static func distance(_ a: String, _ b: String) -> Int {
        let s = Array(a.unicodeScalars), t = Array(b.unicodeScalars)
        if s.isEmpty { return t.count }
        if t.isEmpty { return s.count }
        // Three rows of the table: two back (for swaps), the last one, and the one being filled.
        var before = [Int](repeating: 0, count: t.count + 1)
        var last = Array(0...t.count)
        var row = [Int](repeating: 0, count: t.count + 1)
        for i in 1...s.count {
            row[0] = i
            for j in 1...t.count {
                let cost = s[i - 1] == t[j - 1] ? 0 : 1
                row[j] = min(last[j] + 1, row[j - 1] + 1, last[j - 1] + cost)
                if i > 1, j > 1, s[i - 1] == t[j - 2], s[i - 2] == t[j - 1] {
                    row[j] = min(row[j], before[j - 2] + 1)
                }
            }
            (before, last, row) = (last, row, before)
        }
        return last[t.count]
    }

    /// The candidate `name` most likely stands for, or nil when none is close.
    ///
    /// Close means: a distance of at most 1 for names up to 4 characters, at most 2 up to 8, else
    /// at most a third of the name's length; or `name` is the start of exactly one candidate
    /// (`--snap` → `snapshot-at` only when no other candidate starts with `snap`). The nearest wins;
    /// a tie goes to the candidate listed first.
    public static func suggestion(for name: String, among candidates: [String]) -> String? {
        guard !name.isEmpty else { return nil }
        let count = name.unicodeScalars.count
        let limit = count <= 4 ? 1 : count <= 8 ? 2 : count / 3
        var best: (name: String, distance: Int)?
        for candidate in candidates {
            let d = distance(name, candidate)
            if d <= limit, d < (best?.distance ?? .max) { best = (candidate, d) }
        }
        if let best { return best.name }
        let prefixed = candidates.filter { $0.hasPrefix(name) }
        return prefixed.count == 1 ? prefixed[0] : nil
    }
}
