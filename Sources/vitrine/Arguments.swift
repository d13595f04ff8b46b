// The argument reader shared by every command: long options, `-h`/`--help`, `--`, and a
// "did you mean" for an option no command knows.

import VitrineCore

/// A mistake in the command line (exit 64, EX_USAGE), with the message to print.
struct UsageError: Error, CustomStringConvertible { var description: String }

/// The arguments of one command: kebab-case long options with a value (`--catalog DIR` or
/// `--catalog=DIR`), flags (`--once`), `-h`/`--help` everywhere, and positional arguments. `--`
/// ends the options: what follows is positional even when it starts with "-".
struct Arguments {
    var positional: [String] = []
    var options: [String: String] = [:]
    var flags: Set<String> = []

    /// Whether `-h` or `--help` was given (anywhere).
    var wantsHelp: Bool { flags.contains("help") }

    /// - Throws: `UsageError` for an unknown option (with the nearest known one, if any is close),
    ///   a missing or empty value, an option given twice, a value given to a flag, or a single-dash option other than `-h`.
    init(_ args: [String], valued: Set<String>, flags allowed: Set<String>) throws {
        let allowed = allowed.union(["help"])
        var i = 0
        var optionsEnded = false
        while i < args.count {
            let a = args[i]
            i += 1
            if optionsEnded || a == "-" || !a.hasPrefix("-") { positional.append(a); continue }
            if a == "--" { optionsEnded = true; continue }
            if a == "-h" { flags.insert("help"); continue }
            guard a.hasPrefix("--") else {
                throw UsageError(description: "unknown option \(a)" + Self.hint(String(a.dropFirst()), valued.union(allowed))
                                 + "; a file whose name starts with \"-\" goes after --, or as ./\(a)")
            }
            var name = String(a.dropFirst(2))
            var value: String? = nil
            if let eq = name.firstIndex(of: "=") { value = String(name[name.index(after: eq)...]); name = String(name[..<eq]) }
            if valued.contains(name) {
                if value == nil {
                    guard i < args.count else { throw UsageError(description: "--\(name) needs a value") }
                    value = args[i]
                    i += 1
                }
                if value?.isEmpty ?? true { throw UsageError(description: "--\(name) needs a value") }
                if options[name] != nil { throw UsageError(description: "--\(name) is given twice") }
                options[name] = value
            } else if allowed.contains(name) {
                if value != nil { throw UsageError(description: "--\(name) takes no value") }
                flags.insert(name)
            } else {
                throw UsageError(description: "unknown option --\(name)" + Self.hint(name, valued.union(allowed)))
            }
        }
    }

    /// ` (did you mean --catalog?)`, or "" when no known option is close to `name`.
    static func hint(_ name: String, _ known: Set<String>) -> String {
        Spelling.suggestion(for: name, among: known.sorted()).map { " (did you mean --\($0)?)" } ?? ""
    }

    /// The option `name` as seconds (≥ 0, finite); nil when absent.
    func double(_ name: String) throws -> Double? {
        guard let s = options[name] else { return nil }
        guard let d = Double(s), d >= 0, d.isFinite else { throw UsageError(description: "--\(name): expected seconds, got \(s)") }
        return d
    }
}
