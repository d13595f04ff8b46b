// What a catalog's schedule and display power do over a period, one line per change
// (`vitrine schedule`), and the instants its options and `vitrine run --clock` take.

/// The text of `vitrine schedule`: the state at the start of a period, then every change in it.
public enum SchedulePreview {
    /// The longest period one preview lists, in seconds: 366 days (a year's edges; longer ones would
    /// take seconds for a large schedule).
    public static let longestPeriod: Int64 = 366 * 86400

    /// The lines, in order: a header (zone, period), the playlist at `from` (and the display state
    /// when `display.power` is given), then each edge in `(from, to]`, playlist changes before power
    /// changes at one instant. Instants are seconds since 1970 UTC. A line reads
    /// `Mon 2026-12-07 11:00:00 CET  (10:00:00Z)  lunch            entry lunch (schedule[1]), priority 0, boundary`:
    /// local time and abbreviation, UTC time, the playlist (`a + b (taking turns)` for a tie), the
    /// entries, their priority and how the change is made (`Schedule.switchMode(from:to:)`); or
    /// `… display off` / `… display on`.
    public static func lines(manifest: Manifest, zone: ZoneRules, from: Int64, to: Int64) -> [String] {
        var out = ["zone \(zone.identifier), from \(localStamp(from, zone: zone)) to \(localStamp(to, zone: zone))"]
        let schedule = manifest.schedule ?? Schedule(entries: [])
        if manifest.schedule == nil { out.append("no schedule: the default playlist plays at all times") }
        var events: [(utc: Int64, order: Int, text: String)] = []
        var previous = schedule.selection(atUTC: from, zone: zone)
        events.append((from, 0, describe(previous, after: [], schedule: schedule)))
        for edge in schedule.edges(fromUTC: from, toUTC: to, zone: zone) {
            events.append((edge.utc, 0, describe(edge.selection, after: previous, schedule: schedule)))
            previous = edge.selection
        }
        if let power = manifest.display.power {
            events.append((from, 1, power.isOn(atUTC: from, zone: zone) ? "display on" : "display off"))
            for edge in power.edges(fromUTC: from, toUTC: to, zone: zone) {
                events.append((edge.utc, 1, edge.isOn ? "display on" : "display off"))
            }
        }
        events.sort { ($0.utc, $0.order) < ($1.utc, $1.order) }
        out += events.map { "\(stamp($0.utc, zone: zone))  \($0.text)" }
        return out
    }

    /// `lunch            entry lunch (schedule[1]), priority 0, boundary`.
    static func describe(_ selection: [Int], after previous: [Int], schedule: Schedule) -> String {
        let mode = schedule.switchMode(from: previous, to: selection).rawValue
        guard !selection.isEmpty else { return pad(Manifest.defaultPlaylistName) + "no entry eligible, \(mode)" }
        let entries = selection.map { schedule.entries[$0] }
        var names: [String] = []
        for entry in entries where !names.contains(entry.playlist) { names.append(entry.playlist) }
        let playlist = names.count == 1 ? names[0] : names.joined(separator: " + ") + " (taking turns)"
        let labels = zip(selection, entries).map { index, entry in
            let path = JSONPath.element("schedule", index)
            return "\(entry.id == path ? entry.playlist : entry.id) (\(path))"
        }
        return pad(playlist) + (entries.count == 1 ? "entry " : "entries ") + labels.joined(separator: " + ")
            + ", priority \(entries[0].priority), \(mode)"
    }

    /// The name padded to 16 characters, then a space.
    private static func pad(_ text: String) -> String {
        text + String(repeating: " ", count: max(1, 17 - text.count))
    }

    /// `Mon 2026-12-07 11:00:00 CET  (10:00:00Z)`; the UTC time carries its weekday when its date is
    /// not the local one: `Mon 2026-12-07 00:00:00 CET  (Sun 23:00:00Z)`.
    public static func stamp(_ utc: Int64, zone: ZoneRules) -> String {
        let inUTC = LocalDateTime(localSeconds: utc)
        let day = inUTC.date == zone.local(atUTC: utc).date ? "" : inUTC.date.weekday.shortName + " "
        return "\(localStamp(utc, zone: zone))  (\(day)\(inUTC.time.withSeconds)Z)"
    }

    /// `Mon 2026-12-07 11:00:00 CET`.
    public static func localStamp(_ utc: Int64, zone: ZoneRules) -> String {
        let local = zone.local(atUTC: utc)
        return "\(local.date.weekday.shortName) \(local) \(zone.offset(atUTC: utc).abbreviation)"
    }
}

/// An instant from ISO 8601 text, in seconds since 1970 UTC: `2026-12-07T10:59:50Z` (UTC),
/// `2026-12-07T11:59:50+01:00` (an offset, `±HH:MM` or `±HHMM`), `2026-12-07T10:59` or
/// `2026-12-07T10:59:50` (local time in `zone`, by `ZoneRules.instant(for:)`), or `2026-12-07`
/// (that day's 00:00 in `zone`). A space may stand for the `T`. Nil for anything else.
public func parseInstant(_ text: String, zone: ZoneRules) -> Int64? {
    let u = Array(text.utf8)
    guard u.count >= 10, let date = LocalDate(parsing: String(decoding: u[0..<10], as: UTF8.self)) else { return nil }
    if u.count == 10 { return zone.instant(for: LocalDateTime(date: date, time: .midnight)) }
    guard u[10] == UInt8(ascii: "T") || u[10] == UInt8(ascii: " ") else { return nil }
    var rest = Array(u[11...])
    var offset: Int?
    if rest.last == UInt8(ascii: "Z") {
        offset = 0
        rest.removeLast()
    } else if let sign = rest.lastIndex(where: { $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-") }) {
        var digits = Array(rest[(sign + 1)...])
        if digits.count == 5, digits[2] == UInt8(ascii: ":") { digits.remove(at: 2) }
        guard digits.count == 4, digits.allSatisfy({ (48...57).contains($0) }) else { return nil }
        let h = Int(digits[0] - 48) * 10 + Int(digits[1] - 48), m = Int(digits[2] - 48) * 10 + Int(digits[3] - 48)
        guard h <= 23, m <= 59 else { return nil }
        offset = (rest[sign] == UInt8(ascii: "-") ? -1 : 1) * (h * 3600 + m * 60)
        rest.removeSubrange(sign...)
    }
    guard let time = TimeOfDay(parsing: String(decoding: rest, as: UTF8.self)), time.seconds < 86400 else { return nil }
    let local = LocalDateTime(date: date, time: time)
    guard let offset else { return zone.instant(for: local) }
    return local.localSeconds - Int64(offset)
}
