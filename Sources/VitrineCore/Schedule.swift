// The manifest's `schedule` and `display.power`: which named playlist plays when, and when the
// screen is on, in local wall time of an IANA zone (`ZoneRules`). Format: config/manifest.schema.json.

/// `time`: a daily window `[from, to)` in local wall time. `to` ≤ `from` runs overnight into the
/// next day; `from` = `to` is a whole day (24 hours from `from`; `00:00`–`00:00` is the calendar day).
public struct DailyWindow: Sendable, Equatable {
    /// 00:00…23:59:59.
    public var from: TimeOfDay
    /// 00:00…24:00.
    public var to: TimeOfDay
    public init(from: TimeOfDay, to: TimeOfDay) { self.from = from; self.to = to }

    /// `to` ≤ `from` (a whole-day window counts too, unless it is `00:00`–`24:00`): the window ends the next day.
    public var isOvernight: Bool { to <= from }
    /// `from` = `to`, or `00:00`–`24:00`: 24 hours.
    public var isWholeDay: Bool { from == to || (from.seconds == 0 && to.seconds == 86400) }

    /// The window on a day, in seconds from that day's 00:00 local time: `[from, to)`, with `to`
    /// past 86400 when overnight.
    var localRange: Range<Int> {
        isOvernight ? from.seconds..<(86400 + to.seconds) : from.seconds..<to.seconds
    }
}

/// `dates`: an inclusive range of local dates; an absent bound is open.
public struct DateRange: Sendable, Equatable {
    public var from: LocalDate?
    public var to: LocalDate?
    public init(from: LocalDate? = nil, to: LocalDate? = nil) { self.from = from; self.to = to }
    public func contains(_ date: LocalDate) -> Bool { (from.map { $0 <= date } ?? true) && (to.map { date <= $0 } ?? true) }
}

/// The constraints of a schedule entry or a power window, ANDed; nil means any.
///
/// `dates`, `weekdays` and `days` are tested against the day a window starts (an overnight window
/// belongs to its start day); without `window` the rule holds from 00:00 to 24:00 of each such day.
/// Local times are turned into instants by `ZoneRules.instant(for:)`: a start in a spring-forward gap
/// begins at the transition, a start repeated on a fall-back day at its first occurrence (so is an
/// end); a window that lies wholly in a gap does not occur that day.
public struct TimeRule: Sendable, Equatable {
    public var dates: DateRange?
    public var weekdays: Set<Weekday>?
    /// Days of the month, 1…31.
    public var days: Set<Int>?
    public var window: DailyWindow?

    public init(dates: DateRange? = nil, weekdays: Set<Weekday>? = nil, days: Set<Int>? = nil, window: DailyWindow? = nil) {
        self.dates = dates; self.weekdays = weekdays; self.days = days; self.window = window
    }

    /// Whether a window of the rule starts on `date`: the date, weekday and day-of-month constraints.
    public func holds(on date: LocalDate) -> Bool {
        (dates?.contains(date) ?? true) && (weekdays?.contains(date.weekday) ?? true) && (days?.contains(date.day) ?? true)
    }

    /// The day's window in seconds from its 00:00 local time (`0..<86400` without a window).
    var localRange: Range<Int> { window?.localRange ?? 0..<86400 }

    /// The UTC intervals `[start, end)` (seconds since 1970) during which the rule holds that intersect
    /// `[from, to)`, ascending, whole (not clipped to `[from, to)`), touching ones merged.
    public func intervals(from: Int64, to: Int64, zone: ZoneRules) -> [Range<Int64>] {
        guard from < to else { return [] }
        let first = zone.local(atUTC: from).date.adding(days: -1)  // an overnight window of the day before
        let last = zone.local(atUTC: to).date
        let range = localRange
        var out: [Range<Int64>] = []
        var day = first
        while day <= last {
            defer { day = day.adding(days: 1) }
            guard holds(on: day) else { continue }
            let start = zone.instant(for: Self.local(day, range.lowerBound))
            let end = zone.instant(for: Self.local(day, range.upperBound))
            guard start < end, start < to, end > from else { continue }
            if let previous = out.last, previous.upperBound >= start {
                out[out.count - 1] = previous.lowerBound..<max(previous.upperBound, end)
            } else {
                out.append(start..<end)
            }
        }
        return out
    }

    /// Whether the rule holds at `utc`.
    func isActive(atUTC utc: Int64, zone: ZoneRules) -> Bool {
        intervals(from: utc, to: utc + 1, zone: zone).contains { $0.contains(utc) }
    }

    /// `day` plus `seconds` (0…2 × 86400) as a local date and time.
    static func local(_ day: LocalDate, _ seconds: Int) -> LocalDateTime {
        LocalDateTime(date: day.adding(days: seconds / 86400), time: TimeOfDay(seconds: seconds % 86400)!)
    }
}

/// `switch`: what happens to the item on screen when the schedule changes the playlist.
public enum SwitchMode: String, Sendable, Equatable {
    /// The item on screen finishes, then the new playlist starts (the default).
    case boundary
    /// The item on screen is cut and the new playlist starts at once.
    case immediate
}

/// One entry of `schedule`.
public struct ScheduleEntry: Sendable, Equatable {
    /// `id`, for logs; `schedule[N]` when the manifest gives none.
    public var id: String
    /// A key of `playlists`, or `"default"` for `playlist`.
    public var playlist: String
    public var rule: TimeRule
    /// Higher wins; default 0.
    public var priority: Int
    public var switchMode: SwitchMode

    public init(id: String, playlist: String, rule: TimeRule = TimeRule(), priority: Int = 0, switchMode: SwitchMode = .boundary) {
        self.id = id; self.playlist = playlist; self.rule = rule; self.priority = priority; self.switchMode = switchMode
    }
}

