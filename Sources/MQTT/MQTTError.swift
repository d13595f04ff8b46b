// The one error type of the MQTT module.

/// A failed MQTT call or a setting, topic or payload that cannot be used.
///
/// `description` names what was wrong (the setting, the file, the topic) and never a password
/// or a user name.
public enum MQTTError: Error, Sendable, Equatable, CustomStringConvertible {
    /// libmosquitto could not start or make a client: the C function and libmosquitto's reason
    /// (`mosquitto_new: Out of memory.`).
    case initFailed(String)
    /// A setting is out of range or incomplete: the setting's name and why
    /// (`keepAlive`, "3 s is below libmosquitto's minimum of 5 s").
    case invalidSetting(name: String, reason: String)
    /// A TLS file (`caFile`, `certFile`, `keyFile`) cannot be read: the setting and the path.
    case tlsFile(setting: String, path: String)
    /// libmosquitto refused the TLS configuration (`mosquitto_tls_set`: a file that is not PEM,
    /// a key that does not match the certificate): its reason.
    case tlsSetup(String)
    /// A topic name or filter that MQTT does not allow (empty, a wildcard in a published topic, a
    /// `#` that is not last, NUL, invalid UTF-8, over 65,535 bytes): the topic and why.
    case invalidTopic(topic: String, reason: String)
    /// A site or box name that cannot be one level of a fleet topic: which one, its value, why.
    case invalidBoxID(field: String, value: String, reason: String)
    /// A payload longer than MQTT's 268,435,455 bytes: its size in bytes.
    case payloadTooLarge(Int)
    /// The broker answered CONNECT with a refusal: libmosquitto's text for the CONNACK code
    /// (`Connection Refused: not authorised.`). The client retries with backoff.
    case connectionRefused(String)
    /// The connection could not be made or was lost: libmosquitto's reason (`mosquitto_strerror`,
    /// with `errno` when the reason is a system call's).
    case connectionFailed(String)
    /// The broker's host name (`settings.host`) did not resolve: the host and why (`gai_strerror`,
    /// e.g. "Name or service not known", or "no answer within 30 s" when `getaddrinfo` took longer
    /// than the keep-alive). A failed attempt like any other: retried with backoff.
    case nameResolution(host: String, reason: String)

    public var description: String {
        switch self {
        case .initFailed(let reason): "cannot start libmosquitto: \(reason)"
        case let .invalidSetting(name, reason): "MQTT setting \(name): \(reason)"
        case let .tlsFile(setting, path): "MQTT setting \(setting): cannot read \(path)"
        case .tlsSetup(let reason): "MQTT TLS setup failed: \(reason)"
        case let .invalidTopic(topic, reason): "invalid MQTT topic \"\(topic)\": \(reason)"
        case let .invalidBoxID(field, value, reason): "invalid \(field) \"\(value)\" for a fleet topic: \(reason)"
        case .payloadTooLarge(let size): "MQTT payload of \(size) bytes is over the limit of 268435455 bytes"
        case .connectionRefused(let reason): "the MQTT broker refused the connection: \(reason)"
        case .connectionFailed(let reason): "MQTT connection failed: \(reason)"
        case let .nameResolution(host, reason): "cannot resolve the MQTT broker's host \(host): \(reason)"
        }
    }
}
