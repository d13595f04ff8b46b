// Local wall time in an IANA time zone, from the system's tzdata: TZif files (RFC 8536) under
// /usr/share/zoneinfo, with the POSIX TZ string of their footer for instants after the last
// transition. Foundation's TimeZone is not used: it reads ICU's bundled data, not the system's.

import Foundation

/// The rules of one time zone, read from a TZif file (RFC 8536, versions 1 to 4).
///
/// Instants before the first transition use local time type 0 (RFC 8536 §3.2); instants after the
/// last transition use the footer's TZ string (§3.3, POSIX.1-2017 §8.3 `TZ`, with the §3.3.1
/// extensions: hours −167…167 in rule times) when the file has one, else the last transition's type.
/// Leap-second records (the `right/` zones) are ignored: times are POSIX seconds.
public struct ZoneRules: Sendable, Equatable {
    /// The zone's name as asked for: `"Europe/Paris"`; `"localtime"` when read from /etc/localtime
    /// itself; a POSIX TZ string when the `TZ` variable held one.
    public let identifier: String
    /// Transition instants, seconds since 1970 UTC, ascending.
    let transitions: [Int64]
    /// For each transition, the index in `types` of the local time type it starts.
    let transitionTypes: [Int]
    /// The local time types; `types[0]` applies before the first transition.
    let types: [ZoneOffset]
    /// The footer rule, for instants after the last transition.
    let footer: PosixTimeZone?

    init(identifier: String, transitions: [Int64], transitionTypes: [Int], types: [ZoneOffset], footer: PosixTimeZone?) {
        self.identifier = identifier; self.transitions = transitions; self.transitionTypes = transitionTypes
        self.types = types; self.footer = footer
    }

    /// Reads `directory/identifier`, a TZif file.
    /// - Throws: `ZoneError.unknown` when the name is not a relative path without `..` or names no
    ///   file; `.unreadable` when the file cannot be read; `.malformed` when it is not valid TZif.
    public init(identifier: String, directory: String = ZoneRules.defaultDirectory) throws(ZoneError) {
        guard !identifier.isEmpty, !identifier.hasPrefix("/"), !identifier.utf8.contains(0),
              !identifier.split(separator: "/").contains(".."), !identifier.split(separator: "/").contains(".") else {
            throw .unknown(identifier)
        }
        let path = (directory.hasSuffix("/") ? directory : directory + "/") + identifier
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else {
            throw .unknown(identifier)
        }
        try self.init(identifier: identifier, path: path)
    }

    /// Reads the TZif file at `path`, naming the zone `identifier`.
    init(identifier: String, path: String) throws(ZoneError) {
        guard let data = FileManager.default.contents(atPath: path) else { throw .unreadable(path, "cannot be read") }
        try self.init(identifier: identifier, tzif: [UInt8](data), path: path)
    }

    /// `$TZDIR` when set and non-empty, else `/usr/share/zoneinfo` (as glibc and tzcode).
    public static var defaultDirectory: String {
        if let dir = ProcessInfo.processInfo.environment["TZDIR"], !dir.isEmpty { return dir }
        return "/usr/share/zoneinfo"
    }

    /// Coordinated Universal Time: offset 0, abbreviation `UTC`, no transitions.
    public static let utc = ZoneRules(identifier: "UTC", transitions: [], transitionTypes: [],
                                      types: [ZoneOffset(seconds: 0, abbreviation: "UTC", isDST: false)], footer: nil)

