// MQTTClient and mqtt-probe against Debian's mosquitto on loopback ports chosen at random, with
// mosquitto_sub and mosquitto_pub as the independent observers. Never a mock of the broker.
import Foundation
import Testing
import RunLoop
import SystemSupport
import VitrineTestSupport
@testable import MQTT

/// Runs `loop` until `done()` or `seconds` pass; returns whether `done()` came true.
@discardableResult
func pump(_ loop: EventLoop, seconds: Double, until done: () -> Bool) throws -> Bool {
    let deadline = MonotonicClock.seconds() + seconds
    while !done() {
        if MonotonicClock.seconds() >= deadline { return false }
        try loop.runOnce(timeout: .milliseconds(20))
    }
    return true
}

/// The log lines a client wrote (loop thread only).
final class LogLines {
    var lines: [String] = []
    var sink: (String) -> Void { { [unowned self] in lines.append($0) } }
}

let probe = BuildProducts.path("mqtt-probe")

@Suite(.serialized, .enabled(if: Mosquitto.installed, Mosquitto.absent))
struct BrokerTests {
    func startProbe(_ broker: MosquittoBroker, site: String = "site", box: String, keepAlive: Int = 5) throws -> RunningProcess {
        try Subprocess.start(probe, ["--host", "127.0.0.1", "--port", String(broker.port), "--site", site, "--box", box,
                                     "--keepalive", String(keepAlive)])
    }

    /// Starts a probe and waits until it says it is connected (and so published its status).
    func connectedProbe(_ broker: MosquittoBroker, box: String) throws -> RunningProcess {
        let process = try startProbe(broker, box: box)
        if process.waitForLine(containing: "connected", on: .standardOutput, timeout: .seconds(10)) == nil {
            process.send(SIGKILL)
            throw BrokerError("mqtt-probe \(box) did not connect: \(process.outputSoFar)")
        }
        return process
    }

    @Test(.enabled(if: BuildProducts.available("mqtt-probe"), BuildProducts.absent("mqtt-probe")))
    func retainedStatusAppears() throws {
        let broker = try MosquittoBroker()
        let box = try connectedProbe(broker, box: "entrance")
        defer { box.terminate(); box.wait(timeout: .seconds(5)) }
        // A subscriber that comes later gets the retained status at once (-C 1: the first message).
        #expect(try broker.retained("vitrine/site/entrance/status") == #"{"box":"entrance","online":true}"# + "\n")
    }

