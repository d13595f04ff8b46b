// The walk over `playlists`, `schedule`, `timezone` and `display.power`, and the checks that an
// entry can play at all: each problem with its JSON path (`schedule[2].playlist`, `timezone`).

extension ManifestValidator {
    /// `playlists`: an object of non-empty item arrays; no name empty or `"default"`.
    mutating func playlists(_ value: JSONValue, at path: String) -> ([String: [PlaylistItem]], [String]) {
        var lists: [String: [PlaylistItem]] = [:], names: [String] = []
        for (name, value) in object(value, at: path) ?? [] {
            let at = JSONPath.member(path, name)
            if name.isEmpty { error(path, "a playlist name must not be empty") }
            if name == Manifest.defaultPlaylistName {
                error(at, "the name \"default\" is reserved: in a schedule entry it means the default \"playlist\"")
            }
            guard let items = array(value, at: at) else { continue }
            if items.isEmpty { error(at, "must contain at least one item") }
            lists[name] = items.indices.map { item(items[$0], at: JSONPath.element(at, $0)) }
            names.append(name)
        }
        return (lists, names)
    }

    /// `timezone`: an IANA name with a TZif file in the zoneinfo folder.
    mutating func timezone(_ value: JSONValue, at path: String) -> String? {
        guard let name = string(value, at: path) else { return nil }
        do { _ = try ZoneRules(identifier: name) } catch { self.error(path, error.description); return nil }
        return name
    }

    /// The most entries a schedule may have: each edge is found by checking every entry against
    /// every other's times, so the cost grows with the square of the count.
    static let maxScheduleEntries = 200

    mutating func schedule(_ value: JSONValue, at path: String) -> Schedule? {
        guard let elements = array(value, at: path) else { return nil }
        if elements.count > Self.maxScheduleEntries {
            error(path, "\(elements.count) entries: at most \(Self.maxScheduleEntries) (merge entries that play the same playlist)")
            return nil
        }
        return Schedule(entries: elements.indices.map { entry(elements[$0], at: JSONPath.element(path, $0)) })
    }

    private mutating func entry(_ value: JSONValue, at path: String) -> ScheduleEntry {
        var entry = ScheduleEntry(id: path, playlist: Manifest.defaultPlaylistName)
        guard let members = object(value, at: path) else { return entry }
        for (key, value) in members {
            let at = path + "." + key
            if ruleField(key, value, at: at, into: &entry.rule) { continue }
            switch key {
            case "id": entry.id = nonEmptyString(value, at: at) ?? entry.id
            case "playlist":
                guard let name = string(value, at: at) else { break }
                entry.playlist = name
                if name != Manifest.defaultPlaylistName, let known = playlistNames, !known.contains(name) {
                    let hint = Spelling.suggestion(for: name, among: known.sorted() + [Manifest.defaultPlaylistName])
                    let note = hint.map { " (did you mean \(JSONPath.quoted($0))?)" } ?? (known.isEmpty ? " (the manifest has no playlists)" : "")
                    error(at, "unknown playlist \(JSONPath.quoted(name))" + note)
                }
            case "priority": entry.priority = integer(value, at: at, minimum: nil) ?? 0
            case "switch":
                guard let text = string(value, at: at) else { break }
                if let mode = SwitchMode(rawValue: text) { entry.switchMode = mode } else {
                    error(at, "unknown switch \(JSONPath.quoted(text)) (expected boundary or immediate)")
                }
            default: unknownField(key, at: path)
            }
        }
        require(["playlist"], in: members, at: path)
        return entry
    }