    /// The system's zone: the `TZ` variable (`:Europe/Paris`, `Europe/Paris`, an absolute TZif path,
    /// or a POSIX TZ string such as `CET-1CEST,M3.5.0,M10.5.0/3`), else the zone /etc/localtime links
    /// to (the name after `zoneinfo/`), else /etc/localtime itself (identifier `localtime`), else UTC.
    public static func system() -> ZoneRules {
        if var tz = ProcessInfo.processInfo.environment["TZ"], !tz.isEmpty {
            if tz.hasPrefix(":") { tz.removeFirst() }
            if tz.hasPrefix("/") {
                let dir = defaultDirectory.hasSuffix("/") ? defaultDirectory : defaultDirectory + "/"
                let name = tz.hasPrefix(dir) ? String(tz.dropFirst(dir.count)) : tz
                if let zone = try? ZoneRules(identifier: name, path: tz) { return zone }
            } else if let zone = try? ZoneRules(identifier: tz) {
                return zone
            } else if let rule = try? PosixTimeZone(parsing: tz) {
                return ZoneRules(identifier: tz, transitions: [], transitionTypes: [], types: [rule.std], footer: rule)
            }
        }
        if let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/etc/localtime"),
           let range = target.range(of: "zoneinfo/") {
            let name = String(target[range.upperBound...])
            if let zone = try? ZoneRules(identifier: name) { return zone }
        }
        if let zone = try? ZoneRules(identifier: "localtime", path: "/etc/localtime") { return zone }
        return .utc
    }

    // MARK: Queries

    /// The offset from UTC in force at `seconds` (since 1970 UTC).
    public func offset(atUTC seconds: Int64) -> ZoneOffset {
        guard let last = transitions.last else { return footer?.offset(atUTC: seconds) ?? types[0] }
        if seconds < transitions[0] { return types[0] }
        if seconds >= last, let footer { return footer.offset(atUTC: seconds) }
        var lo = 0, hi = transitions.count - 1  // the last index with transitions[i] <= seconds
        while lo < hi {
            let mid = (lo + hi + 1) / 2
            if transitions[mid] <= seconds { lo = mid } else { hi = mid - 1 }
        }
        return types[transitionTypes[lo]]
    }

    /// The local wall time at `seconds` (since 1970 UTC).
    public func local(atUTC seconds: Int64) -> LocalDateTime {
        LocalDateTime(localSeconds: seconds + Int64(offset(atUTC: seconds).seconds))
    }

    /// The first instant whose local time is ≥ `local` on that date, seconds since 1970 UTC: a
    /// local time that occurs once gives its instant; one skipped by a forward transition (a gap)
    /// gives the transition instant; one repeated by a backward transition (an overlap) gives its
    /// first occurrence. `24:00` is 00:00 of the next day.
    public func instant(for local: LocalDateTime) -> Int64 {
        let wall = local.localSeconds
        let offsets = Set([wall - 86400, wall, wall + 86400].map { Int64(offset(atUTC: $0).seconds) })
        let valid = offsets.map { wall - $0 }.filter { Int64(offset(atUTC: $0).seconds) == wall - $0 }
        if let first = valid.min() { return first }
        // A gap: the first instant whose local time is past `wall` (local time jumps there).
        var lo = wall - offsets.max()!, hi = wall - offsets.min()!
        while lo < hi {
            let mid = lo + (hi - lo) / 2
            if mid + Int64(offset(atUTC: mid).seconds) >= wall { hi = mid } else { lo = mid + 1 }
        }
        return lo
    }
}

/// A local time type: the offset from UTC, its abbreviation and whether it is daylight saving time.
public struct ZoneOffset: Sendable, Equatable {
    /// Seconds east of UTC (Paris in winter: 3600).
    public var seconds: Int
    /// `CET`, `CEST`, `+0545`, `-03`.
    public var abbreviation: String
    public var isDST: Bool
    public init(seconds: Int, abbreviation: String, isDST: Bool) {
        self.seconds = seconds; self.abbreviation = abbreviation; self.isDST = isDST
    }
}

/// Why a time zone could not be read.
public enum ZoneError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No such zone: the identifier, as given (no file, or not a name below the zoneinfo folder).
    case unknown(String)
    /// The file, and why it cannot be read.
    case unreadable(String, String)
    /// The file, and what is wrong in it (RFC 8536).
    case malformed(String, String)

    /// `unknown time zone "Europe/Pariss" (no /usr/share/zoneinfo/Europe/Pariss)`, naming the file
    /// under `ZoneRules.defaultDirectory`.
    public var description: String {
        switch self {
        case .unknown(let id):
            let dir = ZoneRules.defaultDirectory
            return "unknown time zone \(JSONPath.quoted(id)) (no \(dir.hasSuffix("/") ? dir : dir + "/")\(JSONPath.printable(id)))"
        case let .unreadable(path, why): return "time zone file \(JSONPath.printable(path)) \(why)"
        case let .malformed(path, why): return "time zone file \(JSONPath.printable(path)) is not valid TZif: \(why)"
        }
    }
}

