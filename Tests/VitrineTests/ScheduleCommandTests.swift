import Foundation
import Testing
import VitrineCore
import VitrineTestSupport

/// `vitrine schedule` on the shipped café example, and `vitrine validate` on a named playlist's media.
@Suite("vitrine schedule, and named playlists in vitrine validate", .enabled(if: VitrineBinary.available, VitrineBinary.absent),
       .enabled(if: FileManager.default.fileExists(atPath: "/usr/share/zoneinfo/Europe/Paris"), "needs Europe/Paris in the tzdata"))
struct ScheduleCommandTests {
    @Test("Christmas Eve in the café: the entry cuts in at midnight, the screen follows display.power (exit 0)")
    func christmasEve() throws {
        let r = try VitrineBinary.run(["schedule", Repository.path("config/examples/cafe.json"),
                                       "--from", "2026-12-23T14:00", "--to", "2026-12-24T23:00:00+01:00"])
        #expect(r.code == 0, "\(r.err)")
        #expect(r.out == """
            zone Europe/Paris, from Wed 2026-12-23 14:00:00 CET to Thu 2026-12-24 23:00:00 CET
            Wed 2026-12-23 14:00:00 CET  (13:00:00Z)  lunch            entry lunch (schedule[1]), priority 0, boundary
            Wed 2026-12-23 14:00:00 CET  (13:00:00Z)  display on
            Wed 2026-12-23 15:00:00 CET  (14:00:00Z)  default          no entry eligible, boundary
            Wed 2026-12-23 22:00:00 CET  (21:00:00Z)  display off
            Thu 2026-12-24 00:00:00 CET  (Wed 23:00:00Z)  xmas             entry xmas (schedule[3]), priority 20, immediate
            Thu 2026-12-24 07:00:00 CET  (06:00:00Z)  display on
            Thu 2026-12-24 22:00:00 CET  (21:00:00Z)  display off

            """)
        // Another zone: the same local hours at other instants.
        let tokyo = try VitrineBinary.run(["schedule", Repository.path("config/examples/cafe.json"), "--timezone", "Asia/Tokyo",
                                           "--from", "2026-12-07T06:00", "--to", "2026-12-07T08:00"])
        #expect(tokyo.out.split(separator: "\n").map(String.init) == [
            "zone Asia/Tokyo, from Mon 2026-12-07 06:00:00 JST to Mon 2026-12-07 08:00:00 JST",
            "Mon 2026-12-07 06:00:00 JST  (Sun 21:00:00Z)  default          no entry eligible, boundary",
            "Mon 2026-12-07 06:00:00 JST  (Sun 21:00:00Z)  display off",
            "Mon 2026-12-07 07:00:00 JST  (Sun 22:00:00Z)  breakfast        entry breakfast (schedule[0]), priority 10, boundary",
            "Mon 2026-12-07 07:00:00 JST  (Sun 22:00:00Z)  display on",
        ])
    }

    @Test("an invalid schedule is printed as path: reason (65); a missing catalog is 66, a bad time 64")
    func failures() throws {
        let dir = try Harness.newFolder("schedule-invalid")
        let json = try String(contentsOfFile: Repository.path("config/examples/cafe.json"), encoding: .utf8)
            .replacingOccurrences(of: #""playlist": "xmas""#, with: #""playlist": "xmass""#)
            .replacingOccurrences(of: #""Europe/Paris""#, with: #""Europe/Pariss""#)
        try Harness.writeManifest(json, in: dir)
        let r = try VitrineBinary.run(["schedule", dir])
        #expect(r.code == 65)
        #expect(r.out == """
            \(dir)/manifest.json: timezone: unknown time zone "Europe/Pariss" (no /usr/share/zoneinfo/Europe/Pariss)
            \(dir)/manifest.json: schedule[3].playlist: unknown playlist "xmass" (did you mean "xmas"?)
            \(dir)/manifest.json: invalid: 2 error(s)

            """)
        #expect(try VitrineBinary.run(["schedule", dir + "/nothing"]).code == 66)
        let bad = try VitrineBinary.run(["schedule", Repository.path("config/examples/cafe.json"), "--from", "next monday"])
        #expect(bad.code == 64 && bad.err.hasPrefix("vitrine: --from: expected an ISO 8601 time"))
    }

    @Test("without a timezone the system's zone is used: TZ as a name, as :name, or as a POSIX TZ string")
    func systemZone() throws {
        let dir = try Harness.newFolder("schedule-system-zone")
        let json = try String(contentsOfFile: Repository.path("config/examples/cafe.json"), encoding: .utf8)
            .replacingOccurrences(of: #""timezone": "Europe/Paris","#, with: "")
        try Harness.writeManifest(json, in: dir)
        let period = ["--from", "2026-12-07T06:00:00Z", "--to", "2026-12-07T06:00:00Z"]
        func header(_ tz: String) throws -> String? {
            try VitrineBinary.run(["schedule", dir, "--from", "2026-12-07T06:00:00Z", "--to", "2026-12-08T06:00:00Z"],
                                  environment: ["TZ": tz]).out.split(separator: "\n").first.map(String.init)
        }
        #expect(try header("America/New_York") == "zone America/New_York, from Mon 2026-12-07 01:00:00 EST to Tue 2026-12-08 01:00:00 EST")
        #expect(try header(":Asia/Kathmandu") == "zone Asia/Kathmandu, from Mon 2026-12-07 11:45:00 +0545 to Tue 2026-12-08 11:45:00 +0545")
        #expect(try header("<+01>-1<+02>,M3.5.0,M10.5.0/3") == "zone <+01>-1<+02>,M3.5.0,M10.5.0/3, from Mon 2026-12-07 07:00:00 +01 to Tue 2026-12-08 07:00:00 +01")
        #expect(try VitrineBinary.run(["schedule", dir] + period).code == 64, "--to must be later than --from")
    }

    @Test("a named playlist's file that cannot play is named at its path in playlists (65)")
    func namedPlaylistMedia() throws {
        let dir = try Harness.newFolder("validate-named")
        try FileManager.default.createDirectory(atPath: dir + "/media", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: try Harness.colorClip("red", seconds: 1), toPath: dir + "/media/red.mp4")
        try Data("not a picture".utf8).write(to: URL(fileURLWithPath: dir + "/media/menu.png"))
        try Harness.writeManifest(#"""
            {"schema": "vitrine.manifest/1", "version": 1, "playlist": [{"id": "red", "type": "video", "src": "media/red.mp4"}],
             "playlists": {"lunch": [{"id": "menu", "type": "image", "src": "media/menu.png", "duration": 5},
                                     {"id": "gone", "type": "video", "src": "media/gone.mp4", "size": 3}]},
             "schedule": [{"playlist": "lunch", "time": {"from": "11:00", "to": "15:00"}}]}
            """#, in: dir)
        let r = try VitrineBinary.run(["validate", dir])
        #expect(r.code == 65)
        let lines = r.out.split(separator: "\n").map(String.init)
        #expect(lines.contains("\(dir)/manifest.json: playlists.lunch[1].src: file not found: media/gone.mp4"), "\(lines)")
        #expect(lines.contains { $0.hasPrefix("\(dir)/manifest.json: playlists.lunch[0].src: media/menu.png cannot play: ") }, "\(lines)")
        #expect(lines.last == "\(dir)/manifest.json: invalid: 2 error(s)")
    }
}
