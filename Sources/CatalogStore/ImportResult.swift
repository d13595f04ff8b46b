// How an import ended: switched, refused (the stick is wrong) or failed (the import could not finish).
import VitrineCore

/// The outcome of `CatalogLibrary.importStick`, with a message for people and the numbers for the log.
public struct ImportResult: Sendable {
    public enum Outcome: String, Sendable, Equatable {
        /// The new catalog is `current`.
        case switched
        /// The stick's content was refused; `current` is untouched. Exit code 65.
        case refused
        /// The import could not finish (disk full, read or write error, stick pulled, busy); `current`
        /// is untouched. Exit code 1.
        case failed
    }

    public var outcome: Outcome
    /// For people: `Updated to version 42: 12 items`, or the refusal or failure with its first reason.
    public var message: String
    /// Every reason for a refusal, or the one reason for a failure; empty when switched.
    public var problems: [ImportProblem]
    /// Things that did not stop the import (a signature present but no trusted key configured…).
    public var notes: [String]
    /// The stick manifest's `version` and playlist length, when the manifest could be read.
    public var version: Int?
    public var items: Int?
    /// Files and bytes copied (and hashed).
    public var files: Int
    public var bytes: Int64
    /// Wall-clock seconds the import took.
    public var seconds: Double
    /// The new current catalog, when switched.
    public var catalog: LibraryCatalog?
    /// When the player should move to it (`import.switch`).
    public var switchMode: ImportSettings.SwitchMode

    /// sysexits: 0 switched, 65 (`EX_DATAERR`) refused, 1 failed.
    public var exitCode: Int32 {
        switch outcome {
        case .switched: return 0
        case .refused: return 65
        case .failed: return 1
        }
    }

    public init(outcome: Outcome, message: String, problems: [ImportProblem], notes: [String], version: Int?, items: Int?,
                files: Int, bytes: Int64, seconds: Double, catalog: LibraryCatalog?, switchMode: ImportSettings.SwitchMode) {
        self.outcome = outcome; self.message = message; self.problems = problems; self.notes = notes
        self.version = version; self.items = items; self.files = files; self.bytes = bytes; self.seconds = seconds
        self.catalog = catalog; self.switchMode = switchMode
    }

    static func itemsText(_ count: Int) -> String { count == 1 ? "1 item" : "\(count) items" }

    /// The message of an import that ended with `outcome`: `Updated to version 42: 12 items`;
    /// `USB stick refused: <first problem> (and 2 more)` (or `Catalog from <url> refused: …`);
    /// `Import failed: <problem>; the playing catalog is unchanged`.
    public static func message(for outcome: Outcome, problems: [ImportProblem], version: Int?, items: Int?,
                               origin: ImportOrigin = .stick) -> String {
        switch outcome {
        case .switched:
            return "Updated to version \(version ?? 0): \(itemsText(items ?? 0))"
        case .refused:
            let more = problems.count > 1 ? " (and \(problems.count - 1) more)" : ""
            return "\(origin.refusalSubject) refused: \(problems.first.map(\.description) ?? "invalid")\(more)"
        case .failed:
            return "Import failed: \(problems.first.map(\.description) ?? "error"); the playing catalog is unchanged"
        }
    }
}