// MARK: TZif (RFC 8536)

extension ZoneRules {
    init(identifier: String, tzif bytes: [UInt8], path: String) throws(ZoneError) {
        var reader = ByteReader(bytes: bytes)
        func fail(_ why: String) -> ZoneError { .malformed(path, why) }
        func header() throws(ZoneError) -> (version: UInt8, counts: [Int]) {
            guard let magic = reader.take(4), magic == Array("TZif".utf8) else { throw fail("no TZif magic") }
            guard let version = reader.take(1)?[0], reader.take(15) != nil else { throw fail("truncated header") }
            var counts: [Int] = []
            for _ in 0..<6 {
                guard let n = reader.uint32() else { throw fail("truncated header") }
                counts.append(Int(n))
            }
            return (version, counts)
        }
        var (version, counts) = try header()
        var timeSize = 4
        if version >= UInt8(ascii: "2") {
            // Skip the version 1 data block; the version 2+ block follows with 64-bit times.
            let (isut, isstd, leap, time, type, chars) = (counts[0], counts[1], counts[2], counts[3], counts[4], counts[5])
            guard reader.take(time * 5 + type * 6 + chars + leap * 8 + isstd + isut) != nil else { throw fail("truncated v1 data") }
            (_, counts) = try header()
            timeSize = 8
        }
        let (isut, isstd, leap, timeCount, typeCount, charCount) = (counts[0], counts[1], counts[2], counts[3], counts[4], counts[5])
        guard typeCount >= 1 else { throw fail("typecnt is 0") }
        guard isut == 0 || isut == typeCount, isstd == 0 || isstd == typeCount else { throw fail("bad isutcnt or isstdcnt") }
        var transitions: [Int64] = []
        for _ in 0..<timeCount {
            guard let t = timeSize == 8 ? reader.int64() : reader.uint32().map({ Int64(Int32(bitPattern: $0)) }) else {
                throw fail("truncated transition times")
            }
            if let last = transitions.last, t <= last { throw fail("transition times not ascending") }
            transitions.append(t)
        }
        guard let indices = reader.take(timeCount) else { throw fail("truncated transition types") }
        guard indices.allSatisfy({ Int($0) < typeCount }) else { throw fail("transition type out of range") }
        var raw: [(offset: Int32, dst: Bool, index: Int)] = []
        for _ in 0..<typeCount {
            guard let offset = reader.uint32(), let flags = reader.take(2) else { throw fail("truncated local time types") }
            raw.append((Int32(bitPattern: offset), flags[0] != 0, Int(flags[1])))
        }
        guard let chars = reader.take(charCount) else { throw fail("truncated designations") }
        var types: [ZoneOffset] = []
        for t in raw {
            guard t.index < charCount else { throw fail("designation index out of range") }
            let name = chars[t.index...].prefix { $0 != 0 }
            types.append(ZoneOffset(seconds: Int(t.offset), abbreviation: String(decoding: name, as: UTF8.self), isDST: t.dst))
        }
        guard reader.take(leap * (timeSize + 4) + isstd + isut) != nil else { throw fail("truncated leap-second records") }
        var footer: PosixTimeZone?
        if timeSize == 8 {
            guard reader.take(1) == [0x0A] else { throw fail("no footer") }
            let rest = reader.rest
            guard let end = rest.firstIndex(of: 0x0A) else { throw fail("unterminated footer") }
            let text = String(decoding: rest[..<end], as: UTF8.self)
            if !text.isEmpty {
                do { footer = try PosixTimeZone(parsing: text) } catch { throw fail("footer \(JSONPath.quoted(text)): \(error.reason)") }
            }
        }
        self.init(identifier: identifier, transitions: transitions, transitionTypes: indices.map(Int.init),
                  types: types, footer: footer)
    }
}

