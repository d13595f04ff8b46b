// The control socket's server: a listening Unix stream socket on the event loop, one registration
// per client, requests handed to the player's handler, the event stream to observers.
import RunLoop
import VitrineCore

/// The local control socket of a player (`/run/vitrine/control.sock`), on an `EventLoop`.
///
/// **Protocol** (mpv's JSON IPC, DOCS/man/ipc.rst): one JSON object per line each way. A request
/// `{"command": ["jump", "promo", 12.5], "request_id": 7}` goes to `handler` as a
/// `ControlRequest`; its `ControlReply` answers `{"request_id":7,"error":"success","data":…}` or
/// `{"request_id":7,"error":"invalid parameter","message":"…"}`, now or later. `request_id` is
/// echoed whatever JSON it is, and is 0 when absent. Empty lines and `#` lines are skipped; a line
/// that is not JSON gets `invalid JSON` and the connection stays (mpv's plain-text commands are
/// not accepted). See `ControlProtocol.parse` for every rejection. docs/control.md has the rest.
///
/// **observe** is the server's own: `{"command": ["observe"]}` is answered success with null
/// data, and from then on the client gets every line given to `broadcast(eventLine:)` (the
/// player's event log). It stops when the client closes. `handler` never sees it.
///
/// **Bounds.** A request line holds at most `maxRequestBytes` (default 64 KiB): a longer one
/// gets one `request too long` reply and the connection is closed, having held at most that much
/// of it. Output is written without blocking; what the socket does not take is queued, and a client
/// whose queue would pass `maxPendingOutputBytes` (default 4 MiB: a screenshot as base64 fits) is
/// dropped, with a log line naming it (connection number, fd, and the pid, uid and gid from
/// `SO_PEERCRED`). A reply longer than that limit is replaced by `error running command` saying so.
/// At most `maxClients` (default 16) clients at once; one more gets `error running command` and
/// is closed. So the loop never waits for a client, and one client holds at most about
/// `maxRequestBytes + maxPendingOutputBytes`.
///
/// **Turns and backpressure.** Lines are not run in the wake-up that read them: each client gets
/// one turn per loop iteration (a `LoopWaker`), running at most `requestsPerTurn` (32) requests
/// or for `turnBudget` (2 ms, `CLOCK_MONOTONIC`), whichever comes first, so the loop's other
/// descriptors (page flips) and timers run between turns. While `maxUnansweredRequests` (64) of
/// a client's requests wait for a reply or `outputPauseBytes` (256 KiB) of output wait for it,
/// its requests do not run and it is not read from (`.readable` off its watch) until a reply goes
/// out or the output drains: a pipelining client is slowed to its own reading pace, and one that
/// reads is never dropped. Error messages echo request names through `ControlProtocol.echoed`
/// (64 characters and "…").
///
/// **The socket file** is made with `bind`, then given `mode` (`chmod`, default 0660) and, with
/// `group`, that group (`lchown`; the process must be in the group or hold `CAP_CHOWN`), and only
/// then listened on, so nobody connects before the mode is set. A socket file at `path` that
/// nothing listens on (connect: `ECONNREFUSED`, a player that died) is removed first; one that a
/// connect reaches means another player: `ControlSocketError.anotherListener`. Anything else at the
/// path (a file, a folder) is left alone: `.notASocket`.
///
/// **Ownership.** The server owns the listening socket, every client socket and the socket file:
/// `close()` (or `deinit`) cancels their registrations, closes them and removes the file (when it
/// is still the one this server made). Confined to the loop's thread, like the loop.
public final class ControlServer {
    /// Counts since the server started, for tests, logs and status.
    public struct Statistics: Sendable, Equatable {
        /// Connections accepted (including those refused for `maxClients`).
        public var accepted = 0
        /// Request lines parsed (requests handed to the handler, `observe`, and rejected lines).
        public var requests = 0
        /// Lines answered with an error before the handler (`invalid JSON`, `invalid parameter`).
        public var rejected = 0
        /// Lines longer than `maxRequestBytes` (each closed its connection).
        public var requestsTooLong = 0
        /// Clients dropped because their output queue would pass `maxPendingOutputBytes`.
        public var dropped = 0
        /// Connections refused because `maxClients` were connected.
        public var refused = 0
        /// Lines given to `broadcast(eventLine:)` while someone observed.
        public var broadcastLines = 0
        /// The most bytes of one unfinished request line held for a client.
        public var largestBufferedRequest = 0
        /// The most bytes of output queued for one client.
        public var largestPendingOutput = 0
        /// The most bytes received from one client and not yet run (whole lines waiting for
        /// their turn and an unfinished one): at most `maxRequestBytes + 1`.
        public var largestHeldInput = 0
        /// Turns that ended at `requestsPerTurn` or `turnBudget` with lines left for a later one.
        public var turnsCutShort = 0
        /// Times a client was backed up (`maxUnansweredRequests` unanswered, or
        /// `outputPauseBytes` of output waiting) and its reading paused.
        public var pauses = 0
    }