    @Test(.enabled(if: BuildProducts.available("mqtt-probe"), BuildProducts.absent("mqtt-probe")))
    func lastWillMarksAKilledBoxOffline() throws {
        let broker = try MosquittoBroker()
        let box = try connectedProbe(broker, box: "killed")
        let watcher = try broker.subscriber("vitrine/site/killed/status", count: 2, seconds: 10)
        // The retained online status first, then the will once the process dies without a DISCONNECT.
        #expect(watcher.waitForLine(containing: #""online":true"#, timeout: .seconds(5)) != nil)
        let killed = MonotonicClock.seconds() - watcher.started
        box.send(SIGKILL)
        box.wait(timeout: .seconds(5))
        let will = watcher.waitForLine(containing: #"{"online":false}"#, timeout: .seconds(10))
        #expect(will != nil)
        if let will { print("will published \(String(format: "%.3f", will.time - killed)) s after SIGKILL") }
        watcher.wait(timeout: .seconds(5))
        // And it stays: retained for whoever asks next.
        #expect(try broker.retained("vitrine/site/killed/status") == #"{"online":false}"# + "\n")
    }

    @Test(.enabled(if: BuildProducts.available("mqtt-probe"), BuildProducts.absent("mqtt-probe")))
    func commandRoundTrip() throws {
        let broker = try MosquittoBroker()
        let box = try connectedProbe(broker, box: "kiosk-3")
        defer { box.terminate(); box.wait(timeout: .seconds(5)) }
        let replies = try broker.subscriber("vitrine/site/kiosk-3/reply", count: 2)
        try broker.publish("vitrine/site/kiosk-3/cmd", #"{"command":["status"],"request_id":17}"#)
        try broker.publish("vitrine/site/kiosk-3/cmd", #"{"command":["reboot-now"],"request_id":18}"#)
        replies.wait(timeout: .seconds(10))
        let messages = MosquittoBroker.messages(replies)
        #expect(messages.map(\.topic) == ["vitrine/site/kiosk-3/reply", "vitrine/site/kiosk-3/reply"])
        #expect(messages.map(\.payload) == [#"{"data":{"box":"kiosk-3","online":true},"error":"success","request_id":17}"#,
                                            #"{"error":"unknown command reboot-now","request_id":18}"#])
    }

    @Test func clientReceivesWhatItSubscribedTo() throws {
        let broker = try MosquittoBroker()
        let loop = try EventLoop()
        let log = LogLines()
        let topics = try FleetTopics(site: "site", box: "in-process")
        let client = try MQTTClient(settings: MQTTSettings(host: "127.0.0.1", port: broker.port, clientID: "in-process"), loop: loop, log: log.sink)
        var received: [(String, [UInt8])] = []
        try client.subscribe(topics.cmd) { received.append(($0, $1)) }
        var subscribedAt: Double?
        client.onConnect = { subscribedAt = MonotonicClock.seconds() }
        client.start()
        #expect(try pump(loop, seconds: 10) { client.isConnected })
        // Let the SUBSCRIBE reach the broker before publishing.
        try pump(loop, seconds: 0.3) { false }
        #expect(subscribedAt != nil)
        let payload: [UInt8] = [0x00, 0xFF, 0x7B, 0x0A]  // Bytes, not text: delivered as they are.
        let pub = try Subprocess.start(Mosquitto.pub, broker.clientOptions + ["-q", "1", "-t", topics.cmd, "-s"], input: Data(payload))
        #expect(try pump(loop, seconds: 10) { !received.isEmpty })
        #expect(pub.wait(timeout: .seconds(5)).status == 0)
        #expect(received.map(\.0) == [topics.cmd])
        #expect(received.first?.1 == payload)
        client.stop()
        #expect(!client.isConnected)
    }

    @Test func statusIsBackWithinTheBackoffAfterTheBrokerRestarts() throws {
        let broker = try MosquittoBroker()
        let loop = try EventLoop()
        let log = LogLines()
        let topics = try FleetTopics(site: "site", box: "restart")
        let settings = MQTTSettings(host: "127.0.0.1", port: broker.port, clientID: "restart", keepAlive: 5, will: topics.offlineWill)
        let client = try MQTTClient(settings: settings, loop: loop, log: log.sink)
        var connects: [Double] = []
        client.onConnect = {
            connects.append(MonotonicClock.seconds())
            try? client.publish(topics.status, Array(#"{"online":true,"box":"restart"}"#.utf8), retain: true)
        }
        client.start()
        #expect(try pump(loop, seconds: 10) { client.isConnected })

        let killed = MonotonicClock.seconds()
        broker.kill()  // SIGKILL: no persistence, the retained status is gone with it.
        #expect(try pump(loop, seconds: 5) { !client.isConnected })
        try pump(loop, seconds: 2) { false }
        try broker.start()  // Same port.
        let restarted = MonotonicClock.seconds() - killed
        #expect(try pump(loop, seconds: 70) { connects.count == 2 })
        let reconnected = (connects.last ?? .infinity) - killed
        // Attempt n starts between half and all of bound(n + 1) after the loss, so the first one
        // sure to come after the restart is the first whose half-bound passes it.
        let backoff = settings.backoff
        let attempts = (1...20).first { backoff.bound(attempts: $0) / 2 >= .seconds(restarted) } ?? 20
        let limit = backoff.bound(attempts: attempts) / .seconds(1) + 1.0
        print(String(format: "reconnect: broker down %.3f s, status back %.3f s after the kill (%.3f s after the restart); bound %.1f s",
                     restarted, reconnected, reconnected - restarted, limit))
        #expect(reconnected <= limit)

        let status = try broker.startReadingRetained(topics.status)
        try pump(loop, seconds: 6) { !status.isRunning }
        #expect(status.wait(timeout: .seconds(1)).out == #"{"online":true,"box":"restart"}"# + "\n")
        #expect(log.lines.contains { $0.hasPrefix("mqtt: MQTT connection failed") && $0.contains("next attempt in") })
        client.stop()
    }

    @Test func messagesPublishedWhileDownAreDeliveredAndTheQueueIsBounded() throws {
        let broker = try MosquittoBroker()
        let loop = try EventLoop()
        let log = LogLines()
        let topics = try FleetTopics(site: "site", box: "queue")
        let limit = 20
        // A 4 s first step: the observer subscribes after the restart, before the first attempt (2 s at the earliest).
        let settings = MQTTSettings(host: "127.0.0.1", port: broker.port, clientID: "queue", queueLimit: limit,
                                    backoff: MQTTBackoff(first: .seconds(4), maximum: .seconds(8)))
        let client = try MQTTClient(settings: settings, loop: loop, log: log.sink)
        client.start()
        #expect(try pump(loop, seconds: 10) { client.isConnected })
        broker.kill()
        #expect(try pump(loop, seconds: 5) { !client.isConnected })
        for n in 0..<(limit + 10) {
            try client.publish(topics.events, Array(#"{"event":"play","n":\#(n)}"#.utf8), qos: 1)
        }
        #expect(client.droppedWhileDown == 10)
        #expect(client.queuedWhileDown == limit)
        try broker.start()
        let observer = try broker.subscriber(topics.events, count: limit)
        #expect(!client.isConnected)
        try pump(loop, seconds: 20) { !observer.isRunning }
        observer.wait(timeout: .seconds(2))
        #expect(client.isConnected)
        #expect(MosquittoBroker.messages(observer).map(\.payload) == (10..<(limit + 10)).map { #"{"event":"play","n":\#($0)}"# })
        #expect(client.queuedWhileDown == 0)
        #expect(log.lines.contains("mqtt: 10 messages were dropped while disconnected (queue limit 20)"))
        client.stop()
    }

    @Test func tlsWithPasswordConnectsAndAWrongPasswordIsRefused() throws {
        let username = "box-lyon-7", password = "c0rrect-Horse-battery", wrong = "wr0ng-Staple-guess"
        let broker = try MosquittoBroker(.tlsPassword(username: username, password: password))
        let loop = try EventLoop()
        let log = LogLines()
        let topics = try FleetTopics(site: "lyon", box: "box-7")
        let settings = MQTTSettings(host: "127.0.0.1", port: broker.port, clientID: "lyon/box-7", username: username, password: password,
                                    tls: true, caFile: broker.certificates!.ca, keepAlive: 5, will: topics.offlineWill)
        let client = try MQTTClient(settings: settings, loop: loop, log: log.sink)
        client.onConnect = { try? client.publish(topics.status, Array(#"{"online":true}"#.utf8), retain: true) }
        client.start()
        #expect(try pump(loop, seconds: 10) { client.isConnected })
        let status = try broker.startReadingRetained(topics.status)
        try pump(loop, seconds: 6) { !status.isRunning }
        #expect(status.wait(timeout: .seconds(1)).out == #"{"online":true}"# + "\n")
        client.stop()

        var refusedSettings = settings
        refusedSettings.password = wrong
        let refused = try MQTTClient(settings: refusedSettings, loop: loop, log: log.sink)
        refused.start()
        #expect(try pump(loop, seconds: 10) { refused.lastError != nil })
        #expect(refused.lastError == .connectionRefused("Connection Refused: not authorised."))
        #expect(!refused.isConnected)
        refused.stop()

        // Credentials never reach a log line, a description or an error.
        let texts = log.lines + [settings.description, refusedSettings.description, refused.lastError.map { "\($0)" } ?? ""]
        #expect(log.lines.count >= 4)
        for secret in [password, wrong, username] {
            #expect(!texts.contains { $0.contains(secret) }, "\(secret) appears in \(texts)")
        }
    }

    @Test func tlsWithClientCertificate() throws {
        let broker = try MosquittoBroker(.tlsClientCertificate, clientName: "box-cert-1")
        let certificates = broker.certificates!
        let loop = try EventLoop()
        let log = LogLines()
        let client = try MQTTClient(settings: MQTTSettings(host: "127.0.0.1", port: broker.port, clientID: "cert", tls: true,
                                                           caFile: certificates.ca, certFile: certificates.clientCert,
                                                           keyFile: certificates.clientKey), loop: loop, log: log.sink)
        client.start()
        #expect(try pump(loop, seconds: 10) { client.isConnected })
        client.stop()

        // Without a certificate the broker ends the TLS handshake: a failure, retried with backoff.
        let anonymous = try MQTTClient(settings: MQTTSettings(host: "127.0.0.1", port: broker.port, clientID: "anon", tls: true,
                                                              caFile: certificates.ca), loop: loop, log: log.sink)
        anonymous.start()
        #expect(try pump(loop, seconds: 10) { anonymous.lastError != nil })
        #expect(!anonymous.isConnected)
        anonymous.stop()
    }

    /// A host name (not an address) is looked up on a thread first: the client is `.resolving`
    /// right after `start()`, and connects once the answer is back on the loop.
    @Test func hostNameIsLookedUpOffTheLoopAndConnects() throws {
        let broker = try MosquittoBroker()
        let loop = try EventLoop()
        let log = LogLines()
        let client = try MQTTClient(settings: MQTTSettings(host: "localhost", port: broker.port, clientID: "by-name"), loop: loop, log: log.sink)
        client.start()
        #expect(client.state == .resolving)
        #expect(try pump(loop, seconds: 10) { client.isConnected })
        #expect(client.lastError == nil)
        #expect(log.lines.contains("mqtt: connected to localhost:\(broker.port)"))
        client.stop()
        #expect(client.state == .stopped)

        // Stopped while its lookup runs: the answer connects nothing.
        let stopped = try MQTTClient(settings: MQTTSettings(host: "localhost", port: broker.port, clientID: "stopped"), loop: loop, log: log.sink)
        stopped.start()
        #expect(stopped.state == .resolving)
        stopped.stop()
        try pump(loop, seconds: 1) { false }
        #expect(stopped.state == .stopped)
        #expect(!stopped.isConnected)

        // Dropped while its lookup runs: deinit does not wait, and the late answer finds no client.
        weak var dropped: MQTTClient?
        do {
            let client = try MQTTClient(settings: MQTTSettings(host: "localhost", port: broker.port, clientID: "dropped"), loop: loop, log: log.sink)
            client.start()
            #expect(client.state == .resolving)
            dropped = client
        }
        #expect(dropped == nil)
        try pump(loop, seconds: 1) { false }
    }

    /// A name that cannot resolve (RFC 6761's `.invalid`) is a failed attempt, retried with the
    /// backoff, while the loop goes on: a 10 ms timer on it fires at least 100 times in 2 s.
    @Test func unresolvableHostIsRetriedWithoutHoldingUpTheLoop() throws {
        let loop = try EventLoop()
        let log = LogLines()
        let host = "no-such-host.invalid"
        let settings = MQTTSettings(host: host, port: 1883, clientID: "nxdomain", keepAlive: 5,
                                    backoff: MQTTBackoff(first: .milliseconds(200), maximum: .milliseconds(400)))
        let client = try MQTTClient(settings: settings, loop: loop, log: log.sink)
        var ticks = 0
        let timer = loop.scheduleRepeatingTimer(every: .milliseconds(10)) { _ in ticks += 1 }
        defer { timer.cancel() }
        client.start()
        let started = MonotonicClock.seconds()
        try pump(loop, seconds: 2) { false }
        let ticksIn2s = ticks
        let failures = { log.lines.filter { $0.hasPrefix("mqtt: cannot resolve the MQTT broker's host \(host): ") && $0.contains("next attempt in") } }
        // A DNS server that does not answer makes each attempt last the keep-alive (5 s) instead.
        #expect(try pump(loop, seconds: 30) { failures().count >= 2 })
        print(String(format: "unresolvable host: %d ticks of the 10 ms timer in the first 2 s; %d failed attempts in %.3f s; %@",
                     ticksIn2s, failures().count, MonotonicClock.seconds() - started, "\(client.lastError.map { "\($0)" } ?? "no error")"))
        #expect(ticksIn2s >= 100)
        guard case let .nameResolution(failedHost, reason) = client.lastError else {
            Issue.record("lastError is \(String(describing: client.lastError)), not .nameResolution")
            return
        }
        #expect(failedHost == host)
        #expect(!reason.isEmpty)
        #expect(!client.isConnected)
        client.stop()
        #expect(client.state == .stopped)
    }

    /// A command left retained on the broker (`mosquitto_pub -r`) comes with the retain flag on
    /// every subscription: `.ignore` drops it (counted, logged once), the default delivers it.
    /// A retained publish to a subscription that exists arrives without the flag: delivered.
    @Test func retainedMessagesAreIgnoredWhenAsked() throws {
        let broker = try MosquittoBroker()
        let loop = try EventLoop()
        let log = LogLines()
        let topic = "vitrine/site/retained/cmd"
        try broker.publish(topic, #"{"command":["reboot"],"request_id":1}"#, retain: true)

        let ignoring = try MQTTClient(settings: MQTTSettings(host: "127.0.0.1", port: broker.port, clientID: "ignoring"), loop: loop, log: log.sink)
        let delivering = try MQTTClient(settings: MQTTSettings(host: "127.0.0.1", port: broker.port, clientID: "delivering"), loop: loop, log: log.sink)
        var ignored: [String] = [], delivered: [String] = []
        try ignoring.subscribe(topic, retained: .ignore) { ignored.append(String(decoding: $1, as: UTF8.self)) }
        try delivering.subscribe(topic) { delivered.append(String(decoding: $1, as: UTF8.self)) }
        ignoring.start()
        delivering.start()
        #expect(try pump(loop, seconds: 10) { ignoring.isConnected && delivering.isConnected })
        #expect(try pump(loop, seconds: 10) { !delivered.isEmpty && ignoring.ignoredRetained == 1 })
        #expect(delivered == [#"{"command":["reboot"],"request_id":1}"#])
        #expect(ignored.isEmpty)
        #expect(delivering.ignoredRetained == 0)

        // Live messages reach both, also one published with -r.
        try broker.publish(topic, #"{"command":["status"],"request_id":2}"#)
        try broker.publish(topic, #"{"command":["status"],"request_id":3}"#, retain: true)
        #expect(try pump(loop, seconds: 10) { ignored.count == 2 && delivered.count == 3 })
        #expect(ignored == [#"{"command":["status"],"request_id":2}"#, #"{"command":["status"],"request_id":3}"#])
        #expect(delivered.dropFirst() == ignored[...])

        // After a reconnection the broker sends the retained one again: ignored again, logged once.
        ignoring.stop()
        ignoring.start()
        #expect(try pump(loop, seconds: 10) { ignoring.ignoredRetained == 2 })
        #expect(ignored.count == 2)
        #expect(log.lines.filter { $0 == "mqtt: ignored a retained message on \(topic): commands are never retained" }.count == 1)
        ignoring.stop()
        delivering.stop()
    }

    /// 50 mqtt-probe processes (standing in for 50 headless players until the player speaks MQTT)
    /// on one broker; one publish on the site's broadcast topic vitrine/site/all/cmd asks all of
    /// them for their status, and each answers on its own reply topic.
    @Test(.enabled(if: BuildProducts.available("mqtt-probe"), BuildProducts.absent("mqtt-probe")))
    func fiftyBoxesAnswerAFannedOutStatusWithinFiveSeconds() throws {
        let broker = try MosquittoBroker()
        let count = 50
        let boxes = (1...count).map { String(format: "box-%02d", $0) }
        var probes: [RunningProcess] = []
        defer {
            probes.forEach { $0.terminate() }
            probes.forEach { $0.wait(timeout: .seconds(5)) }
        }
        for box in boxes { probes.append(try startProbe(broker, box: box)) }
        for probe in probes {
            #expect(probe.waitForLine(containing: "connected", on: .standardOutput, timeout: .seconds(30)) != nil)
        }
        let (messages, elapsed) = try broker.fanOutStatus(site: "site", count: count)
        print(String(format: "fan-out: %d of %d boxes answered in %.3f s", messages.count, count, elapsed))
        #expect(Set(messages.map(\.topic)) == Set(boxes.map { "vitrine/site/\($0)/reply" }))
        #expect(messages.allSatisfy { $0.payload.contains(#""request_id":4242"#) && $0.payload.contains(#""error":"success""#) })
        #expect(elapsed < 5)
    }
}

@Suite(.serialized, .enabled(if: Mosquitto.installed, Mosquitto.absent))
struct KeepAliveTests {
    /// A broker that stops answering (SIGSTOP: the socket stays open, nothing comes back) is
    /// noticed by libmosquitto's keep-alive, which mosquitto_loop_misc runs on the loop's 1 s
    /// timer: PINGREQ after 5 s of silence, the connection given up when no PINGRESP came in the
    /// following keep-alive period (about 2 × keep-alive in all, on the 1 s timer); after SIGCONT
    /// the client is back within the backoff.
    @Test func frozenBrokerIsNoticedByTheKeepAlive() throws {
        let broker = try MosquittoBroker()
        let loop = try EventLoop()
        let log = LogLines()
        let client = try MQTTClient(settings: MQTTSettings(host: "127.0.0.1", port: broker.port, clientID: "frozen", keepAlive: 5),
                                    loop: loop, log: log.sink)
        var connects = 0
        client.onConnect = { connects += 1 }
        client.start()
        #expect(try pump(loop, seconds: 10) { client.isConnected })
        let frozen = MonotonicClock.seconds()
        broker.process!.send(SIGSTOP)
        defer { broker.process?.send(SIGCONT) }
        #expect(try pump(loop, seconds: 20) { !client.isConnected })
        let noticed = MonotonicClock.seconds() - frozen
        print(String(format: "keep-alive: a frozen broker noticed after %.3f s (keepalive 5 s)", noticed))
        #expect(noticed >= 5 && noticed <= 12)
        broker.process!.send(SIGCONT)
        #expect(try pump(loop, seconds: 20) { connects == 2 })
        client.stop()
    }
}
