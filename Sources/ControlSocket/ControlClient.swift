// The client side of the control socket, for `vitrine ctl` and tests: connect, send a request,
// read its reply; or observe the event stream. Blocking, with timeouts (poll).
import SystemSupport
import VitrineCore

/// One connection to a control socket. Not tied to an event loop: each call blocks the calling
/// thread, at most for its timeout.
///
/// ```swift
/// let client = try ControlClient(path: "/run/vitrine/control.sock")
/// let reply = try client.request([.string("status")])
/// ```
public final class ControlClient {
    /// The socket path connected to.
    public let path: String
    /// The longest line accepted from the server, in bytes (a longer one is `.invalidReply`).
    public let maxLineBytes: Int
    private var fd: Int32
    /// Received bytes not yet returned as lines.
    private var received: [UInt8] = []
    /// Where the next line starts in `received`.
    private var start = 0
    private var chunk = [UInt8](repeating: 0, count: 64 << 10)
    private var endOfStream = false

    /// Connects to the server at `path`.
    ///
    /// - Parameters:
    ///   - timeout: how long to retry while the server's backlog is full (`EAGAIN`).
    ///   - maxLineBytes: the longest line to accept (default 64 MiB).
    /// - Throws: `ControlSocketError.noListener` when there is no socket file (`ENOENT`) or nothing
    ///   listens on it (`ECONNREFUSED`); `.pathTooLong`; `.timedOut` when the backlog stays full;
    ///   `.system` for anything else (`EACCES`: not in the socket's group).
    /// The corresponding C functions are `socket` and `connect`.
    public init(path: String, timeout: Duration = .seconds(5), maxLineBytes: Int = 64 << 20) throws(ControlSocketError) {
        self.path = path
        self.maxLineBytes = maxLineBytes
        guard !path.isEmpty, path.utf8.count <= UnixSocket.pathCapacity, !path.utf8.contains(0) else {
            throw .pathTooLong(path: path, limit: UnixSocket.pathCapacity)
        }
        switch UnixSocket.stream() {
        case .success(let socket): fd = socket
        case .failure(let errno): throw .system(operation: "socket", errno: errno)
        }
        // From here `self` is whole: a throw runs `deinit`, which closes the descriptor.
        let began = MonotonicClock.nanoseconds()
        while true {
            switch UnixSocket.connect(fd, path: path) {
            case .success:
                return
            case .failure(.wouldBlock) where MonotonicClock.elapsed(sinceNanoseconds: began) < timeout:
                UnixSocket.sleep(milliseconds: 10)
            case .failure(.wouldBlock):
                throw .timedOut(path: path, seconds: Self.seconds(timeout))
            case .failure(let errno) where errno == .noSuchFile || errno == .connectionRefused:
                throw .noListener(path: path, errno: errno)
            case .failure(let errno):
                throw .system(operation: "connect \(path)", errno: errno)
            }
        }
    }

    deinit { close() }

    /// Closes the connection; doing it twice does nothing.
    public func close() {
        guard fd >= 0 else { return }
        UnixSocket.close(fd)
        fd = -1
    }

    /// Sends `line` (a `\n` is added when it has none), waiting for room at most `timeout`.
    /// - Throws: `.timedOut`; `.closedByServer` (`EPIPE`, `ECONNRESET`); `.system`.
    /// The corresponding C functions are `send` and `poll`.
    public func send(line: String, timeout: Duration = .seconds(10)) throws(ControlSocketError) {
        var bytes = Array(line.utf8)
        if bytes.last != 0x0A { bytes.append(0x0A) }
        try send(bytes: bytes, timeout: timeout)
    }

    /// Sends `bytes` as they are (no `\n` added), waiting for room at most `timeout`.
    /// - Throws: `.timedOut`; `.closedByServer` (`EPIPE`, `ECONNRESET`); `.system`.
    /// The corresponding C functions are `send` and `poll`.
    public func send(bytes: [UInt8], timeout: Duration = .seconds(10)) throws(ControlSocketError) {
        precondition(fd >= 0, "ControlClient.send: the client is closed")
        let deadline = MonotonicClock.nanoseconds() &+ UInt64(max(0, timeout.wholeNanosecondsClamped))
        var offset = 0
        while offset < bytes.count {
            switch UnixSocket.send(fd, bytes, from: offset) {
            case .success(let count?):
                offset += count
            case .success(nil):
                try waitUntilReady(writable: true, deadline: deadline, timeout: timeout)
            case .failure(let errno) where errno == .brokenPipe || errno == .connectionReset:
                throw .closedByServer(path: path)
            case .failure(let errno):
                throw .system(operation: "send \(path)", errno: errno)
            }
        }
    }

    /// Tells the server that no more requests come (`shutdown(SHUT_WR)`, as `socat` does at the
    /// end of its input); the replies still come, and the server closes once they are out.
    /// - Throws: `.system` from `shutdown`.
    public func finishSending() throws(ControlSocketError) {
        precondition(fd >= 0, "ControlClient.finishSending: the client is closed")
        if case .failure(let errno) = UnixSocket.shutdownWriting(fd) { throw .system(operation: "shutdown \(path)", errno: errno) }
    }

