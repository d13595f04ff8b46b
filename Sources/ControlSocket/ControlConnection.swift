// One accepted client of the control socket: its descriptor on the loop, the request bytes read
// and not yet run (about `maxRequestBytes`), its turns on the loop, and the queue of output it has
// not read yet (at most `maxPendingOutputBytes`).
import RunLoop
import SystemSupport
import VitrineCore

/// A client connection, owned by its `ControlServer`. Confined to the loop's thread.
final class ControlConnection {
    let peer: ControlPeer
    let fd: Int32
    weak var server: ControlServer?
    var registration: IORegistration?
    private(set) var isOpen = true
    /// Whether it asked for the event stream (`observe`).
    var isObserving = false
    /// Requests handed to the handler (or rejected) whose reply has not been sent yet.
    var unanswered = 0
    /// Requests parsed on this connection.
    var requests = 0

    /// Every request read has been run (the client shut its writing half and the lines it sent
    /// before have run): no more requests. The connection closes once every reply is out, unless
    /// it observes.
    private var inputEnded = false
    /// `recv` returned 0: no more bytes come; the lines held still run.
    private var readEnded = false
    /// Bytes received and not yet run: `inbox[inboxStart...]`, whole lines and then at most one
    /// unfinished one. It holds at most `maxRequestBytes + 1` (more would be a line too long):
    /// reading waits while it is full.
    private var inbox: [UInt8] = []
    private var inboxStart = 0
    /// The bytes at the end of `inbox` after its last `\n`: the start of a request still coming.
    private var unfinishedBytes = 0
    /// Whether it waits in the server's run queue for its next turn.
    var isQueued = false
    /// Output not yet taken by the socket: `queue[head...]`, the first `headOffset` bytes of
    /// `queue[head]` already sent.
    private var queue: [[UInt8]] = []
    private var head = 0
    private var headOffset = 0
    private(set) var pendingBytes = 0
    /// The events the registration waits for now.
    private var watched: IOEvents = .readable
    /// Whether reading is paused for backpressure (for `statistics.pauses`).
    private var isPaused = false

    init(peer: ControlPeer, server: ControlServer) {
        self.peer = peer
        self.fd = peer.fileDescriptor
        self.server = server
    }

    /// Bytes received from the client and not yet run as requests.
    var heldInput: Int { inbox.count - inboxStart }

    /// Backpressure: while `maxUnansweredRequests` requests wait for their reply, or
    /// `outputPauseBytes` of output wait for the client, no request is run and nothing is read
    /// (the kernel's socket buffer fills, and the client's writes block). It resumes when a reply
    /// goes out or the output drains.
    var isBackedUp: Bool {
        guard let server else { return true }
        return unanswered >= server.maxUnansweredRequests || pendingBytes >= server.outputPauseBytes
    }

    // MARK: - Events

    func ready(_ events: IOEvents) {
        if events.contains(.writable) { flush() }
        if isOpen, !readEnded, !events.isDisjoint(with: [.readable, .readHangup, .hangup]) { readAvailable() }
        // Both directions shut (the peer closed): nothing can be sent any more. The requests that
        // came before still get one turn (their replies cannot reach the client).
        if isOpen, !events.isDisjoint(with: [.hangup, .error]) {
            runTurn()
            close(because: "closed the connection")
        }
    }

    /// Reads what waits, while the client is not backed up and until `maxRequestBytes + 1` are
    /// held, at most 16 reads of 16 KiB per wake-up (the watch is level-triggered: the rest comes
    /// on a later iteration). The lines run in the connection's turns (`runTurn`), not here.
    private func readAvailable() {
        guard let server else { return }
        for _ in 0..<16 where isOpen && !readEnded && heldInput <= server.maxRequestBytes && !isBackedUp {
            switch UnixSocket.receive(fd, into: &server.readBuffer, atMost: server.maxRequestBytes + 1 - heldInput) {
            case .success(nil):
                break
            case .success(0):
                readEnded = true
            case .success(let count?):
                if inboxStart > 0, inboxStart >= inbox.count / 2 {
                    inbox.removeFirst(inboxStart)
                    inboxStart = 0
                }
                let chunk = server.readBuffer[0..<count]
                inbox += chunk
                server.noteHeld(heldInput)
                unfinishedBytes = chunk.lastIndex(of: 0x0A).map { count - 1 - $0 } ?? unfinishedBytes + count
                if unfinishedBytes <= server.maxRequestBytes { server.noteBuffered(unfinishedBytes) }
                continue
            case .failure(let errno):
                close(because: "recv: \(errno)")
                return
            }
            break
        }
        guard isOpen else { return }
        if heldInput > 0 || readEnded { server.queueTurn(self) }
        updateWatch()
    }

    /// One turn: runs the held lines in order, at most `requestsPerTurn` of them and for at most
    /// `turnBudget` (`CLOCK_MONOTONIC`), and queues another turn when lines remain, so that the
    /// loop's other descriptors and timers (the display's page flips) come in between. Stops while
    /// the client is backed up (`isBackedUp`); a reply or a drained queue resumes it.
    func runTurn() {
        guard isOpen, let server else { return }
        let started = MonotonicClock.nanoseconds()
        let budget = UInt64(max(server.turnBudget.wholeNanosecondsClamped, 0))
        var ran = 0
        while isOpen, !inputEnded, !isBackedUp {
            if ran >= server.requestsPerTurn || (ran > 0 && MonotonicClock.nanoseconds() &- started >= budget) {
                server.noteTurnCutShort()
                server.queueTurn(self)
                break
            }
            let rest = inbox[inboxStart...]
            if let newline = rest.firstIndex(of: 0x0A) {
                guard newline - inboxStart <= server.maxRequestBytes else { return requestTooLong(server) }
                let line = inbox[inboxStart..<newline]
                inboxStart = newline + 1
                ran += 1
                server.handle(line, from: self)
                continue
            }
            guard rest.count <= server.maxRequestBytes else { return requestTooLong(server) }
            if !rest.isEmpty { server.noteBuffered(rest.count) }
            if readEnded { return endOfInput() }
            break
        }
        guard isOpen else { return }
        if inboxStart == inbox.count {
            inbox.removeAll(keepingCapacity: inbox.capacity <= 64 << 10)
            inboxStart = 0
        }
        updateWatch()
    }

