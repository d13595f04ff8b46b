import Foundation
import FuzzSupport
import VitrineCore

/// The fuzz target for the manifest reader: the input bytes are one `manifest.json`.
///
/// `ManifestParser.parse` reads and validates them with a catalog folder whose file lookups are
/// answered from the path's bytes (regular, empty, missing or not a regular file), so every `src`
/// branch runs without touching the disk. Then the stick rules (`StickManifest.files`) run on the
/// draft, as an import does. Checked on every input: the manifest is returned exactly when no problem
/// is an error, a returned manifest is its own draft, and every problem has a reason.
enum ManifestFuzzTarget {
    static func status(_ path: String) -> MediaFileStatus {
        switch path.utf8.reduce(0, { $0 &+ Int($1) }) % 8 {
        case 0: return .missing
        case 1: return .empty
        case 2: return .notRegularFile
        default: return .regularFile
        }
    }

    static func run(_ bytes: [UInt8]) {
        let result = ManifestParser.parse(bytes, catalogDirectory: "/catalog", fileStatus: status)
        let hasError = result.problems.contains { $0.severity == .error }
        if (result.manifest == nil) != hasError {
            fatalError("manifest \(result.manifest == nil ? "missing" : "returned") with problems \(result.problems)")
        }
        if let m = result.manifest, result.draft != m { fatalError("a valid manifest differs from its draft") }
        for p in result.problems where p.reason.isEmpty { fatalError("a problem at \(p.path) has no reason") }
        if let draft = result.draft {
            let (files, problems) = StickManifest.files(of: draft)
            _ = (files.count, problems.map(\.description))
        }
    }
}

@main
enum ManifestFuzzMain {
    static func main() { FuzzInput.main(name: "fuzz-manifest", ManifestFuzzTarget.run) }
}
