// The player on MQTT: real `vitrine run` processes (headless, real time) against a real mosquitto
// on a loopback port: the retained status, commands and their replies, the allow-list, events,
// the last will, a broker restart, and 50 players answering one fanned-out status.
import Foundation
import Testing
import SystemSupport
@testable import Vitrine
import VitrineCore
import VitrineTestSupport

/// A catalog of one 2 s solid-colour clip looping (`clip` then `item2`), and a config that points
/// the player at `broker` as box `box` of site `site`.
private struct FleetBox {
    let folder: String
    let config: String
    let events: String
    let box: String

    init(broker: MosquittoBroker, box: String, site: String = "t", extra: String = "", clip: String) throws {
        folder = try Harness.newFolder("fleet-\(box)")
        try FileManager.default.copyItem(atPath: clip, toPath: folder + "/media/a.mp4")
        try Harness.writeManifest("""
            {"schema": "vitrine.manifest/1", "version": 3, "title": "Fleet test", "loop": true,
             "display": {"mode": "160x90@10"},
             "playlist": [{"id": "clip", "type": "video", "src": "media/a.mp4"},
                          {"id": "item2", "type": "video", "src": "media/a.mp4"}]}
            """, in: folder)
        config = folder + "/config.json"
        events = folder + "/events.jsonl"
        self.box = box
        try """
            {"library": "\(folder)/library",
             "mqtt": {"host": "127.0.0.1", "port": \(broker.port), "site": "\(site)", "box": "\(box)", "keepAlive": 5 \(extra)}}
            """.write(toFile: config, atomically: true, encoding: .utf8)
    }

    func start() throws -> RunningProcess {
        try VitrineBinary.start(["run", "--catalog", folder, "--config", config, "--output", "headless", "--realtime",
                                 "--audio-device", "none", "--events", events, "--duration", "600"])
    }
}

private func json(_ text: String) throws -> JSONValue { try JSONValue(parsing: Array(text.utf8)) }

@Suite(.serialized, .enabled(if: Mosquitto.installed, Mosquitto.absent), .enabled(if: VitrineBinary.available, VitrineBinary.absent))
struct FleetMQTTTests {
    static func clip() throws -> String { try Harness.colorClip("blue", seconds: 2, size: "160x90") }

