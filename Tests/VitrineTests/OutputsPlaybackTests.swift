// Two screens from one `vitrine run` (config `outputs`), on headless outputs: each output plays its
// own playlist in its own mode, and the status has every output's entry. (The DRM leases, the two
// presenters on their own vblanks and one screen unplugged while the other plays are checked in
// the VM: tools/vm/checks/79_outputs.py.)
import Foundation
import Synchronization
import Testing
import SystemSupport
@testable import Vitrine
import VitrineCore
import VitrineTestSupport
import ControlSocket

@Suite("Two outputs: playing and in the status", .serialized)
struct OutputsPlaybackTests {
    /// The `outputs` array's entries.
    static func entries(_ v: JSONValue?) -> [JSONValue] {
        if case let .array(list)? = v { return list }
        return []
    }

    /// `vitrine run` of `folder` on headless outputs in real time, without sound, for up to 600 s,
    /// with `config` written to `folder/config.json` as its config.
    static func play(_ folder: String, config: String) throws -> RunningProcess {
        try config.write(toFile: folder + "/config.json", atomically: true, encoding: .utf8)
        return try VitrineBinary.start(["run", "--catalog", folder, "--config", folder + "/config.json", "--output", "headless",
                                        "--realtime", "--audio-device", "none", "--duration", "600"])
    }

    static func folder() throws -> String {
        let folder = try Harness.newFolder("outputs")
        for (name, colour) in [("red", "red"), ("blue", "blue")] {
            try FileManager.default.copyItem(atPath: try Harness.colorClip(colour, seconds: 3, size: "160x90"), toPath: folder + "/media/\(name).mp4")
        }
        try Harness.writeManifest("""
            {"schema": "vitrine.manifest/1", "version": 3, "title": "Two screens", "loop": true, "display": {"mode": "160x90@10"},
             "playlist": [{"id": "red", "type": "video", "src": "media/red.mp4"}],
             "playlists": {"side": [{"id": "blue", "type": "video", "src": "media/blue.mp4"}]}}
            """, in: folder)
        return folder
    }

