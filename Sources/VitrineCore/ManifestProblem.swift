// What `ManifestParser` found: the problems, each tied to a JSON path, and the manifest when none is an error.

/// One thing wrong (or suspicious) in a manifest, located by a JSON path.
public struct ManifestProblem: Sendable, Equatable, CustomStringConvertible {
    public enum Severity: String, Sendable, Equatable {
        /// The manifest is rejected.
        case error
        /// Worth telling the author; the manifest is still accepted.
        case warning
    }

    /// Where, in the manifest's own terms: `playlist[2].src`, `display.rotation`,
    /// `playlist[0].cuePoints[1].action.item`; `""` for the file or document as a whole.
    public var path: String
    /// What is wrong, e.g. `required for images`, `unknown field "srcc"`.
    public var reason: String
    public var severity: Severity

    public init(path: String, reason: String, severity: Severity = .error) {
        self.path = path; self.reason = reason; self.severity = severity
    }

    /// `"path: reason"`, or just the reason when the path is empty.
    public var description: String { path.isEmpty ? reason : "\(path): \(reason)" }
}

/// The outcome of parsing and validating one manifest.
public struct ManifestResult: Sendable, Equatable {
    /// The manifest, or nil when any problem is an error.
    public var manifest: Manifest?
    /// Every problem found, errors and warnings, in document order within each object.
    public var problems: [ManifestProblem]
    /// The manifest as far as it could be read, also when some problems are errors (fields in error
    /// keep their defaults); nil when the text is not JSON. For reporting more problems in one pass
    /// (the stick rules), never for playing.
    public var draft: Manifest?

    public init(manifest: Manifest?, problems: [ManifestProblem], draft: Manifest? = nil) {
        self.manifest = manifest; self.problems = problems; self.draft = draft ?? manifest
    }

    public var errors: [ManifestProblem] { problems.filter { $0.severity == .error } }
    public var warnings: [ManifestProblem] { problems.filter { $0.severity == .warning } }
}