/// Big-endian reads over a byte array.
private struct ByteReader {
    let bytes: [UInt8]
    var position = 0
    mutating func take(_ count: Int) -> [UInt8]? {
        guard count >= 0, bytes.count - position >= count else { return nil }
        defer { position += count }
        return Array(bytes[position..<position + count])
    }
    mutating func uint32() -> UInt32? { take(4).map { $0.reduce(0) { $0 << 8 | UInt32($1) } } }
    mutating func int64() -> Int64? { take(8).map { Int64(bitPattern: $0.reduce(0) { $0 << 8 | UInt64($1) }) } }
    var rest: ArraySlice<UInt8> { bytes[position...] }
}

// MARK: POSIX TZ strings

/// Why a TZ string does not parse.
struct PosixTimeZoneError: Error { var reason: String }

/// A POSIX TZ string (POSIX.1-2017 §8.3, with RFC 8536 §3.3.1's hours −167…167 in rule times):
/// `std offset [dst [offset] [,start[/time],end[/time]]]`, e.g. `CET-1CEST,M3.5.0,M10.5.0/3`,
/// `<+1030>-10:30<+11>-11,M10.1.0,M4.1.0`.
struct PosixTimeZone: Sendable, Equatable {
    /// A transition date: `Jn` (1…365, February 29 never counted), `n` (0…365, counted), `Mm.w.d`.
    enum Day: Sendable, Equatable {
        case julian(Int), zeroBased(Int), monthWeekDay(month: Int, week: Int, weekday: Int)
    }
    var std: ZoneOffset
    /// The daylight-saving type and its rule: start and end dates, each with its local time in
    /// seconds (start in standard time, end in daylight time).
    var dst: (offset: ZoneOffset, start: Day, startTime: Int, end: Day, endTime: Int)?

    static func == (a: PosixTimeZone, b: PosixTimeZone) -> Bool {
        guard a.std == b.std else { return false }
        switch (a.dst, b.dst) {
        case (nil, nil): return true
        case let (x?, y?): return x.offset == y.offset && x.start == y.start && x.startTime == y.startTime && x.end == y.end && x.endTime == y.endTime
        default: return false
        }
    }

    init(parsing text: String) throws(PosixTimeZoneError) {
        var scanner = TZScanner(Array(text.utf8))
        let stdName = try scanner.name()
        let stdOffset = -(try scanner.time(maxHours: 24, what: "offset"))
        std = ZoneOffset(seconds: stdOffset, abbreviation: stdName, isDST: false)
        guard !scanner.atEnd else { dst = nil; return }
        let dstName = try scanner.name()
        var dstOffset = stdOffset + 3600
        if !scanner.atEnd, scanner.peek != UInt8(ascii: ",") { dstOffset = -(try scanner.time(maxHours: 24, what: "offset")) }
        let offset = ZoneOffset(seconds: dstOffset, abbreviation: dstName, isDST: true)
        guard !scanner.atEnd else {
            // No rule: the US rule, as glibc assumes.
            dst = (offset, .monthWeekDay(month: 3, week: 2, weekday: 0), 7200, .monthWeekDay(month: 11, week: 1, weekday: 0), 7200)
            return
        }
        try scanner.expect(",")
        let (start, startTime) = try scanner.rule()
        try scanner.expect(",")
        let (end, endTime) = try scanner.rule()
        guard scanner.atEnd else { throw PosixTimeZoneError(reason: "unexpected text after the end rule") }
        dst = (offset, start, startTime, end, endTime)
    }

    func offset(atUTC t: Int64) -> ZoneOffset {
        guard let dst else { return std }
        let year = LocalDateTime(localSeconds: t + Int64(std.seconds)).date.year
        // The transitions of the years around t; the last one at or before t decides. When an end and a
        // start coincide (all-year daylight time, `0/0,J365/25`) the start comes later and wins.
        var events: [(at: Int64, isStart: Bool)] = []
        for y in (year - 1)...(year + 1) {
            events.append((Self.date(dst.start, year: y) * 86400 + Int64(dst.startTime) - Int64(std.seconds), true))
            events.append((Self.date(dst.end, year: y) * 86400 + Int64(dst.endTime) - Int64(dst.offset.seconds), false))
        }
        events.sort { $0.at != $1.at ? $0.at < $1.at : !$0.isStart && $1.isStart }
        guard let last = events.last(where: { $0.at <= t }) else { return std }
        return last.isStart ? dst.offset : std
    }