    /// A turn is due again when the client is no longer backed up and lines (or the end) wait.
    private func resumeIfReady() {
        guard isOpen, !inputEnded, !isBackedUp, let server else { return }
        if heldInput > 0 || readEnded { server.queueTurn(self) }
        updateWatch()
    }

    /// One error reply, then the connection closes: a client that sends a line this long is not
    /// speaking the protocol, and reading on to its end would only burn CPU.
    private func requestTooLong(_ server: ControlServer) {
        inbox = []
        inboxStart = 0
        unfinishedBytes = 0
        server.requestTooLong(self)
        unanswered += 1
        sendReply(ControlProtocol.reply(requestID: nil, .failure(
            .requestTooLong("a request line holds at most \(server.maxRequestBytes) bytes"))))
        close(because: nil)
    }

    /// Every whole line has run and the client sent no more.
    private func endOfInput() {
        inputEnded = true
        // A last request without its "\n" still counts (mpv drops it; `printf` users forget it).
        let last = inbox[inboxStart...]
        inbox = []
        inboxStart = 0
        unfinishedBytes = 0
        if !last.isEmpty, let server { server.handle(last, from: self) }
        updateWatch()
        closeIfDone()
    }

    // MARK: - Output

    /// Queues a reply; see `enqueue`. Closes a half-closed connection once it was the last one.
    @discardableResult
    func sendReply(_ line: String) -> Bool {
        let wasBackedUp = isBackedUp
        unanswered = max(0, unanswered - 1)
        let sent = enqueue(Array(line.utf8))
        closeIfDone()
        if wasBackedUp { resumeIfReady() }
        return sent
    }

    /// Writes `bytes` now as far as the socket takes them, and queues the rest for when it is
    /// writable. A client whose queue would pass `maxPendingOutputBytes` is not reading: it is
    /// dropped (the server logs it), and false is returned.
    @discardableResult
    func enqueue(_ bytes: [UInt8]) -> Bool {
        guard isOpen, let server, !bytes.isEmpty else { return false }
        guard pendingBytes + bytes.count <= server.maxPendingOutputBytes else {
            server.drop(self, pending: pendingBytes, adding: bytes.count)
            return false
        }
        if pendingBytes > 0 {
            queue.append(bytes)
            pendingBytes += bytes.count
            server.notePending(pendingBytes)
            return true
        }
        // Nothing waits: the socket usually takes it all at once.
        var offset = 0
        while offset < bytes.count {
            switch UnixSocket.send(fd, bytes, from: offset) {
            case .success(let count?):
                offset += count
            case .success(nil):
                queue = [bytes]
                head = 0
                headOffset = offset
                pendingBytes = bytes.count - offset
                server.notePending(pendingBytes)
                updateWatch()
                return true
            case .failure(let errno):
                close(because: errno == .brokenPipe || errno == .connectionReset ? "closed the connection" : "send: \(errno)")
                return false
            }
        }
        return true
    }

    /// Sends queued output until the socket is full or the queue is empty.
    private func flush() {
        while isOpen, head < queue.count {
            switch UnixSocket.send(fd, queue[head], from: headOffset) {
            case .success(let count?):
                headOffset += count
                pendingBytes -= count
                if headOffset == queue[head].count {
                    queue[head] = []
                    head += 1
                    headOffset = 0
                }
            case .success(nil):
                if head >= 256 {
                    queue.removeFirst(head)
                    head = 0
                }
                resumeIfReady()
                return
            case .failure(let errno):
                close(because: errno == .brokenPipe || errno == .connectionReset ? "closed the connection" : "send: \(errno)")
                return
            }
        }
        guard isOpen else { return }
        queue = []
        head = 0
        headOffset = 0
        pendingBytes = 0
        updateWatch()
        closeIfDone()
        resumeIfReady()
    }

    /// Waits for readable while requests may come, writable while output waits.
    private func updateWatch() {
        guard isOpen, let registration else { return }
        let backedUp = isBackedUp && !inputEnded
        if backedUp && !isPaused { server?.notePause() }
        isPaused = backedUp
        var wanted: IOEvents = readEnded || inputEnded || isBackedUp || heldInput > (server?.maxRequestBytes ?? 0) ? [] : .readable
        if pendingBytes > 0 { wanted.insert(.writable) }
        guard wanted != watched else { return }
        do {
            try registration.modify(wanted)
            watched = wanted
        } catch {
            close(because: "\(error)")
        }
    }

    /// A client that shut its writing half leaves once its replies are out (not while it observes).
    private func closeIfDone() {
        if isOpen, inputEnded, unanswered == 0, pendingBytes == 0, !isObserving { close(because: "closed the connection") }
    }

    // MARK: - Closing

    /// Stops watching, closes the descriptor, and leaves the server's lists. `reason` nil: no log
    /// line (the caller logged).
    func close(because reason: String?) {
        guard isOpen else { return }
        isOpen = false
        registration?.cancel()
        registration = nil
        UnixSocket.close(fd)
        queue = []
        inbox = []
        inboxStart = 0
        unfinishedBytes = 0
        pendingBytes = 0
        server?.removed(self, reason: reason)
    }
}

@available(*, unavailable)
extension ControlConnection: Sendable {}
