// How a client reaches its broker: address, identity, credentials, TLS, will, queue and backoff.

/// The settings of an `MQTTClient`.
///
/// `description` shows the broker, the client id and which options are set; never the password
/// (nor the user name, which identifies an account to attack).
public struct MQTTSettings: Sendable, CustomStringConvertible {
    /// The broker's host name or IP address (`"mqtt.example.net"`, `"127.0.0.1"`).
    public var host: String
    /// The broker's TCP port: 1883 for plain MQTT, 8883 for MQTT over TLS (IANA).
    public var port: Int
    /// The MQTT client identifier; two clients with the same id knock each other off the broker.
    /// The box id (`site/box`) makes a good one.
    public var clientID: String
    /// The user name sent in CONNECT, or nil for none.
    public var username: String?
    /// The password sent in CONNECT (needs `username`), or nil. Never logged or described.
    public var password: String?
    /// Whether to connect over TLS.
    public var tls: Bool
    /// A PEM file of the certificate authorities that sign the broker's certificate; nil uses the
    /// system's trusted authorities (`/etc/ssl/certs`, libmosquitto's `MOSQ_OPT_TLS_USE_OS_CERTS`).
    public var caFile: String?
    /// The client certificate (PEM) for brokers that authenticate clients by certificate; needs `keyFile`.
    public var certFile: String?
    /// The private key (PEM, unencrypted) of `certFile`.
    public var keyFile: String?
    /// Seconds between keep-alive pings when nothing else is sent, 5...65535 (libmosquitto's
    /// range). The broker declares the client gone (and sends its will) after 1.5 × this with no
    /// packet; a connection attempt with no CONNACK is given up after this long.
    public var keepAlive: Int
    /// The last will the broker publishes when the connection ends without a DISCONNECT, or nil.
    public var will: Will?
    /// How many messages `publish` keeps while disconnected (the oldest are dropped and counted
    /// beyond it); 0 keeps none.
    public var queueLimit: Int
    /// The delays between connection attempts.
    public var backoff: MQTTBackoff

    /// A message the broker publishes for the client when its connection ends without a
    /// DISCONNECT (MQTT 3.1.1 §3.1.2.5).
    public struct Will: Sendable, Equatable {
        /// The topic, without wildcards.
        public var topic: String
        /// The payload bytes.
        public var payload: [UInt8]
        /// 0, 1 or 2.
        public var qos: Int
        /// Whether the broker keeps it as the topic's retained message.
        public var retain: Bool

        public init(topic: String, payload: [UInt8], qos: Int = 1, retain: Bool = true) {
            self.topic = topic
            self.payload = payload
            self.qos = qos
            self.retain = retain
        }
    }

    /// - Parameters: as the properties; `port` defaults to 8883 with `tls`, else 1883.
    public init(host: String, port: Int? = nil, clientID: String, username: String? = nil, password: String? = nil,
                tls: Bool = false, caFile: String? = nil, certFile: String? = nil, keyFile: String? = nil,
                keepAlive: Int = 30, will: Will? = nil, queueLimit: Int = 256, backoff: MQTTBackoff = MQTTBackoff()) {
        self.host = host
        self.port = port ?? (tls ? 8883 : 1883)
        self.clientID = clientID
        self.username = username
        self.password = password
        self.tls = tls
        self.caFile = caFile
        self.certFile = certFile
        self.keyFile = keyFile
        self.keepAlive = keepAlive
        self.will = will
        self.queueLimit = queueLimit
        self.backoff = backoff
    }

    /// `mqtt://host:port client=id`, or `mqtts://` with TLS, and the options set, e.g.
    /// `mqtts://broker:8883 client=lyon/entrance username=set password=set ca=/etc/vitrine/ca.pem`.
    public var description: String {
        var parts = ["\(tls ? "mqtts" : "mqtt")://\(host):\(port)", "client=\(clientID)"]
        if username != nil { parts.append("username=set") }
        if password != nil { parts.append("password=set") }
        if let caFile { parts.append("ca=\(caFile)") }
        if let certFile { parts.append("cert=\(certFile)") }
        if let keyFile { parts.append("key=\(keyFile)") }
        parts.append("keepalive=\(keepAlive)s")
        return parts.joined(separator: " ")
    }

