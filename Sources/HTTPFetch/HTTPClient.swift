// libcurl's easy interface: one handle per client, reused so that requests to one server share a
// keep-alive connection (and its TLS session). Every unsafe pointer of HTTPFetch is in this file.
#if canImport(Glibc)
internal import Glibc
#endif
internal import CCurl
import Synchronization
import Crypto

/// A response read into memory by `HTTPClient.get`.
public struct FetchResponse: Sendable, Equatable {
    /// 200 (the body is new) or 304 (not modified since the validators sent; the body is empty).
    public var status: Int
    /// The body (empty after a 304).
    public var body: [UInt8]
    /// The `ETag` header, quotes included (RFC 9110 §8.8.3), to send back as `If-None-Match`.
    public var etag: String?
    /// The `Last-Modified` header (an HTTP date, RFC 9110 §8.8.2), to send back as `If-Modified-Since`.
    public var lastModified: String?
    /// Bytes received for this request: every header (`CURLINFO_HEADER_SIZE`) plus the body
    /// (`CURLINFO_SIZE_DOWNLOAD_T`), without TLS framing.
    public var bytesReceived: Int
    public init(status: Int, body: [UInt8], etag: String?, lastModified: String?, bytesReceived: Int) {
        self.status = status; self.body = body; self.etag = etag
        self.lastModified = lastModified; self.bytesReceived = bytesReceived
    }
}

/// What `HTTPClient.download` did.
public struct DownloadResult: Sendable, Equatable {
    /// Body bytes received over the network for this call (0 when the file was already there).
    public var bytesTransferred: Int
    /// The offset the transfer started from: the size of the `.part` file that was resumed (0 for a
    /// fresh download, or when the server ignored the Range and sent the whole file).
    public var resumedFrom: Int
    /// True when the file was already at its path with the right size and SHA-256: nothing was requested.
    public var wasPresent: Bool
    public init(bytesTransferred: Int, resumedFrom: Int, wasPresent: Bool) {
        self.bytesTransferred = bytesTransferred; self.resumedFrom = resumedFrom; self.wasPresent = wasPresent
    }
}

/// Stops the transfer of an `HTTPClient` from any thread: the transfer running (or the next one)
/// ends with `FetchError.cancelled` within about a second (libcurl calls back at least once a second).
public final class FetchCancellation: Sendable {
    private let flag = Atomic<Bool>(false)
    public init() {}
    /// Asks the transfers to stop. Safe from any thread and from a progress callback.
    public func cancel() { flag.store(true, ordering: .relaxed) }
    /// Lets transfers run again after a `cancel()`.
    public func reset() { flag.store(false, ordering: .relaxed) }
    /// Whether `cancel()` was called since the last `reset()`.
    public var isCancelled: Bool { flag.load(ordering: .relaxed) }
}

/// HTTP(S) requests through one libcurl easy handle, reused between requests (keep-alive, TLS
/// session reuse). TLS peers and host names are always verified (against `FetchSettings.caFile`
/// or the system store); redirects are followed (at most 5) only to allowed schemes.
///
/// Not thread-safe: use one client from one thread at a time; only `cancellation` may be used
/// from other threads. Blocking: each call returns when its transfer ends.
public final class HTTPClient {
    /// The settings given to `init`.
    public let settings: FetchSettings
    /// Cancels the running transfer from any thread.
    public let cancellation = FetchCancellation()

    private let handle: UnsafeMutableRawPointer
    private let errorBuffer: UnsafeMutablePointer<CChar>

    /// `curl_global_init`, once per process, before the first handle (thread-safe in libcurl ≥ 7.84).
    private static let globalInit: CURLcode = curl_global_init(Int(CURL_GLOBAL_DEFAULT))

