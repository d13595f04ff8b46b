import Foundation
import Testing
@testable import VitrineCore

/// The café of config/examples/cafe.json, without files.
let cafeJSON = #"""
{
  "schema": "vitrine.manifest/1", "version": 3, "title": "Café",
  "timezone": "Europe/Paris",
  "playlist": [ { "id": "d1", "type": "image", "src": "media/d1.png", "duration": 10 } ],
  "playlists": {
    "breakfast": [ { "id": "b1", "type": "image", "src": "media/b1.png", "duration": 10 },
                   { "id": "b2", "type": "image", "src": "media/b2.png", "duration": 10 } ],
    "lunch": [ { "id": "l1", "type": "image", "src": "media/l1.png", "duration": 10 } ],
    "weekend": [ { "id": "w1", "type": "video", "src": "media/w1.mp4" } ],
    "xmas": [ { "id": "x1", "type": "image", "src": "media/x1.png", "duration": 8 } ]
  },
  "schedule": [
    { "id": "breakfast", "playlist": "breakfast", "weekdays": ["mon","tue","wed","thu","fri"],
      "time": { "from": "07:00", "to": "11:00" }, "priority": 10, "switch": "boundary" },
    { "playlist": "lunch", "weekdays": ["mon","tue","wed","thu","fri"], "time": { "from": "11:00", "to": "15:00" } },
    { "playlist": "weekend", "weekdays": ["sat","sun"], "priority": 5 },
    { "playlist": "xmas", "dates": { "from": "2026-12-20", "to": "2026-12-26" }, "days": [24, 25], "priority": 20, "switch": "immediate" }
  ],
  "display": { "power": { "off": [ { "time": { "from": "22:00", "to": "07:00" } } ] } }
}
"""#

/// The café with `old` replaced by `new` (exactly once).
func cafe(replacing old: String, with new: String) throws -> String {
    let parts = cafeJSON.components(separatedBy: old)
    try #require(parts.count == 2, "\(old) occurs \(parts.count - 1) times")
    return parts.joined(separator: new)
}

/// A minimal manifest with a default playlist of one item (`d`) and `extra` top-level members.
func scheduled(_ extra: String) -> String {
    #"{"schema": "vitrine.manifest/1", "version": 1, "playlist": [{"id": "d", "type": "image", "src": "d.png", "duration": 5}], "#
        + #""playlists": {"p": [{"id": "p1", "type": "image", "src": "p.png", "duration": 5}]}, "# + extra + "}"
}

@Suite("Manifest playlists and schedule", .enabled(if: haveParis, "needs /usr/share/zoneinfo/Europe/Paris"))
struct ManifestScheduleTests {
    @Test func cafeParsesToExactValues() throws {
        let result = ManifestParser.parse(Array(cafeJSON.utf8))
        #expect(result.problems == [])
        let m = try #require(result.manifest)
        #expect(m.timezone == "Europe/Paris")
        #expect(m.playlistNames == ["breakfast", "lunch", "weekend", "xmas"])
        #expect(m.playlists["breakfast"]?.map(\.id) == ["b1", "b2"])
        #expect(m.allItems.map(\.id) == ["d1", "b1", "b2", "l1", "w1", "x1"])
        #expect(m.allItemsWithPaths.map(\.path) == ["playlist[0]", "playlists.breakfast[0]", "playlists.breakfast[1]",
                                                    "playlists.lunch[0]", "playlists.weekend[0]", "playlists.xmas[0]"])
        #expect(m.items(ofPlaylist: "default")?.map(\.id) == ["d1"])
        #expect(m.items(ofPlaylist: "lunch")?.map(\.id) == ["l1"])
        #expect(m.items(ofPlaylist: "brunch") == nil)
        let weekdays: Set<Weekday> = [.monday, .tuesday, .wednesday, .thursday, .friday]
        #expect(m.schedule == Schedule(entries: [
            ScheduleEntry(id: "breakfast", playlist: "breakfast", rule: TimeRule(weekdays: weekdays, window: window("07:00", "11:00")),
                          priority: 10, switchMode: .boundary),
            ScheduleEntry(id: "schedule[1]", playlist: "lunch", rule: TimeRule(weekdays: weekdays, window: window("11:00", "15:00"))),
            ScheduleEntry(id: "schedule[2]", playlist: "weekend", rule: TimeRule(weekdays: [.saturday, .sunday]), priority: 5),
            ScheduleEntry(id: "schedule[3]", playlist: "xmas",
                          rule: TimeRule(dates: DateRange(from: date("2026-12-20"), to: date("2026-12-26")), days: [24, 25]),
                          priority: 20, switchMode: .immediate),
        ]))
        #expect(m.display.power == PowerSchedule(off: [TimeRule(window: window("22:00", "07:00"))]))
        #expect(m.items(forSelection: [0, 1]).map(\.id) == ["b1", "l1", "b2", "l1"])
        #expect(m.items(forSelection: []).map(\.id) == ["d1"])
        // Power is not part of the output: a catalog that only changes it keeps its output.
        var other = m.display
        other.power = nil
        #expect(other != m.display && other.output == m.display.output)
    }

    @Test func v1ManifestsAreUnchanged() throws {
        let json = manifest(itemFields: "")
        let m = try #require(ManifestParser.parse(Array(json.utf8)).manifest)
        #expect(m == Manifest(version: 1, playlist: [PlaylistItem(id: "a", type: .video, src: "media/a.mp4")]))
        #expect(m.schedule == nil && m.timezone == nil && m.playlists.isEmpty && m.display.power == nil)
        #expect(m.allItems == m.playlist)
        #expect(m.items(forSelection: []) == m.playlist)
    }

    @Test func validationNamesEachProblemByPath() throws {
        #expect(problems(try cafe(replacing: #""playlist": "xmas""#, with: #""playlist": "xmass""#))
                == [#"schedule[3].playlist: unknown playlist "xmass" (did you mean "xmas"?)"#])
        #expect(problems(try cafe(replacing: #""playlist": "weekend", "weekdays""#, with: #""playlist": "brunch", "weekdays""#))
                == [#"schedule[2].playlist: unknown playlist "brunch" (did you mean "lunch"?)"#])
        #expect(problems(try cafe(replacing: #""playlist": "weekend", "weekdays""#, with: #""playlist": "zzz", "weekdays""#))
                == [#"schedule[2].playlist: unknown playlist "zzz""#])
        #expect(problems(try cafe(replacing: #""from": "07:00", "to": "11:00""#, with: #""from": "7:00", "to": "11:00""#))
                == [#"schedule[0].time.from: invalid time "7:00" (expected HH:MM or HH:MM:SS, 00:00 to 23:59:59)"#])
        #expect(problems(try cafe(replacing: #""from": "07:00", "to": "11:00""#, with: #""from": "24:00", "to": "11:00""#))
                == [#"schedule[0].time.from: invalid time "24:00" (expected HH:MM or HH:MM:SS, 00:00 to 23:59:59)"#])
        #expect(problems(try cafe(replacing: #""from": "11:00", "to": "15:00""#, with: #""from": "11:00", "to": "24:30""#))
                == [#"schedule[1].time.to: invalid time "24:30" (expected HH:MM or HH:MM:SS, 00:00 to 23:59:59, or 24:00)"#])
        #expect(problems(try cafe(replacing: #""from": "11:00", "to": "15:00""#, with: #""from": "11:00""#))
                == ["schedule[1].time.to: required"])
        #expect(problems(try cafe(replacing: #""Europe/Paris""#, with: #""Europe/Pariss""#))
                == [#"timezone: unknown time zone "Europe/Pariss" (no \#(ZoneRules.defaultDirectory)/Europe/Pariss)"#])
        #expect(problems(try cafe(replacing: #""to": "2026-12-26""#, with: #""to": "2026-12-19""#))
                == ["schedule[3].dates: empty date range: to 2026-12-19 is before from 2026-12-20"])
        #expect(problems(try cafe(replacing: #""to": "2026-12-26""#, with: #""to": "2026-12-32""#))
                == [#"schedule[3].dates.to: invalid date "2026-12-32" (expected YYYY-MM-DD, a date that exists)"#])
        #expect(problems(try cafe(replacing: #""days": [24, 25]"#, with: #""days": [27]"#))
                == ["schedule[3]: can never play: no day matches dates 2026-12-20 to 2026-12-26 and days 27"])
        #expect(problems(try cafe(replacing: #""days": [24, 25]"#, with: #""days": [24, 32, 24]"#))
                == ["schedule[3].days[1]: must be a day of the month, 1 to 31 (found 32)", "schedule[3].days[2]: 24 is repeated"])
        #expect(problems(try cafe(replacing: #"["sat","sun"]"#, with: #"["sat","sunday"]"#))
                == [#"schedule[2].weekdays[1]: unknown weekday "sunday" (expected mon, tue, wed, thu, fri, sat or sun)"#])
        #expect(problems(try cafe(replacing: #"["sat","sun"]"#, with: "[]"))
                == ["schedule[2].weekdays: must contain at least one weekday (leave it out for every day)"])
        #expect(problems(try cafe(replacing: #""switch": "immediate""#, with: #""switch": "now""#))
                == [#"schedule[3].switch: unknown switch "now" (expected boundary or immediate)"#])
        #expect(problems(try cafe(replacing: #""priority": 5"#, with: #""priority": 5, "every": "day""#))
                == [#"schedule[2].every: unknown field "every""#])
        #expect(problems(try cafe(replacing: #""lunch": [ {"#, with: #""lunch": [ {"size": -1, "#))
                == ["playlists.lunch[0].size: must be at least 0 (found -1)"])
        #expect(problems(try cafe(replacing: #""duration": 8"#, with: #""durationn": 8"#))
                == [#"playlists.xmas[0].durationn: unknown field "durationn""#, "playlists.xmas[0].duration: required for images"])
        #expect(problems(try cafe(replacing: #"{ "time": { "from": "22:00""#, with: #"{ "time": { "from": "22:00", "at": 1"#))
                == [#"display.power.off[0].time.at: unknown field "at""#])
    }

    @Test func entriesThatCanNeverPlay() {
        #expect(problems(scheduled(#""schedule": [{"playlist": "p", "days": [31], "dates": {"from": "2027-02-01", "to": "2027-02-28"}}]"#))
                == ["schedule[0]: can never play: no day matches dates 2027-02-01 to 2027-02-28 and days 31"])
        #expect(problems(scheduled(#""schedule": [{"playlist": "p", "weekdays": ["sat"], "dates": {"from": "2026-12-07", "to": "2026-12-11"}}]"#))
                == ["schedule[0]: can never play: no day matches dates 2026-12-07 to 2026-12-11 and weekdays sat"])
        #expect(problems(scheduled(#""schedule": [{"playlist": "p", "days": [30, 31], "dates": {"from": "2028-02-01", "to": "2028-02-29"}}]"#))
                == ["schedule[0]: can never play: no day matches dates 2028-02-01 to 2028-02-29 and days 30, 31"])
        // February 29 comes round (2000-2027 holds leap years), and open ranges are searched too.
        #expect(problems(scheduled(#""schedule": [{"playlist": "p", "days": [29], "dates": {"from": "2027-02-01"}}]"#)) == [])
        #expect(problems(scheduled(#""display": {"power": {"on": [{"weekdays": ["mon"], "dates": {"from": "2026-12-08", "to": "2026-12-13"}}]}}"#))
                == ["display.power.on[0]: never holds: no day matches dates 2026-12-08 to 2026-12-13 and weekdays mon"])
    }

    @Test func entriesAlwaysOutrankedAreWarnings() {
        let shadowed = ManifestParser.parse(Array(scheduled(#"""
            "schedule": [{"playlist": "p", "weekdays": ["sat", "sun"], "priority": 2},
                         {"playlist": "default", "weekdays": ["sun"], "time": {"from": "10:00", "to": "12:00"}},
                         {"playlist": "default", "weekdays": ["sat"], "time": {"from": "23:00", "to": "01:00"}, "priority": 1}]
            """#).utf8))
        #expect(shadowed.manifest != nil)
        #expect(shadowed.problems.map(\.description) == ["schedule[1]: never plays: whenever it is eligible, schedule[0] (priority 2) plays instead",
                                                        "schedule[2]: never plays: whenever it is eligible, schedule[0] (priority 2) plays instead"])
        #expect(shadowed.warnings.count == 2)
        // Covered on Saturday until 24:00 but not on Sunday 00:00-01:00: the overnight entry can play.
        let partly = problems(scheduled(#"""
            "schedule": [{"playlist": "p", "weekdays": ["sat"], "priority": 2},
                         {"playlist": "default", "weekdays": ["sat"], "time": {"from": "23:00", "to": "01:00"}, "priority": 1}]
            """#))
        #expect(partly == [])
        // Two higher entries that cover the window together.
        let together = problems(scheduled(#"""
            "schedule": [{"playlist": "p", "time": {"from": "06:00", "to": "12:00"}, "priority": 2},
                         {"playlist": "p", "time": {"from": "12:00", "to": "18:00"}, "priority": 3},
                         {"playlist": "default", "time": {"from": "09:00", "to": "17:00"}}]
            """#))
        #expect(together == ["schedule[2]: never plays: whenever it is eligible, schedule[0] (priority 2) or schedule[1] (priority 3) plays instead"])
    }

    @Test func playlistNamesAndItemIDs() {
        #expect(problems(scheduled(#""schedule": [{"playlist": "default", "priority": 1}]"#)) == [])
        let reserved = #"{"schema": "vitrine.manifest/1", "version": 1, "playlist": [{"id": "d", "type": "image", "src": "d.png", "duration": 5}], "#
            + #""playlists": {"default": [{"id": "e", "type": "image", "src": "e.png", "duration": 5}], "empty": []}}"#
        #expect(problems(reserved) == [#"playlists.default: the name "default" is reserved: in a schedule entry it means the default "playlist""#,
                                       "playlists.empty: must contain at least one item"])
        let duplicate = #"{"schema": "vitrine.manifest/1", "version": 1, "playlist": [{"id": "d", "type": "image", "src": "d.png", "duration": 5}], "#
            + #""playlists": {"a": [{"id": "x", "type": "image", "src": "x.png", "duration": 5}], "#
            + #""b": [{"id": "d", "type": "image", "src": "e.png", "duration": 5}, {"id": "x", "type": "image", "src": "y.png", "duration": 5}]}}"#
        #expect(problems(duplicate) == [#"playlists.b[0].id: duplicate id "d" (also playlist[0])"#,
                                        #"playlists.b[1].id: duplicate id "x" (also playlists.a[0])"#])
        // Jumps reach items of named playlists.
        let jump = scheduled(#""idle": {"after": 30, "jump": "p1"}"#)
        #expect(problems(jump) == [])
        // Files of named playlists are looked up like the default playlist's.
        let files = ManifestParser.parse(Array(scheduled(#""schedule": []"#).utf8), catalogDirectory: "/c") { $0 == "/c/d.png" }
        #expect(files.problems.map(\.description) == ["playlists.p[0].src: file not found: p.png"])
    }
}

@Suite("Stick files of named playlists")
struct StickNamedPlaylistTests {
    @Test func namedPlaylistsAreCopiedAndChecked() throws {
        let hash = String(repeating: "c", count: 64)
        let json = #"{"schema": "vitrine.manifest/1", "version": 1, "playlist": [{"id": "d", "type": "video", "src": "d.mp4", "size": 4, "sha256": "\#(hash)"}], "#
            + #""playlists": {"lunch": [{"id": "l", "type": "video", "src": "l.mp4", "size": 7, "sha256": "\#(hash)"}, "#
            + #"{"id": "m", "type": "video", "src": "m.mp4"}]}}"#
        let manifest = try #require(ManifestParser.parse(Array(json.utf8)).manifest)
        let (files, problems) = StickManifest.files(of: manifest)
        #expect(files.map(\.path) == ["d.mp4", "l.mp4"])
        #expect(files.map(\.sizeField) == ["playlist[0].size", "playlists.lunch[0].size"])
        #expect(problems.map(\.description) == [#"playlists.lunch[1].size: m.mp4: size is required on a USB stick (on the item or in "files")"#])
    }
}
