// The command vocabulary (control socket and MQTT) on a real headless run: each command is given
// between two vblanks, as the run loop gives it, and its effect is read back from the engine, the
// status and the screen's pixels.
import Foundation
import Testing
import Media
@testable import Vitrine
import VitrineCore
import VitrineTestSupport
import ControlSocket

extension Result where Success == JSONValue?, Failure == ControlError {
    /// `"success"` or the error's code, as the reply line's `error`.
    var errorText: String { switch self { case .success: return "success"; case .failure(let e): return e.code.rawValue } }
    var data: JSONValue? { if case .success(let d) = self { return d }; return nil }
    var message: String? { if case .failure(let e) = self { return e.message }; return nil }
}

@Suite(.serialized)
struct ControlCommandTests {
    /// A catalog: a red clip then a green one, a promo playlist (blue), a tap that shows the
    /// "hours" popup; 160x90 at 10 Hz.
    static func catalog() throws -> String {
        let dir = try Harness.newFolder("control")
        for (name, colour) in [("red", "red"), ("green", "lime"), ("blue", "blue")] {
            try FileManager.default.copyItem(atPath: try Harness.colorClip(colour, seconds: 4, size: "160x90"), toPath: dir + "/media/\(name).mp4")
        }
        try Harness.writeManifest(manifest(version: 3), in: dir)
        return dir
    }

    static func manifest(version: Int) -> String {
        """
        {"schema": "vitrine.manifest/1", "version": \(version), "title": "Control v\(version)", "loop": true,
         "display": {"mode": "160x90@10"},
         "tap": {"type": "showOverlay", "overlay": "hours"},
         "overlays": {"hours": {"title": "Hours", "body": "9–18", "buttons": [{"label": "Close", "action": {"type": "hideOverlays"}}]}},
         "playlists": {"promo": [{"id": "promo", "type": "video", "src": "media/blue.mp4"}]},
         "playlist": [{"id": "red", "type": "video", "src": "media/red.mp4"},
                      {"id": "green", "type": "video", "src": "media/green.mp4"}]}
        """
    }

    /// Runs the catalog for `seconds` of catalog time; `script[n]` runs on the loop after vblank n
    /// with the engine and the commands. Returns the replies by vblank.
    func run(_ dir: String, seconds: Double, library: String,
             script: [Int: (PlaybackEngine, ControlCommands, @escaping (CommandResult) -> Void) -> Void]) throws -> [Int: [CommandResult]] {
        var o = RunOptions()
        o.output = .headless
        o.duration = seconds
        o.realtime = false
        let (sink, _) = LogSink.memory()
        let log = Logger(label: "test", sink: sink)
        let player = Player(manifest: try Harness.manifest(in: dir), catalogDirectory: dir, options: o, log: log)
        let fleet = FleetService(mqtt: nil, library: library, problems: RecentProblems(), log: log)
        player.fleet = fleet
        var engine: PlaybackEngine?
        player.configureEngine = { engine = $0 }
        var replies: [Int: [CommandResult]] = [:]
        var vblank = 0
        player.onVblank = { _ in
            vblank += 1
            guard let step = script[vblank], let engine, let commands = fleet.commands else { return }
            let at = vblank
            step(engine, commands) { replies[at, default: []].append($0) }
        }
        _ = try player.run()
        return replies
    }