    /// Days since 1970-01-01 of `day` in `year`.
    static func date(_ day: Day, year: Int) -> Int64 {
        let jan1 = LocalDate.daysSinceEpoch(year: year, month: 1, day: 1)
        switch day {
        case .zeroBased(let n): return jan1 + Int64(n)
        case .julian(let n):
            // 1…365, February 29 not counted: from March on, a leap year's day is one later.
            return jan1 + Int64(n - 1) + (LocalDate.isLeap(year) && n >= 60 ? 1 : 0)
        case let .monthWeekDay(month, week, weekday):
            let first = LocalDate.daysSinceEpoch(year: year, month: month, day: 1)
            let firstWeekday = Int((first + 4) % 7 + 7) % 7  // 0 = Sunday
            var d = 1 + (weekday - firstWeekday + 7) % 7 + (week - 1) * 7
            let length = LocalDate.daysIn(month: month, year: year)
            while d > length { d -= 7 }  // week 5: the last such weekday
            return first + Int64(d - 1)
        }
    }
}

/// The lexer of a TZ string.
private struct TZScanner {
    let bytes: [UInt8]
    var i = 0
    init(_ bytes: [UInt8]) { self.bytes = bytes }
    var atEnd: Bool { i >= bytes.count }
    var peek: UInt8? { atEnd ? nil : bytes[i] }

    mutating func expect(_ c: Character) throws(PosixTimeZoneError) {
        guard peek == c.asciiValue else { throw PosixTimeZoneError(reason: "expected \"\(c)\" at offset \(i)") }
        i += 1
    }

    /// `<+0545>` (letters, digits, `+`, `-`) or three or more letters.
    mutating func name() throws(PosixTimeZoneError) -> String {
        let start = i
        if peek == UInt8(ascii: "<") {
            i += 1
            while let c = peek, c != UInt8(ascii: ">") {
                guard Self.isAlpha(c) || Self.isDigit(c) || c == UInt8(ascii: "+") || c == UInt8(ascii: "-") else {
                    throw PosixTimeZoneError(reason: "bad character in a quoted name")
                }
                i += 1
            }
            try expect(">")
            let name = String(decoding: bytes[(start + 1)..<(i - 1)], as: UTF8.self)
            guard name.utf8.count >= 3 else { throw PosixTimeZoneError(reason: "a name needs at least 3 characters") }
            return name
        }
        while let c = peek, Self.isAlpha(c) { i += 1 }
        guard i - start >= 3 else { throw PosixTimeZoneError(reason: "a name needs at least 3 letters") }
        return String(decoding: bytes[start..<i], as: UTF8.self)
    }

    /// `[+-]hh[:mm[:ss]]` in seconds, hours at most `maxHours`.
    mutating func time(maxHours: Int, what: String) throws(PosixTimeZoneError) -> Int {
        var sign = 1
        if peek == UInt8(ascii: "+") { i += 1 } else if peek == UInt8(ascii: "-") { sign = -1; i += 1 }
        var parts: [Int] = []
        repeat {
            if !parts.isEmpty { i += 1 }
            let start = i
            var n = 0
            while let c = peek, Self.isDigit(c), i - start < 3 { n = n * 10 + Int(c - 48); i += 1 }
            guard i > start else { throw PosixTimeZoneError(reason: "expected a number in the \(what) at offset \(i)") }
            parts.append(n)
        } while parts.count < 3 && peek == UInt8(ascii: ":")
        guard parts[0] <= maxHours, parts.dropFirst().allSatisfy({ $0 <= 59 }) else {
            throw PosixTimeZoneError(reason: "\(what) out of range")
        }
        return sign * (parts[0] * 3600 + (parts.count > 1 ? parts[1] * 60 : 0) + (parts.count > 2 ? parts[2] : 0))
    }

