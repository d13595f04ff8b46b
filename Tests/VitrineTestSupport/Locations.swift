// Where the tests find what the repository does not hold: the executables `swift build` made (the
// `vitrine` binary among them) and the real media corpus.

import Foundation
import Testing

/// The folder where `swift build` puts the package's executables, beside the test bundle
/// (`.build/debug/`): `vitrine`, `runloop-probe`, `fuzz-media`…
public enum BuildProducts {
    public static let folder: String = {
        var dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        if dir.path.hasSuffix(".xctest/Contents/MacOS") {
            dir = dir.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        }
        return dir.path
    }()

    /// The full path of the executable product `name`.
    public static func path(_ name: String) -> String { folder + "/" + name }

    /// Whether `name` is built (for `.enabled(if: BuildProducts.available(n), BuildProducts.absent(n))`).
    public static func available(_ name: String) -> Bool { FileManager.default.isExecutableFile(atPath: path(name)) }
    /// Why tests that need `name` are skipped.
    public static func absent(_ name: String) -> Comment { "no \(name) at \(path(name)): run swift build" }
}

/// The `vitrine` executable that `swift build` puts beside the test bundle (`.build/debug/vitrine`),
/// or `VITRINE_BINARY`.
public enum VitrineBinary {
    public static let path: String = {
        if let p = ProcessInfo.processInfo.environment["VITRINE_BINARY"], !p.isEmpty { return p }
        return BuildProducts.path("vitrine")
    }()

    /// Whether the binary is there (for `.enabled(if: VitrineBinary.available, VitrineBinary.absent)`).
    public static var available: Bool { FileManager.default.isExecutableFile(atPath: path) }
    /// Why tests that need the binary are skipped.
    public static var absent: Comment { "no vitrine binary at \(path): run swift build" }

    /// Runs `vitrine arguments…` to its end, both streams captured.
    public static func run(_ arguments: [String], input: Data? = nil, environment: [String: String] = [:]) throws -> SubprocessResult {
        try Subprocess.run(path, arguments, input: input, environment: environment)
    }

    /// Starts `vitrine arguments…` (a player that runs until stopped).
    public static func start(_ arguments: [String], environment: [String: String] = [:],
                             standardOutput: SubprocessOutput = .capture,
                             standardError: SubprocessOutput = .capture) throws -> RunningProcess {
        try Subprocess.start(path, arguments, environment: environment, standardOutput: standardOutput,
                             standardError: standardError)
    }
}

/// The real media corpus (`shared/media/real/` beside the repository or above it, as in a worktree),
/// or `VITRINE_REAL_MEDIA`.
public enum RealMedia {
    public static let folder: String = {
        if let p = ProcessInfo.processInfo.environment["VITRINE_REAL_MEDIA"], !p.isEmpty { return p }
        var dir = Repository.root.deletingLastPathComponent()
        while dir.path != "/" {
            let candidate = dir.appendingPathComponent("shared/media/real")
            if FileManager.default.fileExists(atPath: candidate.path) { return candidate.path }
            dir = dir.deletingLastPathComponent()
        }
        return Repository.root.deletingLastPathComponent().appendingPathComponent("shared/media/real").path
    }()

    /// The full path of one file of the corpus.
    public static func path(_ name: String) -> String { folder + "/" + name }

    /// Whether the corpus is there: the files the tests use most.
    public static var available: Bool {
        ["bigbuckbunny.mp4", "bikes.mp4"].allSatisfy { FileManager.default.fileExists(atPath: path($0)) }
    }
    /// Why tests that need it are skipped.
    public static var absent: Comment { "real media folder absent at \(folder) (set VITRINE_REAL_MEDIA)" }
}

/// The repository checkout the tests were built from.
public enum Repository {
    public static let root: URL = {
        // Tests/VitrineTestSupport/Locations.swift → the checkout.
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }()

    /// A path inside the checkout.
    public static func path(_ relative: String) -> String { root.appendingPathComponent(relative).path }
}