    /// Makes the handle and applies `settings`.
    /// - Throws: `FetchError.other` when libcurl cannot make a handle (out of memory) or refuses an
    ///   option (a libcurl built without HTTPS); `FetchError.io` when `caFile` cannot be read.
    /// The corresponding C functions are `curl_global_init`, `curl_easy_init` and `curl_easy_setopt`.
    public init(settings: FetchSettings) throws(FetchError) {
        self.settings = settings
        guard Self.globalInit == CURLE_OK else {
            throw .other(code: Int32(Self.globalInit.rawValue), detail: "curl_global_init failed")
        }
        if let caFile = settings.caFile, access(caFile, R_OK) != 0 {
            throw .io(path: caFile, errno: Errno(errno))
        }
        guard let handle = curl_easy_init() else { throw .other(code: -1, detail: "curl_easy_init failed") }
        self.handle = handle
        errorBuffer = .allocate(capacity: vitrine_curl_error_size())
        errorBuffer.initialize(repeating: 0, count: vitrine_curl_error_size())

        let protocols = settings.allowPlainHTTP ? "http,https" : "https"
        var results: [CURLcode] = [
            vitrine_curl_setopt_ptr(handle, CURLOPT_ERRORBUFFER, errorBuffer),
            // No signals: libcurl would otherwise use SIGALRM for DNS timeouts, unsafe with threads.
            vitrine_curl_setopt_long(handle, CURLOPT_NOSIGNAL, 1),
            vitrine_curl_setopt_string(handle, CURLOPT_PROTOCOLS_STR, protocols),
            vitrine_curl_setopt_string(handle, CURLOPT_REDIR_PROTOCOLS_STR, protocols),
            vitrine_curl_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 1),
            vitrine_curl_setopt_long(handle, CURLOPT_MAXREDIRS, 5),
            vitrine_curl_setopt_long(handle, CURLOPT_SSL_VERIFYPEER, 1),
            vitrine_curl_setopt_long(handle, CURLOPT_SSL_VERIFYHOST, 2),
            vitrine_curl_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, Int(max(1, settings.connectTimeout * 1000))),
            vitrine_curl_setopt_long(handle, CURLOPT_LOW_SPEED_LIMIT, max(1, settings.lowSpeedLimit)),
            vitrine_curl_setopt_long(handle, CURLOPT_LOW_SPEED_TIME, Int(max(1, settings.lowSpeedTimeout.rounded(.up)))),
            vitrine_curl_setopt_long(handle, CURLOPT_TCP_KEEPALIVE, 1),
            vitrine_curl_setopt_string(handle, CURLOPT_USERAGENT, settings.userAgent),
            vitrine_curl_setopt_long(handle, CURLOPT_NOPROGRESS, 0),
            vitrine_curl_setopt_writefunction(handle) { data, size, count, user in
                let transfer = Unmanaged<Transfer>.fromOpaque(user!).takeUnretainedValue()
                return transfer.receiveBody(UnsafeRawBufferPointer(start: data, count: size * count))
            },
            vitrine_curl_setopt_headerfunction(handle) { data, size, count, user in
                let transfer = Unmanaged<Transfer>.fromOpaque(user!).takeUnretainedValue()
                transfer.receiveHeader(UnsafeRawBufferPointer(start: data, count: size * count))
                return size * count
            },
            vitrine_curl_setopt_xferinfo(handle) { user, _, _, _, _ in
                let transfer = Unmanaged<Transfer>.fromOpaque(user!).takeUnretainedValue()
                return transfer.cancellation.isCancelled ? 1 : 0
            },
        ]
        if let limit = settings.bandwidthLimit {
            results.append(vitrine_curl_setopt_off_t(handle, CURLOPT_MAX_RECV_SPEED_LARGE, curl_off_t(limit)))
        }
        if let caFile = settings.caFile {
            results.append(vitrine_curl_setopt_string(handle, CURLOPT_CAINFO, caFile))
        }
        if let failed = results.first(where: { $0 != CURLE_OK }) {
            curl_easy_cleanup(handle)
            errorBuffer.deallocate()
            throw .other(code: Int32(failed.rawValue), detail: String(cString: curl_easy_strerror(failed)))
        }
    }

    deinit {
        curl_easy_cleanup(handle)
        errorBuffer.deallocate()
    }

    /// GETs `url` into memory (`manifest.json`, its `.minisig`): at most `maxBytes` of body.
    /// The request is conditional when validators are given (RFC 9110 §13.1.2 `If-None-Match`,
    /// §13.1.3 `If-Modified-Since`), so an unchanged resource costs one small 304.
    /// - Parameters:
    ///   - ifNoneMatch: the `ETag` of the last 200, quotes included, or nil.
    ///   - ifModifiedSince: the `Last-Modified` of the last 200, or nil.
    ///   - maxBytes: the largest body accepted, in bytes.
    /// - Returns: a 200 with its body and validators, or a 304 with an empty body.
    /// - Throws: `plainHTTPRefused`, `http` for any other status (404, 500…), `sizeMismatch` when the
    ///   body exceeds `maxBytes`, `timedOut`, `tls`, `unreachable`, `cancelled`, `other`.
    /// The corresponding C function is `curl_easy_perform`.
    public func get(_ url: String, ifNoneMatch: String? = nil, ifModifiedSince: String? = nil,
                    maxBytes: Int) throws(FetchError) -> FetchResponse {
        try checkScheme(url)
        var headers: [String] = []
        if let ifNoneMatch { headers.append("If-None-Match: \(ifNoneMatch)") }
        if let ifModifiedSince { headers.append("If-Modified-Since: \(ifModifiedSince)") }
        var body: [UInt8] = []
        let transfer = Transfer(url: url, cancellation: cancellation) { status, bytes throws(FetchError) in
            guard status == 200 else { throw .http(status: status, url: url) }
            guard body.count + bytes.count <= maxBytes else {
                throw .sizeMismatch(url: url, expected: maxBytes, got: body.count + bytes.count)
            }
            body.append(contentsOf: bytes)
        }
        try perform(transfer, headers: headers, range: nil)
        let status = responseCode()
        guard status == 200 || status == 304 else { throw .http(status: status, url: url) }
        return FetchResponse(status: status, body: status == 200 ? body : [], etag: transfer.header("etag"),
                             lastModified: transfer.header("last-modified"), bytesReceived: bytesReceived())
    }

    /// Downloads `url` to `path`, checking its size and SHA-256 while it writes.
    ///
    /// The bytes go to `path + ".part"`, which is kept between attempts: a later call resumes with
    /// `Range: bytes=<part size>-` (RFC 9110 §14.2), re-hashing the part first; a 200 instead of the
    /// 206 restarts from byte 0. At the end the size and SHA-256 are checked, the part is fsynced and
    /// renamed to `path` atomically, and the folder is fsynced. A file already at `path` with the
    /// right size and hash is not fetched (it is read and hashed once).
    ///
    /// A cut connection, a timeout, a full disk or a cancellation keep the part for the next call;
    /// a wrong hash or size removes it (its bytes are not the manifest's file), and nothing is
    /// renamed to `path`.
    /// - Parameters:
    ///   - path: the final file; its folder must exist.
    ///   - size: the expected size in bytes (from the manifest).
    ///   - sha256: the expected SHA-256, 64 hex digits (from the manifest).
    ///   - progress: called on this thread with (bytes of the file done, `size`) as bytes arrive.
    /// - Throws: `plainHTTPRefused`, `http` (anything but 200/206), `sizeMismatch`, `hashMismatch`,
    ///   `noSpace(path:)` of the part, `io`, `timedOut`, `tls`, `unreachable`, `cancelled`,
    ///   `unsafePath` for a malformed `sha256`, `other`.
    /// The corresponding C functions are `curl_easy_perform` (with `CURLOPT_RANGE`), `write`,
    /// `fsync`, `rename`.
    public func download(_ url: String, to path: String, size: Int, sha256: String,
                         progress: ((Int, Int) -> Void)? = nil) throws(FetchError) -> DownloadResult {
        try checkScheme(url)
        guard let expected = SHA256.Digest(hex: sha256) else { throw .unsafePath(sha256) }
        if try PartFile.isComplete(path, size: size, expected: expected) {
            progress?(size, size)
            return DownloadResult(bytesTransferred: 0, resumedFrom: size, wasPresent: true)
        }
        let part = try PartFile(path: path, url: url, size: size, expected: expected)
        let resumedFrom = part.written
        if resumedFrom < size {
            let transfer = Transfer(url: url, cancellation: cancellation) { status, bytes throws(FetchError) in
                try part.receive(status: status, bytes)
                progress?(part.written, size)
            }
            transfer.onHeaders = { status, headers throws(FetchError) in
                try part.begin(status: status, headers: headers)
            }
            do {
                try perform(transfer, headers: [], range: resumedFrom > 0 ? "\(resumedFrom)-" : nil)
            } catch {
                try? part.flush()
                throw error
            }
            let status = responseCode()
            guard status == 200 || status == 206 else { throw .http(status: status, url: url) }
        }
        try part.finish()
        return DownloadResult(bytesTransferred: part.received, resumedFrom: part.restarted ? 0 : resumedFrom,
                              wasPresent: false)
    }

    // MARK: - libcurl

    private func checkScheme(_ url: String) throws(FetchError) {
        let lower = url.lowercased()
        if lower.hasPrefix("http://") {
            if !settings.allowPlainHTTP { throw .plainHTTPRefused(url: url) }
        } else if !lower.hasPrefix("https://") {
            throw .other(code: Int32(CURLE_UNSUPPORTED_PROTOCOL.rawValue), detail: "\(url): not an https:// URL")
        }
    }

    /// Runs one request on the handle: sets the URL, the extra headers and the range, performs,
    /// resets them, and maps libcurl's result (or the callbacks' error) to a `FetchError`.
    private func perform(_ transfer: Transfer, headers: [String], range: String?) throws(FetchError) {
        if cancellation.isCancelled { throw .cancelled }
        var list: UnsafeMutablePointer<curl_slist>? = nil
        for header in headers { list = curl_slist_append(list, header) }
        defer { curl_slist_free_all(list) }
        errorBuffer[0] = 0
        let user = Unmanaged.passUnretained(transfer).toOpaque()
        _ = vitrine_curl_setopt_string(handle, CURLOPT_URL, transfer.url)
        _ = vitrine_curl_setopt_ptr(handle, CURLOPT_HTTPHEADER, list)
        _ = vitrine_curl_setopt_string(handle, CURLOPT_RANGE, range)
        _ = vitrine_curl_setopt_ptr(handle, CURLOPT_WRITEDATA, user)
        _ = vitrine_curl_setopt_ptr(handle, CURLOPT_HEADERDATA, user)
        _ = vitrine_curl_setopt_ptr(handle, CURLOPT_XFERINFODATA, user)
        let code = withExtendedLifetime(transfer) { curl_easy_perform(handle) }
        // The list is freed on return: libcurl must not keep a pointer to it.
        _ = vitrine_curl_setopt_ptr(handle, CURLOPT_HTTPHEADER, nil)
        if code == CURLE_OK { return }
        if let failure = transfer.failure { throw failure }
        throw mapError(code, url: transfer.url)
    }

    private func mapError(_ code: CURLcode, url: String) -> FetchError {
        let message = Self.withoutElapsedTime(
            errorBuffer[0] != 0 ? String(cString: errorBuffer) : String(cString: curl_easy_strerror(code)))
        switch code {
        case CURLE_OPERATION_TIMEDOUT:
            return .timedOut(url: url)
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
             CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH,
             CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_CRL_BADFILE, CURLE_SSL_SHUTDOWN_FAILED:
            return .tls(url: url, detail: message)
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY, CURLE_COULDNT_CONNECT, CURLE_PARTIAL_FILE,
             CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_GOT_NOTHING, CURLE_HTTP2, CURLE_HTTP2_STREAM:
            return .unreachable(url: url, detail: message)
        case CURLE_UNSUPPORTED_PROTOCOL where !settings.allowPlainHTTP:
            // A redirect to http:// (or another scheme) that CURLOPT_REDIR_PROTOCOLS_STR refused.
            return .plainHTTPRefused(url: url)
        case CURLE_ABORTED_BY_CALLBACK:
            return .cancelled
        default:
            return .other(code: Int32(code.rawValue), detail: message)
        }
    }

    /// libcurl's message without the time the attempt took: `Failed to connect to 127.0.0.1 port
    /// 8443 after 0 ms: Couldn't connect to server` (libcurl 7.88, `lib/connect.c`) becomes
    /// `Failed to connect to 127.0.0.1 port 8443: Couldn't connect to server`. The same fault then
    /// reads the same at every attempt, so a poller that logs a fault once, not per attempt, does.
    static func withoutElapsedTime(_ message: String) -> String {
        message.replacing(#/ after [0-9]+ ms/#, with: "")
    }

    private func responseCode() -> Int {
        var value = 0
        _ = vitrine_curl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &value)
        return value
    }

    private func bytesReceived() -> Int {
        var headerSize = 0
        var bodySize: curl_off_t = 0
        _ = vitrine_curl_getinfo_long(handle, CURLINFO_HEADER_SIZE, &headerSize)
        _ = vitrine_curl_getinfo_off_t(handle, CURLINFO_SIZE_DOWNLOAD_T, &bodySize)
        return headerSize + Int(bodySize)
    }
}