    /// The socket file's path.
    public let path: String
    /// The longest request line, in bytes (without its `\n`).
    public let maxRequestBytes: Int
    /// The most output queued for one client before it is dropped, in bytes.
    public let maxPendingOutputBytes: Int
    /// The most clients connected at once.
    public let maxClients: Int
    /// The most requests one client gets run per turn (one turn per loop iteration).
    public let requestsPerTurn: Int
    /// The longest one client's turn runs (`CLOCK_MONOTONIC`) before the rest waits for the next
    /// (a turn always runs at least one request).
    public let turnBudget: Duration
    /// Requests of one client that may wait for their reply before its reading pauses (64).
    public let maxUnansweredRequests = 64
    /// Output waiting for one client at which its reading pauses: 256 KiB, or half of
    /// `maxPendingOutputBytes` when that is smaller.
    public var outputPauseBytes: Int { min(256 << 10, max(maxPendingOutputBytes / 2, 1)) }
    public private(set) var statistics = Statistics()

    let log: (String) -> Void
    private let loop: EventLoop
    private let handler: (ControlRequest, ControlReply) -> Void
    private var listenFD: Int32
    private var listenRegistration: IORegistration?
    /// The device and inode of the socket file this server made, so `close()` never removes a
    /// later one.
    private var socketFile: UnixSocket.FileAtPath
    private var connections: [Int: ControlConnection] = [:]
    /// Observing connections, in the order they asked.
    private var observers: [ControlConnection] = []
    private var nextConnection = 1
    private var acceptPause: LoopTimer?
    /// Connections with lines waiting for their turn, in the order they asked.
    private var turnQueue: [ControlConnection] = []
    /// Runs the queued turns on the next loop iteration (an eventfd: works on a manual clock too).
    private var turnWaker: LoopWaker?
    private(set) var isClosed = false
    /// One read buffer for every client (one thread): what `recv` returns before it is split into lines.
    var readBuffer = [UInt8](repeating: 0, count: 16 << 10)

