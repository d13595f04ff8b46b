import Foundation
import Testing
import VitrineTestSupport
@testable import VitrineCore

/// The zones checked against the system's own readers of the same tzdata.
private let zdumpZones = ["Europe/Paris", "America/New_York", "Australia/Lord_Howe", "Asia/Kathmandu"]
private let haveZdump = FileManager.default.isExecutableFile(atPath: "/usr/bin/zdump")
    && zdumpZones.allSatisfy { FileManager.default.fileExists(atPath: "/usr/share/zoneinfo/" + $0) }
private let haveDate = FileManager.default.isExecutableFile(atPath: "/usr/bin/date")
    && zdumpZones.allSatisfy { FileManager.default.fileExists(atPath: "/usr/share/zoneinfo/" + $0) }

/// glibc's offset (seconds east of UTC) and abbreviation at each instant, with `TZ` set to `tz`:
/// `date -f - "+%z %Z"` reading `@seconds` lines.
private func glibcOffsets(tz: String, at instants: [Int64]) throws -> [(seconds: Int, abbreviation: String)] {
    let input = instants.map { "@\($0)" }.joined(separator: "\n") + "\n"
    let r = try Subprocess.run("/usr/bin/date", ["-f", "-", "+%z %Z"], input: Data(input.utf8), environment: ["TZ": tz])
    return r.out.split(separator: "\n").map { line in
        let parts = line.split(separator: " "), z = parts[0], sign = z.hasPrefix("-") ? -1 : 1
        return (sign * (Int(z.dropFirst().prefix(2))! * 3600 + Int(z.dropFirst(3).prefix(2))! * 60), String(parts[1]))
    }
}

/// One line of `zdump -v`: `Europe/Paris  Sun Mar 31 00:59:59 2024 UT = Sun Mar 31 01:59:59 2024 CET isdst=0 gmtoff=3600`.
private struct ZdumpLine {
    var utc: Int64, abbreviation: String, isDST: Bool, gmtoff: Int

    init?(_ line: String) {
        let halves = line.components(separatedBy: " = ")
        guard halves.count == 2 else { return nil }
        let left = halves[0].split(separator: " "), right = halves[1].split(separator: " ")
        // zone, weekday, month, day, hh:mm:ss, year, UT
        guard left.count == 7, left[6] == "UT", right.count == 8,
              let month = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"].firstIndex(of: String(left[2])),
              let day = Int(left[3]), let year = Int(left[5]),
              let date = LocalDate(year: year, month: month + 1, day: day), let time = TimeOfDay(parsing: String(left[4])),
              right[6].hasPrefix("isdst="), right[7].hasPrefix("gmtoff="), let gmtoff = Int(right[7].dropFirst(7)) else { return nil }
        utc = LocalDateTime(date: date, time: time).localSeconds
        abbreviation = String(right[5]); isDST = right[6] == "isdst=1"; self.gmtoff = gmtoff
    }
}

