import Foundation
import Testing
import Media
import RunLoop
@testable import Vitrine
import VitrineCore

/// The schedule on a running player: the playlist it picks at each edge, the display's power, the
/// interrupts, and the clock it reads. Headless with `--clock` (a virtual clock that runs with the
/// vblanks: 30 Hz, so a frame is 33.3 ms), or on a manual loop clock whose wall clock a test steps.
@Suite("Schedules on a running player", .serialized)
struct SchedulePlaybackTests {
    static let red: UInt32 = 0xFF0000, blue: UInt32 = 0x0000FF, green: UInt32 = 0x00FF00, black: UInt32 = 0x000000

    /// A catalog folder with 320x180 PNG stills `red`, `blue`, `green` in media/, and `json` as its manifest.
    static func catalog(_ json: String) throws -> (String, Manifest) {
        let dir = try Harness.newFolder("schedule")
        for (name, colour) in [("red", "red"), ("blue", "blue"), ("green", "lime")] {
            let png = try Harness.clip("still-\(name).png", ["-f", "lavfi", "-i", "color=c=\(colour):s=320x180", "-frames:v", "1"])
            try FileManager.default.copyItem(atPath: png, toPath: dir + "/media/\(name).png")
        }
        try Harness.writeManifest(json, in: dir)
        return (dir, try Harness.manifest(in: dir))
    }

    /// `{"id": ID, "type": "image", "src": "media/COLOUR.png", "duration": 100}`.
    static func still(_ id: String, _ colour: String, cue: String = "") -> String {
        #"{"id":"\#(id)","type":"image","src":"media/\#(colour).png","duration":100\#(cue)}"#
    }

    /// Plays `dir` headless from the virtual clock `clock` for `duration` s, with snapshots at `times`
    /// and the events kept.
    static func play(_ m: Manifest, _ dir: String, clock: String, duration: Double, snapshots: [Double],
                     timezone: String? = nil) throws -> (images: [Double: ImageBuffer], events: [PlayerEvent], log: [LogRecord]) {
        let events = Events()
        let (_, images, records) = try Harness.play(m, catalog: dir, duration: duration, snapshots: snapshots, configure: { o in
            o.clock = clock
            o.timezone = timezone
        }, engine: { engine in engine.events.observe { events.add($0.event) } })
        return (images, events.all, records)
    }

    final class Events: @unchecked Sendable {
        private let lock = NSLock()
        private var list: [PlayerEvent] = []
        func add(_ e: PlayerEvent) { lock.lock(); list.append(e); lock.unlock() }
        var all: [PlayerEvent] { lock.lock(); defer { lock.unlock() }; return list }
    }

    static func centre(_ img: ImageBuffer?) -> UInt32 {
        guard let img else { return 0xDEAD }
        let p = img.rgb(x: img.width / 2, y: img.height / 2)
        return (p.r > 128 ? 0xFF0000 : 0) | (p.g > 128 ? 0x00FF00 : 0) | (p.b > 128 ? 0x0000FF : 0)
    }

    /// Whether every pixel is black.
    static func allBlack(_ img: ImageBuffer?) -> Bool {
        guard let img else { return false }
        for y in stride(from: 0, to: img.height, by: 3) {
            for x in stride(from: 0, to: img.width, by: 3) where img.rgb(x: x, y: y) != (r: 0, g: 0, b: 0) { return false }
        }
        return true
    }

    static func scheduleChanges(_ events: [PlayerEvent]) -> [(String, String)] {
        events.compactMap { if case let .scheduleChanged(_, p, r, _, _) = $0 { return (p, r) } else { return nil } }
    }

    @Test("switch immediate: the new playlist's first picture is on the first vblank at the edge (0 frames late), and back at the window's end")
    func immediateEdgeWithinAFrame() throws {
        let (dir, m) = try Self.catalog("""
        {"schema":"vitrine.manifest/1","version":1,"timezone":"UTC","display":{"mode":"320x180@30"},
         "playlist":[\(Self.still("r", "red"))], "playlists":{"blue":[\(Self.still("b", "blue"))]},
         "schedule":[{"playlist":"blue","time":{"from":"10:00:02","to":"10:00:04"},"switch":"immediate"}]}
        """)
        // Vblank k is at k/30 s: the edge at 2 s is vblank 60, the one before it 59 (1.967 s).
        let r = try Self.play(m, dir, clock: "2026-12-07T10:00:00Z", duration: 5, snapshots: [1.966, 2.0, 3.966, 4.0])
        #expect(Self.centre(r.images[1.966]) == Self.red)
        #expect(Self.centre(r.images[2.0]) == Self.blue, "on the edge's vblank")
        #expect(Self.centre(r.images[3.966]) == Self.blue)
        #expect(Self.centre(r.images[4.0]) == Self.red, "the leaving entry is immediate: cut at its end too")
        let changes = Self.scheduleChanges(r.events)
        #expect(changes.map(\.0) == ["default", "blue", "default"])
        #expect(changes.map(\.1) == ["start", "edge", "edge"])
    }

