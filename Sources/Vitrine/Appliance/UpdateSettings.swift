// Network catalog updates: config `update.*`.
import CatalogStore
import HTTPFetch

/// The network update policy, from the appliance config's `update` object (docs/config.md,
/// docs/network.md):
///
/// ```json
/// "update": { "url": "https://cms.example/shop-12/", "interval": 300, "jitter": 0.1, "caFile": null,
///             "allowPlainHTTP": false, "bandwidthLimit": null, "requireSignature": true,
///             "connectTimeout": 10, "lowSpeedTimeout": 30 }
/// ```
/// `PlayerConfig.update` is nil when there is no `update.url`; `PlayerConfig.updateDefaults` holds
/// the rest (CA, timeouts, signature) for a one-off `vitrine import URL`.
public struct UpdateSettings: Sendable, Equatable {
    /// The catalog folder, ending in `/`: it holds `manifest.json`, `manifest.json.minisig` and the
    /// media at their manifest paths (`update.url`). `https://`, or `http://` with `allowPlainHTTP`.
    public var url: String
    /// Seconds between polls (`update.interval`, at least 10; default 300).
    public var interval: Double
    /// The fraction of `interval` each delay is spread over, 0…1 (`update.jitter`, default 0.1: ± 10 %),
    /// so a fleet started together does not poll together (`CatalogPoller.nextDelay`).
    public var jitter: Double
    /// A PEM file of the certificate authorities to trust instead of the system store
    /// (`update.caFile`, default nil: `/etc/ssl/certs/ca-certificates.crt`).
    public var caFile: String?
    /// Whether `http://` is allowed (`update.allowPlainHTTP`, default false).
    public var allowPlainHTTP: Bool
    /// The most bytes per second a download takes (`update.bandwidthLimit`, default nil: no limit).
    public var bandwidthLimit: Int?
    /// Refuse a manifest without a valid `manifest.json.minisig` by one of `import.trustedKeys`
    /// (`update.requireSignature`, default true: it needs a key).
    public var requireSignature: Bool
    /// The longest wait for the TCP and TLS handshakes, in seconds (`update.connectTimeout`, default 10).
    public var connectTimeout: Double
    /// A transfer that gets no byte for this many seconds is abandoned, and retried
    /// (`update.lowSpeedTimeout`, default 30).
    public var lowSpeedTimeout: Double

    /// The shortest `interval` accepted, in seconds.
    public static let minimumInterval = 10.0

    public init(url: String, interval: Double = 300, jitter: Double = 0.1, caFile: String? = nil, allowPlainHTTP: Bool = false,
                bandwidthLimit: Int? = nil, requireSignature: Bool = true, connectTimeout: Double = 10, lowSpeedTimeout: Double = 30) {
        self.url = url.isEmpty || url.hasSuffix("/") ? url : url + "/"
        self.interval = interval; self.jitter = jitter; self.caFile = caFile; self.allowPlainHTTP = allowPlainHTTP
        self.bandwidthLimit = bandwidthLimit; self.requireSignature = requireSignature
        self.connectTimeout = connectTimeout; self.lowSpeedTimeout = lowSpeedTimeout
    }

    /// The `HTTPClient` settings: timeouts, bandwidth limit, trust, plain HTTP.
    public var fetchSettings: FetchSettings {
        FetchSettings(connectTimeout: connectTimeout, lowSpeedTimeout: lowSpeedTimeout, bandwidthLimit: bandwidthLimit,
                      caFile: caFile, allowPlainHTTP: allowPlainHTTP, userAgent: "Vitrine")
    }

    /// The import policy of a network catalog: config `import.*` (keys, downgrades, switch timing)
    /// with `requireSignature` from `update.requireSignature`.
    public func importSettings(from settings: ImportSettings) -> ImportSettings {
        var s = settings
        s.requireSignature = requireSignature
        return s
    }

    /// These settings for the catalog folder `url` (a final `/` added).
    public func with(url: String) -> UpdateSettings {
        var s = self
        s.url = url.hasSuffix("/") ? url : url + "/"
        return s
    }

    /// Whether `text` names a network source (`https://…` or `http://…`) rather than a stick folder.
    public static func isURL(_ text: String) -> Bool {
        let lower = text.lowercased()
        return lower.hasPrefix("https://") || lower.hasPrefix("http://")
    }
}