@Suite("Zone rules (TZif, RFC 8536)")
struct ZoneRulesTests {
    @Test(.enabled(if: haveZdump, "needs /usr/bin/zdump (libc-bin) and the zone files"), arguments: zdumpZones)
    func transitionsMatchZdump(zone name: String) throws {
        let zone = try ZoneRules(identifier: name, directory: "/usr/share/zoneinfo")
        let out = try Subprocess.output("/usr/bin/zdump", ["-v", "-c", "2024,2040", name])
        let lines = out.split(separator: "\n").compactMap { ZdumpLine(String($0)) }
        if name == "Asia/Kathmandu" {
            #expect(lines.isEmpty, "no transition since 1986")
            for day in stride(from: Int64(1_704_067_200), to: 2_208_988_800, by: 86400 * 7) {  // 2024 … 2040
                #expect(zone.offset(atUTC: day) == ZoneOffset(seconds: 20700, abbreviation: "+0545", isDST: false))
            }
        } else {
            #expect(lines.count >= 60, "two lines per transition, 2024-2039: \(lines.count)")
            #expect(lines.contains { $0.utc > 2_145_916_800 }, "years after 2037: the footer rule")
            for line in lines {
                let found = zone.offset(atUTC: line.utc)
                #expect(found == ZoneOffset(seconds: line.gmtoff, abbreviation: line.abbreviation, isDST: line.isDST),
                        "\(name) at \(line.utc)")
                #expect(zone.local(atUTC: line.utc).localSeconds == line.utc + Int64(line.gmtoff))
            }
            // No transition zdump does not list: constant offset between its transitions (sampled every 6 hours).
            let transitions = stride(from: 1, to: lines.count, by: 2).map { lines[$0] }
            for (a, b) in zip(transitions, transitions.dropFirst()) {
                for t in stride(from: a.utc, to: b.utc - 1, by: 6 * 3600) {
                    #expect(zone.offset(atUTC: t).seconds == a.gmtoff, "\(name) at \(t)")
                }
            }
        }
    }

    @Test(.enabled(if: haveDate, "needs /usr/bin/date and the zone files"), arguments: zdumpZones)
    func offsetsMatchGlibcEveryFiveDays(zone name: String) throws {
        let zone = try ZoneRules(identifier: name, directory: "/usr/share/zoneinfo")
        let instants = Array(stride(from: Int64(1_700_000_000), to: 2_300_000_000, by: 5 * 86400 + 3607))
        let answers = try glibcOffsets(tz: name, at: instants)
        #expect(answers.count == instants.count)
        for (t, answer) in zip(instants, answers) {
            let found = zone.offset(atUTC: t)
            #expect(found.seconds == answer.seconds && found.abbreviation == answer.abbreviation, "\(name) at \(t): \(answer)")
        }
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/usr/share/zoneinfo/Europe/Paris"), "no Europe/Paris"))
    func parisSpringForwardAndFallBack() throws {
        let paris = try ZoneRules(identifier: "Europe/Paris", directory: "/usr/share/zoneinfo")
        func local(_ date: String, _ time: String) -> LocalDateTime {
            LocalDateTime(date: LocalDate(parsing: date)!, time: TimeOfDay(parsing: time)!)
        }
        // 2026-03-29: 02:00 CET becomes 03:00 CEST at 01:00:00Z; 02:30 does not exist.
        #expect(paris.instant(for: local("2026-03-29", "02:30")) == 1_774_746_000)
        #expect(paris.instant(for: local("2026-03-29", "02:00")) == 1_774_746_000)
        #expect(paris.instant(for: local("2026-03-29", "03:00")) == 1_774_746_000)
        #expect(paris.instant(for: local("2026-03-29", "01:59:59")) == 1_774_745_999)
        // 2026-10-25: 03:00 CEST becomes 02:00 CET at 01:00:00Z; 02:30 happens twice, first at 00:30:00Z.
        #expect(paris.instant(for: local("2026-10-25", "02:30")) == 1_792_888_200)
        #expect(paris.instant(for: local("2026-10-25", "03:00")) == 1_792_888_200 + 5400)
        #expect(paris.offset(atUTC: 1_792_888_200) == ZoneOffset(seconds: 7200, abbreviation: "CEST", isDST: true))
        #expect(paris.offset(atUTC: 1_792_888_200 + 3600) == ZoneOffset(seconds: 3600, abbreviation: "CET", isDST: false))
        #expect(paris.local(atUTC: 1_792_888_200 + 3600).description == "2026-10-25 02:30:00")
        // 24:00 is the next day's midnight.
        #expect(paris.instant(for: local("2026-12-06", "24:00")) == paris.instant(for: local("2026-12-07", "00:00")))
        #expect(paris.instant(for: local("2026-12-07", "00:00")) == 1_796_598_000)
    }

    @Test func unknownZonesAreNamed() {
        #expect(throws: ZoneError.unknown("Europe/Pariss")) { try ZoneRules(identifier: "Europe/Pariss", directory: "/usr/share/zoneinfo") }
        #expect(throws: ZoneError.unknown("../etc/passwd")) { try ZoneRules(identifier: "../etc/passwd") }
        #expect(throws: ZoneError.unknown("")) { try ZoneRules(identifier: "") }
        #expect(throws: ZoneError.unknown("Europe")) { try ZoneRules(identifier: "Europe", directory: "/usr/share/zoneinfo") }
        let message = ZoneError.unknown("Europe/Pariss").description
        #expect(message == "unknown time zone \"Europe/Pariss\" (no \(ZoneRules.defaultDirectory)/Europe/Pariss)")
    }

    @Test func malformedFilesAreRejected() throws {
        let dir = NSTemporaryDirectory() + "zone-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Data("not a zone".utf8).write(to: URL(fileURLWithPath: dir + "/Bad"))
        #expect(throws: ZoneError.malformed(dir + "/Bad", "no TZif magic")) { try ZoneRules(identifier: "Bad", directory: dir) }
        // A real file cut short in its data.
        let paris = try Data(contentsOf: URL(fileURLWithPath: "/usr/share/zoneinfo/Europe/Paris"))
        try paris.prefix(100).write(to: URL(fileURLWithPath: dir + "/Short"))
        #expect(throws: ZoneError.malformed(dir + "/Short", "truncated v1 data")) { try ZoneRules(identifier: "Short", directory: dir) }
    }

    @Test func utcHasNoTransitions() {
        #expect(ZoneRules.utc.offset(atUTC: 1_796_641_190) == ZoneOffset(seconds: 0, abbreviation: "UTC", isDST: false))
        #expect(ZoneRules.utc.local(atUTC: 1_796_641_190).description == "2026-12-07 10:59:50")
        #expect(ZoneRules.utc.local(atUTC: -1).description == "1969-12-31 23:59:59")
    }
}

