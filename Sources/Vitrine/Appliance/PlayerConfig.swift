import Foundation
import VitrineCore
import CatalogStore
import ControlSocket
import Crypto

/// The appliance configuration, `/etc/vitrine/config.json` (default in `config/config.json`).
///
/// ```json
/// { "library": "/var/lib/vitrine", "output": "auto", "connector": null,
///   "audio": { "device": null, "periodFrames": 1024, "bufferFrames": 4096 },
///   "headless": { "width": 1280, "height": 720, "refresh": 30 },
///   "input": { "calibration": [1, 0, 0, 0, 1, 0] },
///   "import": { "requireSignature": false, "trustedKeys": [], "allowDowngrade": false, "switch": "boundary" },
///   "update": { "url": null, "interval": 300, "jitter": 0.1, "caFile": null, "allowPlainHTTP": false,
///               "bandwidthLimit": null, "requireSignature": true, "connectTimeout": 10, "lowSpeedTimeout": 30 },
///   "cec": { "enabled": false, "port": null }, "timezone": null,
///   "control": { "enabled": true, "path": "/run/vitrine/control.sock", "group": "vitrine-admin" },
///   "wall": { "column": 0, "row": 0 },
///   "clock": { "servers": ["10.0.0.5"], "serve": { "allow": ["10.0.0.0/24"], "localStratum": 8 } } }
/// ```
/// Unknown keys are errors that name the key. Every field is optional.
public struct PlayerConfig: Sendable, Equatable {
    /// Folder holding the imported catalogs (`current`, `previous`).
    public var library = "/var/lib/vitrine"
    public var output: RunOptions.OutputKind = .auto
    public var connector: String?
    /// Two or more screens on the card (`outputs`: `[{"connector": "HDMI-A-1"}, {"connector":
    /// "HDMI-A-2", "playlist": "menu", "wall": {...}}]`), each on a DRM lease of its own. Empty: one
    /// screen, `connector`'s.
    public var outputs: [OutputSettings] = []
    /// Overrides every manifest's `audio.device` when set.
    public var audioDevice: String?
    /// ALSA period size in frames.
    public var periodFrames = 1024
    /// ALSA buffer size in frames.
    public var bufferFrames = 4096
    public var headlessWidth = 1280
    public var headlessHeight = 720
    public var headlessRefresh = 30.0
    /// Touch calibration, libinput's 3×2 matrix on normalized coordinates (`input.calibration`, six numbers).
    public var touchCalibration: CalibrationMatrix?
    /// USB stick imports (`import`): signature policy, trusted minisign keys, downgrades, switch timing.
    public var importSettings = ImportSettings()
    /// Network catalog updates (`update`): the catalog folder polled over HTTPS, and how; nil when
    /// there is no `update.url`.
    public var update: UpdateSettings?
    /// `update.*` as parsed whether or not `update.url` is set (its `url` is then `""`): the CA,
    /// timeouts and signature policy of a one-off `vitrine import URL` (`UpdateSettings.with(url:)`).
    public var updateDefaults = UpdateSettings(url: "")
    /// HDMI-CEC (`cec.enabled`): the TV's standby and power-on through libcec as well as KMS.
    public var cecEnabled = false
    /// The CEC adapter's com port (`cec.port`: `/dev/ttyACM0`, `/dev/cec0`); nil takes the first one libcec finds.
    public var cecPort: String?
    /// The schedule's time zone for catalogs that name none (`timezone`, an IANA name such as
    /// `Europe/Paris`, read from the system's tzdata); nil: the system's (`/etc/localtime`).
    public var timezone: String?
    /// Fleet status, events and commands over MQTT (`mqtt`); nil: none.
    public var mqtt: MQTTConfig?
    /// The local control socket (`control`: `enabled`, `path`, `group`), for `vitrine ctl`.
    public var control = ControlSettings()
    /// This box's place in a video wall (`wall`: `columns`, `rows`, `column`, `row`, `bezel`, as the
    /// manifest's `display.wall`); each key given overrides the catalog's. Nil: none given.
    public var wall: WallSettings?
    /// The time sources chronyd follows and whether this box serves time to its LAN (`clock`);
    /// nil: Debian's default pool (`vitrine chrony-config` writes chrony's lines from it).
    public var clock: ClockConfig?

    public init() {}

    /// The default location of the config file on an appliance.
    public static let defaultPath = "/etc/vitrine/config.json"

