import Foundation
import VitrineCore
import MQTT

/// The config's `mqtt` object: fleet status, proof-of-play events and commands over MQTT
/// (docs/mqtt.md).
///
/// ```json
/// "mqtt": { "host": "broker.example.net", "port": 8883, "tls": true, "caFile": "/etc/vitrine/mqtt-ca.pem",
///           "username": "box-17", "passwordFile": "/etc/vitrine/mqtt-password",
///           "site": "lyon", "box": "entrance-left", "events": true, "statusInterval": 60,
///           "allow": ["status", "screenshot", "sync-now"] }
/// ```
/// The password is never logged: give it in `passwordFile` (read at start, one line) rather than
/// in the config itself when the config is readable by others.
public struct MQTTConfig: Sendable, Equatable {
    public var host = ""
    /// nil: 8883 with `tls`, else 1883.
    public var port: Int?
    public var tls = false
    public var caFile: String?
    public var certFile: String?
    public var keyFile: String?
    public var username: String?
    public var password: String?
    public var passwordFile: String?
    /// Seconds, 5…65535.
    public var keepAlive = 30
    /// The topic levels `vitrine/<site>/<box>/…`; `box` defaults to the host name.
    public var site = "default"
    public var box: String?
    /// Proof-of-play events on `…/events` (the event log's lines).
    public var events = true
    /// Seconds between status publications besides those on change (≥ 5).
    public var statusInterval = 60.0
    /// The commands the network may run (`…/cmd`); the default is `status`, `screenshot`, `sync-now`.
    public var allow: Set<String> = ControlCommands.defaultNetworkAllow
    /// Messages kept while the broker is unreachable (the oldest dropped beyond it).
    public var queueLimit = 256

    public init() {}

    /// The box level: `box`, else the host name's first label, else (a host name every image
    /// shares: `vitrine`, `localhost`) `vitrine-` and the first 12 digits of `/etc/machine-id`,
    /// which each box makes at its first boot: two boxes with one id would knock each other off
    /// the broker (MQTT allows one connection per client id).
    public var boxName: String {
        if let box { return box }
        let host = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? ""
        if !host.isEmpty && host != "vitrine" && host != "localhost" { return host }
        let id = (try? String(contentsOfFile: "/etc/machine-id", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        return id.count >= 12 ? "vitrine-" + id.prefix(12) : (host.isEmpty ? "vitrine" : host)
    }

    /// The client's settings; the password read from `passwordFile` when set.
    /// - Throws: `MQTTError` for a bad box id; `ConfigError` when `passwordFile` cannot be read.
    func settings(topics: FleetTopics) throws -> MQTTSettings {
        var secret = password
        if let passwordFile {
            guard let data = FileManager.default.contents(atPath: passwordFile) else {
                throw ConfigError(problems: ["mqtt.passwordFile: cannot read \(passwordFile)"])
            }
            secret = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .newlines)
        }
        return MQTTSettings(host: host, port: port, clientID: "vitrine/\(topics.site)/\(topics.box)", username: username,
                            password: secret, tls: tls, caFile: caFile, certFile: certFile, keyFile: keyFile,
                            keepAlive: keepAlive, will: topics.offlineWill, queueLimit: queueLimit)
    }

    /// Parses the `mqtt` object, adding `mqtt.…: reason` problems.
    static func parse(_ value: JSONValue, problems: inout [String]) -> MQTTConfig? {
        guard case let .object(members) = value else { problems.append("mqtt: expected an object"); return nil }
        var c = MQTTConfig()
        for (k, v) in members {
            let at = JSONPath.member("mqtt", k)
            func string() -> String? {
                if case let .string(s) = v, !s.isEmpty { return s }
                if case .null = v { return nil }
                problems.append("\(at): expected a non-empty string or null"); return nil
            }
            func bool() -> Bool? {
                if case let .bool(b) = v { return b }
                problems.append("\(at): expected true or false"); return nil
            }
            switch k {
            case "host": c.host = string() ?? ""
            case "port":
                guard case let .number(n) = v, let i = n.intValue, (1...65535).contains(i) else { problems.append("\(at): expected a port 1…65535"); continue }
                c.port = i
            case "tls": c.tls = bool() ?? c.tls
            case "caFile", "certFile", "keyFile", "passwordFile":
                let path = string()
                if let path, let why = PlayerConfig.unreadableFile(path) { problems.append("\(at): cannot read \(path)\(why)"); continue }
                switch k {
                case "caFile": c.caFile = path
                case "certFile": c.certFile = path
                case "keyFile": c.keyFile = path
                default: c.passwordFile = path
                }
            case "username": c.username = string()
            case "password": c.password = string()
            case "keepAlive":
                guard case let .number(n) = v, let i = n.intValue, (5...65535).contains(i) else { problems.append("\(at): expected seconds 5…65535"); continue }
                c.keepAlive = i
            case "site": if let s = string() { c.site = s }
            case "box": c.box = string()
            case "events": c.events = bool() ?? c.events
            case "statusInterval":
                guard case let .number(n) = v, n.value >= 5, n.value <= 86400 else { problems.append("\(at): expected seconds from 5 to 86400"); continue }
                c.statusInterval = n.value
            case "queueLimit":
                guard case let .number(n) = v, let i = n.intValue, i >= 0 else { problems.append("\(at): expected an integer ≥ 0"); continue }
                c.queueLimit = i
            case "allow":
                guard case let .array(items) = v else { problems.append("\(at): expected an array of command names"); continue }
                var allow: Set<String> = []
                for (i, item) in items.enumerated() {
                    guard let name = item.stringValue, ControlCommands.names.contains(name), name != "observe" else {
                        let near = item.stringValue.flatMap { Spelling.suggestion(for: $0, among: ControlCommands.names) }.map { " (did you mean \($0)?)" } ?? ""
                        problems.append("\(at)[\(i)]: expected one of \(ControlCommands.names.filter { $0 != "observe" }.joined(separator: ", "))\(near)")
                        continue
                    }
                    allow.insert(name)
                }
                c.allow = allow
            default: problems.append("\(at): unknown field \(JSONPath.quoted(k))")
            }
        }
        if c.host.isEmpty { problems.append("mqtt.host: required (the broker's host name or address)") }
        if c.password != nil && c.passwordFile != nil { problems.append("mqtt.passwordFile: give password or passwordFile, not both") }
        if (c.password != nil || c.passwordFile != nil) && c.username == nil { problems.append("mqtt.username: a password needs a username") }
        if (c.certFile == nil) != (c.keyFile == nil) { problems.append("mqtt.\(c.certFile == nil ? "keyFile" : "certFile"): certFile and keyFile go together") }
        if !c.tls && (c.caFile != nil || c.certFile != nil) { problems.append("mqtt.tls: caFile and certFile need \"tls\": true") }
        for (field, value) in [("site", c.site), ("box", c.boxName)] {
            if value.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
                problems.append("mqtt.\(field): contains a control character")
            }
        }
        do { _ = try FleetTopics(site: c.site, box: c.boxName) } catch let MQTTError.invalidBoxID(field, _, reason) {
            problems.append("mqtt.\(field): \(reason)")
        } catch { problems.append("mqtt: \(error)") }
        return c
    }
}
