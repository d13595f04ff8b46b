import Foundation
import Testing
@testable import Vitrine
import ControlSocket
import VitrineCore
import VitrineTestSupport

@Suite("Appliance config")
struct ConfigTests {
    @Test("the shipped config/config.json parses to the documented defaults")
    func shippedConfig() throws {
        let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let data = try Data(contentsOf: repo.appendingPathComponent("config/config.json"))
        let c = try PlayerConfig(json: [UInt8](data))
        #expect(c.library == "/var/lib/vitrine" && c.output == .auto && c.connector == nil && c.audioDevice == nil)
        #expect(c.periodFrames == 1024 && c.bufferFrames == 4096)
        #expect(c.headlessWidth == 1280 && c.headlessHeight == 720 && c.headlessRefresh == 30)
        #expect(c.control == ControlSettings(enabled: true, path: "/run/vitrine/control.sock", group: "vitrine-admin"))
    }

    @Test("input.calibration takes libinput's six numbers; anything else is an error")
    func calibration() throws {
        let c = try PlayerConfig(json: Array(#"{"input": {"calibration": [0, 1, 0, -1, 0, 1]}}"#.utf8))
        #expect(c.touchCalibration == CalibrationMatrix(a: 0, b: 1, c: 0, d: -1, e: 0, f: 1))
        #expect(throws: ConfigError.self) { try PlayerConfig(json: Array(#"{"input": {"calibration": [1, 0, 0]}}"#.utf8)) }
    }

    @Test("a config key holding a newline or \": \" cannot forge a line of the error: its path is escaped")
    func hostileKeys() {
        #expect {
            _ = try PlayerConfig(json: Array(#"{"x\ninput.calibration: fine": 1, "audio": {"a: b": 2}}"#.utf8))
        } throws: { error in
            guard let e = error as? ConfigError else { return false }
            return e.problems == [#"["x\ninput.calibration: fine"]: unknown field "x\ninput.calibration: fine""#,
                                  #"audio["a: b"]: unknown field "a: b""#]
        }
    }

    @Test("control: enabled, path and group, with their defaults")
    func controlSettings() throws {
        let defaults = try PlayerConfig(json: Array("{}".utf8)).control
        #expect(defaults == ControlSettings(enabled: true, path: "/run/vitrine/control.sock", group: "vitrine-admin"))
        let c = try PlayerConfig(json: Array(#"{"control": {"enabled": false, "path": "/run/vitrine/ctl.sock", "group": "vitrine-admin"}}"#.utf8))
        #expect(c.control == ControlSettings(enabled: false, path: "/run/vitrine/ctl.sock", group: "vitrine-admin"))
        #expect(try PlayerConfig(json: Array(#"{"control": {"group": null}}"#.utf8)).control.group == nil)
    }

    @Test("control: every wrong value is a problem naming its path")
    func controlProblems() {
        let long = "/run/" + String(repeating: "s", count: 103)
        #expect {
            _ = try PlayerConfig(json: Array(("{\"control\": {\"enabled\": \"yes\", \"path\": \"control.sock\", \"group\": \"\", "
                                              + "\"mode\": 432}}").utf8))
        } throws: { error in
            guard let e = error as? ConfigError else { return false }
            return e.problems == ["control.enabled: expected true or false",
                                  "control.path: expected an absolute path such as \"/run/vitrine/control.sock\"",
                                  "control.group: expected a group name such as \"vitrine-admin\", or null",
                                  "control.mode: unknown field \"mode\""]
        }
        #expect {
            _ = try PlayerConfig(json: Array(#"{"control": {"path": "\#(long)", "group": "a b"}}"#.utf8))
        } throws: { error in
            guard let e = error as? ConfigError else { return false }
            return e.problems == ["control.path: 108 bytes, longer than the 107 a Unix socket path holds",
                                  "control.group: expected a group name such as \"vitrine-admin\", or null"]
        }
        #expect {
            _ = try PlayerConfig(json: Array(#"{"control": true}"#.utf8))
        } throws: { error in (error as? ConfigError)?.problems == ["control: expected an object"] }
        #expect {
            _ = try PlayerConfig(json: Array(#"{"control": {"path": 5, "enabled": null}}"#.utf8))
        } throws: { error in
            (error as? ConfigError)?.problems == ["control.path: expected an absolute path such as \"/run/vitrine/control.sock\"",
                                                  "control.enabled: expected true or false"]
        }
    }

    @Test("every problem is reported with its path")
    func problems() {
        #expect {
            _ = try PlayerConfig(json: Array(#"{"outpt": "drm", "audio": {"periodFrames": 8, "bufferFrames": 2048}, "output": "x11"}"#.utf8))
        } throws: { error in
            guard let e = error as? ConfigError else { return false }
            return e.problems == ["outpt: unknown field \"outpt\"", "audio.periodFrames: expected an integer ≥ 16",
                                  "output: expected auto, drm or headless"]
        }
    }
}

/// The `vitrine` executable, built next to the test bundle by `swift build`.
@Suite("Command line", .enabled(if: VitrineBinary.available, VitrineBinary.absent))
struct CLITests {
    static func run(_ args: [String]) throws -> SubprocessResult { try VitrineBinary.run(args) }

    @Test("--help on each command prints its usage and exits 0", arguments: ["run", "play", "validate", "probe", "bench", "import"])
    func help(command: String) throws {
        let r = try Self.run([command, "--help"])
        #expect(r.code == 0)
        #expect(r.out.hasPrefix("usage: vitrine \(command)"))
    }

    @Test("usage errors exit 64")
    func usage() throws {
        #expect(try Self.run([]).code == 64)
        #expect(try Self.run(["frobnicate"]).code == 64)
        let r = try Self.run(["run", "--catalog", "/tmp", "--bogus"])
        #expect(r.code == 64 && r.err.contains("unknown option --bogus"))
        #expect(try Self.run(["run", "--catalog", "/tmp", "--library", "/tmp"]).code == 64)
        #expect(try Self.run(["run", "--catalog", "/tmp", "--duration", "soon"]).code == 64)
    }

    @Test("validate: 0 for a good manifest, 65 with every problem as path: reason")
    func validate() throws {
        let dir = try Harness.newFolder("cli-validate")
        // A real clip: three bytes named a.mp4 cannot play, and validate says so (ValidateTests).
        try FileManager.default.copyItem(atPath: try Harness.colorClip("red", seconds: 1), toPath: dir + "/media/a.mp4")
        try Harness.writeManifest("""
            { "schema": "vitrine.manifest/1", "version": 3, "playlist": [ { "id": "a", "type": "video", "src": "media/a.mp4" } ] }
            """, in: dir)
        let good = try Self.run(["validate", dir])
        #expect(good.code == 0 && good.out.contains("valid: 1 item(s), version 3"))
        try Harness.writeManifest("""
            { "schema": "vitrine.manifest/1", "version": 3, "display": { "rotation": 45 },
              "playlist": [ { "id": "a", "type": "image", "src": "media/intro.mp4" } ] }
            """, in: dir)
        let bad = try Self.run(["validate", dir + "/manifest.json"])
        #expect(bad.code == 65)
        #expect(bad.out.contains("display.rotation: "))
        #expect(bad.out.contains("playlist[0].src: file not found: media/intro.mp4"))
        #expect(bad.out.contains("playlist[0].duration: required for images"))
    }

    @Test("run --output drm without a DRM device exits 69 (device unavailable)",
          .enabled(if: !FileManager.default.fileExists(atPath: "/dev/dri/card0"), "this machine has a DRM device"))
    func drmUnavailable() throws {
        let dir = try Harness.newFolder("cli-drm")
        try FileManager.default.copyItem(atPath: try Harness.colorClip("red", seconds: 1), toPath: dir + "/media/red.mp4")
        try Harness.writeManifest("""
            { "schema": "vitrine.manifest/1", "version": 1, "playlist": [ { "id": "r", "type": "video", "src": "media/red.mp4" } ] }
            """, in: dir)
        let r = try Self.run(["run", "--catalog", dir, "--output", "drm", "--audio-device", "none", "--duration", "1"])
        #expect(r.code == 69)
        #expect(r.err.contains("DRM/KMS"))
    }

    @Test("probe names what is missing on a machine without devices")
    func probe() throws {
        let r = try Self.run(["probe"])
        #expect(r.code == 0)
        #expect(r.out.contains("== DRM/KMS ==") && r.out.contains("== ALSA ==") && r.out.contains("== Headless =="))
        #expect(r.out.contains("\nhot-plug: udev monitor on drm (change, HOTPLUG=1)"))
        if !FileManager.default.fileExists(atPath: "/dev/dri") { #expect(r.out.contains("/dev/dri")) }
    }
}