    /// `display.power`: `on` and `off` arrays of time rules.
    mutating func power(_ value: JSONValue, at path: String) -> PowerSchedule? {
        guard let members = object(value, at: path) else { return nil }
        var power = PowerSchedule()
        for (key, value) in members {
            let at = path + "." + key
            switch key {
            case "on", "off":
                let rules = (array(value, at: at) ?? []).enumerated().map { index, value in
                    let rulePath = JSONPath.element(at, index)
                    var rule = TimeRule()
                    for (field, value) in object(value, at: rulePath) ?? [] where !ruleField(field, value, at: rulePath + "." + field, into: &rule) {
                        unknownField(field, at: rulePath)
                    }
                    if let why = Self.neverHolds(rule) { error(rulePath, "never holds: \(why)") }
                    return rule
                }
                if key == "on" && rules.isEmpty {
                    error(at, "an empty on list keeps the screen off for ever (leave on out for a screen that is on but for the off windows)")
                }
                if key == "off", let always = rules.firstIndex(of: TimeRule()) {
                    error(JSONPath.element(at, always), "a window with no dates, weekdays, days or time keeps the screen off for ever")
                }
                if key == "on" { power.on = rules } else { power.off = rules }
            default: unknownField(key, at: path)
            }
        }
        return power
    }

    /// Reads `dates`, `weekdays`, `days` or `time` into `rule`; false for any other key.
    private mutating func ruleField(_ key: String, _ value: JSONValue, at path: String, into rule: inout TimeRule) -> Bool {
        switch key {
        case "dates": rule.dates = dates(value, at: path)
        case "weekdays":
            guard let names = array(value, at: path) else { break }
            if names.isEmpty { error(path, "must contain at least one weekday (leave it out for every day)") }
            var set = Set<Weekday>()
            for (index, value) in names.enumerated() {
                let at = JSONPath.element(path, index)
                guard let name = string(value, at: at) else { continue }
                guard let day = Weekday(name: name) else {
                    error(at, "unknown weekday \(JSONPath.quoted(name)) (expected mon, tue, wed, thu, fri, sat or sun)")
                    continue
                }
                if !set.insert(day).inserted { error(at, "\(JSONPath.quoted(name)) is repeated") }
            }
            rule.weekdays = set
        case "days":
            guard let numbers = array(value, at: path) else { break }
            if numbers.isEmpty { error(path, "must contain at least one day of the month (leave it out for every day)") }
            var set = Set<Int>()
            for (index, value) in numbers.enumerated() {
                let at = JSONPath.element(path, index)
                guard let day = integer(value, at: at, minimum: 1) else { continue }
                if day > 31 { error(at, "must be a day of the month, 1 to 31 (found \(day))"); continue }
                if !set.insert(day).inserted { error(at, "\(day) is repeated") }
            }
            rule.days = set
        case "time": rule.window = window(value, at: path)
        default: return false
        }
        return true
    }

    /// `dates`: `{from, to}`, each `YYYY-MM-DD` and optional, `to` not before `from`.
    private mutating func dates(_ value: JSONValue, at path: String) -> DateRange? {
        guard let members = object(value, at: path) else { return nil }
        var range = DateRange()
        for (key, value) in members {
            let at = path + "." + key
            guard key == "from" || key == "to" else { unknownField(key, at: path); continue }
            guard let text = string(value, at: at) else { continue }
            guard let date = LocalDate(parsing: text) else {
                error(at, "invalid date \(JSONPath.quoted(text)) (expected YYYY-MM-DD, a date that exists)")
                continue
            }
            if key == "from" { range.from = date } else { range.to = date }
        }
        if let from = range.from, let to = range.to, to < from {
            error(path, "empty date range: to \(to) is before from \(from)")
        }
        return range
    }

    /// `time`: `{from, to}`, both required; `from` 00:00…23:59:59, `to` 00:00…24:00.
    private mutating func window(_ value: JSONValue, at path: String) -> DailyWindow? {
        guard let members = object(value, at: path) else { return nil }
        var from: TimeOfDay?, to: TimeOfDay?
        for (key, value) in members {
            let at = path + "." + key
            guard key == "from" || key == "to" else { unknownField(key, at: path); continue }
            guard let text = string(value, at: at) else { continue }
            guard let time = TimeOfDay(parsing: text), key == "to" || time.seconds < 86400 else {
                error(at, "invalid time \(JSONPath.quoted(text)) (expected HH:MM or HH:MM:SS, 00:00 to 23:59:59"
                      + (key == "to" ? ", or 24:00)" : ")"))
                continue
            }
            if key == "from" { from = time } else { to = time }
        }
        require(["from", "to"], in: members, at: path)
        guard let from, let to else { return nil }
        return DailyWindow(from: from, to: to)
    }

