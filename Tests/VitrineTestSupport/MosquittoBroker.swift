// A real mosquitto broker for the tests: Debian's /usr/sbin/mosquitto on a loopback port chosen at
// random, its configuration, certificates and password file in a temporary folder.
import Foundation
import Testing
internal import SystemSupport

/// The broker fixture could not be set up: what failed.
public struct BrokerError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

public enum Mosquitto {
    public static let broker = "/usr/sbin/mosquitto"
    public static let sub = "/usr/bin/mosquitto_sub"
    public static let pub = "/usr/bin/mosquitto_pub"
    public static let passwd = "/usr/bin/mosquitto_passwd"
    public static let openssl = "/usr/bin/openssl"

    /// Whether the broker and its command-line clients are installed (tools/setup).
    public static var installed: Bool {
        [broker, sub, pub, passwd, openssl, "/usr/bin/stdbuf"].allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }
    }
    public static let absent: Comment = "mosquitto is not installed: run tools/setup"
}

/// A test CA and the certificates it signs, made with the openssl CLI (EC P-256, valid 2 days).
public struct TestCertificates {
    public let folder: String
    public var ca: String { folder + "/ca.pem" }
    public var serverCert: String { folder + "/server.pem" }
    public var serverKey: String { folder + "/server.key" }
    public var clientCert: String { folder + "/client.pem" }
    public var clientKey: String { folder + "/client.key" }

    /// Makes the CA, a server certificate for `IP:127.0.0.1` and a client certificate with the
    /// common name `clientName` (the broker's user name with `use_identity_as_username`).
    public init(in folder: String, clientName: String) throws {
        self.folder = folder
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try Subprocess.output(Mosquitto.openssl, ["req", "-x509"] + ec + ["-keyout", folder + "/ca.key", "-out", folder + "/ca.pem",
                                                  "-subj", "/CN=Vitrine test CA", "-days", "2"])
        try Data("subjectAltName=IP:127.0.0.1\n".utf8).write(to: URL(fileURLWithPath: folder + "/server.ext"))
        for (name, subject, ext) in [("server", "/CN=127.0.0.1", true), ("client", "/CN=\(clientName)", false)] {
            try Subprocess.output(Mosquitto.openssl, ["req"] + ec + ["-keyout", "\(folder)/\(name).key", "-out", "\(folder)/\(name).csr", "-subj", subject])
            try Subprocess.output(Mosquitto.openssl, ["x509", "-req", "-in", "\(folder)/\(name).csr", "-CA", ca, "-CAkey", folder + "/ca.key",
                                                      "-CAcreateserial", "-out", "\(folder)/\(name).pem", "-days", "2"]
                                                     + (ext ? ["-extfile", folder + "/server.ext"] : []))
        }
    }
}

/// One mosquitto process on `127.0.0.1:port`, which can be killed and started again on the same port.
public final class MosquittoBroker {
    public enum Listener {
        /// Plain MQTT, anonymous clients allowed.
        case plain
        /// TLS with the test CA's server certificate; clients log in with this user and password
        /// (a password file made by `mosquitto_passwd -b`).
        case tlsPassword(username: String, password: String)
        /// TLS; clients must present a certificate signed by the test CA, whose common name is their user name.
        case tlsClientCertificate
    }

    public let folder: String
    public let certificates: TestCertificates?
    public private(set) var port: Int = 0
    public private(set) var process: RunningProcess?
    private let listener: Listener