/// The TZ strings of RFC 8536 §3.3.1 and POSIX, checked against glibc's reading of the same string.
@Suite("POSIX TZ strings")
struct PosixTimeZoneTests {
    static let strings = [
        "CET-1CEST,M3.5.0,M10.5.0/3",            // Europe/Paris
        "<+1030>-10:30<+11>-11,M10.1.0,M4.1.0",  // Australia/Lord_Howe: angle brackets, half hours
        "<-02>2<-01>,M3.5.0/-1,M10.5.0/0",       // America/Nuuk: a negative rule time
        "<-03>3<-02>,J60/2,300/4",               // Jn and zero-based n
        "IST-2IDT,M3.4.4/26,M10.5.0",            // Asia/Jerusalem: hour 26
        "<+0545>-5:45",
    ]

    @Test(.enabled(if: haveDate, "needs /usr/bin/date"), arguments: strings)
    func offsetsMatchGlibc(_ text: String) throws {
        let rule = try PosixTimeZone(parsing: text)
        // Every 3 days and 1 hour from 2027 to 2031, and around each year's start.
        var instants = Array(stride(from: Int64(1_798_761_600), to: 1_924_992_000, by: 3 * 86400 + 3600))
        instants += [1_830_297_599, 1_830_297_600, 1_861_920_000, 1_861_919_999]
        let answers = try glibcOffsets(tz: text, at: instants)
        #expect(answers.count == instants.count)
        for (t, answer) in zip(instants, answers) {
            let found = rule.offset(atUTC: t)
            #expect(found.seconds == answer.seconds && found.abbreviation == answer.abbreviation, "\(text) at \(t): \(answer)")
        }
    }