    // MARK: Entries that cannot play

    /// The days searched for a rule: its date range, at most 28 years of it (the cycle of weekdays
    /// and days of the month), or, open-ended, 28 years from its one bound or from 2000-01-01.
    static func searchDays(_ rule: TimeRule) -> ClosedRange<LocalDate> {
        let cycle = 28 * 366
        switch (rule.dates?.from, rule.dates?.to) {
        case let (from?, to?): return from...min(to, from.adding(days: cycle))
        case let (from?, nil): return from...from.adding(days: cycle)
        case let (nil, to?): return to.adding(days: -cycle)...to
        default:
            let start = LocalDate(year: 2000, month: 1, day: 1)!
            return start...start.adding(days: cycle)
        }
    }

    /// Why `rule` holds on no day (its constraints named), or nil when it holds on some day.
    static func neverHolds(_ rule: TimeRule) -> String? {
        if let range = rule.dates, let from = range.from, let to = range.to, to < from { return nil }  // reported as empty
        if rule.weekdays?.isEmpty == true || rule.days?.isEmpty == true { return nil }  // reported as empty
        let days = searchDays(rule)
        // Any day holds without weekdays and days; any 7 days hold every weekday, any 62 every day of the month.
        let length = days.upperBound.daysSinceEpoch - days.lowerBound.daysSinceEpoch + 1
        if rule.days == nil && (rule.weekdays == nil || length >= 7) || rule.weekdays == nil && length >= 62 { return nil }
        var day = days.lowerBound
        while day <= days.upperBound {
            if rule.holds(on: day) { return nil }
            day = day.adding(days: 1)
        }
        var parts: [String] = []
        if let range = rule.dates { parts.append("dates \(range.from?.description ?? "…") to \(range.to?.description ?? "…")") }
        if let weekdays = rule.weekdays { parts.append("weekdays " + weekdays.sorted { $0.rawValue < $1.rawValue }.map(\.name).joined(separator: ", ")) }
        if let numbers = rule.days { parts.append("days " + numbers.sorted().map(String.init).joined(separator: ", ")) }
        return "no day matches " + parts.joined(separator: " and ")
    }

    /// The most entries the always-outranked check looks at (it compares every pair, day by day);
    /// a longer schedule is only checked for entries that can never play.
    static let maximumShadowCheck = 64

    /// Entries that never hold (errors) and entries always outranked (warnings): on every day an
    /// entry's window starts, within its search days, entries of strictly higher priority (whose
    /// date ranges hold all of its own) hold over the whole window, in local time. Entries with an
    /// error of their own are left out, as outranked and as outranking.
    mutating func checkReachable(_ schedule: Schedule, path: String) {
        let entries = schedule.entries
        var wrong = Set<Int>()
        let prefix = path + "["
        for problem in problems where problem.severity == .error && problem.path.hasPrefix(prefix) {
            if let index = Int(problem.path.dropFirst(prefix.count).prefix { $0 != "]" }) { wrong.insert(index) }
        }
        var playable: [Int] = []
        for index in entries.indices where !wrong.contains(index) {
            if let why = Self.neverHolds(entries[index].rule) {
                error(JSONPath.element(path, index), "can never play: \(why)")
            } else {
                playable.append(index)
            }
        }
        guard playable.count <= Self.maximumShadowCheck else { return }
        var table = HoldsTable(rules: playable.map { entries[$0].rule })
        for (slot, index) in playable.enumerated() {
            let entry = entries[index]
            var higher: UInt64 = 0
            for (other, otherIndex) in playable.enumerated() {
                let rule = entries[otherIndex].rule
                if entries[otherIndex].priority > entry.priority
                    && (rule.dates?.from).map({ from in entry.rule.dates?.from.map { from <= $0 } ?? false }) ?? true
                    && (rule.dates?.to).map({ to in entry.rule.dates?.to.map { $0 <= to } ?? false }) ?? true {
                    higher |= 1 << UInt64(other)
                }
            }
            guard higher != 0, let by = table.shadowers(of: slot, among: higher, days: Self.searchDays(entry.rule)), by != 0 else { continue }
            let names = playable.indices.filter { by & (1 << UInt64($0)) != 0 }
                .map { "\(JSONPath.element(path, playable[$0])) (priority \(entries[playable[$0]].priority))" }
            warning(JSONPath.element(path, index), "never plays: whenever it is eligible, \(names.joined(separator: " or ")) plays instead")
        }
    }
}

