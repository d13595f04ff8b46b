// `vitrine ctl` against a real `vitrine run` (headless, real time) on its control socket: status,
// screenshot pixels, a command's effect, observe, and clients that misbehave while the picture
// goes on.
import Foundation
import Testing
import SystemSupport
import VitrineCore
import VitrineTestSupport
import ControlSocket

@Suite(.serialized, .enabled(if: VitrineBinary.available, VitrineBinary.absent))
struct ControlSocketPlayerTests {
    struct Box {
        let folder: String
        var socket: String { folder + "/control.sock" }

        init() throws {
            folder = try Harness.newFolder("ctl-player")
            for (name, colour) in [("red", "red"), ("green", "lime")] {
                try FileManager.default.copyItem(atPath: try Harness.colorClip(colour, seconds: 3, size: "160x90"), toPath: folder + "/media/\(name).mp4")
            }
            try Harness.writeManifest("""
                {"schema": "vitrine.manifest/1", "version": 5, "title": "Socket", "loop": true, "display": {"mode": "160x90@10"},
                 "playlist": [{"id": "red", "type": "video", "src": "media/red.mp4"}, {"id": "green", "type": "video", "src": "media/green.mp4"}]}
                """, in: folder)
            try #"{"library": "\#(folder)/library", "control": {"path": "\#(folder)/control.sock"}}"#
                .write(toFile: folder + "/config.json", atomically: true, encoding: .utf8)
        }

        func start() throws -> RunningProcess {
            try VitrineBinary.start(["run", "--catalog", folder, "--config", folder + "/config.json", "--output", "headless",
                                     "--realtime", "--audio-device", "none", "--duration", "600"])
        }

        func ctl(_ words: [String]) throws -> SubprocessResult { try VitrineBinary.run(["ctl", "--socket", socket] + words) }

        func waitForSocket() -> Bool {
            for _ in 0..<100 {
                if (try? ControlClient(path: socket, timeout: .seconds(1))) != nil { return true }
                usleep(100_000)
            }
            return false
        }

        func presented() throws -> Double {
            let c = try ControlClient(path: socket)
            defer { c.close() }
            return try c.request([.string("status")]).data?["frames"]?["presented"]?.doubleValue ?? -1
        }
    }

    @Test func ctlAgainstARunningPlayer() throws {
        let box = try Box()
        let player = try box.start()
        defer { player.terminate(); player.wait(timeout: .seconds(10)) }
        #expect(box.waitForSocket(), "no control socket: \(player.outputSoFar)")
        let mode = try FileManager.default.attributesOfItem(atPath: box.socket)[.posixPermissions] as? Int
        #expect(mode == 0o660)

        let status = try box.ctl(["status"])
        #expect(status.code == 0)
        let s = try JSONValue(parsing: Array(status.out.utf8))
        #expect(s["catalog"]?["title"]?.stringValue == "Socket" && s["catalog"]?["version"]?.doubleValue == 5)
        #expect(s["online"] == .bool(true))

        // The screenshot is the red clip, 160x90.
        let png = box.folder + "/now.png"
        let shot = try box.ctl(["screenshot", "--out", png])
        #expect(shot.code == 0, "\(shot.err)")
        let image = try Harness.readPNG(png)
        #expect(image.width == 160 && image.height == 90)
        #expect(image.isColor(x: 80, y: 45, 0xFE0000, tolerance: 30))

        // A command, then its effect in the status.
        #expect(try box.ctl(["jump", "green"]).code == 0)
        var green = false
        for _ in 0..<50 where !green {
            green = (try? JSONValue(parsing: Array(try box.ctl(["status"]).out.utf8)))?["item"]?["id"]?.stringValue == "green"
            if !green { usleep(100_000) }
        }
        #expect(green)
        let bad = try box.ctl(["set-volume", "7"])
        #expect(bad.code == 1 && bad.err.contains("invalid parameter"))

        // observe: the event lines as they come (the item's progress at least).
        let observer = try ControlClient(path: box.socket)
        var lines: [String] = []
        try observer.observe { line in lines.append(line); return lines.count < 3 }
        observer.close()
        #expect(lines.count == 3)
        #expect(lines.allSatisfy { (try? JSONValue(parsing: Array($0.utf8)))?["event"]?.stringValue != nil })
    }

    /// A 10 MB request and an observer that never reads: both are dealt with by the server while
    /// the picture goes on (frames presented keep growing) and other clients are answered.
    @Test func misbehavingClientsNeverStallThePicture() throws {
        let box = try Box()
        let player = try box.start()
        defer { player.terminate(); player.wait(timeout: .seconds(10)) }
        #expect(box.waitForSocket())
        let before = try box.presented()

        let big = try ControlClient(path: box.socket)
        try? big.send(bytes: [UInt8](repeating: UInt8(ascii: "a"), count: 10_000_000))
        let reply = try? big.readLine(timeout: .seconds(10))
        #expect(reply?.contains("request too long") == true)
        big.close()

        let idle = try ControlClient(path: box.socket)
        try idle.send(line: #"{"command":["observe"],"request_id":1}"#)
        // It never reads; the player goes on.
        usleep(2_000_000)
        let after = try box.presented()
        #expect(after >= before + 10, "frames presented went from \(before) to \(after) in 2 s at 10 Hz")
        idle.close()
        #expect(player.isRunning)
    }
}