    /// The retained status comes with the catalog, the item and the frames; `status` round-trips
    /// with its `request_id`; a command the allow-list lacks, a malformed request and an unknown
    /// command get error replies; an allowed `jump` (added to `mqtt.allow`) plays that item.
    @Test func statusAndCommands() throws {
        let broker = try MosquittoBroker()
        let box = try FleetBox(broker: broker, box: "b1", extra: #", "allow": ["status", "jump"]"#, clip: try Self.clip())
        let player = try box.start()
        defer { player.terminate(); player.wait(timeout: .seconds(10)) }

        // The retained status: published on connect.
        var status: JSONValue?
        let deadline = MonotonicClock.seconds() + 20
        while MonotonicClock.seconds() < deadline {
            let text = try broker.retained("vitrine/t/b1/status")
            if let s = try? json(text), s["item"] != nil, s["item"] != .null { status = s; break }
            usleep(200_000)
        }
        let s = try #require(status, "no retained status with an item within 20 s: \(player.outputSoFar)")
        // The item is "now playing" before its first frame is on screen: on a loaded machine the
        // frame can come a while after it (the status below counts presented frames).
        #expect(player.waitForLine(containing: "first frame on screen", timeout: .seconds(20)) != nil)
        #expect(s["online"] == .bool(true))
        #expect(s["box"]?.stringValue == "b1")
        #expect(s["site"]?.stringValue == "t")
        #expect(s["catalog"]?["version"]?.doubleValue == 3)
        #expect(s["catalog"]?["title"]?.stringValue == "Fleet test")
        #expect(s["display"]?["width"]?.doubleValue == 160)
        #expect(s["display"]?["power"]?.stringValue == "on")
        #expect(s["state"]?.stringValue == "playing")

        let replies = try broker.subscriber("vitrine/t/b1/reply", count: 5, seconds: 10)
        try broker.publish("vitrine/t/b1/cmd", #"{"command":["status"],"request_id":7}"#)
        try broker.publish("vitrine/t/b1/cmd", #"{"command":["pause"],"request_id":"p"}"#)
        try broker.publish("vitrine/t/b1/cmd", #"{"command":["status""#)
        try broker.publish("vitrine/t/b1/cmd", #"{"command":["stauts"],"request_id":9}"#)
        try broker.publish("vitrine/t/b1/cmd", #"{"command":["jump","item2"],"request_id":10}"#)
        replies.wait(timeout: .seconds(15))
        let got = try MosquittoBroker.messages(replies).map { try json($0.payload) }
        #expect(got.count == 5)
        let byID = Dictionary(got.compactMap { r in r["request_id"].map { ($0.text, r) } }, uniquingKeysWith: { a, _ in a })
        #expect(byID["7"]?["error"]?.stringValue == "success")
        #expect(byID["7"]?["data"]?["frames"]?["presented"]?.doubleValue ?? 0 > 0)
        #expect(byID["\"p\""]?["error"]?.stringValue == "command not allowed")
        #expect(byID["9"]?["error"]?.stringValue == "unknown command")
        #expect(byID["9"]?["message"]?.stringValue?.contains("did you mean status") == true)
        #expect(byID["10"]?["error"]?.stringValue == "success")
        #expect(byID["0"]?["error"]?.stringValue == "invalid JSON", "mpv's request_id 0 for a request without one")

        // The jump: item2 is now playing (the event log says so, and the status).
        var jumped = false
        let until = MonotonicClock.seconds() + 10
        while MonotonicClock.seconds() < until, !jumped {
            let text = try broker.retained("vitrine/t/b1/status")
            jumped = (try? json(text))?["item"]?["id"]?.stringValue == "item2"
            if !jumped { usleep(200_000) }
        }
        #expect(jumped)
        // The clip was cut (canceled), not played to its end: the jump, not the playlist, moved on.
        let log = (try? String(contentsOfFile: box.events, encoding: .utf8)) ?? ""
        #expect(log.contains(#""event":"decoderCanceled","#) && log.contains(#""item":"clip","framesRendered""#))
    }

    /// Proof-of-play events on `…/events`; SIGTERM publishes `{"online":false}` itself; a killed
    /// player is marked offline by its last will.
    @Test func eventsAndOffline() throws {
        let broker = try MosquittoBroker()
        let clip = try Self.clip()
        let a = try FleetBox(broker: broker, box: "ev", clip: clip)
        let events = try broker.subscriber("vitrine/t/ev/events", count: 3, seconds: 20)
        let player = try a.start()
        events.wait(timeout: .seconds(25))
        let got = MosquittoBroker.messages(events).compactMap { try? json($0.payload) }
        #expect(got.count == 3)
        #expect(got.allSatisfy { $0["event"]?.stringValue != nil && $0["event"]?.stringValue != "progress" })
        player.terminate()
        player.wait(timeout: .seconds(10))
        #expect(try broker.retained("vitrine/t/ev/status").contains(#"{"online":false}"#))

        let b = try FleetBox(broker: broker, box: "killed", clip: clip)
        let killed = try b.start()
        var online = false
        for _ in 0..<100 where !online {
            online = try broker.retained("vitrine/t/killed/status").contains(#""online":true"#)
            if !online { usleep(200_000) }
        }
        #expect(online)
        killed.send(SIGKILL)
        killed.wait(timeout: .seconds(5))
        var offline = false
        for _ in 0..<50 where !offline {
            offline = try broker.retained("vitrine/t/killed/status").contains(#"{"online":false}"#)
            if !offline { usleep(100_000) }
        }
        #expect(offline, "the broker published the last will")
    }

    /// A broker killed and started again on its port (its retained messages gone with it: no
    /// persistence): the player's status is back within its backoff (1 s doubling, with jitter).
    @Test func statusIsBackAfterABrokerRestart() throws {
        let broker = try MosquittoBroker()
        let box = try FleetBox(broker: broker, box: "rs", clip: try Self.clip())
        let player = try box.start()
        defer { player.terminate(); player.wait(timeout: .seconds(10)) }
        var online = false
        for _ in 0..<100 where !online {
            online = try broker.retained("vitrine/t/rs/status").contains(#""online":true"#)
            if !online { usleep(200_000) }
        }
        #expect(online)
        broker.kill()
        usleep(1_500_000)
        try broker.start()
        let restarted = MonotonicClock.seconds()
        var back = false
        while !back && MonotonicClock.seconds() - restarted < 30 {
            back = try broker.retained("vitrine/t/rs/status").contains(#""online":true"#)
            if !back { usleep(100_000) }
        }
        let after = MonotonicClock.seconds() - restarted
        print(String(format: "mqtt: status back %.2f s after the broker restarted", after))
        #expect(back)
    }

    /// 50 headless players on one broker (160x90 at 10 Hz, one clip); one publish on the site's
    /// broadcast topic `vitrine/f/all/cmd` asks all of them for their status, and each answers
    /// on its own `…/reply` within 5 s.
    @Test func fiftyPlayersAnswerAFannedOutStatus() throws {
        let broker = try MosquittoBroker()
        let clip = try Self.clip()
        let count = 50
        let boxes = try (1...count).map { try FleetBox(broker: broker, box: String(format: "box-%02d", $0), site: "f", clip: clip) }
        var players: [RunningProcess] = []
        defer {
            players.forEach { $0.terminate() }
            players.forEach { $0.wait(timeout: .seconds(20)) }
        }
        // Each player publishes its status on connect and again as its item changes: wait for 50 topics.
        let online = try broker.subscriber("vitrine/f/+/status", count: 100_000, seconds: 150)
        for b in boxes { players.append(try b.start()) }
        var up: Set<String> = []
        let deadline = MonotonicClock.seconds() + 150
        while up.count < count && MonotonicClock.seconds() < deadline {
            usleep(200_000)
            up = Set(MosquittoBroker.messages(online).map(\.topic))
        }
        online.terminate()
        online.wait(timeout: .seconds(5))
        #expect(up.count == count, "\(up.count) of \(count) players published a status")
        let (messages, elapsed) = try broker.fanOutStatus(site: "f", count: count)
        print(String(format: "fan-out: %d of %d players answered in %.3f s", messages.count, count, elapsed))
        #expect(Set(messages.map(\.topic)) == Set(boxes.map { "vitrine/f/\($0.box)/reply" }))
        #expect(messages.allSatisfy { $0.payload.contains(#""request_id":4242"#) && $0.payload.contains(#""error":"success""#) })
        #expect(elapsed < 5)
    }
}

/// The config's `mqtt` object: every problem named by its JSON path.
struct MQTTConfigTests {
    func problems(_ text: String) -> [String] {
        do { _ = try PlayerConfig(json: Array(text.utf8)); return [] } catch { return error.problems }
    }

    @Test func parsesEveryField() throws {
        let c = try PlayerConfig(json: Array("""
            {"mqtt": {"host": "broker", "port": 8883, "tls": true, "caFile": "/etc/hostname", "username": "u", "passwordFile": "/etc/hosts",
                      "keepAlive": 10, "site": "lyon", "box": "door", "events": false, "statusInterval": 30, "allow": ["status", "jump"],
                      "queueLimit": 10}}
            """.utf8)).mqtt
        let m = try #require(c)
        #expect(m.host == "broker" && m.port == 8883 && m.tls && m.caFile == "/etc/hostname" && m.username == "u")
        #expect(m.passwordFile == "/etc/hosts" && m.keepAlive == 10 && m.site == "lyon" && m.boxName == "door" && !m.events)
        #expect(m.statusInterval == 30 && m.allow == ["status", "jump"] && m.queueLimit == 10)
        #expect(try PlayerConfig(json: Array(#"{"mqtt": {"host": "b"}}"#.utf8)).mqtt?.allow == ["status", "screenshot", "sync-now"])
    }

    @Test func namesEachProblem() {
        #expect(problems(#"{"mqtt": {}}"#) == ["mqtt.host: required (the broker's host name or address)"])
        #expect(problems(#"{"mqtt": {"host": "b", "port": 0}}"#) == ["mqtt.port: expected a port 1…65535"])
        #expect(problems(#"{"mqtt": {"host": "b", "allow": ["status", "jupm"]}}"#).first?.hasPrefix("mqtt.allow[1]: expected one of") == true)
        #expect(problems(#"{"mqtt": {"host": "b", "allow": ["jupm"]}}"#).first?.hasSuffix("(did you mean jump?)") == true)
        #expect(problems(#"{"mqtt": {"host": "b", "password": "x"}}"#) == ["mqtt.username: a password needs a username"])
        #expect(problems(#"{"mqtt": {"host": "b", "caFile": "/etc/hostname"}}"#) == [#"mqtt.tls: caFile and certFile need "tls": true"#])
        #expect(problems(#"{"mqtt": {"host": "b", "tls": true, "caFile": "/nonexistent/ca.pem"}}"#) == ["mqtt.caFile: cannot read /nonexistent/ca.pem"])
        #expect(problems(#"{"mqtt": {"host": "b", "tls": true, "caFile": "/etc"}}"#) == ["mqtt.caFile: cannot read /etc (a folder, not a file)"])
        #expect(problems(#"{"mqtt": {"host": "b", "statusInterval": 1e17}}"#) == ["mqtt.statusInterval: expected seconds from 5 to 86400"])
        #expect(problems(#"{"mqtt": {"host": "b", "site": "a\u0001b"}}"#) == ["mqtt.site: contains a control character"])
        #expect(problems(#"{"mqtt": {"host": "b", "box": "a/b"}}"#) == ["mqtt.box: contains a '/' (topic level separator)"])
        #expect(problems(#"{"mqtt": {"host": "b", "bogus": 1}}"#) == [#"mqtt.bogus: unknown field "bogus""#])
    }

    /// The password is never in what is logged about the connection.
    @Test func passwordIsNeverDescribed() throws {
        var m = MQTTConfig()
        m.host = "b"; m.username = "operator-17"; m.password = "s3cret-pw"
        let d = try m.settings(topics: .init(site: "s", box: "b")).description
        #expect(!d.contains("s3cret-pw") && !d.contains("operator-17"))
        #expect(d.contains("password=set"))
    }
}