    /// Checks the ranges and combinations libmosquitto would refuse, and that the TLS files can be read.
    /// - Throws: `MQTTError.invalidSetting` or `.tlsFile`.
    func validate(fileIsReadable: (String) -> Bool) throws(MQTTError) {
        if host.isEmpty { throw .invalidSetting(name: "host", reason: "empty") }
        if !(1...65535).contains(port) { throw .invalidSetting(name: "port", reason: "\(port) is outside 1...65535") }
        if clientID.isEmpty || clientID.utf8.count > 65535 || clientID.contains("\u{0}") {
            throw .invalidSetting(name: "clientID", reason: "must be 1 to 65535 bytes of UTF-8 without NUL")
        }
        if !(5...65535).contains(keepAlive) {
            throw .invalidSetting(name: "keepAlive", reason: "\(keepAlive) s is outside libmosquitto's 5...65535 s")
        }
        if password != nil && username == nil { throw .invalidSetting(name: "password", reason: "needs a username") }
        if queueLimit < 0 { throw .invalidSetting(name: "queueLimit", reason: "\(queueLimit) is negative") }
        if (certFile == nil) != (keyFile == nil) {
            throw .invalidSetting(name: certFile == nil ? "keyFile" : "certFile", reason: "certFile and keyFile go together")
        }
        if !tls && (caFile != nil || certFile != nil) {
            throw .invalidSetting(name: caFile != nil ? "caFile" : "certFile", reason: "needs tls")
        }
        for (name, path) in [("caFile", caFile), ("certFile", certFile), ("keyFile", keyFile)] {
            if let path, !fileIsReadable(path) { throw .tlsFile(setting: name, path: path) }
        }
        if let will, !(0...2).contains(will.qos) {
            throw .invalidSetting(name: "will.qos", reason: "\(will.qos) is not 0, 1 or 2")
        }
        if backoff.first <= .zero || backoff.maximum < backoff.first {
            throw .invalidSetting(name: "backoff", reason: "first must be more than 0 and at most maximum")
        }
    }
}

/// The delays between connection attempts: `first`, doubling up to `maximum`, each with "equal
/// jitter" (a uniformly random delay between half the step and the whole step, as in AWS's
/// "Exponential Backoff and Jitter"), so that a fleet that lost its broker at once does not come
/// back at once.
///
/// Attempt n (counting from 0 after the connection is lost) waits `base(n)/2 ... base(n)` with
/// `base(n) = min(first × 2ⁿ, maximum)`; the n-th attempt therefore starts at most
/// `bound(attempts: n + 1)` after the loss. A connection that gets its CONNACK starts again at 0.
public struct MQTTBackoff: Sendable, Equatable {
    /// The longest first delay (1 s).
    public var first: Duration
    /// The longest delay (60 s).
    public var maximum: Duration

    public init(first: Duration = .seconds(1), maximum: Duration = .seconds(60)) {
        self.first = first
        self.maximum = maximum
    }

    /// The step of attempt `attempt` (0-based): `min(first × 2^attempt, maximum)`.
    public func base(attempt: Int) -> Duration {
        var step = first
        for _ in 0..<max(0, attempt) {
            if step >= maximum { break }
            step = step * 2
        }
        return min(step, maximum)
    }

    /// The delay before attempt `attempt`: uniform in `base/2 ... base`, to the nanosecond.
    public func delay(attempt: Int, using generator: inout some RandomNumberGenerator) -> Duration {
        let step = base(attempt: attempt).wholeNanoseconds
        return .nanoseconds(step / 2 + Int64.random(in: 0...(step - step / 2), using: &generator))
    }

    /// The latest time after a loss at which attempt `attempts − 1` starts: the sum of the first
    /// `attempts` steps.
    public func bound(attempts: Int) -> Duration {
        (0..<max(0, attempts)).reduce(Duration.zero) { $0 + base(attempt: $1) }
    }
}

extension Duration {
    /// The duration in whole nanoseconds (saturating).
    var wholeNanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (product, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? (seconds < 0 ? .min : .max) : product.addingReportingOverflow(attoseconds / 1_000_000_000).partialValue
    }
}