    @Test("switch boundary: the item on screen finishes first (a 1 s still), then the scheduled playlist")
    func boundaryEdge() throws {
        let (dir, m) = try Self.catalog("""
        {"schema":"vitrine.manifest/1","version":1,"timezone":"UTC","display":{"mode":"320x180@30"},
         "playlist":[{"id":"r","type":"image","src":"media/red.png","duration":1.5}],
         "playlists":{"blue":[\(Self.still("b", "blue"))]},
         "schedule":[{"playlist":"blue","time":{"from":"10:00:02","to":"10:00:10"}}]}
        """)
        // Red plays 0–1.5, 1.5–3.0 (the edge at 2 s falls inside), then blue at 3.0.
        let r = try Self.play(m, dir, clock: "2026-12-07T10:00:00Z", duration: 4, snapshots: [2.1, 2.966, 3.034])
        #expect(Self.centre(r.images[2.1]) == Self.red, "not cut")
        #expect(Self.centre(r.images[2.966]) == Self.red)
        #expect(Self.centre(r.images[3.034]) == Self.blue, "from the item boundary at 3 s")
    }

    @Test("display power off and on, headless: the recording is black while off, playback comes back, both displayPower events and the log say so")
    func displayPowerHeadless() throws {
        let (dir, m) = try Self.catalog("""
        {"schema":"vitrine.manifest/1","version":1,"timezone":"UTC",
         "display":{"mode":"320x180@30","power":{"off":[{"time":{"from":"22:00","to":"07:00"}}]}},
         "playlist":[\(Self.still("r", "red"))]}
        """)
        // 21:59:58 → off at 2 s; the clock reaches 07:00 only 9 h later: a second run starts at 06:59:58.
        let evening = try Self.play(m, dir, clock: "2026-12-07T21:59:58Z", duration: 4, snapshots: [1.966, 2.0, 3.9])
        #expect(Self.centre(evening.images[1.966]) == Self.red)
        #expect(Self.allBlack(evening.images[2.0]), "black on the edge's vblank")
        #expect(Self.allBlack(evening.images[3.9]))
        let power = evening.events.compactMap { if case let .displayPower(on, reason, _) = $0 { return (on, reason) } else { return nil } }
        #expect(power.map(\.0) == [false] && power.map(\.1) == ["edge"])
        #expect(evening.log.contains { $0.message.hasPrefix("display off by schedule (edge, 2026-12-07T22:00:00.000Z)") })

        let morning = try Self.play(m, dir, clock: "2026-12-08T06:59:58Z", duration: 3, snapshots: [0.5, 1.966, 2.034])
        #expect(Self.allBlack(morning.images[0.5]), "off from the start")
        #expect(Self.allBlack(morning.images[1.966]))
        #expect(Self.centre(morning.images[2.034]) == Self.red, "on at 07:00, playing again")
        let morningPower = morning.events.compactMap { if case let .displayPower(on, reason, _) = $0 { return "\(on ? "on" : "off") \(reason)" } else { return nil } }
        #expect(morningPower == ["off start", "on edge"])
    }

    @Test("equal priorities take turns item by item; the higher priority wins")
    func prioritiesAndTurns() throws {
        let (dir, m) = try Self.catalog("""
        {"schema":"vitrine.manifest/1","version":1,"timezone":"UTC","display":{"mode":"320x180@30"},
         "playlist":[\(Self.still("r", "red"))],
         "playlists":{"blue":[{"id":"b","type":"image","src":"media/blue.png","duration":1}],
                      "green":[{"id":"g","type":"image","src":"media/green.png","duration":1}]},
         "schedule":[{"playlist":"blue","switch":"immediate"},{"playlist":"green"},
                     {"playlist":"default","priority":5,"time":{"from":"10:00:03","to":"10:00:05"},"switch":"immediate"}]}
        """)
        let r = try Self.play(m, dir, clock: "2026-12-07T10:00:00Z", duration: 5.5, snapshots: [0.5, 1.5, 2.5, 3.5, 5.3])
        #expect([0.5, 1.5, 2.5].map { Self.centre(r.images[$0]) } == [Self.blue, Self.green, Self.blue], "turns")
        #expect(Self.centre(r.images[3.5]) == Self.red, "priority 5 outranks both")
        #expect(Self.centre(r.images[5.3]) != Self.red, "the turns come back after it")
        #expect(Self.scheduleChanges(r.events).first?.0 == "blue+green")
    }

