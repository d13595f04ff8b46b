// Fleet topics, the backoff schedule and the settings checks: no broker needed.
import Testing
import RunLoop
@testable import MQTT

@Suite struct FleetTopicsTests {
    @Test func topicsOfABox() throws {
        let topics = try FleetTopics(site: "lyon-part-dieu", box: "entrance-left")
        #expect(topics.status == "vitrine/lyon-part-dieu/entrance-left/status")
        #expect(topics.events == "vitrine/lyon-part-dieu/entrance-left/events")
        #expect(topics.cmd == "vitrine/lyon-part-dieu/entrance-left/cmd")
        #expect(topics.reply == "vitrine/lyon-part-dieu/entrance-left/reply")
        #expect(topics.broadcastCmd == "vitrine/lyon-part-dieu/all/cmd")
        #expect(topics.offlineWill == MQTTSettings.Will(topic: topics.status, payload: Array(#"{"online":false}"#.utf8), qos: 1, retain: true))
    }

    @Test(arguments: [
        ("", "box", "empty"), ("a/b", "box", "contains a '/' (topic level separator)"), ("a+", "box", "contains a '+' (wildcard)"),
        ("#", "box", "contains a '#' (wildcard)"), ("a\u{0}b", "box", "contains a NUL character"),
        (String(repeating: "é", count: 33), "box", "66 bytes, more than 64"), ("all", "box", "\"all\" is the site's broadcast level"),
    ])
    func badBoxNames(value: String, field: String, reason: String) {
        #expect(throws: MQTTError.invalidBoxID(field: field, value: value, reason: reason)) {
            try FleetTopics(site: "site", box: value)
        }
    }

    @Test func badSiteNamesNameTheSite() {
        #expect(throws: MQTTError.invalidBoxID(field: "site", value: "a/b", reason: "contains a '/' (topic level separator)")) {
            try FleetTopics(site: "a/b", box: "box")
        }
        // 64 bytes is the limit, inclusive; "all" is a good site name.
        #expect((try? FleetTopics(site: "all", box: String(repeating: "b", count: 64))) != nil)
    }
}

@Suite struct BackoffTests {
    @Test func stepsDoubleFromOneSecondToSixty() {
        let backoff = MQTTBackoff()
        #expect((0..<9).map { backoff.base(attempt: $0) } == [1, 2, 4, 8, 16, 32, 60, 60, 60].map { Duration.seconds($0) })
        #expect(backoff.bound(attempts: 3) == .seconds(7))
        #expect(backoff.base(attempt: 1000) == .seconds(60))
    }

    @Test func delaysAreBetweenHalfAndTheWholeStep() {
        let backoff = MQTTBackoff()
        var generator = SystemRandomNumberGenerator()
        var delays: [Duration] = []
        for attempt in 0..<8 {
            for _ in 0..<200 {
                let delay = backoff.delay(attempt: attempt, using: &generator)
                #expect(delay >= backoff.base(attempt: attempt) / 2 && delay <= backoff.base(attempt: attempt))
                delays.append(delay)
            }
        }
        // Jitter: the 200 delays of one attempt are not all the same.
        #expect(Set(delays.prefix(200)).count > 150)
    }
}

@Suite struct SettingsTests {
    @Test func descriptionHidesCredentials() {
        let settings = MQTTSettings(host: "mqtt.example.net", clientID: "lyon/entrance", username: "box-user-17",
                                    password: "hunter2-secret", tls: true, caFile: "/etc/vitrine/ca.pem")
        #expect(settings.port == 8883)
        #expect(settings.description == "mqtts://mqtt.example.net:8883 client=lyon/entrance username=set password=set ca=/etc/vitrine/ca.pem keepalive=30s")
        #expect(MQTTSettings(host: "h", clientID: "c").port == 1883)
    }

    @Test func badSettingsAreRefusedByName() throws {
        let loop = try EventLoop()
        func refusal(_ settings: MQTTSettings) -> MQTTError? {
            do { _ = try MQTTClient(settings: settings, loop: loop) { _ in }; return nil } catch { return error }
        }
        #expect(refusal(MQTTSettings(host: "h", clientID: "c", keepAlive: 2))
                == .invalidSetting(name: "keepAlive", reason: "2 s is outside libmosquitto's 5...65535 s"))
        #expect(refusal(MQTTSettings(host: "h", port: 70000, clientID: "c")) == .invalidSetting(name: "port", reason: "70000 is outside 1...65535"))
        #expect(refusal(MQTTSettings(host: "h", clientID: "c", password: "x")) == .invalidSetting(name: "password", reason: "needs a username"))
        #expect(refusal(MQTTSettings(host: "h", clientID: "c", tls: true, certFile: "/c.pem"))
                == .invalidSetting(name: "certFile", reason: "certFile and keyFile go together"))
        #expect(refusal(MQTTSettings(host: "h", clientID: "c", tls: true, caFile: "/nonexistent/ca.pem"))
                == .tlsFile(setting: "caFile", path: "/nonexistent/ca.pem"))
        #expect(refusal(MQTTSettings(host: "h", clientID: "c", will: .init(topic: "vitrine/+/status", payload: [])))
                == .invalidTopic(topic: "vitrine/+/status", reason: "a published topic has no '+' or '#'"))
    }

    @Test func badTopicsAreRefused() throws {
        let loop = try EventLoop()
        let client = try MQTTClient(settings: MQTTSettings(host: "127.0.0.1", clientID: "c"), loop: loop) { _ in }
        #expect(throws: MQTTError.invalidTopic(topic: "vitrine/#", reason: "a published topic has no '+' or '#'")) {
            try client.publish("vitrine/#", [])
        }
        #expect(throws: MQTTError.invalidTopic(topic: "", reason: "empty")) { try client.publish("", []) }
        #expect(throws: MQTTError.self) { try client.subscribe("vitrine/#/cmd") { _, _ in } }
        // Not started: published messages wait in the queue.
        try client.publish("vitrine/s/b/events", [1, 2, 3])
        #expect(client.queuedWhileDown == 1)
    }

    @Test func queueKeepsTheNewestAndCountsTheDropped() {
        var queue = OutboundQueue(limit: 3)
        for n in 0..<200 { queue.append(PendingMessage(topic: "t", payload: [UInt8(n)], qos: 1, retain: false)) }
        #expect(queue.count == 3)
        let (messages, dropped) = queue.drain()
        #expect(messages.map(\.payload) == [[197], [198], [199]])
        #expect(dropped == 197)
        #expect(queue.count == 0)
    }
}