    /// Makes the socket file and listens on it.
    ///
    /// - Parameters:
    ///   - path: where the socket file goes (at most 107 bytes); its folder must exist and be
    ///     writable by the process.
    ///   - group: the socket file's group by name (`getgrnam_r`), e.g. `"vitrine-admin"`; nil
    ///     keeps the process's group.
    ///   - mode: the socket file's permission bits (default `0o660`: owner and group may connect).
    ///   - loop: the loop of the calling thread; the handler runs on it.
    ///   - log: takes one line per event worth a line (a stale socket removed, a client dropped, a
    ///     request too long, a client that disconnected), each starting `control:`.
    ///   - maxRequestBytes: the longest request line, in bytes (≥ 1; default 64 KiB).
    ///   - maxPendingOutputBytes: the most output queued for one client, in bytes (≥ 1; default 4 MiB).
    ///   - maxClients: the most clients at once (≥ 1; default 16).
    ///   - requestsPerTurn: the most requests of one client run per loop iteration (≥ 1; default 32).
    ///   - turnBudget: the longest one client's turn runs (default 2 ms); the rest of its lines
    ///     wait for the next iteration, after the loop's other descriptors and timers.
    ///   - handler: called on the loop's thread for every request but `observe`; answers through
    ///     the reply, at once or later.
    /// - Throws: `ControlSocketError`: `.pathTooLong`; `.unknownGroup`; `.notASocket`;
    ///   `.anotherListener`; `.system` from `lstat`, `socket`, `bind` (`EACCES`: the folder is
    ///   not writable, `ENOENT`: it does not exist, `EADDRINUSE`: another process bound it just
    ///   now), `chmod`, `lchown` (`EPERM`: the process is not in `group`), `listen`, or the loop's
    ///   `epoll_ctl`. The file is removed again when a step after `bind` fails.
    /// The corresponding C functions are `getgrnam_r`, `lstat`, `connect`, `unlink`, `socket`,
    /// `bind`, `chmod`, `lchown`, `listen` and `epoll_ctl`.
    public init(path: String, group: String? = nil, mode: UInt32 = 0o660, loop: EventLoop,
                log: @escaping (String) -> Void, maxRequestBytes: Int = 64 << 10,
                maxPendingOutputBytes: Int = 4 << 20, maxClients: Int = 16,
                requestsPerTurn: Int = 32, turnBudget: Duration = .milliseconds(2),
                handler: @escaping (ControlRequest, ControlReply) -> Void) throws(ControlSocketError) {
        loop.assertInLoop()
        precondition(maxRequestBytes >= 1 && maxPendingOutputBytes >= 1 && maxClients >= 1 && requestsPerTurn >= 1,
                     "ControlServer: the limits must be at least 1")
        self.path = path
        self.maxRequestBytes = maxRequestBytes
        self.maxPendingOutputBytes = maxPendingOutputBytes
        self.maxClients = maxClients
        self.requestsPerTurn = requestsPerTurn
        self.turnBudget = turnBudget
        self.log = log
        self.loop = loop
        self.handler = handler
        guard !path.isEmpty, path.utf8.count <= UnixSocket.pathCapacity, !path.utf8.contains(0) else {
            throw .pathTooLong(path: path, limit: UnixSocket.pathCapacity)
        }
        var gid: UInt32?
        if let group {
            switch UnixSocket.groupID(named: group) {
            case .success(let id?): gid = id
            case .success(nil): throw .unknownGroup(group)
            case .failure(let errno): throw .system(operation: "getgrnam_r \(group)", errno: errno)
            }
        }
        try Self.clearStaleSocket(at: path, log: log)
        let fd: Int32
        switch UnixSocket.stream() {
        case .success(let socket): fd = socket
        case .failure(let errno): throw .system(operation: "socket", errno: errno)
        }
        func fail(_ operation: String, _ errno: Errno, bound: Bool) -> ControlSocketError {
            UnixSocket.close(fd)
            if bound { _ = UnixSocket.unlink(path) }
            return errno == .notPermitted && operation.hasPrefix("lchown") && group != nil
                ? .system(operation: "\(operation) (group \(group!): is the process in it?)", errno: errno)
                : .system(operation: operation, errno: errno)
        }
        if case .failure(let errno) = UnixSocket.bind(fd, path: path) { throw fail("bind \(path)", errno, bound: false) }
        if case .failure(let errno) = UnixSocket.chmod(path, mode: mode) { throw fail("chmod \(path)", errno, bound: true) }
        if let gid, case .failure(let errno) = UnixSocket.changeGroup(path, gid: gid) {
            throw fail("lchown \(path)", errno, bound: true)
        }
        switch UnixSocket.fileAt(path) {
        case .success(let file): socketFile = file
        case .failure(let errno): throw fail("lstat \(path)", errno, bound: true)
        }
        if case .failure(let errno) = UnixSocket.listen(fd, backlog: 16) { throw fail("listen \(path)", errno, bound: true) }
        listenFD = fd
        do {
            listenRegistration = try loop.register(fd, for: .readable) { [weak self] _ in self?.acceptWaiting() }
        } catch {
            // `self` is whole: its deinit closes the socket and removes the file.
            throw .system(operation: "epoll_ctl(ADD) \(path)", errno: error.errno)
        }
        turnWaker = loop.makeWaker { [weak self] in self?.runTurns() }
    }

    /// Makes a server from the config's `control` settings (`path`, `group`) with the default
    /// mode and limits. The caller looks at `settings.enabled` first.
    /// - Throws: as `init(path:group:mode:loop:log:maxRequestBytes:maxPendingOutputBytes:maxClients:requestsPerTurn:turnBudget:handler:)`.
    public convenience init(settings: ControlSettings, loop: EventLoop, log: @escaping (String) -> Void,
                            handler: @escaping (ControlRequest, ControlReply) -> Void) throws(ControlSocketError) {
        try self.init(path: settings.path, group: settings.group, loop: loop, log: log, handler: handler)
    }

    deinit { close() }

    /// Removes a socket file nothing listens on; refuses one that a connect reaches, and anything
    /// that is not a socket.
    private static func clearStaleSocket(at path: String, log: (String) -> Void) throws(ControlSocketError) {
        switch UnixSocket.fileAt(path) {
        case .failure(let errno): throw .system(operation: "lstat \(path)", errno: errno)
        case .success(.nothing): return
        case .success(.other): throw .notASocket(path: path)
        case .success(.socket): break
        }
        let probe: Int32
        switch UnixSocket.stream() {
        case .success(let socket): probe = socket
        case .failure(let errno): throw .system(operation: "socket", errno: errno)
        }
        let connected = UnixSocket.connect(probe, path: path)
        UnixSocket.close(probe)
        switch connected {
        case .success, .failure(.wouldBlock):
            // Accepted, or the backlog is full: a live listener either way.
            throw .anotherListener(path: path)
        case .failure(let errno) where errno == .connectionRefused:
            switch UnixSocket.unlink(path) {
            case .success, .failure(.noSuchFile): log("control: removed the stale socket \(path) (nothing listened on it)")
            case .failure(let errno): throw .system(operation: "unlink \(path)", errno: errno)
            }
        case .failure(.noSuchFile):
            return  // Removed meanwhile.
        case .failure(let errno):
            throw .system(operation: "connect \(path)", errno: errno)
        }
    }