    @Test("a spring-forward day in Europe/Paris: a window from 02:30 (a time that does not exist) starts at 03:00 CEST, 01:00:00Z")
    func springForward() throws {
        let (dir, m) = try Self.catalog("""
        {"schema":"vitrine.manifest/1","version":1,"timezone":"Europe/Paris","display":{"mode":"320x180@30"},
         "playlist":[\(Self.still("r", "red"))], "playlists":{"blue":[\(Self.still("b", "blue"))]},
         "schedule":[{"playlist":"blue","dates":{"from":"2026-03-29","to":"2026-03-29"},"time":{"from":"02:30","to":"04:00"},"switch":"immediate"}]}
        """)
        let r = try Self.play(m, dir, clock: "2026-03-29T00:59:58Z", duration: 3, snapshots: [1.966, 2.0])
        #expect(Self.centre(r.images[1.966]) == Self.red)
        #expect(Self.centre(r.images[2.0]) == Self.blue)
    }

    @Test("a fall-back day in Europe/Paris: 02:30 comes twice; the window starts at the first, 00:30:00Z, and ends at 03:00 CET (02:00:00Z)")
    func fallBack() throws {
        let (dir, m) = try Self.catalog("""
        {"schema":"vitrine.manifest/1","version":1,"timezone":"Europe/Paris","display":{"mode":"320x180@30"},
         "playlist":[\(Self.still("r", "red"))], "playlists":{"blue":[\(Self.still("b", "blue"))]},
         "schedule":[{"playlist":"blue","dates":{"from":"2026-10-25","to":"2026-10-25"},"time":{"from":"02:30","to":"03:00"},"switch":"immediate"}]}
        """)
        let first = try Self.play(m, dir, clock: "2026-10-25T00:29:58Z", duration: 3, snapshots: [1.966, 2.0])
        #expect(Self.centre(first.images[1.966]) == Self.red)
        #expect(Self.centre(first.images[2.0]) == Self.blue)
        let end = try Self.play(m, dir, clock: "2026-10-25T01:59:58Z", duration: 3, snapshots: [1.966, 2.0])
        #expect(Self.centre(end.images[1.966]) == Self.blue, "still on at the second 02:59")
        #expect(Self.centre(end.images[2.0]) == Self.red)
    }

    @Test("a clock that reads more than a year before the catalog was made is unset: the default playlist plays with the display on, and the log and events say so")
    func unsetClock() throws {
        let (dir, m) = try Self.catalog("""
        {"schema":"vitrine.manifest/1","version":1,"timezone":"UTC",
         "display":{"mode":"320x180@30","power":{"on":[{"time":{"from":"09:00","to":"17:00"}}]}},
         "playlist":[\(Self.still("r", "red"))], "playlists":{"blue":[\(Self.still("b", "blue"))]},
         "schedule":[{"playlist":"blue"}]}
        """)
        // The manifest was just written (this year); the clock says 1970, 03:00: off and blue if it were set.
        let r = try Self.play(m, dir, clock: "1970-01-01T03:00:00Z", duration: 1, snapshots: [0.5])
        #expect(Self.centre(r.images[0.5]) == Self.red)
        #expect(r.log.contains { $0.message.hasPrefix("the clock is not set") })
        #expect(Self.scheduleChanges(r.events).map(\.1) == ["clock unset"])
        #expect(!r.events.contains { if case .displayPower = $0 { return true } else { return false } })
    }

    @Test("an interrupt from a cue point plays its playlist over the schedule, hides the popups, and returns to the interrupted item after its timeout")
    func interruptPlaylist() throws {
        let cue = #","cuePoints":[{"time":0.5,"id":"menu","action":{"type":"showOverlay","overlay":"menu"}},{"time":1,"id":"fire","action":{"type":"interrupt","playlist":"notice","timeout":1.5}}]"#
        let (dir, m) = try Self.catalog("""
        {"schema":"vitrine.manifest/1","version":1,"timezone":"UTC","display":{"mode":"320x180@30"},
         "playlist":[{"id":"r","type":"image","src":"media/red.png","duration":100\(cue)}],
         "playlists":{"notice":[\(Self.still("n", "green"))]},
         "overlays":{"menu":{"title":"Menu","style":"fade","duration":0.1,"modal":true}}}
        """)
        let r = try Self.play(m, dir, clock: "2026-12-07T10:00:00Z", duration: 3.5, snapshots: [0.9, 1.2, 2.4, 2.7])
        #expect(Self.centre(r.images[1.2]) == Self.green)
        #expect(Self.centre(r.images[2.4]) == Self.green)
        #expect(Self.centre(r.images[2.7]) == Self.red, "back after 1.5 s")
        // The modal popup was up before the interrupt (dimmed red) and is gone after it.
        let before = try #require(r.images[0.9]).rgb(x: 5, y: 5), after = try #require(r.images[2.7]).rgb(x: 5, y: 5)
        #expect(before.r < 200, "the popup's dimming before the interrupt")
        #expect(after.r > 240, "no popup after it")
        #expect(Self.scheduleChanges(r.events).map(\.1) == ["interrupt", "interrupt ended"])
    }