    /// RFC 8536 §3.3.1's own example: "EST5EDT,0/0,J365/25" is daylight time all year (glibc 2.36
    /// reads standard time around each January 1, so it is no oracle here).
    @Test func allYearDaylightTime() throws {
        let rule = try PosixTimeZone(parsing: "EST5EDT,0/0,J365/25")
        let edt = ZoneOffset(seconds: -14400, abbreviation: "EDT", isDST: true)
        // 2027-01-01 00:00Z, 04:59:59Z, 05:00Z (the end of 2026 and the start of 2027 meet), mid-year, 2028-12-31.
        for t: Int64 in [1_798_761_600, 1_798_779_599, 1_798_779_600, 1_814_400_000, 1_861_833_600] {
            #expect(rule.offset(atUTC: t) == edt, "\(t)")
        }
    }

    @Test func badStringsAreRejected() {
        for text in ["", "CE-1", "CET", "CET-1CEST,M3.5.0", "CET-1CEST,M13.5.0,M10.5.0", "CET-25", "<+01-1", "CET-1CEST,J366,J1"] {
            #expect(throws: PosixTimeZoneError.self, "\(text)") { try PosixTimeZone(parsing: text) }
        }
    }
}

@Suite("Dates and times of day")
struct LocalDateTests {
    @Test func parsing() {
        #expect(LocalDate(parsing: "2026-12-07") == LocalDate(year: 2026, month: 12, day: 7))
        #expect(LocalDate(parsing: "2026-12-07")?.weekday == .monday)
        #expect(LocalDate(parsing: "2028-02-29")?.weekday == .tuesday)
        #expect(LocalDate(parsing: "2027-02-29") == nil)
        #expect(LocalDate(parsing: "2026-1-07") == nil)
        #expect(LocalDate(parsing: "2026-12-07T") == nil)
        #expect(LocalDate(parsing: "2026-12-31")?.adding(days: 1).description == "2027-01-01")
        #expect(LocalDate(parsing: "2000-03-01")?.adding(days: -1).description == "2000-02-29")
        #expect(TimeOfDay(parsing: "07:00")?.seconds == 25200)
        #expect(TimeOfDay(parsing: "07:00:30")?.description == "07:00:30")
        #expect(TimeOfDay(parsing: "23:59:59")?.seconds == 86399)
        #expect(TimeOfDay(parsing: "24:00")?.seconds == 86400)
        #expect(TimeOfDay(parsing: "24:00")?.description == "24:00")
        for bad in ["24:01", "7:00", "07:60", "07:00:60", "25:00", "07-00", "07:00:5", ""] {
            #expect(TimeOfDay(parsing: bad) == nil, "\(bad)")
        }
        #expect(Weekday(name: "sun") == .sunday && Weekday.sunday.rawValue == 7 && Weekday(name: "Sun") == nil)
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/usr/share/zoneinfo/Europe/Paris"), "no Europe/Paris"))
    func instantsFromText() throws {
        let paris = try ZoneRules(identifier: "Europe/Paris", directory: "/usr/share/zoneinfo")
        #expect(parseInstant("2026-12-07T10:59:50Z", zone: paris) == 1_796_641_190)
        #expect(parseInstant("2026-12-07T11:59:50+01:00", zone: paris) == 1_796_641_190)
        #expect(parseInstant("2026-12-07T05:59:50-0500", zone: paris) == 1_796_641_190)
        #expect(parseInstant("2026-12-07T11:59:50", zone: paris) == 1_796_641_190)
        #expect(parseInstant("2026-12-07 11:59", zone: paris) == 1_796_641_140)
        #expect(parseInstant("2026-12-07", zone: paris) == 1_796_598_000)
        #expect(parseInstant("2026-03-29T02:30", zone: paris) == 1_774_746_000)
        for bad in ["2026-12-07T", "2026-12-07T25:00Z", "2026-12-07T10:00+1", "2026-13-07", "tomorrow", "2026-12-07T24:00"] {
            #expect(parseInstant(bad, zone: paris) == nil, "\(bad)")
        }
    }
}
