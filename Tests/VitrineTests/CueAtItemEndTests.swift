import Foundation
import Testing
import Media
@testable import Vitrine
import VitrineCore
import VitrineTestSupport

/// A cue point at an item's last instant (its length, after the last frame's PTS) fires when the
/// item ends: the lobby example hides its popup with one at 4.0 s on a 4.0 s clip.
@Suite("Cue points at an item's end", .serialized)
struct CueAtItemEndTests {
    @Test("a popup shown at 0.5 s and hidden by a cue at 2.0 s on a 2.0 s clip: up at 1 s, gone under the next item")
    func hideAtTheEnd() throws {
        let dir = try Harness.newFolder("cue-end")
        try FileManager.default.copyItem(atPath: try Harness.colorClip("red", seconds: 2, size: "320x180"), toPath: dir + "/media/red.mp4")
        try FileManager.default.copyItem(atPath: try Harness.colorClip("blue", seconds: 2, size: "320x180"), toPath: dir + "/media/blue.mp4")
        try Harness.writeManifest("""
            { "schema": "vitrine.manifest/1", "version": 1, "display": { "mode": "320x180@30" }, "loop": false,
              "playlist": [ { "id": "r", "type": "video", "src": "media/red.mp4",
                              "cuePoints": [ { "time": 0.5, "id": "show", "action": { "type": "showOverlay", "overlay": "note" } },
                                             { "time": 2.0, "id": "hide", "action": { "type": "hideOverlays" } } ] },
                            { "id": "b", "type": "video", "src": "media/blue.mp4" } ],
              "overlays": { "note": { "title": "Opening hours", "duration": 0.2,
                                      "dimming": { "color": "#000000", "alpha": 0.5 } } } }
            """, in: dir)
        let manifest = try Harness.manifest(in: dir)
        let recorder = EventRecorder()
        var o = RunOptions()
        o.output = .headless; o.duration = 3.2; o.realtime = false
        o.snapshotTimes = [1.0, 3.0]
        o.snapshotDirectory = try Harness.newFolder("cue-end-shots")
        let player = Player(manifest: manifest, catalogDirectory: dir, options: o, log: Logger(label: "t", sink: LogSink.memory().0))
        player.configureEngine = { $0.events.observe(recorder.add) }
        _ = try player.run()
        let up = try Harness.readPNG(o.snapshotDirectory + "/snapshot-001.000.png")
        let after = try Harness.readPNG(o.snapshotDirectory + "/snapshot-003.000.png")
        #expect(up.isColor(x: 4, y: 4, 0x7F0000, tolerance: 6), "dimmed red under the popup: \(up.rgb(x: 4, y: 4))")
        let panel = try Self.panel(manifest, dir, "note", 320, 180)
        #expect(up.isColor(x: panel.x + 4, y: panel.y + panel.height / 2, 0xF4F6F8, tolerance: 8), "the panel")
        #expect(after.isColor(x: 4, y: 4, 0x0000FF, tolerance: 6), "blue, not dimmed: \(after.rgb(x: 4, y: 4))")
        #expect(after.isColor(x: 160, y: 90, 0x0000FF, tolerance: 6), "no panel: \(after.rgb(x: 160, y: 90))")
        let cues = recorder.events.compactMap { e -> CuePointEvent? in if case .cuePoints(let c) = e { return c } else { return nil } }
        #expect(cues.map { $0.cuePoints.map(\.id) } == [["show"], ["hide"]])
        #expect(cues.last?.currentTime == 2.0 && cues.last?.bySeek == false)
        // Fired as the item ended: before its renderingComplete, after its last frame.
        let names = recorder.events.map(\.name)
        let hide = try #require(names.lastIndex(of: "cuePoints"))
        #expect(names[hide...].contains("renderingComplete"))
    }

    /// Where the popup `id`'s panel is on a `w`×`h` canvas.
    static func panel(_ m: Manifest, _ dir: String, _ id: String, _ w: Int, _ h: Int) throws -> Rect {
        let layer = OverlayLayer(overlays: m.overlays, catalogDirectory: dir, log: Logger(label: "t", sink: LogSink.memory().0))
        return try #require(layer.geometry(id, canvasWidth: w, canvasHeight: h)).panel
    }

    @Test("the demo (tools/make-demo-catalog, the lobby example) validates, and its popup comes and goes: up at 2 s, gone at 6 s",
          .enabled(if: VitrineBinary.available, VitrineBinary.absent))
    func demo() throws {
        let dir = try Harness.newFolder("demo") + "/catalog"
        try Subprocess.output(Repository.path("tools/make-demo-catalog"), [dir, "320x180"])
        let validated = try VitrineBinary.run(["validate", dir])
        #expect(validated.code == 0, "\(validated.out)")
        #expect(validated.out == "\(dir)/manifest.json: valid: 4 item(s), version 1\n", "no problem, no warning: \(validated.out)")
        // As `make demo` runs it, at the demo's first two snapshot times.
        let shots = try Harness.newFolder("demo-shots")
        let run = try VitrineBinary.run(["run", "--catalog", dir, "--output", "headless", "--snapshot-at", "2,6", "--snapshot-dir", shots])
        #expect(run.code == 0, "\(run.err)")
        let two = try Harness.readPNG(shots + "/snapshot-002.000.png"), six = try Harness.readPNG(shots + "/snapshot-006.000.png")
        // At 2 s the popup (shown by the cue at 1 s) is up: its light panel, inside its left padding.
        let panel = try Self.panel(try Harness.manifest(in: dir), dir, "hours", two.width, two.height)
        #expect(two.isColor(x: panel.x + 4, y: panel.y + panel.height / 2, 0xF4F6F8, tolerance: 10))
        // At 6 s the card (testsrc2) is on screen as it is in card.png: no panel, no dimming (points
        // inside its colour bars, clear of the moving parts).
        let card = try Harness.readPNG(dir + "/media/card.png")
        for (x, y) in [(25, 160), (80, 120), (135, 170), (185, 165), (290, 175)] {
            let a = six.rgb(x: x * six.width / 320, y: y * six.height / 180), b = card.rgb(x: x, y: y)
            #expect(abs(Int(a.r) - Int(b.r)) <= 12 && abs(Int(a.g) - Int(b.g)) <= 12 && abs(Int(a.b) - Int(b.b)) <= 12,
                    "(\(x), \(y)): screen \(a), card \(b)")
        }
    }
}