    @Test("an interrupt that shows a popup: up for its timeout, then hidden")
    func interruptOverlay() throws {
        let cue = #","cuePoints":[{"time":0.5,"id":"note","action":{"type":"interrupt","overlay":"notice","timeout":1}}]"#
        let (dir, m) = try Self.catalog("""
        {"schema":"vitrine.manifest/1","version":1,"timezone":"UTC","display":{"mode":"320x180@30"},
         "playlist":[{"id":"r","type":"image","src":"media/red.png","duration":100\(cue)}],
         "overlays":{"notice":{"title":"Notice","style":"fade","duration":0.1}}}
        """)
        let r = try Self.play(m, dir, clock: "2026-12-07T10:00:00Z", duration: 2.5, snapshots: [0.4, 1.0, 2.2])
        #expect(try #require(r.images[0.4]).rgb(x: 5, y: 5).r > 240)
        #expect(try #require(r.images[1.0]).rgb(x: 5, y: 5).r < 200, "dimmed under the notice")
        #expect(try #require(r.images[2.2]).rgb(x: 5, y: 5).r > 240, "hidden after 1 s")
        let interrupt = r.events.compactMap { if case let .scheduleChanged(entry, p, "interrupt", _, o) = $0 { return (entry, p, o) } else { return nil } }
        #expect(interrupt.count == 1 && interrupt.first?.0 == nil && interrupt.first?.1 == "default" && interrupt.first?.2 == "notice")
    }
}

/// The schedule on the real clock's code path (`CLOCK_REALTIME` timers with cancel-on-set), driven
/// by a manual loop clock whose wall clock the test steps as `date -s` would.
@Suite("Schedules and clock steps", .serialized)
struct ScheduleClockStepTests {
    /// A rig playing `json`'s catalog on a manual clock starting at `wall` (UTC seconds), with the
    /// schedule's `afterVblank` after each vblank.
    final class Rig {
        let rig: LoopRig
        let scheduled: ScheduledPlayback
        let events = SchedulePlaybackTests.Events()

        init(_ json: String, wall: Int64) throws {
            let (dir, m) = try SchedulePlaybackTests.catalog(json)
            rig = try LoopRig(wallClock: WallClockTime(nanosecondsSinceEpoch: wall * 1_000_000_000))
            let manifest = m.withAbsolutePaths(in: dir)
            scheduled = ScheduledPlayback(director: ScheduleDirector(manifest: manifest, zone: .utc, madeAt: Player.madeAt(dir)),
                                          engine: rig.engine, virtualClockStart: nil, log: Logger(label: "t", sink: LogSink.memory().0))
            rig.engine.events.observe { [events] in events.add($0.event) }
            rig.engine.refill = { manifest.playlist }
            for item in scheduled.start(on: rig.loop) { rig.engine.enqueue(item) }
            if !rig.engine.displayIsOff { rig.engine.play() }
            try rig.engine.presenter.start(on: rig.loop, shouldStop: { false }, afterVblank: { [scheduled] in scheduled.afterVblank(); return true })
            rig.loop.advanceTime(by: .zero)
        }

        /// Runs `seconds` of the loop's clock a vblank at a time, each once its decoder is ready.
        func run(_ seconds: Double) throws {
            let start = rig.loop.now.seconds
            var k = 1
            while Double(k) / 30 <= seconds + 1e-9 {
                if let source = rig.engine.currentEntry?.source ?? rig.engine.timeline.entries.first?.source {
                    let progress = rig.engine.timeline.progress
                    let deadline = Date(timeIntervalSinceNow: 5)
                    while !(source.video.buffered >= 1 || source.video.isFinished || source.isFailed) && Date() < deadline {
                        let g = progress.generation
                        progress.wait(after: g, timeout: 0.1)
                    }
                }
                rig.advance(to: start + Double(k) / 30)
                k += 1
            }
        }