/// One request's state, reached from libcurl's callbacks through their user pointer.
final class Transfer {
    let url: String
    let cancellation: FetchCancellation
    /// Gets each piece of the body with the status of the final response.
    let body: (Int, UnsafeRawBufferPointer) throws(FetchError) -> Void
    /// Called once, before the first piece of the body, with the status and the headers.
    var onHeaders: ((Int, [String: String]) throws(FetchError) -> Void)?
    /// The error a callback aborted the transfer with (libcurl then reports `CURLE_WRITE_ERROR`).
    private(set) var failure: FetchError?
    private(set) var status = 0
    /// The headers of the last response (after redirects and 1xx), names in lowercase.
    private var headers: [String: String] = [:]
    private var bodyStarted = false

    init(url: String, cancellation: FetchCancellation,
         body: @escaping (Int, UnsafeRawBufferPointer) throws(FetchError) -> Void) {
        self.url = url
        self.cancellation = cancellation
        self.body = body
    }

    func header(_ name: String) -> String? { headers[name] }

    /// One header line (CRLF included), or a status line that starts a new response.
    func receiveHeader(_ line: UnsafeRawBufferPointer) {
        let text = String(decoding: line, as: UTF8.self).trimmingWhitespace()
        if text.hasPrefix("HTTP/") {
            headers = [:]
            let parts = text.split(separator: " ", maxSplits: 2)
            status = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
        } else if let colon = text.firstIndex(of: ":") {
            headers[text[..<colon].lowercased()] = String(text[text.index(after: colon)...]).trimmingWhitespace()
        }
    }

    /// One piece of the body: handed on, or the transfer is aborted with the error it threw.
    func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Int {
        do throws(FetchError) {
            if cancellation.isCancelled { throw .cancelled }
            if !bodyStarted {
                bodyStarted = true
                try onHeaders?(status, headers)
            }
            try body(status, bytes)
            return bytes.count
        } catch {
            failure = error
            return 0  // anything but bytes.count: libcurl stops with CURLE_WRITE_ERROR
        }
    }
}

extension String {
    func trimmingWhitespace() -> String {
        let scalars = unicodeScalars
        guard let start = scalars.firstIndex(where: { !$0.properties.isWhitespace }) else { return "" }
        let end = scalars.lastIndex(where: { !$0.properties.isWhitespace })!
        return String(scalars[start...end])
    }
}
