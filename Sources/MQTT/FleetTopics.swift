// The topics of one box in the fleet: vitrine/<site>/<box>/{status,events,cmd,reply}.

/// The MQTT topics of one box: `vitrine/<site>/<box>/status`, `…/events`, `…/cmd`, `…/reply`,
/// and the site's broadcast command topic `vitrine/<site>/all/cmd` (docs/mqtt.md).
///
/// `site` and `box` are each one topic level: 1 to 64 bytes of UTF-8, without `/` (a level
/// separator), `+` or `#` (wildcards, which would make the box's subscriptions match other
/// boxes), or NUL (MQTT 3.1.1 §1.5.3 forbids U+0000). `all` is not a box name: it is the
/// site's broadcast level.
public struct FleetTopics: Sendable, Equatable {
    /// The site level, e.g. `"lyon-part-dieu"`.
    public let site: String
    /// The box level, e.g. `"entrance-left"`.
    public let box: String

    /// The most bytes a site or box name may have.
    public static let maximumLevelBytes = 64
    /// The box level of the site's broadcast topics.
    public static let broadcastLevel = "all"

    /// - Throws: `MQTTError.invalidBoxID` naming `site` or `box`, its value and the rule it breaks.
    public init(site: String, box: String) throws(MQTTError) {
        try Self.validate(site, field: "site")
        try Self.validate(box, field: "box")
        if box == Self.broadcastLevel {
            throw .invalidBoxID(field: "box", value: box, reason: "\"all\" is the site's broadcast level")
        }
        self.site = site
        self.box = box
    }

    private static func validate(_ value: String, field: String) throws(MQTTError) {
        let bytes = value.utf8.count
        if bytes == 0 { throw .invalidBoxID(field: field, value: value, reason: "empty") }
        if bytes > maximumLevelBytes {
            throw .invalidBoxID(field: field, value: value, reason: "\(bytes) bytes, more than \(maximumLevelBytes)")
        }
        for (character, name) in [("/", "a '/' (topic level separator)"), ("+", "a '+' (wildcard)"),
                                  ("#", "a '#' (wildcard)"), ("\u{0}", "a NUL character")]
        where value.contains(character) {
            throw .invalidBoxID(field: field, value: value, reason: "contains \(name)")
        }
    }

    /// `vitrine/<site>/<box>`.
    public var prefix: String { "vitrine/\(site)/\(box)" }
    /// Where the box publishes its retained status (`{"online":true,…}`), and its last will
    /// (`{"online":false}`).
    public var status: String { prefix + "/status" }
    /// Where the box publishes proof-of-play events (not retained).
    public var events: String { prefix + "/events" }
    /// Where the box takes commands addressed to it.
    public var cmd: String { prefix + "/cmd" }
    /// Where the box answers commands (with the request's `request_id`).
    public var reply: String { prefix + "/reply" }
    /// Commands for every box of the site: `vitrine/<site>/all/cmd` (one publish fans out).
    public var broadcastCmd: String { "vitrine/\(site)/\(Self.broadcastLevel)/cmd" }

    /// The last will that marks the box offline: `{"online":false}`, retained, QoS 1, on `status`.
    public var offlineWill: MQTTSettings.Will {
        MQTTSettings.Will(topic: status, payload: Array(#"{"online":false}"#.utf8), qos: 1, retain: true)
    }
}
