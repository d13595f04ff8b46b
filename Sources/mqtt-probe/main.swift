// mqtt-probe: a headless box on MQTT, standing in for the player in MQTTTests (50 of them on one
// broker answer a fanned-out status) until the player itself speaks MQTT.
//
//   mqtt-probe --host HOST --port PORT --site SITE --box BOX [--keepalive SECONDS]
//              [--tls --cafile FILE] [--username NAME]    (the password comes from $MQTT_PASSWORD)
//
// Publishes the retained status {"online":true,"box":BOX} on vitrine/SITE/BOX/status on every
// connect, with the last will {"online":false}; takes commands on vitrine/SITE/BOX/cmd and on the
// site's vitrine/SITE/all/cmd, and answers {"command":["status"],"request_id":N} on
// vitrine/SITE/BOX/reply with {"request_id":N,"error":"success","data":{"box":BOX}}.
// On SIGTERM or SIGINT it publishes {"online":false} (retained), disconnects and exits 0.
//
// Output: stdout "connected" on each connect and "answered request_id=N" per reply; stderr the
// client's log lines. Exit 64 on a usage error, 1 when the settings are refused.
import Foundation
import MQTT
import RunLoop

func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }
func warn(_ line: String) { FileHandle.standardError.write(Data((line + "\n").utf8)) }

func usageError(_ why: String) -> Never {
    warn("mqtt-probe: \(why)\nusage: mqtt-probe --host HOST --port PORT --site SITE --box BOX [--keepalive SECONDS] [--tls --cafile FILE] [--username NAME]")
    exit(64)
}

SignalMask.block([.interrupt, .terminate])

var options: [String: String] = [:]
var flags: Set<String> = []
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    guard argument.hasPrefix("--") else { usageError("unexpected \(argument)") }
    let name = String(argument.dropFirst(2))
    if name == "tls" { flags.insert(name); continue }
    guard ["host", "port", "site", "box", "keepalive", "cafile", "username"].contains(name) else { usageError("unknown option \(argument)") }
    guard let value = arguments.popFirst() else { usageError("\(argument) needs a value") }
    options[name] = value
}
guard let host = options["host"], let port = options["port"].flatMap({ Int($0) }),
      let site = options["site"], let box = options["box"] else { usageError("--host, --port, --site and --box are required") }
guard let keepAlive = Int(options["keepalive"] ?? "30") else { usageError("--keepalive takes seconds") }

do {
    let topics = try FleetTopics(site: site, box: box)
    let settings = MQTTSettings(host: host, port: port, clientID: "\(site)/\(box)",
                                username: options["username"], password: ProcessInfo.processInfo.environment["MQTT_PASSWORD"],
                                tls: flags.contains("tls"), caFile: options["cafile"], keepAlive: keepAlive,
                                will: topics.offlineWill)
    let loop = try EventLoop()
    let client = try MQTTClient(settings: settings, loop: loop, log: warn)

    func json(_ object: [String: Any]) -> [UInt8] {
        Array((try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data())
    }
    client.onConnect = {
        try? client.publish(topics.status, json(["online": true, "box": box]), qos: 1, retain: true)
        say("connected")
    }
    let answer: (String, [UInt8]) -> Void = { _, payload in
        let request = (try? JSONSerialization.jsonObject(with: Data(payload))) as? [String: Any]
        let id = request?["request_id"] ?? NSNull()
        let reply: [String: Any]
        switch (request?["command"] as? [String])?.first {
        case "status"?: reply = ["request_id": id, "error": "success", "data": ["box": box, "online": true]]
        case nil where request == nil: reply = ["request_id": id, "error": "invalid JSON"]
        case let other: reply = ["request_id": id, "error": "unknown command \(other ?? "(none)")"]
        }
        try? client.publish(topics.reply, json(reply), qos: 1)
        say("answered request_id=\(id)")
    }
    try client.subscribe(topics.cmd, qos: 1, handler: answer)
    try client.subscribe(topics.broadcastCmd, qos: 1, handler: answer)
    try loop.handleSignals([.interrupt, .terminate]) { _ in
        try? client.publish(topics.status, json(["online": false]), qos: 1, retain: true)
        client.stop()
        loop.stop()
    }
    client.start()
    try loop.run()
} catch {
    warn("mqtt-probe: \(error)")
    exit(1)
}
