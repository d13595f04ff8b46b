// `vitrine chrony-config`: chronyd's sources (and, for a box that serves its LAN, `allow` and
// `local stratum`) from the config's `clock`, written before chrony.service starts.

import Foundation
import Vitrine
import FileIO

func commandChronyConfig(_ argv: [String]) throws -> Exit {
    let args = try Arguments(argv, valued: ["config", "out"], flags: [])
    if args.wantsHelp { say(chronyConfigHelp); return .ok }
    guard args.positional.isEmpty else { throw UsageError(description: "unexpected argument \(args.positional[0])") }
    let path = args.options["config"] ?? (FileManager.default.fileExists(atPath: PlayerConfig.defaultPath) ? PlayerConfig.defaultPath : nil)
    var clock: ClockConfig?
    var problem: String?
    if let path {
        if let data = FileManager.default.contents(atPath: path) {
            do { clock = try PlayerConfig(json: [UInt8](data)).clock } catch { problem = "config \(path):\n\(error)" }
        } else if args.options["config"] != nil || args.options["out"] == nil {
            throw InputError(description: "chrony-config: cannot read config \(path)")
        } else {
            problem = "cannot read config \(path)"
        }
    }
    var text = ClockConfig.chronyFragment(for: clock, source: path ?? "the defaults (no config file)")
    if let problem {
        StandardStreams.err("vitrine chrony-config: \(problem)\n")
        guard args.options["out"] != nil else { return .dataError }
        // The box keeps a clock: Debian's pool, as with no `clock` key, until the config is fixed.
        text = "# The config could not be read (vitrine chrony-config printed why): Debian's default source.\n"
            + ClockConfig.chronyFragment(for: nil, source: path ?? "?")
    }
    guard let out = args.options["out"] else {
        StandardStreams.out(text)
        return .ok
    }
    do {
        try FileSystem.writeAtomically(Array(text.utf8), to: out, permissions: 0o644)
    } catch {
        StandardStreams.err("vitrine chrony-config: \(out): \(error)\n")
        return .failure
    }
    return problem == nil ? .ok : .dataError
}
