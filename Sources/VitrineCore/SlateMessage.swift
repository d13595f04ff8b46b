// What the slate says when nothing can play: a calm line for whoever walks past the screen, and
// the installer's details under it.

/// The text of the built-in slate: one short public `headline`, a `summary` of what is wrong, and
/// the `details` (every problem or failed file, in order; the slate shows the first that fit and
/// "and N more").
public struct SlateMessage: Sendable, Equatable, CustomStringConvertible {
    /// Why nothing plays.
    public enum Reason: String, Sendable, Equatable {
        /// The library has no catalog yet (a new box), or none that is whole.
        case noCatalog
        /// The catalog folder has no `manifest.json` (or `catalog.json`).
        case missingManifest
        /// The manifest has errors.
        case invalidManifest
        /// The manifest is valid, but none of its items could be opened and decoded.
        case nothingPlayable
    }

    public var reason: Reason
    /// The large centred line, for the public: `Coming soon`, `Back soon`.
    public var headline: String
    /// One line for the installer: `The manifest has 3 problems`, with the file it is about.
    public var summary: String
    /// Every problem or failed file, one line each: `playlist[0].duration: required for images`,
    /// `media/a.mp4: cannot open: …`.
    public var details: [String]

    public init(reason: Reason, headline: String, summary: String, details: [String] = []) {
        self.reason = reason; self.headline = headline; self.summary = summary; self.details = details
    }

    /// No catalog in the library; `skipped` says why `current` and `previous` were passed over, if they exist.
    public static func noCatalog(library: String, skipped: [String] = []) -> SlateMessage {
        SlateMessage(reason: .noCatalog, headline: "Coming soon",
                     summary: "No catalog to play in \(library) yet: insert a USB stick with vitrine/manifest.json",
                     details: skipped)
    }

    /// No manifest at `path`.
    public static func missingManifest(_ path: String) -> SlateMessage {
        SlateMessage(reason: .missingManifest, headline: "Back soon", summary: "No manifest: \(path) does not exist")
    }

    /// The manifest at `path` has these problems (`path: reason` each).
    public static func invalidManifest(_ path: String, problems: [String]) -> SlateMessage {
        SlateMessage(reason: .invalidManifest, headline: "Back soon",
                     summary: "The manifest has \(count(problems.count, "problem")): \(path)", details: problems)
    }

    /// Every item failed; `failures` are `file: reason` lines, one per item tried.
    public static func nothingPlayable(_ failures: [String]) -> SlateMessage {
        SlateMessage(reason: .nothingPlayable, headline: "Back soon",
                     summary: failures.count == 1 ? "The catalog's only file cannot play"
                        : "None of the catalog's \(failures.count) files can play",
                     details: failures)
    }

    /// The detail lines to draw when at most `maxLines` fit: all of them, or the first `maxLines − 1`
    /// and `and N more`.
    public func detailLines(fitting maxLines: Int) -> [String] {
        guard details.count > maxLines else { return details }
        guard maxLines > 0 else { return [] }
        let shown = maxLines - 1
        return Array(details.prefix(shown)) + ["and \(details.count - shown) more"]
    }

    /// Everything, one item a line (for logs and tests).
    public var description: String { ([headline, summary] + details).joined(separator: "\n") }

    /// `1 problem`, `3 problems`.
    static func count(_ n: Int, _ noun: String) -> String { n == 1 ? "1 \(noun)" : "\(n) \(noun)s" }
}
