import Foundation
import Testing
@testable import VitrineCore

@Suite("Schedule preview", .enabled(if: haveParis, "needs /usr/share/zoneinfo/Europe/Paris"))
struct SchedulePreviewTests {
    @Test func cafeWeekInDecember() throws {
        let zone = try paris()
        let m = try #require(ManifestParser.parse(Array(cafeJSON.utf8)).manifest)
        let lines = SchedulePreview.lines(manifest: m, zone: zone, from: try at("2026-12-07", zone), to: try at("2026-12-14", zone))
        var expected = [
            "zone Europe/Paris, from Mon 2026-12-07 00:00:00 CET to Mon 2026-12-14 00:00:00 CET",
            "Mon 2026-12-07 00:00:00 CET  (Sun 23:00:00Z)  default          no entry eligible, boundary",
            "Mon 2026-12-07 00:00:00 CET  (Sun 23:00:00Z)  display off",
        ]
        for day in ["Mon 2026-12-07", "Tue 2026-12-08", "Wed 2026-12-09", "Thu 2026-12-10", "Fri 2026-12-11"] {
            expected += [
                "\(day) 07:00:00 CET  (06:00:00Z)  breakfast        entry breakfast (schedule[0]), priority 10, boundary",
                "\(day) 07:00:00 CET  (06:00:00Z)  display on",
                "\(day) 11:00:00 CET  (10:00:00Z)  lunch            entry lunch (schedule[1]), priority 0, boundary",
                "\(day) 15:00:00 CET  (14:00:00Z)  default          no entry eligible, boundary",
                "\(day) 22:00:00 CET  (21:00:00Z)  display off",
            ]
        }
        expected += [
            "Sat 2026-12-12 00:00:00 CET  (Fri 23:00:00Z)  weekend          entry weekend (schedule[2]), priority 5, boundary",
            "Sat 2026-12-12 07:00:00 CET  (06:00:00Z)  display on",
            "Sat 2026-12-12 22:00:00 CET  (21:00:00Z)  display off",
            "Sun 2026-12-13 07:00:00 CET  (06:00:00Z)  display on",
            "Sun 2026-12-13 22:00:00 CET  (21:00:00Z)  display off",
            "Mon 2026-12-14 00:00:00 CET  (Sun 23:00:00Z)  default          no entry eligible, boundary",
        ]
        #expect(lines == expected)
    }

    @Test func christmasCutsInAndTiesTakeTurns() throws {
        let zone = try paris()
        let json = try cafe(replacing: #""playlist": "lunch", "weekdays""#, with: #""playlist": "lunch", "priority": 10, "weekdays""#)
        let tied = try cafe(replacing: #""from": "11:00", "to": "15:00""#, with: #""from": "10:00", "to": "15:00""#)
        let m = try #require(ManifestParser.parse(Array(json.utf8)).manifest)
        let lines = SchedulePreview.lines(manifest: m, zone: zone, from: try at("2026-12-23T20:00", zone), to: try at("2026-12-26T08:00", zone))
        #expect(lines == [
            "zone Europe/Paris, from Wed 2026-12-23 20:00:00 CET to Sat 2026-12-26 08:00:00 CET",
            "Wed 2026-12-23 20:00:00 CET  (19:00:00Z)  default          no entry eligible, boundary",
            "Wed 2026-12-23 20:00:00 CET  (19:00:00Z)  display on",
            "Wed 2026-12-23 22:00:00 CET  (21:00:00Z)  display off",
            "Thu 2026-12-24 00:00:00 CET  (Wed 23:00:00Z)  xmas             entry xmas (schedule[3]), priority 20, immediate",
            "Thu 2026-12-24 07:00:00 CET  (06:00:00Z)  display on",
            "Thu 2026-12-24 22:00:00 CET  (21:00:00Z)  display off",
            "Fri 2026-12-25 07:00:00 CET  (06:00:00Z)  display on",
            "Fri 2026-12-25 22:00:00 CET  (21:00:00Z)  display off",
            "Sat 2026-12-26 00:00:00 CET  (Fri 23:00:00Z)  weekend          entry weekend (schedule[2]), priority 5, boundary",
            "Sat 2026-12-26 07:00:00 CET  (06:00:00Z)  display on",
        ])
        let t = try #require(ManifestParser.parse(Array(tied.utf8)).manifest)
        var withTie = t
        withTie.schedule?.entries[1].priority = 10
        let tieLines = SchedulePreview.lines(manifest: withTie, zone: zone, from: try at("2026-12-07T09:00", zone), to: try at("2026-12-07T12:00", zone))
        #expect(tieLines == [
            "zone Europe/Paris, from Mon 2026-12-07 09:00:00 CET to Mon 2026-12-07 12:00:00 CET",
            "Mon 2026-12-07 09:00:00 CET  (08:00:00Z)  breakfast        entry breakfast (schedule[0]), priority 10, boundary",
            "Mon 2026-12-07 09:00:00 CET  (08:00:00Z)  display on",
            "Mon 2026-12-07 10:00:00 CET  (09:00:00Z)  breakfast + lunch (taking turns) entries breakfast (schedule[0]) + lunch (schedule[1]), priority 10, boundary",
            "Mon 2026-12-07 11:00:00 CET  (10:00:00Z)  lunch            entry lunch (schedule[1]), priority 10, boundary",
        ])
    }

    @Test func withoutScheduleTheDefaultPlays() throws {
        let m = try #require(ManifestParser.parse(Array(manifest(itemFields: "").utf8)).manifest)
        #expect(SchedulePreview.lines(manifest: m, zone: .utc, from: 1_796_641_190, to: 1_796_641_190 + 86400) == [
            "zone UTC, from Mon 2026-12-07 10:59:50 UTC to Tue 2026-12-08 10:59:50 UTC",
            "no schedule: the default playlist plays at all times",
            "Mon 2026-12-07 10:59:50 UTC  (10:59:50Z)  default          no entry eligible, boundary",
        ])
    }
}