    mutating func number(_ range: ClosedRange<Int>, what: String) throws(PosixTimeZoneError) -> Int {
        let start = i
        var n = 0
        while let c = peek, Self.isDigit(c), i - start < 4 { n = n * 10 + Int(c - 48); i += 1 }
        guard i > start, range.contains(n) else { throw PosixTimeZoneError(reason: "\(what) out of range") }
        return n
    }

    /// `Jn`, `n` or `Mm.w.d`, then `/time` (default 02:00:00).
    mutating func rule() throws(PosixTimeZoneError) -> (PosixTimeZone.Day, Int) {
        let day: PosixTimeZone.Day
        if peek == UInt8(ascii: "J") {
            i += 1
            day = .julian(try number(1...365, what: "Jn day"))
        } else if peek == UInt8(ascii: "M") {
            i += 1
            let m = try number(1...12, what: "month")
            try expect(".")
            let w = try number(1...5, what: "week")
            try expect(".")
            let d = try number(0...6, what: "weekday")
            day = .monthWeekDay(month: m, week: w, weekday: d)
        } else {
            day = .zeroBased(try number(0...365, what: "day"))
        }
        var time = 7200
        if peek == UInt8(ascii: "/") {
            i += 1
            time = try self.time(maxHours: 167, what: "rule time")
        }
        return (day, time)
    }

    static func isAlpha(_ c: UInt8) -> Bool { (65...90).contains(c) || (97...122).contains(c) }
    static func isDigit(_ c: UInt8) -> Bool { (48...57).contains(c) }
}

// MARK: Calendar

/// A day of the week, ISO 8601 numbering: Monday 1 … Sunday 7.
public enum Weekday: Int, Sendable, CaseIterable {
    case monday = 1, tuesday, wednesday, thursday, friday, saturday, sunday

    /// From the manifest's names: `"mon"`, `"tue"`, `"wed"`, `"thu"`, `"fri"`, `"sat"`, `"sun"`.
    public init?(name: String) {
        guard let index = Self.names.firstIndex(of: name) else { return nil }
        self.init(rawValue: index + 1)
    }

    /// `"mon"` … `"sun"`.
    public var name: String { Self.names[rawValue - 1] }
    /// `"Mon"` … `"Sun"`, for messages.
    public var shortName: String { name.prefix(1).uppercased() + name.dropFirst() }

    static let names = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
}

/// A date in the proleptic Gregorian calendar.
public struct LocalDate: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var year: Int
    /// 1…12.
    public var month: Int
    /// 1…31, within the month's length.
    public var day: Int

    /// Nil when `month` or `day` is out of range for the year.
    public init?(year: Int, month: Int, day: Int) {
        guard (1...12).contains(month), day >= 1, day <= Self.daysIn(month: month, year: year) else { return nil }
        self.year = year; self.month = month; self.day = day
    }

    /// Exactly `YYYY-MM-DD` (ISO 8601 calendar date, four-digit year); nil otherwise or for a date that does not exist.
    public init?(parsing text: String) {
        let u = Array(text.utf8)
        guard u.count == 10, u[4] == UInt8(ascii: "-"), u[7] == UInt8(ascii: "-"),
              let y = Self.digits(u[0..<4]), let m = Self.digits(u[5..<7]), let d = Self.digits(u[8..<10]) else { return nil }
        self.init(year: y, month: m, day: d)
    }

    /// The date `days` days since 1970-01-01.
    init(daysSinceEpoch days: Int64) {
        // Howard Hinnant, "chrono-Compatible Low-Level Date Algorithms", civil_from_days.
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        year = Int(yoe + era * 400 + (m <= 2 ? 1 : 0)); month = Int(m); day = Int(d)
    }

    /// Days since 1970-01-01 (negative before).
    var daysSinceEpoch: Int64 { Self.daysSinceEpoch(year: year, month: month, day: day) }

    static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int64 {
        // Hinnant's days_from_civil.
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = Int64(month > 2 ? month - 3 : month + 9)
        let doy = (153 * mp + 2) / 5 + Int64(day) - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func isLeap(_ year: Int) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    private static func digits(_ bytes: ArraySlice<UInt8>) -> Int? {
        guard bytes.allSatisfy({ (48...57).contains($0) }) else { return nil }
        return bytes.reduce(0) { $0 * 10 + Int($1 - 48) }
    }

    public var weekday: Weekday { Weekday(rawValue: Int(((daysSinceEpoch + 3) % 7 + 7) % 7) + 1)! }  // 1970-01-01: Thursday

    /// The date `days` later (earlier when negative).
    public func adding(days: Int) -> LocalDate { LocalDate(daysSinceEpoch: daysSinceEpoch + Int64(days)) }

    public static func < (a: LocalDate, b: LocalDate) -> Bool { (a.year, a.month, a.day) < (b.year, b.month, b.day) }

    /// `2026-12-07`.
    public var description: String {
        func pad(_ n: Int, _ width: Int) -> String { let s = String(n); return String(repeating: "0", count: max(0, width - s.count)) + s }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))"
    }
}