    // MARK: - State

    /// Clients connected now.
    public var clientCount: Int { connections.count }

    /// Clients that observe the event stream now.
    public var observerCount: Int { observers.count }

    /// The clients connected now, in the order they connected.
    public var clients: [ControlPeer] { connections.keys.sorted().compactMap { connections[$0]?.peer } }

    // MARK: - The event stream

    /// Sends `eventLine` to every observer, as one line.
    ///
    /// - Parameter eventLine: one JSON text on one line (`EventLog.json(_:)`), with or without its
    ///   final `\n`. A line with a `\n` inside would split into two messages: it is not sent, and
    ///   logged.
    /// Costs nothing without observers. An observer whose queue would pass
    /// `maxPendingOutputBytes` is dropped (see the type's notes); the others go on.
    public func broadcast(eventLine: String) {
        loop.assertInLoop()
        guard !observers.isEmpty, !isClosed else { return }
        var bytes = Array(eventLine.utf8)
        if bytes.last == 0x0A { bytes.removeLast() }
        guard !bytes.isEmpty else { return }
        guard !bytes.contains(0x0A) else {
            log("control: an event line holding a newline was not sent: \(JSONPath.quoted(String(eventLine.prefix(120))))")
            return
        }
        bytes.append(0x0A)
        statistics.broadcastLines += 1
        for observer in observers { observer.enqueue(bytes) }
    }

    // MARK: - Closing

    /// Stops listening, closes every client (observers see the end of the stream; unanswered
    /// replies are dropped) and removes the socket file if it is still the one this server made.
    /// Doing it twice does nothing.
    /// The corresponding C functions are `epoll_ctl(EPOLL_CTL_DEL)`, `close`, `lstat` and `unlink`.
    public func close() {
        guard !isClosed else { return }
        isClosed = true
        acceptPause?.cancel()
        acceptPause = nil
        turnQueue = []
        turnWaker = nil
        listenRegistration?.cancel()
        listenRegistration = nil
        UnixSocket.close(listenFD)
        listenFD = -1
        let open = connections.values
        connections = [:]
        observers = []
        for connection in open { connection.close(because: nil) }
        if case .success(let file) = UnixSocket.fileAt(path), file == socketFile { _ = UnixSocket.unlink(path) }
    }

    // MARK: - Accepting

    private func acceptWaiting() {
        for _ in 0..<32 where !isClosed {
            switch UnixSocket.accept(listenFD) {
            case .success(nil):
                return
            case .success(let fd?):
                adopt(fd)
            case .failure(let errno):
                // Out of descriptors or memory: the connection stays in the backlog and the socket
                // readable, so stop watching it for a second rather than spin.
                log("control: accept4 on \(path): \(errno); not accepting for 1 s")
                pauseAccepting()
                return
            }
        }
    }

    private func pauseAccepting() {
        guard let listenRegistration, acceptPause == nil else { return }
        do { try listenRegistration.modify([]) } catch { log("control: \(error)") }
        acceptPause = loop.scheduleTimer(after: .seconds(1)) { [weak self] in
            guard let self, !self.isClosed else { return }
            self.acceptPause = nil
            do { try self.listenRegistration?.modify(.readable) } catch { self.log("control: \(error)") }
        }
    }

    private func adopt(_ fd: Int32) {
        let number = nextConnection
        nextConnection += 1
        statistics.accepted += 1
        let credentials = UnixSocket.peerCredentials(fd)
        let peer = ControlPeer(connection: number, fileDescriptor: fd, pid: credentials?.pid, uid: credentials?.uid,
                               gid: credentials?.gid)
        guard connections.count < maxClients else {
            statistics.refused += 1
            log("control: \(peer) refused: \(maxClients) clients are connected already")
            let line = ControlProtocol.reply(requestID: nil, .failure(.commandFailed("\(maxClients) clients are connected already")))
            _ = UnixSocket.send(fd, Array(line.utf8), from: 0)
            UnixSocket.close(fd)
            return
        }
        let connection = ControlConnection(peer: peer, server: self)
        do {
            connection.registration = try loop.register(fd, for: .readable) { [weak connection] events in
                connection?.ready(events)
            }
        } catch {
            log("control: \(peer): \(error); closing it")
            UnixSocket.close(fd)
            return
        }
        connections[number] = connection
    }