    @Test func everyCommandOnAHeadlessRun() throws {
        let dir = try Self.catalog()
        let library = try Harness.newFolder("control-library")
        var states: [String: String] = [:]
        var volumes: [Double] = []
        var playing: [Int: String] = [:]
        var popupShown = false, popupHidden = false
        let replies = try run(dir, seconds: 9, library: library, script: [
            5: { _, c, r in c.execute([.string("status")], origin: .local, reply: r) },
            6: { _, c, r in c.execute([.string("screenshot")], origin: .local, reply: r) },
            7: { _, c, r in c.execute([.string("screenshot"), .string("path")], origin: .local, reply: r) },
            8: { _, c, r in
                c.execute([.string("show-overlay"), .string("nope")], origin: .local, reply: r)
                c.execute([.string("set-volume"), .double(0.25)], origin: .local, reply: r)
                c.execute([.string("set-volume"), .double(2)], origin: .local, reply: r)
                c.execute([.string("pause")], origin: .local, reply: r)
                c.execute([.string("jump"), .string("missing")], origin: .local, reply: r)
                c.execute([.string("tap"), .double(500), .double(10)], origin: .local, reply: r)
                c.execute([.string("jump")], origin: .network, reply: r)
            },
            12: { e, c, r in
                states["paused"] = e.playbackState.rawValue
                volumes.append(e.volume)
                c.execute([.string("resume")], origin: .local, reply: r)
            },
            15: { e, c, r in
                states["resumed"] = e.playbackState.rawValue
                c.execute([.string("jump"), .string("green"), .double(1)], origin: .local, reply: r)
            },
            20: { e, c, r in
                playing[20] = e.nowPlaying?.id
                c.execute([.string("tap"), .double(80), .double(45)], origin: .local, reply: r)
            },
            30: { e, c, r in
                popupShown = e.overlays?.presenter.isVisible("hours") == true
                c.execute([.string("hide-overlays")], origin: .local, reply: r)
            },
            40: { e, c, r in
                popupHidden = e.overlays?.presenter.isVisible("hours") == false
                c.execute([.string("interrupt-start"), .string("playlist"), .string("promo"), .double(3)], origin: .local, reply: r)
            },
            45: { e, c, r in
                playing[45] = e.nowPlaying?.id
                c.execute([.string("interrupt-stop")], origin: .local, reply: r)
            },
            50: { e, c, r in
                playing[50] = e.nowPlaying?.id
                try? Self.manifest(version: 4).write(toFile: dir + "/manifest.json", atomically: true, encoding: .utf8)
                c.execute([.string("reload")], origin: .local, reply: r)
            },
            60: { _, c, r in c.execute([.string("status")], origin: .local, reply: r) },
        ])

        // status: the catalog, the item, the display, the frames so far.
        let status = try #require(replies[5]?.first?.data)
        #expect(replies[5]?.first?.errorText == "success")
        #expect(status["catalog"]?["version"]?.doubleValue == 3)
        #expect(status["item"]?["id"]?.stringValue == "red")
        #expect(status["display"]?["width"]?.doubleValue == 160 && status["display"]?["height"]?.doubleValue == 90)
        #expect(status["frames"]?["presented"]?.doubleValue == 5)
        // The clock as adjtimex(2) reads it on this machine: a state, whichever it is.
        #expect(status["clock"]?["source"]?.stringValue == "adjtimex")
        let synchronized = status["clock"]?["synchronized"]
        #expect(synchronized == .bool(true) || synchronized == .bool(false), "\(status["clock"].map { $0.text } ?? "no clock")")
        #expect(status["clock"]?["maxErrorMs"]?.doubleValue.map { $0 >= 0 } == true)
        #expect(status["state"]?.stringValue == "playing")
        #expect(status["schedule"]?["playlist"]?.stringValue == "default")

        // screenshot: the red clip's pixels, as base64 and as a file inside the library.
        let shot = try #require(replies[6]?.first?.data?["png_base64"]?.stringValue)
        let file = library + "/shot.png"
        try #require(Data(base64Encoded: shot)).write(to: URL(fileURLWithPath: file))
        let image = try Harness.readPNG(file)
        #expect(image.width == 160 && image.height == 90)
        #expect(image.isColor(x: 80, y: 45, 0xFE0000, tolerance: 30))
        let path = try #require(replies[7]?.first?.data?["path"]?.stringValue)
        #expect(path.hasPrefix(library + "/screenshots/screenshot-") && path.hasSuffix(".png"))
        #expect(try Harness.readPNG(path).isColor(x: 10, y: 10, 0xFE0000, tolerance: 30))

        // The errors, each with its kind.
        let eight = replies[8] ?? []
        #expect(eight.map(\.errorText) == ["invalid parameter", "success", "invalid parameter", "success", "invalid parameter",
                                       "invalid parameter", "command not allowed"])
        #expect(eight[0].message == #"show-overlay: no overlay "nope" in the catalog playing"#)

        #expect(states["paused"] == "paused" && states["resumed"] == "playing")
        #expect(volumes == [0.25])
        #expect(playing[20] == "green")
        #expect(popupShown, "the tap at the screen's centre showed the popup, as a touch would")
        #expect(popupHidden)
        #expect(playing[45] == "promo")
        #expect(playing[50] != "promo")
        // reload: the manifest on disk (version 4) plays at once.
        #expect(replies[50]?.first?.errorText == "success")
        #expect(replies[60]?.first?.data?["catalog"]?["version"]?.doubleValue == 4)
        #expect(replies[60]?.first?.data?["catalog"]?["title"]?.stringValue == "Control v4")
    }

    /// An unknown command: a near name is suggested; a name over 64 characters gets no suggestion
    /// (the edit distance is quadratic in its length) and is echoed as its first 64 and "…".
    @Test func unknownCommandNamesAreEchoedShort() throws {
        let commands = ControlCommands(networkAllow: [], screenshotFolder: NSTemporaryDirectory(),
                                       log: Logger(label: "t", sink: LogSink.memory().0))
        var results: [Result<JSONValue?, ControlError>] = []
        commands.execute([.string("statuz")], origin: .local) { results.append($0) }
        let long = String(repeating: "statuz", count: 10_000)  // 60 KB
        commands.execute([.string(long)], origin: .local) { results.append($0) }
        #expect(results.count == 2)
        #expect(results.first?.errorText == "unknown command")
        #expect(results.first?.message == "statuz: no such command (did you mean status?)")
        #expect(results.last?.errorText == "unknown command")
        #expect(results.last?.message == String(long.prefix(64)) + "…: no such command")
    }

    /// A reload of a manifest that became invalid is refused with its JSON path; the catalog playing stays.
    @Test func reloadOfABadManifestKeepsPlaying() throws {
        let dir = try Self.catalog()
        let library = try Harness.newFolder("control-library")
        let replies = try run(dir, seconds: 2, library: library, script: [
            3: { _, c, r in
                try? #"{"schema": "vitrine.manifest/1", "version": "four", "playlist": []}"#.write(toFile: dir + "/manifest.json", atomically: true, encoding: .utf8)
                c.execute([.string("reload")], origin: .local, reply: r)
            },
            5: { _, c, r in c.execute([.string("status")], origin: .local, reply: r) },
        ])
        #expect(replies[3]?.first?.errorText == "error running command")
        #expect(replies[3]?.first?.message?.contains("version") == true)
        #expect(replies[5]?.first?.data?["catalog"]?["version"]?.doubleValue == 3)
        #expect(replies[5]?.first?.data?["item"]?["id"]?.stringValue == "red")
    }
}