/// A wall-clock time of day, in seconds since midnight: 0…86400 (86400 is `24:00`, the end of the day).
public struct TimeOfDay: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var seconds: Int

    /// Nil outside 0…86400.
    public init?(seconds: Int) {
        guard (0...86400).contains(seconds) else { return nil }
        self.seconds = seconds
    }

    /// `HH:MM` or `HH:MM:SS`, two digits each, `00:00`…`23:59:59`, or `24:00` (also `24:00:00`); nil otherwise.
    public init?(parsing text: String) {
        let u = Array(text.utf8)
        guard u.count == 5 || u.count == 8, u[2] == UInt8(ascii: ":"), u.count == 5 || u[5] == UInt8(ascii: ":") else { return nil }
        func two(_ at: Int) -> Int? {
            guard (48...57).contains(u[at]), (48...57).contains(u[at + 1]) else { return nil }
            return Int(u[at] - 48) * 10 + Int(u[at + 1] - 48)
        }
        guard let h = two(0), let m = two(3), let s = u.count == 8 ? two(6) : 0, m <= 59, s <= 59 else { return nil }
        guard h <= 23 || (h == 24 && m == 0 && s == 0) else { return nil }
        seconds = h * 3600 + m * 60 + s
    }

    public static let midnight = TimeOfDay(seconds: 0)!
    public static let endOfDay = TimeOfDay(seconds: 86400)!

    public static func < (a: TimeOfDay, b: TimeOfDay) -> Bool { a.seconds < b.seconds }

    /// `07:00`, or `07:00:30` when the seconds are not 0; `24:00` for the end of the day.
    public var description: String {
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let hm = two(seconds / 3600) + ":" + two(seconds / 60 % 60)
        return seconds % 60 == 0 ? hm : hm + ":" + two(seconds % 60)
    }

    /// `07:00:00`, always with seconds.
    var withSeconds: String {
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return two(seconds / 3600) + ":" + two(seconds / 60 % 60) + ":" + two(seconds % 60)
    }
}

/// A local date and wall-clock time, without a zone.
public struct LocalDateTime: Sendable, Hashable, CustomStringConvertible {
    public var date: LocalDate
    public var time: TimeOfDay
    public init(date: LocalDate, time: TimeOfDay) { self.date = date; self.time = time }

    /// From seconds since 1970-01-01 00:00 local time.
    init(localSeconds: Int64) {
        let days = localSeconds >= 0 ? localSeconds / 86400 : -((-localSeconds + 86399) / 86400)
        date = LocalDate(daysSinceEpoch: days)
        time = TimeOfDay(seconds: Int(localSeconds - days * 86400))!
    }

    /// Seconds since 1970-01-01 00:00 local time (`24:00` is the next day's midnight).
    var localSeconds: Int64 { date.daysSinceEpoch * 86400 + Int64(time.seconds) }

    /// `2026-12-07 10:59:50`.
    public var description: String { "\(date) \(time.withSeconds)" }
}