    /// The next line from the server, without its `\n`; nil at the end of the stream (the server
    /// closed, or reset the connection after its last line).
    /// - Parameter timeout: the longest wait for a whole line; nil waits as long as it takes.
    /// - Throws: `.timedOut`; `.invalidReply` for a line longer than `maxLineBytes`; `.system`.
    /// The corresponding C functions are `recv` and `poll`.
    public func readLine(timeout: Duration? = .seconds(10)) throws(ControlSocketError) -> String? {
        precondition(fd >= 0, "ControlClient.readLine: the client is closed")
        let deadline = timeout.map { MonotonicClock.nanoseconds() &+ UInt64(max(0, $0.wholeNanosecondsClamped)) }
        var scanned = start
        while true {
            if let newline = received[scanned...].firstIndex(of: 0x0A) {
                let line = String(decoding: received[start..<newline], as: UTF8.self)
                start = newline + 1
                if start == received.count {
                    received.removeAll(keepingCapacity: true)
                    start = 0
                }
                return line
            }
            if start > 0 {
                received.removeFirst(start)
                start = 0
            }
            scanned = received.count
            guard received.count <= maxLineBytes else {
                throw .invalidReply(reason: "a line longer than \(maxLineBytes) bytes")
            }
            if endOfStream {
                guard !received.isEmpty else { return nil }
                let line = String(decoding: received, as: UTF8.self)
                received = []
                return line
            }
            switch UnixSocket.receive(fd, into: &chunk) {
            case .success(0):
                endOfStream = true
            case .success(let count?):
                received += chunk[0..<count]
            case .success(nil):
                try waitUntilReady(writable: false, deadline: deadline, timeout: timeout ?? .zero)
            case .failure(let errno) where errno == .connectionReset:
                // The server closed with our input unread (a request too long): what it sent was
                // read; the rest is the end.
                endOfStream = true
            case .failure(let errno):
                throw .system(operation: "recv \(path)", errno: errno)
            }
        }
    }

    /// Sends `{"command": COMMAND, "request_id": ID}` and returns its reply, skipping event lines
    /// (`observe`) and replies to other requests on the way.
    /// - Parameters:
    ///   - command: the name first, then the arguments.
    ///   - requestID: echoed by the server; nil sends none (the reply then carries 0).
    ///   - timeout: for sending, and again for the reply.
    /// - Throws: `.timedOut`; `.closedByServer` when the stream ends first; `.invalidReply`; `.system`.
    public func request(_ command: [JSONValue], requestID: JSONValue? = .number(JSONNumber(literal: "1", value: 1)),
                        timeout: Duration = .seconds(10)) throws(ControlSocketError) -> ControlResponse {
        try send(line: ControlProtocol.request(command, requestID: requestID), timeout: timeout)
        let expected = requestID ?? .number(JSONNumber(literal: "0", value: 0))
        while true {
            guard let line = try readLine(timeout: timeout) else { throw .closedByServer(path: path) }
            guard let response = try? ControlResponse(line: line) else { continue }  // an event line
            if response.requestID == expected { return response }
            // An error with request_id 0: the server could not read our request (invalid JSON, too long).
            if !response.isSuccess, let id = response.requestID, Self.isZero(id) { return response }
        }
    }

    /// Sends `observe`, and when it succeeds calls `onLine` with every event line until the
    /// stream ends or `onLine` returns false.
    /// - Returns: the reply to `observe` (when it is not a success, no line is read).
    /// - Throws: as `request`, and `readLine`'s errors while observing.
    @discardableResult
    public func observe(timeout: Duration = .seconds(10), _ onLine: (String) -> Bool) throws(ControlSocketError) -> ControlResponse {
        let reply = try request([.string("observe")], timeout: timeout)
        guard reply.isSuccess else { return reply }
        while let line = try readLine(timeout: nil) {
            if !onLine(line) { break }
        }
        return reply
    }

    private func waitUntilReady(writable: Bool, deadline: UInt64?, timeout: Duration) throws(ControlSocketError) {
        var milliseconds: Int32 = -1
        if let deadline {
            let now = MonotonicClock.nanoseconds()
            guard now < deadline else { throw .timedOut(path: path, seconds: Self.seconds(timeout)) }
            milliseconds = Int32(clamping: (deadline - now + 999_999) / 1_000_000)
        }
        switch UnixSocket.wait(fd, writable: writable, milliseconds: milliseconds) {
        case .success(true): return
        case .success(false): throw .timedOut(path: path, seconds: Self.seconds(timeout))
        case .failure(let errno): throw .system(operation: "poll \(path)", errno: errno)
        }
    }

    private static func isZero(_ value: JSONValue) -> Bool {
        if case let .number(number) = value { return number.value == 0 }
        return false
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}

@available(*, unavailable)
extension ControlClient: Sendable {}

extension Duration {
    /// The duration in whole nanoseconds, clamped to `Int64`.
    var wholeNanosecondsClamped: Int64 {
        let (seconds, attoseconds) = components
        let (product, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        return product.addingReportingOverflow(attoseconds / 1_000_000_000).overflow ? .max : product + attoseconds / 1_000_000_000
    }
}