    /// Parses config JSON. - Throws: `ConfigError` listing every problem as `path: reason`.
    public init(json bytes: [UInt8]) throws(ConfigError) {
        let root: JSONValue
        do { root = try JSONValue(parsing: bytes) } catch { throw ConfigError(problems: ["invalid JSON at \(error)"]) }
        var problems: [String] = []
        var updateValues: [(key: String, value: JSONValue)]?
        guard case let .object(members) = root else { throw ConfigError(problems: ["expected an object, found \(root.typeDescription)"]) }
        func int(_ v: JSONValue, _ path: String, min: Int) -> Int? {
            if case let .number(n) = v, let i = n.intValue, i >= min { return i }
            problems.append("\(path): expected an integer ≥ \(min)"); return nil
        }
        func string(_ v: JSONValue, _ path: String) -> String? {
            if case let .string(s) = v { return s }
            if case .null = v { return nil }
            problems.append("\(path): expected a string"); return nil
        }
        for (key, value) in members {
            switch key {
            case "library": if let s = string(value, key) { library = s }
            case "output":
                if let s = string(value, key) {
                    if let k = RunOptions.OutputKind(rawValue: s) { output = k } else { problems.append("output: expected auto, drm or headless") }
                }
            case "connector":
                connector = string(value, key)
                if let name = connector, let why = OutputSettings.connectorProblem(name) { problems.append("connector: \(why)"); connector = nil }
            case "outputs":
                let (list, found) = OutputSettings.parseList(value, at: key)
                problems += found
                outputs = list
            case "input":
                guard case let .object(inner) = value else { problems.append("input: expected an object"); continue }
                for (k, v) in inner {
                    guard k == "calibration" else { problems.append("\(JSONPath.member("input", k)): unknown field \(JSONPath.quoted(k))"); continue }
                    guard case let .array(items) = v, items.count == 6,
                          let m = CalibrationMatrix(items.compactMap { if case let .number(n) = $0 { return n.value } else { return nil } }) else {
                        problems.append("input.calibration: expected six numbers [a, b, c, d, e, f]"); continue
                    }
                    touchCalibration = m
                }
            case "import":
                guard case let .object(inner) = value else { problems.append("import: expected an object"); continue }
                for (k, v) in inner {
                    let at = JSONPath.member("import", k)
                    switch k {
                    case "requireSignature", "allowDowngrade":
                        guard case let .bool(flag) = v else { problems.append("\(at): expected true or false"); continue }
                        if k == "requireSignature" { importSettings.requireSignature = flag } else { importSettings.allowDowngrade = flag }
                    case "switch":
                        guard case let .string(s) = v, let mode = ImportSettings.SwitchMode(rawValue: s) else {
                            problems.append("\(at): expected \"boundary\" or \"immediate\""); continue
                        }
                        importSettings.switchMode = mode
                    case "trustedKeys":
                        guard case let .array(keys) = v, keys.count <= ImportSettings.maximumTrustedKeys else {
                            problems.append("\(at): expected an array of at most \(ImportSettings.maximumTrustedKeys) minisign public keys"); continue
                        }
                        importSettings.trustedKeys = []
                        for (i, key) in keys.enumerated() {
                            guard case let .string(text) = key else { problems.append("\(at)[\(i)]: expected a string"); continue }
                            do { importSettings.trustedKeys.append(try MinisignPublicKey(text)) } catch {
                                problems.append("\(at)[\(i)]: \(error) (give the base64 line of a minisign .pub file)")
                            }
                        }
                    default: problems.append("\(at): unknown field \(JSONPath.quoted(k))")
                    }
                }
                if importSettings.requireSignature && importSettings.trustedKeys.isEmpty
                    && !problems.contains(where: { $0.hasPrefix("import.trustedKeys") }) {
                    problems.append("import.requireSignature: needs at least one key in import.trustedKeys")
                }
            case "update":
                guard case let .object(inner) = value else { problems.append("update: expected an object"); continue }
                updateValues = inner
            case "cec":
                guard case let .object(inner) = value else { problems.append("cec: expected an object"); continue }
                for (k, v) in inner {
                    let at = JSONPath.member("cec", k)
                    switch k {
                    case "enabled":
                        guard case let .bool(flag) = v else { problems.append("\(at): expected true or false"); continue }
                        cecEnabled = flag
                    case "port":
                        cecPort = string(v, at)
                        if cecPort?.isEmpty == true { problems.append("\(at): expected a com port such as \"/dev/ttyACM0\", or null"); cecPort = nil }
                    default: problems.append("\(at): unknown field \(JSONPath.quoted(k))")
                    }
                }
            case "mqtt":
                mqtt = MQTTConfig.parse(value, problems: &problems)
            case "clock":
                if case .null = value { continue }
                clock = ClockConfig.parse(value, problems: &problems)
            case "timezone":
                timezone = string(value, key)
                if let z = timezone {
                    do { _ = try ZoneRules(identifier: z) } catch { problems.append("timezone: \(error)"); timezone = nil }
                }
            case "control":
                guard case let .object(inner) = value else { problems.append("control: expected an object"); continue }
                for (k, v) in inner {
                    let at = JSONPath.member("control", k)
                    switch k {
                    case "enabled":
                        guard case let .bool(flag) = v else { problems.append("\(at): expected true or false"); continue }
                        control.enabled = flag
                    case "path":
                        let limit = ControlSettings.maximumPathBytes
                        guard case let .string(path) = v, path.hasPrefix("/"), !path.hasSuffix("/"), !path.contains("\u{0}") else {
                            problems.append("\(at): expected an absolute path such as \"/run/vitrine/control.sock\""); continue
                        }
                        guard path.utf8.count <= limit else {
                            problems.append("\(at): \(path.utf8.count) bytes, longer than the \(limit) a Unix socket path holds"); continue
                        }
                        control.path = path
                    case "group":
                        if case .null = v { control.group = nil; continue }
                        guard case let .string(name) = v, !name.isEmpty, !name.contains(":"), !name.contains("/"),
                              !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control || $0 == " " }) else {
                            problems.append("\(at): expected a group name such as \"vitrine-admin\", or null"); continue
                        }
                        control.group = name
                    default: problems.append("\(at): unknown field \(JSONPath.quoted(k))")
                    }
                }
            case "wall":
                let (settings, found) = WallSettings.parse(value, at: key)
                problems += found.map { "\($0.path): \($0.reason)" }
                wall = settings
            case "audio", "headless":
                guard case let .object(inner) = value else { problems.append("\(key): expected an object"); continue }
                for (k, v) in inner {
                    switch (key, k) {
                    case ("audio", "device"): audioDevice = string(v, "audio.device")
                    case ("audio", "periodFrames"): if let i = int(v, "audio.periodFrames", min: 16) { periodFrames = i }
                    case ("audio", "bufferFrames"): if let i = int(v, "audio.bufferFrames", min: 32) { bufferFrames = i }
                    case ("headless", "width"): if let i = int(v, "headless.width", min: 16) { headlessWidth = i }
                    case ("headless", "height"): if let i = int(v, "headless.height", min: 16) { headlessHeight = i }
                    case ("headless", "refresh"): if let i = int(v, "headless.refresh", min: 1) { headlessRefresh = Double(i) }
                    default: problems.append("\(JSONPath.member(key, k)): unknown field \(JSONPath.quoted(k))")
                    }
                }
            default: problems.append("\(JSONPath.member("", key)): unknown field \(JSONPath.quoted(key))")
            }
        }
        if bufferFrames < periodFrames * 2 { problems.append("audio.bufferFrames: must be at least twice audio.periodFrames") }
        // After the loop: `update.requireSignature` needs `import.trustedKeys`, wherever `import` is.
        if let updateValues {
            (updateDefaults, update) = Self.parseUpdate(updateValues, trustedKeys: importSettings.trustedKeys,
                                                        keysInError: problems.contains { $0.hasPrefix("import.trustedKeys") },
                                                        problems: &problems)
        }
        if !problems.isEmpty { throw ConfigError(problems: problems) }
    }

    /// `update.*`: the settings without a url, and with it (nil when `url` is missing or null; the
    /// other keys are still checked).
    private static func parseUpdate(_ members: [(key: String, value: JSONValue)], trustedKeys: [MinisignPublicKey],
                                    keysInError: Bool, problems: inout [String]) -> (UpdateSettings, UpdateSettings?) {
        var url: String?
        var s = UpdateSettings(url: "")
        // At most a week: beyond, a timer's nanoseconds would overflow (and nothing is meant to wait so long).
        func seconds(_ v: JSONValue, _ at: String, min: Double, inclusive: Bool, max: Double = 7 * 86400) -> Double? {
            if case let .number(n) = v, n.value.isFinite, inclusive ? n.value >= min : n.value > min, n.value <= max { return n.value }
            problems.append("\(at): expected a number of seconds \(inclusive ? "≥" : ">") \(Int(min)) and ≤ \(Int(max))"); return nil
        }
        for (k, v) in members {
            let at = JSONPath.member("update", k)
            switch k {
            case "url":
                if case .null = v { continue }
                guard case let .string(text) = v else { problems.append("\(at): expected a string (the catalog folder's https:// URL) or null"); continue }
                url = text
            case "interval":
                if let x = seconds(v, at, min: UpdateSettings.minimumInterval, inclusive: true) { s.interval = x }
            case "jitter":
                guard case let .number(n) = v, n.value >= 0, n.value <= 1 else { problems.append("\(at): expected a number from 0 to 1"); continue }
                s.jitter = n.value
            case "caFile":
                if case .null = v { continue }
                guard case let .string(path) = v, !path.isEmpty else { problems.append("\(at): expected the path of a PEM file, or null"); continue }
                if PlayerConfig.unreadableFile(path) != nil {
                    problems.append("\(at): cannot read \(path) (a PEM file of certificate authorities)"); continue
                }
                s.caFile = path
            case "allowPlainHTTP", "requireSignature":
                guard case let .bool(flag) = v else { problems.append("\(at): expected true or false"); continue }
                if k == "allowPlainHTTP" { s.allowPlainHTTP = flag } else { s.requireSignature = flag }
            case "bandwidthLimit":
                if case .null = v { continue }
                guard case let .number(n) = v, let i = n.intValue, i >= 1 else {
                    problems.append("\(at): expected an integer number of bytes per second ≥ 1, or null"); continue
                }
                s.bandwidthLimit = i
            case "connectTimeout":
                if let x = seconds(v, at, min: 0, inclusive: false, max: 3600) { s.connectTimeout = x }
            case "lowSpeedTimeout":
                if let x = seconds(v, at, min: 1, inclusive: true, max: 3600) { s.lowSpeedTimeout = x }
            default:
                problems.append("\(at): unknown field \(JSONPath.quoted(k))")
            }
        }
        guard let url else { return (s, nil) }
        let lower = url.lowercased()
        let scheme = lower.hasPrefix("https://") ? "https://" : lower.hasPrefix("http://") ? "http://" : nil
        let rest = scheme.map { url.dropFirst($0.count) } ?? ""
        if scheme == nil || rest.isEmpty || rest.hasPrefix("/")
            || url.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F }) {
            problems.append("update.url: expected the catalog folder's URL, https://host/path/ (no spaces)")
            return (s, nil)
        }
        // user:password@ would be written to the log, the status and the retained MQTT status.
        if let at = rest.firstIndex(of: "@"), !rest[..<at].contains("/") {
            problems.append("update.url: credentials in the URL are not accepted (they would be logged); use a token in the path, or TLS client certificates")
            return (s, nil)
        }
        if scheme == "http://" && !s.allowPlainHTTP {
            problems.append("update.url: plain http:// is refused unless update.allowPlainHTTP is true; use https://")
            return (s, nil)
        }
        if s.requireSignature && trustedKeys.isEmpty && !keysInError {
            problems.append("update.requireSignature: needs at least one key in import.trustedKeys (or false to accept unsigned catalogs)")
        }
        return (s, s.with(url: url))
    }

    /// Nil when `path` is a file this process can read; else what to add to "cannot read PATH":
    /// `""`, or `" (a folder, not a file)"`.
    static func unreadableFile(_ path: String) -> String? {
        var folder: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &folder), folder.boolValue { return " (a folder, not a file)" }
        return FileManager.default.isReadableFile(atPath: path) ? nil : ""
    }

    /// Applies the config to run options (command-line flags applied later win).
    public func apply(to o: inout RunOptions) {
        o.output = output
        o.connector = connector
        o.audioDevice = audioDevice
        o.periodFrames = periodFrames
        o.bufferFrames = bufferFrames
        o.headlessWidth = headlessWidth
        o.headlessHeight = headlessHeight
        o.headlessRefresh = headlessRefresh
        o.touchCalibration = touchCalibration
        o.cecEnabled = cecEnabled
        o.cecPort = cecPort
        o.timezone = timezone
        o.wall = wall
        o.outputs = outputs
    }
}

public struct ConfigError: Error, CustomStringConvertible {
    public var problems: [String]
    public var description: String { problems.joined(separator: "\n") }
}