/// `schedule`: which entries play when.
///
/// At an instant, the entries whose rule holds are eligible; those of the highest priority among
/// them play (several of equal priority take turns, see `interleave`); none eligible means the
/// default playlist plays.
public struct Schedule: Sendable, Equatable {
    public var entries: [ScheduleEntry]
    public init(entries: [ScheduleEntry]) { self.entries = entries }

    /// Indices of the entries that play at `utc` (seconds since 1970): the eligible ones of the
    /// highest priority, in document order; empty means the default playlist.
    public func selection(atUTC utc: Int64, zone: ZoneRules) -> [Int] {
        let eligible = entries.indices.filter { entries[$0].rule.isActive(atUTC: utc, zone: zone) }
        guard let top = eligible.map({ entries[$0].priority }).max() else { return [] }
        return eligible.filter { entries[$0].priority == top }
    }

    /// The next instant > `utc` at which `selection` changes, seconds since 1970; nil if none within
    /// `horizon` seconds.
    public func nextEdge(afterUTC utc: Int64, zone: ZoneRules, horizon: Int64 = 400 * 86400) -> Int64? {
        nextChange(after: utc, horizon: horizon, rules: entries.map(\.rule), zone: zone) { selection(atUTC: $0, zone: zone) }
    }

    /// Every edge in `(from, to]`, each with the selection that starts there.
    public func edges(fromUTC from: Int64, toUTC to: Int64, zone: ZoneRules) -> [(utc: Int64, selection: [Int])] {
        var out: [(utc: Int64, selection: [Int])] = []
        var t = from
        while t < to, let edge = nextEdge(afterUTC: t, zone: zone, horizon: to - t), edge <= to {
            out.append((edge, selection(atUTC: edge, zone: zone)))
            t = edge
        }
        return out
    }

    /// How the player changes from selection `old` to `new`: `immediate` when an entry that joins the
    /// selection says so, or, when `new` is the default playlist (empty), when an entry that leaves it
    /// says so; otherwise `boundary`.
    public func switchMode(from old: [Int], to new: [Int]) -> SwitchMode {
        let deciding = new.isEmpty ? old.filter { !new.contains($0) } : new.filter { !old.contains($0) }
        return deciding.contains { entries[$0].switchMode == .immediate } ? .immediate : .boundary
    }
}

/// `display.power`: when the screen is on.
///
/// The screen is off while any `off` rule holds, or, when `on` is given, while no `on` rule holds;
/// otherwise on. No rules at all: always on.
public struct PowerSchedule: Sendable, Equatable {
    /// nil: on unless an `off` rule holds.
    public var on: [TimeRule]?
    public var off: [TimeRule]
    public init(on: [TimeRule]? = nil, off: [TimeRule] = []) { self.on = on; self.off = off }

    /// Whether the screen is on at `utc` (seconds since 1970).
    public func isOn(atUTC utc: Int64, zone: ZoneRules) -> Bool {
        if off.contains(where: { $0.isActive(atUTC: utc, zone: zone) }) { return false }
        guard let on else { return true }
        return on.contains { $0.isActive(atUTC: utc, zone: zone) }
    }

    /// The next instant > `utc` at which `isOn` changes; nil if none within `horizon` seconds.
    public func nextEdge(afterUTC utc: Int64, zone: ZoneRules, horizon: Int64 = 400 * 86400) -> Int64? {
        nextChange(after: utc, horizon: horizon, rules: (on ?? []) + off, zone: zone) { isOn(atUTC: $0, zone: zone) }
    }

    /// Every change in `(from, to]`, each with the state that starts there.
    public func edges(fromUTC from: Int64, toUTC to: Int64, zone: ZoneRules) -> [(utc: Int64, isOn: Bool)] {
        var out: [(utc: Int64, isOn: Bool)] = []
        var t = from
        while t < to, let edge = nextEdge(afterUTC: t, zone: zone, horizon: to - t), edge <= to {
            out.append((edge, isOn(atUTC: edge, zone: zone)))
            t = edge
        }
        return out
    }
}

/// The first instant in `(after, after + horizon]` where `state` differs from its value just before.
/// The state can only change where an interval of one of `rules` starts or ends; those are searched
/// a week at a time.
private func nextChange<State: Equatable>(after utc: Int64, horizon: Int64, rules: [TimeRule], zone: ZoneRules,
                                          state: (Int64) -> State) -> Int64? {
    let limit = utc + max(0, horizon)
    var previous = state(utc)
    var low = utc
    while low < limit {
        let high = min(limit, low + 7 * 86400)
        var candidates = Set<Int64>()
        for rule in rules {
            for interval in rule.intervals(from: low, to: high + 1, zone: zone) {
                for t in [interval.lowerBound, interval.upperBound] where t > low && t <= high { candidates.insert(t) }
            }
        }
        for t in candidates.sorted() {
            let now = state(t)
            if now != previous { return t }
            previous = now
        }
        low = high
    }
    return nil
}

/// The playlist of entries of equal priority taking turns, item by item: the first item of each
/// playlist in document order, then the second of each, and so on (`A0 B0 A1 B1 …`). A shorter
/// playlist wraps around, so the result has `max(count) × n` items for `n` non-empty playlists and
/// every item of each appears; empty playlists are left out. One playlist is returned as it is.
public func interleave(_ playlists: [[PlaylistItem]]) -> [PlaylistItem] {
    let lists = playlists.filter { !$0.isEmpty }
    guard lists.count > 1 else { return lists.first ?? [] }
    let rounds = lists.map(\.count).max()!
    var out: [PlaylistItem] = []
    out.reserveCapacity(rounds * lists.count)
    for round in 0..<rounds {
        for list in lists { out.append(list[round % list.count]) }
    }
    return out
}