    // MARK: - Turns

    /// Gives `connection` a turn on the next loop iteration (once however often it asks).
    func queueTurn(_ connection: ControlConnection) {
        guard !connection.isQueued, !isClosed else { return }
        connection.isQueued = true
        turnQueue.append(connection)
        if turnQueue.count == 1 { turnWaker?.wake() }
    }

    /// One turn for every connection queued before this iteration; those with lines left queue
    /// again for the next.
    private func runTurns() {
        let turn = turnQueue
        turnQueue = []
        for connection in turn {
            connection.isQueued = false
            connection.runTurn()
        }
    }

    // MARK: - From the connections

    /// One line from `connection` (without its `\n`).
    func handle(_ line: ArraySlice<UInt8>, from connection: ControlConnection) {
        switch ControlProtocol.parse(line) {
        case .blank:
            return
        case let .rejected(error, requestID):
            statistics.requests += 1
            statistics.rejected += 1
            connection.requests += 1
            connection.unanswered += 1
            connection.sendReply(ControlProtocol.reply(requestID: requestID, .failure(error)))
        case let .request(command, requestID):
            statistics.requests += 1
            connection.requests += 1
            let request = ControlRequest(command: command, requestID: requestID, peer: connection.peer)
            connection.unanswered += 1
            let reply = ControlReply(requestID: requestID, commandName: request.name, connection: connection)
            if request.name == "observe" { return observe(request, reply, connection) }
            handler(request, reply)
        }
    }

    private func observe(_ request: ControlRequest, _ reply: ControlReply, _ connection: ControlConnection) {
        guard request.arguments.isEmpty else {
            reply.fail(.invalidParameter("observe takes no arguments"))
            return
        }
        if !connection.isObserving {
            connection.isObserving = true
            observers.append(connection)
        }
        reply.succeed()
    }

    /// The reply text to send for `result`, or the error that replaces one too long to queue.
    func replyLine(requestID: JSONValue?, commandName: String, _ result: Result<JSONValue?, ControlError>,
                   to connection: ControlConnection) -> String {
        let line = ControlProtocol.reply(requestID: requestID, result)
        let length = line.utf8.count
        guard length > maxPendingOutputBytes else { return line }
        log("control: \(connection.peer): the reply to \(JSONPath.printable(ControlProtocol.echoed(commandName))) is \(length) bytes, "
            + "over the limit of \(maxPendingOutputBytes); replying \"error running command\"")
        return ControlProtocol.reply(requestID: requestID, .failure(.commandFailed(
            "the reply is \(length) bytes, more than the control socket's limit of \(maxPendingOutputBytes)")))
    }

    func requestTooLong(_ connection: ControlConnection) {
        statistics.requests += 1
        statistics.requestsTooLong += 1
        connection.requests += 1
        log("control: \(connection.peer): a request line longer than \(maxRequestBytes) bytes; "
            + "replying \"request too long\" and closing the connection")
    }

    func drop(_ connection: ControlConnection, pending: Int, adding: Int) {
        statistics.dropped += 1
        log("control: \(connection.peer) dropped: \(pending) bytes of output wait for it and \(adding) more came, "
            + "over the limit of \(maxPendingOutputBytes) (it is not reading)")
        connection.close(because: nil)
    }

    func removed(_ connection: ControlConnection, reason: String?) {
        connections[connection.peer.connection] = nil
        if connection.isObserving { observers.removeAll { $0 === connection } }
        if let reason { log("control: \(connection.peer) \(reason) after \(connection.requests) request(s)") }
    }

    func noteHeld(_ bytes: Int) {
        if bytes > statistics.largestHeldInput { statistics.largestHeldInput = bytes }
    }

    func noteTurnCutShort() { statistics.turnsCutShort += 1 }

    func notePause() { statistics.pauses += 1 }

    func noteBuffered(_ bytes: Int) {
        if bytes > statistics.largestBufferedRequest { statistics.largestBufferedRequest = bytes }
    }

    func notePending(_ bytes: Int) {
        if bytes > statistics.largestPendingOutput { statistics.largestPendingOutput = bytes }
    }
}

@available(*, unavailable)
extension ControlServer: Sendable {}