        var centre: UInt32 {
            let p = rig.pixel(160, 90)
            return (p.r > 128 ? 0xFF0000 : 0) | (p.g > 128 ? 0x00FF00 : 0) | (p.b > 128 ? 0x0000FF : 0)
        }

        func stop() throws {
            scheduled.stop()
            try rig.engine.presenter.end()
            rig.engine.finish()
        }
    }

    static let json = """
    {"schema":"vitrine.manifest/1","version":1,"timezone":"UTC","display":{"mode":"320x180@30"},
     "playlist":[\(SchedulePlaybackTests.still("r", "red"))], "playlists":{"blue":[\(SchedulePlaybackTests.still("b", "blue"))]},
     "schedule":[{"playlist":"blue","time":{"from":"12:00","to":"13:00"},"switch":"immediate"}]}
    """
    /// 2026-12-07 11:00:00Z.
    static let eleven: Int64 = 1_796_641_200

    @Test("a step forward into the window switches at once; a step back out of it switches back")
    func stepForwardAndBack() throws {
        let r = try Rig(Self.json, wall: Self.eleven)
        try r.run(0.5)
        #expect(r.centre == SchedulePlaybackTests.red)
        r.rig.loop.setWallClock(to: WallClockTime(nanosecondsSinceEpoch: (Self.eleven + 3600 + 60) * 1_000_000_000))
        try r.run(0.2)
        #expect(r.centre == SchedulePlaybackTests.blue, "stepped to 12:01")
        r.rig.loop.setWallClock(to: WallClockTime(nanosecondsSinceEpoch: (Self.eleven + 60) * 1_000_000_000))
        try r.run(0.2)
        #expect(r.centre == SchedulePlaybackTests.red, "stepped back to 11:01")
        let reasons = SchedulePlaybackTests.scheduleChanges(r.events.all).map(\.1)
        #expect(reasons == ["start", "clock step", "clock step"])
        try r.stop()
    }

    @Test("the edge's CLOCK_REALTIME timer wakes a display that sleeps while off: on at 12:00 within a frame")
    func edgeTimerWakesDisplay() throws {
        let r = try Rig("""
        {"schema":"vitrine.manifest/1","version":1,"timezone":"UTC",
         "display":{"mode":"320x180@30","power":{"off":[{"time":{"from":"11:00","to":"12:00"}}]}},
         "playlist":[\(SchedulePlaybackTests.still("r", "red"))]}
        """, wall: Self.eleven + 3600 - 2)
        try r.run(1.9)
        #expect(r.rig.engine.outputIsPoweredOff)
        let before = r.rig.engine.stats.vblanks
        try r.run(0.2)
        #expect(r.centre == SchedulePlaybackTests.red)
        #expect(!r.rig.engine.displayIsOff)
        #expect(r.rig.engine.stats.vblanks - before <= 6, "woken by the timer, not by a vblank a second")
        try r.stop()
    }

    @Test("an unset clock (1970) plays the default playlist; setting it applies the schedule (reason clock set)")
    func clockSet() throws {
        let r = try Rig(Self.json, wall: 3 * 3600)
        try r.run(0.3)
        #expect(r.centre == SchedulePlaybackTests.red)
        r.rig.loop.setWallClock(to: WallClockTime(nanosecondsSinceEpoch: (Self.eleven + 3600 + 5) * 1_000_000_000))
        try r.run(0.3)
        #expect(r.centre == SchedulePlaybackTests.blue)
        #expect(SchedulePlaybackTests.scheduleChanges(r.events.all).map(\.1) == ["clock unset", "clock set"])
        try r.stop()
    }

    @Test("while the display is off by schedule, a real clock prepares about one vblank a second and the watchdog keeps being fed")
    func offIsIdle() throws {
        let r = try Rig("""
        {"schema":"vitrine.manifest/1","version":1,"timezone":"UTC",
         "display":{"mode":"320x180@30","power":{"off":[{"time":{"from":"11:00","to":"12:00"}}]}},
         "playlist":[\(SchedulePlaybackTests.still("r", "red"))]}
        """, wall: Self.eleven + 10)
        try r.run(0.5)
        #expect(r.rig.engine.displayIsOff)
        #expect(r.rig.engine.outputIsPoweredOff)
        let vblanks = r.rig.engine.stats.vblanks
        try r.run(10)
        let prepared = r.rig.engine.stats.vblanks - vblanks
        #expect(prepared <= 25, "\(prepared) vblanks prepared in 10 s off")
        #expect(r.rig.engine.timeline.entries.isEmpty, "no decoder runs")
        try r.stop()
    }
}