    public init(_ listener: Listener = .plain, clientName: String = "box-client") throws {
        self.listener = listener
        folder = NSTemporaryDirectory() + "mosquitto-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        switch listener {
        case .plain: certificates = nil
        case .tlsPassword, .tlsClientCertificate: certificates = try TestCertificates(in: folder, clientName: clientName)
        }
        if case let .tlsPassword(username, password) = listener {
            try Subprocess.output(Mosquitto.passwd, ["-b", "-c", folder + "/passwd", username, password])
        }
        // A port that was free a moment ago can be taken before the broker binds it: try others.
        var lastError: Error?
        for _ in 0..<5 {
            port = try LoopbackPort.free()
            do { try start(); return } catch { lastError = error }
        }
        throw lastError!
    }

    deinit {
        kill()
        try? FileManager.default.removeItem(atPath: folder)
    }

    private var configuration: String {
        var lines = ["per_listener_settings true", "listener \(port) 127.0.0.1", "log_dest stderr", "log_type error", "log_type warning"]
        if geteuid() == 0 { lines.append("user root") }  // Else it drops to "mosquitto", which cannot read the folder.
        switch listener {
        case .plain:
            lines.append("allow_anonymous true")
        case .tlsPassword:
            lines += tlsLines + ["allow_anonymous false", "password_file \(folder)/passwd"]
        case .tlsClientCertificate:
            lines += tlsLines + ["require_certificate true", "use_identity_as_username true", "allow_anonymous false"]
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private var tlsLines: [String] {
        guard let certificates else { return [] }
        return ["cafile \(certificates.ca)", "certfile \(certificates.serverCert)", "keyfile \(certificates.serverKey)"]
    }

    /// Starts the broker on `port` and waits (up to 5 s) until the port accepts connections.
    public func start() throws {
        precondition(process == nil, "the broker is running")
        let conf = folder + "/mosquitto.conf"
        try Data(configuration.utf8).write(to: URL(fileURLWithPath: conf))
        let child = try Subprocess.start(Mosquitto.broker, ["-c", conf])
        switch child.waitUntilReady(seconds: 5, { LoopbackPort.accepts(port) }) {
        case .ready: process = child
        case .exited(let result): throw BrokerError("mosquitto on port \(port) exited \(result.status): \(result.err)")
        case .timedOut: throw BrokerError("mosquitto did not accept connections on port \(port) within 5 s")
        }
    }

    /// Stops the broker by its PID with SIGTERM (a clean exit), and waits for it.
    public func stop() {
        guard let process else { return }
        process.terminate()
        process.wait(timeout: .seconds(5))
        self.process = nil
    }

    /// Kills the broker by its PID with SIGKILL (a crash: no DISCONNECT to anyone), and waits for it.
    public func kill() {
        guard let process else { return }
        process.send(SIGKILL)
        process.wait(timeout: .seconds(5))
        self.process = nil
    }

    /// Options for mosquitto_sub and mosquitto_pub to reach this broker.
    public var clientOptions: [String] {
        var options = ["-h", "127.0.0.1", "-p", String(port)]
        if let certificates { options += ["--cafile", certificates.ca] }
        if case let .tlsPassword(username, password) = listener { options += ["-u", username, "-P", password] }
        if case .tlsClientCertificate = listener, let certificates {
            options += ["--cert", certificates.clientCert, "--key", certificates.clientKey]
        }
        return options
    }

    /// Publishes one message with mosquitto_pub (QoS 1).
    public func publish(_ topic: String, _ message: String, retain: Bool = false) throws {
        try Subprocess.output(Mosquitto.pub, clientOptions + ["-q", "1", "-t", topic, "-m", message] + (retain ? ["-r"] : []))
    }

    /// Starts mosquitto_sub for the first message on `topic` (the retained one, if any), waiting 5 s at most.
    public func startReadingRetained(_ topic: String) throws -> RunningProcess {
        try Subprocess.start(Mosquitto.sub, clientOptions + ["-t", topic, "-C", "1", "-W", "5"])
    }

    /// The retained message of `topic` and a newline, read with mosquitto_sub; empty when there is none.
    public func retained(_ topic: String) throws -> String {
        try startReadingRetained(topic).wait(timeout: .seconds(10)).out
    }

    /// Starts mosquitto_sub on `topic` (QoS 1, `topic payload` lines), exiting after `count`
    /// messages or `seconds` without one, and waits until the broker acknowledged the subscription.
    public func subscriber(_ topic: String, count: Int, seconds: Int = 15) throws -> RunningProcess {
        // Through stdbuf: mosquitto_sub's -d lines sit in stdio's buffer when stdout is a pipe.
        let sub = try Subprocess.start("/usr/bin/stdbuf", ["-oL", Mosquitto.sub] + clientOptions + ["-d", "-v", "-q", "1", "-t", topic, "-C", String(count), "-W", String(seconds)])
        guard sub.waitForLine(containing: "received SUBACK", timeout: .seconds(5)) != nil else {
            sub.send(SIGKILL)
            throw BrokerError( "mosquitto_sub got no SUBACK: \(sub.outputSoFar)")
        }
        return sub
    }

    /// One `status` request (`request_id` 4242) published on `vitrine/<site>/all/cmd`, and the
    /// replies on `vitrine/<site>/+/reply` until `count` came (15 s at most): the messages, and the
    /// seconds from the publish to the last reply.
    public func fanOutStatus(site: String, count: Int) throws -> (messages: [(topic: String, payload: String)], seconds: Double) {
        let replies = try subscriber("vitrine/\(site)/+/reply", count: count, seconds: 10)
        let asked = MonotonicClock.seconds() - replies.started
        try publish("vitrine/\(site)/all/cmd", #"{"command":["status"],"request_id":4242}"#)
        replies.wait(timeout: .seconds(15))
        let lines = Self.messageLines(replies)
        return (Self.messages(replies), (lines.last?.time ?? .infinity) - asked)
    }

    /// The messages a subscriber printed (`-v`: `topic payload`), without its `-d` debug lines.
    public static func messages(_ sub: RunningProcess) -> [(topic: String, payload: String)] {
        messageLines(sub).compactMap { line in
            guard let space = line.text.firstIndex(of: " ") else { return nil }
            return (String(line.text[..<space]), String(line.text[line.text.index(after: space)...]))
        }
    }

    /// The lines of a subscriber's messages, timed, without its `-d` debug lines
    /// (`Client null sending CONNECT`, `Subscribed (mid: 1): 1`).
    public static func messageLines(_ sub: RunningProcess) -> [SubprocessLine] {
        sub.lines.filter { $0.stream == .standardOutput && !$0.text.hasPrefix("Client ") && !$0.text.hasPrefix("Subscribed (mid") }
    }
}
