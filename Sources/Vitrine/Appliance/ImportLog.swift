// Catalog imports in the event log: one line when an import starts, one when it ends.
import Foundation
import CatalogStore

extension EventLog {
    /// `{"event":"importStarted",…,"source":"/media/usb"}`.
    public func writeImportStarted(source: String) {
        write(event: "importStarted", fields: [("source", Self.quote(source))])
    }

    /// `{"event":"importFinished",…,"result":"switched","version":42,"items":12,"files":12,"bytes":…,
    /// "seconds":…,"message":"Updated to version 42: 12 items","problems":[…]}`.
    public func writeImportFinished(_ result: ImportResult, source: String) {
        write(event: "importFinished", fields: [
            ("source", Self.quote(source)),
            ("result", Self.quote(result.outcome.rawValue)),
            ("version", result.version.map(String.init) ?? "null"),
            ("items", result.items.map(String.init) ?? "null"),
            ("files", String(result.files)),
            ("bytes", String(result.bytes)),
            ("seconds", Self.num(result.seconds)),
            ("message", Self.quote(result.message)),
            ("problems", "[" + result.problems.map { Self.quote($0.description) }.joined(separator: ",") + "]"),
        ])
    }
}