    @Test("vitrine run with two outputs: the second plays its playlist in its mode, and ctl status lists both",
          .enabled(if: VitrineBinary.available, VitrineBinary.absent))
    func statusListsBothOutputs() throws {
        let folder = try Self.folder()
        let socket = folder + "/control.sock"
        let config = #"""
            {"control": {"path": "\#(socket)"},
             "outputs": [{"connector": "HDMI-A-1"}, {"connector": "HDMI-A-2", "playlist": "side", "mode": "320x180@20"}]}
            """#
        let player = try Self.play(folder, config: config)
        defer { player.terminate(); player.wait(timeout: .seconds(10)) }

        func status() -> JSONValue? {
            guard let c = try? ControlClient(path: socket, timeout: .seconds(1)) else { return nil }
            defer { c.close() }
            return try? c.request([.string("status")]).data
        }
        // Both outputs playing, each with pictures presented.
        var s: JSONValue?
        for _ in 0..<300 {
            s = status()
            let o = Self.entries(s?["outputs"])
            if o.count == 2, o[1]["state"]?.stringValue == "playing",
               (o[1]["frames"]?["presented"]?.doubleValue ?? 0) > 0, (o[0]["frames"]?["presented"]?.doubleValue ?? 0) > 0 { break }
            usleep(100_000)
        }
        let outputs = Self.entries(s?["outputs"])
        try #require(outputs.count == 2, "not two outputs in the status: \(String(describing: s)); \(player.outputSoFar)")
        let first = outputs[0], second = outputs[1]
        #expect(first["connector"]?.stringValue == "HDMI-A-1" && first["playlist"] == .null)
        #expect(first["state"]?.stringValue == "playing" && first["item"]?.stringValue == "red")
        #expect(first["width"]?.doubleValue == 160 && first["height"]?.doubleValue == 90 && first["refresh"]?.doubleValue == 10)
        #expect(second["connector"]?.stringValue == "HDMI-A-2" && second["playlist"]?.stringValue == "side")
        #expect(second["state"]?.stringValue == "playing" && second["item"]?.stringValue == "blue", "\(second)")
        #expect(second["width"]?.doubleValue == 320 && second["height"]?.doubleValue == 180 && second["refresh"]?.doubleValue == 20)
        #expect(second["error"] == nil)
        // The headless outputs have no sink to lose: no connection either way.
        #expect(first["connection"] == .null && second["connection"] == .null)
        // The top level is still the first output's (as with one screen).
        #expect(s?["item"]?["id"]?.stringValue == "red" && s?["display"]?["width"]?.doubleValue == 160)

        // Each output's vblanks go on at its own rate: over about 2 s, 20 Hz against 10 Hz.
        let v0 = (first["frames"]?["vblanks"]?.doubleValue ?? 0, second["frames"]?["vblanks"]?.doubleValue ?? 0)
        let t0 = monotonicNow()
        usleep(2_000_000)
        let later = Self.entries(status()?["outputs"])
        try #require(later.count == 2)
        let dt = monotonicNow() - t0
        let d0 = (later[0]["frames"]?["vblanks"]?.doubleValue ?? 0) - v0.0
        let d1 = (later[1]["frames"]?["vblanks"]?.doubleValue ?? 0) - v0.1
        // The second output's entry is written four times a second: up to 0.25 s (5 vblanks) old.
        #expect(abs(d0 - 10 * dt) <= 3, "first output: \(d0) vblanks in \(dt) s at 10 Hz")
        #expect(abs(d1 - 20 * dt) <= 12, "second output: \(d1) vblanks in \(dt) s at 20 Hz")
        #expect(later[1]["item"]?.stringValue == "blue")
    }

    @Test("ctl reload of the catalog folder reaches the other outputs",
          .enabled(if: VitrineBinary.available, VitrineBinary.absent))
    func reloadReachesTheOtherOutputs() throws {
        let folder = try Self.folder()
        try FileManager.default.copyItem(atPath: try Harness.colorClip("lime", seconds: 3, size: "160x90"), toPath: folder + "/media/green.mp4")
        let manifest = { (version: Int, side: String) in """
            {"schema": "vitrine.manifest/1", "version": \(version), "title": "Two screens", "loop": true, "display": {"mode": "160x90@10"},
             "playlist": [{"id": "red", "type": "video", "src": "media/red.mp4"}],
             "playlists": {"side": [{"id": "\(side)", "type": "video", "src": "media/\(side).mp4"}]}}
            """ }
        try Harness.writeManifest(manifest(3, "blue"), in: folder)
        let socket = folder + "/control.sock"
        let config = #"""
            {"control": {"path": "\#(socket)"},
             "outputs": [{"connector": "HDMI-A-1"}, {"connector": "HDMI-A-2", "playlist": "side"}]}
            """#
        let player = try Self.play(folder, config: config)
        defer { player.terminate(); player.wait(timeout: .seconds(10)) }
        let wait = Self.statusReader(socket, count: 2)
        var o = wait { $0[1]["item"]?.stringValue == "blue" }
        try #require(o.count == 2, "\(player.outputSoFar)")
        #expect(o[1]["item"]?.stringValue == "blue")

        // The folder's manifest changes: "side" now plays green. ctl reload is the first output's;
        // the second takes it at its next item boundary (3 s clips).
        try Harness.writeManifest(manifest(4, "green"), in: folder)
        let reload = try VitrineBinary.run(["ctl", "--socket", socket, "reload"])
        #expect(reload.code == 0, "\(reload.err)")
        o = wait { $0[1]["item"]?.stringValue == "green" }
        #expect(o.count == 2 && o[1]["item"]?.stringValue == "green", "\(o); \(player.outputSoFar.err.suffix(2000))")
        #expect(o.first?["item"]?.stringValue == "red")
        // Taken once, by the second output, not at the start (the first run's start publishes the
        // catalog the second read itself).
        let followed = player.outputSoFar.err.components(separatedBy: "\n").filter { $0.contains("following the first output's catalog") }
        #expect(followed.count == 1 && followed.allSatisfy { $0.contains("version 4") }, "\(followed)")
    }

    @Test("An output whose playlist cannot play is on the slate, with the reason",
          .enabled(if: VitrineBinary.available, VitrineBinary.absent))
    func outputOnTheSlate() throws {
        let folder = try Self.folder()
        try Harness.writeManifest("""
            {"schema": "vitrine.manifest/1", "version": 3, "title": "Two screens", "loop": true, "display": {"mode": "160x90@10"},
             "playlist": [{"id": "red", "type": "video", "src": "media/red.mp4"}],
             "playlists": {"broken": [{"id": "gone", "type": "video", "src": "media/gone.mp4"}]}}
            """, in: folder)
        let socket = folder + "/control.sock"
        let config = #"""
            {"control": {"path": "\#(socket)"}, "outputs": [{"connector": "HDMI-A-1"}, {"connector": "DP-1", "playlist": "broken"}]}
            """#
        let player = try Self.play(folder, config: config)
        defer { player.terminate(); player.wait(timeout: .seconds(10)) }
        let wait = Self.statusReader(socket, count: 2)
        let o = wait { $0[1]["state"]?.stringValue == "slate" && $0[0]["item"]?.stringValue == "red" }
        try #require(o.count == 2, "\(player.outputSoFar)")
        #expect(o[0]["state"]?.stringValue == "playing" && o[0]["item"]?.stringValue == "red")
        #expect(o[1]["state"]?.stringValue == "slate" && o[1]["item"] == .null && o[1]["position"] == .null, "\(o[1])")
        #expect(o[1]["error"]?.stringValue?.isEmpty == false, "\(o[1])")
    }

    @Test("Each output's wall sits key by key on the config's: two tiles of one wall play; an output without its column is on the slate",
          .enabled(if: VitrineBinary.available, VitrineBinary.absent))
    func wallTilesOverTheConfigsWall() throws {
        let folder = try Self.folder()
        let socket = folder + "/control.sock"
        let config = #"""
            {"control": {"path": "\#(socket)"}, "wall": {"columns": 2, "rows": 1, "row": 0},
             "outputs": [{"connector": "HDMI-A-1", "wall": {"column": 0}}, {"connector": "HDMI-A-2", "wall": {"column": 1}},
                         {"connector": "DP-1"}]}
            """#
        let player = try Self.play(folder, config: config)
        defer { player.terminate(); player.wait(timeout: .seconds(10)) }
        let wait = Self.statusReader(socket, count: 3)
        let o = wait { $0[0]["item"]?.stringValue == "red" && $0[1]["item"]?.stringValue == "red" && $0[2]["state"]?.stringValue == "slate" }
        try #require(o.count == 3, "\(player.outputSoFar)")
        // The first two: the config's 2×1 wall with their own column (not the first output's wall for the second).
        #expect(o[0]["state"]?.stringValue == "playing" && o[0]["item"]?.stringValue == "red", "\(o[0])")
        #expect(o[1]["state"]?.stringValue == "playing" && o[1]["item"]?.stringValue == "red", "\(o[1])")
        // The third has the config's wall alone: no column.
        #expect(o[2]["state"]?.stringValue == "slate" && o[2]["item"] == .null, "\(o[2])")
        #expect(o[2]["error"]?.stringValue?.contains("wall.column: required") == true, "\(o[2])")
    }

    /// A reader of `outputs` from the control socket's status: it polls (up to 20 s) until `what`
    /// holds with `count` entries, and returns the last read.
    static func statusReader(_ socket: String, count: Int) -> (([JSONValue]) -> Bool) -> [JSONValue] {
        func outputs() -> [JSONValue] {
            guard let c = try? ControlClient(path: socket, timeout: .seconds(1)) else { return [] }
            defer { c.close() }
            return entries((try? c.request([.string("status")]))?.data?["outputs"])
        }
        func wait(_ what: ([JSONValue]) -> Bool) -> [JSONValue] {
            var o: [JSONValue] = []
            for _ in 0..<200 {
                o = outputs()
                if o.count == count && what(o) { break }
                usleep(100_000)
            }
            return o
        }
        return wait
    }

    @Test("An output whose screen cannot be opened is reported failed with the reason, and tried again")
    func failedOutputIsReported() throws {
        let folder = try Self.folder()
        let outputs = [OutputSettings(connector: "HDMI-A-1"), OutputSettings(connector: "HDMI-A-2", playlist: "side")]
        var o = RunOptions()
        o.output = .drm
        o.card = folder + "/no-such-card"
        o.audioDevice = "none"
        let reports = OutputReports(outputs: outputs)
        let (sink, records) = LogSink.memory()
        let screens = SecondaryScreens(outputs: Array(outputs.dropFirst()), source: .catalog(folder: folder, manifest: folder + "/manifest.json"),
                                       options: o, reports: reports, eventLog: nil, log: Logger(label: "test", sink: sink))
        #expect(reports.others.map(\.state) == ["starting"])
        screens.start()
        var entry = reports.others[0]
        for _ in 0..<100 where entry.state != "failed" {
            usleep(50_000)
            entry = reports.others[0]
        }
        screens.requestStop()
        screens.join(timeout: 10)
        #expect(entry.state == "failed")
        #expect(entry.connector == "HDMI-A-2" && entry.playlist == "side")
        #expect(entry.error?.contains("no-such-card") == true, "\(entry.error ?? "no error")")
        #expect(entry.item == nil && entry.framesPresented == 0)
        let lines = records().map(\.message)
        #expect(lines.contains { $0.contains("tried again in 5 s, the others play on") }, "\(lines)")
        // The JSON entry carries the reason.
        #expect(entry.json["error"]?.stringValue == entry.error && entry.json["state"]?.stringValue == "failed")
    }

    @Test("The other outputs' trouble on systemd's STATUS line, after the first output's own")
    func troubleOnTheStatusLine() {
        let reports = OutputReports(outputs: [OutputSettings(connector: "HDMI-A-1"), OutputSettings(connector: "HDMI-A-2"),
                                              OutputSettings(connector: "DP-1", playlist: "menu")])
        #expect(reports.others.map(\.connector) == ["HDMI-A-2", "DP-1"])
        #expect(reports.trouble == nil)  // starting
        reports.update(0) { $0.state = "playing"; $0.connection = "connected" }
        reports.update(1) { $0.state = "playing"; $0.connection = "connected" }
        #expect(reports.trouble == nil)
        reports.update(0) { $0.connection = "disconnected" }
        #expect(reports.trouble == "HDMI-A-2: no screen connected")
        reports.update(1) { $0.state = "failed"; $0.error = "DRM lease refused" }
        #expect(reports.trouble == "HDMI-A-2: no screen connected; DP-1: failed")
        reports.update(5) { $0.state = "failed" }  // no such output: nothing changes
        #expect(reports.others.count == 2)

        let feeder = WatchdogFeeder(now: 0)
        #expect(feeder.statusLine == "playing")
        feeder.otherOutputs(reports.trouble)
        #expect(feeder.statusLine == "playing; HDMI-A-2: no screen connected; DP-1: failed")
        feeder.status("no screen connected (HDMI-A-1); playing on")
        #expect(feeder.statusLine == "no screen connected (HDMI-A-1); playing on; HDMI-A-2: no screen connected; DP-1: failed")
        feeder.otherOutputs(nil)
        #expect(feeder.statusLine == "no screen connected (HDMI-A-1); playing on")
    }
}
