import Foundation
import Testing
@testable import Vitrine
import VitrineCore

@Suite("Proof-of-play event log")
struct EventLogTests {
    @Test("run --events writes one JSON object per line with monotonic and wall-clock times")
    func jsonLines() throws {
        let dir = try Harness.newFolder("events")
        try FileManager.default.copyItem(atPath: try Harness.colorClip("red", seconds: 1), toPath: dir + "/media/red.mp4")
        try Harness.writeManifest("""
            { "schema": "vitrine.manifest/1", "version": 1, "loop": false, "display": { "mode": "64x36@30" },
              "playlist": [ { "id": "r", "type": "video", "src": "media/red.mp4",
                              "cuePoints": [ { "time": 0.5, "id": "mid", "action": { "type": "log", "message": "halfway \\"red\\"" } } ] } ] }
            """, in: dir)
        let log = dir + "/events.jsonl"
        _ = try Harness.play(try Harness.manifest(in: dir), catalog: dir, duration: 3, snapshots: []) { $0.eventsPath = log }
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
        var names: [String] = []
        var lastMono = -Double.infinity
        for line in lines {
            let obj = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not JSON: \(line)")
            names.append(obj["event"] as! String)
            let mono = try #require(obj["monotonic"] as? Double)
            #expect(mono >= lastMono - 1)   // headless progress events carry virtual host times
            lastMono = max(lastMono, mono)
            let wall = try #require(obj["wall"] as? String)
            #expect(wall.hasPrefix("20") && wall.hasSuffix("Z"))
        }
        for required in ["didAdvanceToPlaybackSession", "playbackStateChanged", "decodingStarted", "renderingStarted",
                         "nowPlayingChanged", "decodingComplete", "durationChanged", "renderingWillComplete",
                         "progress", "cuePoints", "action", "renderingComplete", "endOfAudio"] {
            #expect(names.contains(required), "missing \(required) in \(names)")
        }
        // Proof of play: the item started before it completed, and the playlist ended.
        #expect(names.firstIndex(of: "renderingStarted")! < names.firstIndex(of: "renderingComplete")!)
        #expect(names.last == "playbackStateChanged")
        let cue = lines.first { $0.contains("\"cuePoints\"") }!
        #expect(cue.contains("\"item\":\"r\"") && cue.contains("\"id\":\"mid\""))
    }

    @Test("JSON escaping of names and messages")
    func escaping() {
        let e = TimedEvent(event: .action(.log(message: "a \"quoted\"\nline\t\u{1}"), source: "cue r/x"), monotonic: 1.5, wall: 0)
        let json = EventLog.json(e)
        #expect(json.contains(#""action":"log a \"quoted\"\nline\t\u0001""#))
        #expect(json.hasPrefix(#"{"event":"action","monotonic":1.500000,"wall":"1970-01-01T00:00:00.000Z""#))
    }
}