/// Which of up to 64 rules hold on each day, worked out once a day, for the always-outranked check.
private struct HoldsTable {
    let rules: [TimeRule]
    private var masks: [Int64: UInt64] = [:]
    /// Results by (the rule's slot, the masks of the day before, the day and the day after, the rules that may cover).
    private var covered: [[UInt64]: UInt64?] = [:]

    init(rules: [TimeRule]) { self.rules = rules }

    /// Bit `i` set when `rules[i]` holds on the day `day` days after 1970-01-01.
    mutating func mask(_ day: Int64) -> UInt64 {
        if let mask = masks[day] { return mask }
        let date = LocalDate(daysSinceEpoch: day)
        var mask: UInt64 = 0
        for (i, rule) in rules.enumerated() where rule.holds(on: date) { mask |= 1 << UInt64(i) }
        masks[day] = mask
        return mask
    }

    /// The rules among `candidates` (a mask) that cover `rules[slot]` on every day of `days` it
    /// holds, as a mask; nil when some moment of it is left uncovered. In local seconds.
    mutating func shadowers(of slot: Int, among candidates: UInt64, days: ClosedRange<LocalDate>) -> UInt64? {
        var used: UInt64 = 0
        for day in days.lowerBound.daysSinceEpoch...days.upperBound.daysSinceEpoch where mask(day) & (1 << UInt64(slot)) != 0 {
            let key = [UInt64(slot), candidates, mask(day - 1) & candidates, mask(day) & candidates, mask(day + 1) & candidates]
            let result: UInt64?
            if let known = covered[key] { result = known } else {
                result = cover(slot, key[2], key[3], key[4])
                covered[key] = result
            }
            guard let result else { return nil }
            used |= result
        }
        return used
    }

    /// Whether the rules of the masks of the day before, the day and the day after cover `rules[slot]`'s
    /// window of the day (seconds 0…86400 being the day): the rules used, or nil.
    private func cover(_ slot: Int, _ before: UInt64, _ same: UInt64, _ after: UInt64) -> UInt64? {
        let own = rules[slot].localRange
        var covers: [(range: Range<Int>, rule: Int)] = []
        for (shift, mask) in [(-86400, before), (0, same), (86400, after)] {
            for i in rules.indices where mask & (1 << UInt64(i)) != 0 {
                let r = rules[i].localRange
                covers.append(((shift + r.lowerBound)..<(shift + r.upperBound), i))
            }
        }
        var reached = own.lowerBound, used: UInt64 = 0
        for cover in covers.sorted(by: { $0.range.lowerBound < $1.range.lowerBound }) where reached < own.upperBound {
            guard cover.range.lowerBound <= reached else { return nil }
            guard cover.range.upperBound > reached else { continue }
            reached = cover.range.upperBound
            used |= 1 << UInt64(cover.rule)
        }
        return reached >= own.upperBound ? used : nil
    }
}
