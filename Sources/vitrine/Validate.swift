// `vitrine validate`: a manifest, its media files, and a USB stick's sizes and hashes.

import Foundation
import Vitrine
import VitrineCore

func commandValidate(_ argv: [String]) throws -> Exit {
    let args = try Arguments(argv, valued: [], flags: [])
    if args.wantsHelp { say(validateHelp); return .ok }
    guard args.positional.count == 1 else { throw UsageError(description: "validate needs exactly one MANIFEST") }
    var path = args.positional[0]
    var isDir: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir) else {
        throw InputError(description: "validate: not found: \(path)")
    }
    if isDir.boolValue { path = manifestPath(inCatalog: path) }
    let result = ManifestParser.load(path: path)
    for p in result.problems { say("\(path): \(p.severity == .warning ? "warning: " : "")\(p)") }
    if result.errors.isEmpty, let m = result.manifest {
        say("\(path): valid: \(m.playlist.count) item(s), version \(m.version)")
        return .ok
    }
    say("\(path): invalid: \(result.errors.count) error(s)")
    return .dataError
}
