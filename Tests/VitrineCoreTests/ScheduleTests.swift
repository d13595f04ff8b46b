import Foundation
import Testing
@testable import VitrineCore

let haveParis = FileManager.default.fileExists(atPath: "/usr/share/zoneinfo/Europe/Paris")

/// Europe/Paris from the system's tzdata.
func paris() throws -> ZoneRules { try ZoneRules(identifier: "Europe/Paris", directory: "/usr/share/zoneinfo") }

/// An instant given as local Paris time (`2026-12-07T10:00`) or with `Z`.
func at(_ text: String, _ zone: ZoneRules) throws -> Int64 { try #require(parseInstant(text, zone: zone), "\(text)") }

func window(_ from: String, _ to: String) -> DailyWindow { DailyWindow(from: TimeOfDay(parsing: from)!, to: TimeOfDay(parsing: to)!) }
func date(_ text: String) -> LocalDate { LocalDate(parsing: text)! }

@Suite("Schedule", .enabled(if: haveParis, "needs /usr/share/zoneinfo/Europe/Paris"))
struct ScheduleTests {
    @Test func weekdaysAndDateRanges() throws {
        let rule = TimeRule(dates: DateRange(from: date("2026-12-01"), to: date("2026-12-31")), weekdays: [.saturday, .sunday])
        #expect(rule.holds(on: date("2026-12-05")))   // Saturday
        #expect(rule.holds(on: date("2026-12-27")))   // Sunday
        #expect(!rule.holds(on: date("2026-12-07")))  // Monday
        #expect(!rule.holds(on: date("2027-01-02")))  // Saturday, past the range
        #expect(!rule.holds(on: date("2026-11-29")))  // Sunday, before it
        #expect(TimeRule(dates: DateRange(from: date("2026-12-20"))).holds(on: date("2030-01-01")))
        #expect(TimeRule(days: [24, 25]).holds(on: date("2027-03-25")))
        let zone = try paris()
        // Saturday 5 and Sunday 6, Saturday 12 and Sunday 13 December 2026, each pair one interval.
        let weekends = rule.intervals(from: try at("2026-12-01", zone), to: try at("2026-12-15", zone), zone: zone)
        #expect(weekends == [try at("2026-12-05", zone)..<(try at("2026-12-07", zone)),
                             try at("2026-12-12", zone)..<(try at("2026-12-14", zone))])
        #expect(weekends[0] == 1_796_425_200..<1_796_598_000)
    }

    @Test func overnightWindowsBelongToTheirStartDay() throws {
        let zone = try paris()
        let fridayNight = TimeRule(weekdays: [.friday], window: window("22:00", "02:00"))
        #expect(fridayNight.window!.isOvernight && !fridayNight.window!.isWholeDay)
        #expect(fridayNight.isActive(atUTC: try at("2026-12-12T01:00", zone), zone: zone))   // Saturday 01:00
        #expect(!fridayNight.isActive(atUTC: try at("2026-12-12T23:00", zone), zone: zone))  // Saturday 23:00
        #expect(!fridayNight.isActive(atUTC: try at("2026-12-11T01:00", zone), zone: zone))  // Friday 01:00
        #expect(fridayNight.isActive(atUTC: try at("2026-12-11T22:00", zone), zone: zone))
        #expect(!fridayNight.isActive(atUTC: try at("2026-12-11T21:59:59", zone), zone: zone))
        #expect(!fridayNight.isActive(atUTC: try at("2026-12-12T02:00", zone), zone: zone))
        let week = fridayNight.intervals(from: try at("2026-12-07", zone), to: try at("2026-12-14", zone), zone: zone)
        #expect(week == [try at("2026-12-11T22:00", zone)..<(try at("2026-12-12T02:00", zone))])
        // Tested against the start day: a range ending on the Friday still holds that Saturday morning.
        let last = TimeRule(dates: DateRange(to: date("2026-12-11")), window: window("22:00", "02:00"))
        #expect(last.isActive(atUTC: try at("2026-12-12T01:00", zone), zone: zone))
        #expect(!last.isActive(atUTC: try at("2026-12-12T22:30", zone), zone: zone))
    }

    @Test func wholeDayWindows() throws {
        let zone = try paris()
        let midnight = TimeRule(weekdays: [.monday], window: window("00:00", "00:00"))
        #expect(midnight.window!.isWholeDay)
        #expect(midnight.intervals(from: try at("2026-12-07", zone), to: try at("2026-12-14", zone), zone: zone)
                == [try at("2026-12-07", zone)..<(try at("2026-12-08", zone))])
        let seven = TimeRule(weekdays: [.monday], window: window("07:00", "07:00"))
        #expect(seven.intervals(from: try at("2026-12-07", zone), to: try at("2026-12-14", zone), zone: zone)
                == [try at("2026-12-07T07:00", zone)..<(try at("2026-12-08T07:00", zone))])
        let allDay = TimeRule(weekdays: [.monday], window: window("00:00", "24:00"))
        #expect(allDay.window!.isWholeDay && !allDay.window!.isOvernight)
        #expect(allDay.intervals(from: try at("2026-12-07", zone), to: try at("2026-12-14", zone), zone: zone)
                == [try at("2026-12-07", zone)..<(try at("2026-12-08", zone))])
        // Every day from 00:00 to 00:00: the days that meet the period, touching ones merged.
        let always = TimeRule(window: window("00:00", "00:00"))
        #expect(always.intervals(from: try at("2026-12-07T12:00", zone), to: try at("2026-12-09T12:00", zone), zone: zone)
                == [try at("2026-12-07", zone)..<(try at("2026-12-10", zone))])
    }

    @Test func highestPriorityPlaysAndTiesTakeTurns() throws {
        let zone = try paris()
        let schedule = Schedule(entries: [
            ScheduleEntry(id: "morning", playlist: "a", rule: TimeRule(window: window("07:00", "12:00")), priority: 1),
            ScheduleEntry(id: "shop", playlist: "b", rule: TimeRule(window: window("09:00", "18:00")), priority: 1),
            ScheduleEntry(id: "sale", playlist: "c", rule: TimeRule(dates: DateRange(from: date("2026-12-08"), to: date("2026-12-08"))), priority: 3),
            ScheduleEntry(id: "low", playlist: "d", rule: TimeRule(window: window("06:00", "20:00")), priority: -1),
        ])
        #expect(schedule.selection(atUTC: try at("2026-12-07T05:00", zone), zone: zone) == [])
        #expect(schedule.selection(atUTC: try at("2026-12-07T06:30", zone), zone: zone) == [3])
        #expect(schedule.selection(atUTC: try at("2026-12-07T08:00", zone), zone: zone) == [0])
        #expect(schedule.selection(atUTC: try at("2026-12-07T10:00", zone), zone: zone) == [0, 1])
        #expect(schedule.selection(atUTC: try at("2026-12-07T13:00", zone), zone: zone) == [1])
        #expect(schedule.selection(atUTC: try at("2026-12-07T19:00", zone), zone: zone) == [3])
        #expect(schedule.selection(atUTC: try at("2026-12-08T10:00", zone), zone: zone) == [2])
        let edges = schedule.edges(fromUTC: try at("2026-12-07", zone), toUTC: try at("2026-12-08", zone), zone: zone)
        #expect(edges.map(\.utc) == [try at("2026-12-07T06:00", zone), try at("2026-12-07T07:00", zone), try at("2026-12-07T09:00", zone),
                                     try at("2026-12-07T12:00", zone), try at("2026-12-07T18:00", zone), try at("2026-12-07T20:00", zone),
                                     try at("2026-12-08", zone)])
        #expect(edges.map(\.selection) == [[3], [0], [0, 1], [1], [3], [], [2]])
        #expect(schedule.nextEdge(afterUTC: try at("2026-12-07T09:00", zone), zone: zone) == (try at("2026-12-07T12:00", zone)))
        #expect(Schedule(entries: []).nextEdge(afterUTC: 0, zone: zone) == nil)
    }

    @Test func switchModes() {
        let schedule = Schedule(entries: [
            ScheduleEntry(id: "a", playlist: "a"),
            ScheduleEntry(id: "b", playlist: "b", switchMode: .immediate),
        ])
        #expect(schedule.switchMode(from: [], to: [0]) == .boundary)
        #expect(schedule.switchMode(from: [0], to: [1]) == .immediate)
        #expect(schedule.switchMode(from: [1], to: [0]) == .boundary)
        #expect(schedule.switchMode(from: [1], to: []) == .immediate)
        #expect(schedule.switchMode(from: [0], to: []) == .boundary)
    }

    @Test func edgesAcrossDaylightSavingDays() throws {
        let zone = try paris()
        let night = Schedule(entries: [ScheduleEntry(id: "n", playlist: "n", rule: TimeRule(window: window("02:30", "04:00")))])
        // 2026-03-29: 02:30 does not exist; the window starts at the transition, 03:00 CEST = 01:00:00Z.
        let spring = night.edges(fromUTC: try at("2026-03-28T12:00", zone), toUTC: try at("2026-03-29T12:00", zone), zone: zone)
        #expect(spring.map(\.utc) == [1_774_746_000, 1_774_746_000 + 3600])
        #expect(spring.map(\.selection) == [[0], []])
        #expect(zone.local(atUTC: spring[0].utc).time.description == "03:00")
        #expect(night.nextEdge(afterUTC: try at("2026-03-28T12:00", zone), zone: zone) == 1_774_746_000)
        // The day before: 02:30 CET = 01:30:00Z, a 90-minute window.
        let before = night.edges(fromUTC: try at("2026-03-27T12:00", zone), toUTC: try at("2026-03-28T12:00", zone), zone: zone)
        #expect(before.map(\.utc) == [1_774_661_400, 1_774_666_800])
        // 2026-10-25: 02:30 happens twice; the window starts at the first (00:30:00Z) and 04:00 CET is 03:00:00Z.
        let fall = night.edges(fromUTC: try at("2026-10-24T12:00", zone), toUTC: try at("2026-10-25T12:00", zone), zone: zone)
        #expect(fall.map(\.utc) == [1_792_888_200, 1_792_897_200])
    }

    @Test func displayPower() throws {
        let zone = try paris()
        let nights = PowerSchedule(off: [TimeRule(window: window("22:00", "07:00"))])
        #expect(!nights.isOn(atUTC: try at("2026-12-07T06:59", zone), zone: zone))
        #expect(nights.isOn(atUTC: try at("2026-12-07T07:00", zone), zone: zone))
        #expect(!nights.isOn(atUTC: try at("2026-12-07T23:00", zone), zone: zone))
        #expect(nights.nextEdge(afterUTC: try at("2026-12-07T12:00", zone), zone: zone) == (try at("2026-12-07T22:00", zone)))
        let opening = PowerSchedule(on: [TimeRule(weekdays: [.monday, .tuesday, .wednesday, .thursday, .friday], window: window("08:00", "19:00"))],
                                    off: [TimeRule(days: [25])])
        #expect(opening.isOn(atUTC: try at("2026-12-24T10:00", zone), zone: zone))
        #expect(!opening.isOn(atUTC: try at("2026-12-25T10:00", zone), zone: zone))  // a Friday, but the 25th
        #expect(!opening.isOn(atUTC: try at("2026-12-26T10:00", zone), zone: zone))  // Saturday
        #expect(!opening.isOn(atUTC: try at("2026-12-24T19:00", zone), zone: zone))
        let edges = opening.edges(fromUTC: try at("2026-12-24", zone), toUTC: try at("2026-12-29", zone), zone: zone)
        #expect(edges.map(\.utc) == [try at("2026-12-24T08:00", zone), try at("2026-12-24T19:00", zone),
                                     try at("2026-12-28T08:00", zone), try at("2026-12-28T19:00", zone)])
        #expect(edges.map(\.isOn) == [true, false, true, false])
        #expect(PowerSchedule().isOn(atUTC: 0, zone: zone) && PowerSchedule().nextEdge(afterUTC: 0, zone: zone) == nil)
    }

    @Test func interleaveTakesTurnsItemByItem() {
        func items(_ ids: String...) -> [PlaylistItem] { ids.map { PlaylistItem(id: $0, type: .image, src: "m/\($0).png", duration: 5) } }
        #expect(interleave([items("a0", "a1", "a2"), items("b0")]).map(\.id) == ["a0", "b0", "a1", "b0", "a2", "b0"])
        #expect(interleave([items("a0", "a1"), items("b0", "b1"), items("c0", "c1", "c2")]).map(\.id)
                == ["a0", "b0", "c0", "a1", "b1", "c1", "a0", "b0", "c2"])
        #expect(interleave([items("a0", "a1")]).map(\.id) == ["a0", "a1"])
        #expect(interleave([items(), items("b0", "b1")]).map(\.id) == ["b0", "b1"])
        #expect(interleave([]).isEmpty)
    }
}
