// `vitrine schedule`: what a catalog's schedule and display power do over a period.

import Foundation
import VitrineCore

func commandSchedule(_ argv: [String]) throws -> Exit {
    let args = try Arguments(argv, valued: ["from", "to", "timezone"], flags: [])
    if args.wantsHelp { say(scheduleHelp); return .ok }
    guard args.positional.count == 1 else { throw UsageError(description: "schedule needs exactly one CATALOG") }
    var path = args.positional[0]
    while path.count > 1, path.hasSuffix("/") { path.removeLast() }
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
        throw InputError(description: "schedule: not found: \(path)")
    }
    let manifestPath = isDirectory.boolValue ? manifestPath(inCatalog: path) : path
    let parsed = ManifestParser.load(path: manifestPath, checkingFiles: false)  // the media does not change the schedule
    guard let manifest = parsed.manifest else {
        for p in parsed.problems { say("\(manifestPath): \(p.severity == .warning ? "warning: " : "")\(p)") }
        say("\(manifestPath): invalid: \(parsed.errors.count) error(s)")
        return .dataError
    }
    let zone: ZoneRules
    if let name = args.options["timezone"] ?? manifest.timezone {
        do { zone = try ZoneRules(identifier: name) } catch {
            throw UsageError(description: "--timezone: \(error)")
        }
    } else {
        zone = ZoneRules.system()
    }
    func instant(_ option: String) throws -> Int64? {
        guard let text = args.options[option] else { return nil }
        guard let t = parseInstant(text, zone: zone) else {
            throw UsageError(description: "--\(option): expected an ISO 8601 time such as 2026-12-07T10:59:50Z, "
                             + "2026-12-07T11:59:50+01:00, 2026-12-07T10:59 or 2026-12-07 (local), found \(text)")
        }
        return t
    }
    let from = try instant("from") ?? Int64(Date().timeIntervalSince1970.rounded(.down))
    let to = try instant("to") ?? from + 7 * 86400
    guard to > from else { throw UsageError(description: "--to must be later than --from") }
    guard to - from <= SchedulePreview.longestPeriod else {
        throw UsageError(description: "--to may be at most 366 days after --from (a year of edges; run it again for the next)")
    }
    for p in parsed.warnings { say("\(manifestPath): warning: \(p)") }
    for line in SchedulePreview.lines(manifest: manifest, zone: zone, from: from, to: to) { say(line) }
    return .ok
}
