// The one error type of HTTPFetch.
@_exported import SystemSupport

/// Why a request, a download or a poll failed. Each case names the URL or the path it was about.
///
/// `isRetryable` tells a passing fault (timeout, lost connection, 5xx, full disk) from one that the
/// same request will meet again (404, a wrong hash, a refused certificate).
public enum FetchError: Error, Sendable, Equatable, CustomStringConvertible {
    /// An `http://` URL (or a redirect to one) while `FetchSettings.allowPlainHTTP` is false.
    case plainHTTPRefused(url: String)
    /// The server answered with a status the request cannot use (404, 500, 416…; RFC 9110 §15).
    case http(status: Int, url: String)
    /// The connection or the transfer was too slow: `connectTimeout` or `lowSpeedTimeout`
    /// (libcurl's `CURLE_OPERATION_TIMEDOUT`).
    case timedOut(url: String)
    /// The TLS handshake failed: an untrusted certificate, a wrong host name, an unreadable CA
    /// file (`CURLE_PEER_FAILED_VERIFICATION`, `CURLE_SSL_CONNECT_ERROR`, `CURLE_SSL_CACERT_BADFILE`…).
    case tls(url: String, detail: String)
    /// The server could not be reached, or the connection was lost mid-response (no route, refused,
    /// unknown host, `CURLE_PARTIAL_FILE`, `CURLE_RECV_ERROR`).
    case unreachable(url: String, detail: String)
    /// The body is not the size the manifest gives (or exceeds the in-memory limit), in bytes.
    case sizeMismatch(url: String, expected: Int, got: Int)
    /// The body's SHA-256 (64 lowercase hex digits) is not the manifest's.
    case hashMismatch(url: String, expected: String, got: String)
    /// A write failed with `ENOSPC`, `EDQUOT` or `EFBIG`; the partial file is kept for a resume.
    case noSpace(path: String)
    /// Another file error (open, write, fsync, rename…).
    case io(path: String, errno: Errno)
    /// A catalog path that could leave the target folder (`..`, absolute, empty segment, control
    /// character) or a SHA-256 that is not 64 hex digits; nothing was requested.
    case unsafePath(String)
    /// `FetchCancellation.cancel()` was called while the transfer ran.
    case cancelled
    /// Any other libcurl failure: the `CURLcode` and libcurl's message.
    case other(code: Int32, detail: String)

    public var description: String {
        switch self {
        case .plainHTTPRefused(let url): return "\(url): plain HTTP is not allowed (update.allowPlainHTTP is off)"
        case .http(let status, let url): return "\(url): HTTP status \(status)"
        case .timedOut(let url): return "\(url): timed out"
        case .tls(let url, let detail): return "\(url): TLS failed: \(detail)"
        case .unreachable(let url, let detail): return "\(url): unreachable: \(detail)"
        case .sizeMismatch(let url, let expected, let got): return "\(url): \(got) bytes, expected \(expected)"
        case .hashMismatch(let url, let expected, let got): return "\(url): SHA-256 \(got), expected \(expected)"
        case .noSpace(let path): return "\(path): no space left on the device"
        case .io(let path, let errno): return "\(path): \(errno)"
        case .unsafePath(let path): return "refused catalog path \"\(path)\": it could leave the media folder"
        case .cancelled: return "cancelled"
        case .other(let code, let detail): return "libcurl error \(code): \(detail)"
        }
    }

    /// Whether the same request may succeed later: timeouts, lost connections, 5xx, 408 and 429,
    /// a full disk (after room is made) and cancellation.
    public var isRetryable: Bool {
        switch self {
        case .timedOut, .unreachable, .noSpace, .cancelled: return true
        case .http(let status, _): return status >= 500 || status == 408 || status == 429
        default: return false
        }
    }
}
