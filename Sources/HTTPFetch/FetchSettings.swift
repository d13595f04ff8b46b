// What every request of an HTTPClient shares: timeouts, the bandwidth limit, trust, plain HTTP.

/// The settings of an `HTTPClient`, fixed for its lifetime.
public struct FetchSettings: Sendable, Equatable {
    /// The longest wait for the TCP and TLS handshakes, in seconds (default 10).
    /// The corresponding libcurl option is `CURLOPT_CONNECTTIMEOUT_MS`.
    public var connectTimeout: Double
    /// A transfer slower than `lowSpeedLimit` for this many seconds is aborted with
    /// `FetchError.timedOut` (default 30; rounded up to whole seconds, at least 1). This covers a
    /// server that stops sending without closing the connection, and one that never answers.
    /// The corresponding libcurl option is `CURLOPT_LOW_SPEED_TIME`.
    public var lowSpeedTimeout: Double
    /// The speed below which `lowSpeedTimeout` counts, in bytes per second (default 1: a stalled
    /// transfer). The corresponding libcurl option is `CURLOPT_LOW_SPEED_LIMIT`.
    public var lowSpeedLimit: Int
    /// The most bytes per second a transfer receives, averaged (nil: no limit), so that a catalog
    /// update leaves the shop's uplink usable. The corresponding libcurl option is
    /// `CURLOPT_MAX_RECV_SPEED_LARGE`.
    public var bandwidthLimit: Int?
    /// A PEM file of the certificate authorities to trust instead of the system store (nil: the
    /// system store, `/etc/ssl/certs/ca-certificates.crt` on Debian). Peer and host name are always
    /// verified. The corresponding libcurl option is `CURLOPT_CAINFO`.
    public var caFile: String?
    /// Whether `http://` URLs are allowed (default false: `FetchError.plainHTTPRefused`). Also
    /// decides whether a redirect may lead to plain HTTP. The corresponding libcurl options are
    /// `CURLOPT_PROTOCOLS_STR` and `CURLOPT_REDIR_PROTOCOLS_STR`.
    public var allowPlainHTTP: Bool
    /// The `User-Agent` header (RFC 9110 §10.1.5). The corresponding libcurl option is `CURLOPT_USERAGENT`.
    public var userAgent: String

    public init(connectTimeout: Double = 10, lowSpeedTimeout: Double = 30, lowSpeedLimit: Int = 1,
                bandwidthLimit: Int? = nil, caFile: String? = nil, allowPlainHTTP: Bool = false,
                userAgent: String = "Vitrine") {
        self.connectTimeout = connectTimeout
        self.lowSpeedTimeout = lowSpeedTimeout
        self.lowSpeedLimit = lowSpeedLimit
        self.bandwidthLimit = bandwidthLimit
        self.caFile = caFile
        self.allowPlainHTTP = allowPlainHTTP
        self.userAgent = userAgent
    }
}
