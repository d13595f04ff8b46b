// One accepted client of the control socket: its descriptor on the loop, the partial request line
// (at most `maxRequestBytes`), and the queue of output it has not read yet (at most
// `maxPendingOutputBytes`).
import RunLoop
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

    /// The client shut down its writing half (or closed): no more requests. The connection closes
    /// once every reply is out, unless it observes.
    private var inputEnded = false
    /// The start of a request whose `\n` has not come yet.
    private var partialLine: [UInt8] = []
    /// Output not yet taken by the socket: `queue[head...]`, the first `headOffset` bytes of
    /// `queue[head]` already sent.
    private var queue: [[UInt8]] = []
    private var head = 0
    private var headOffset = 0
    private(set) var pendingBytes = 0
    /// The events the registration waits for now.
    private var watched: IOEvents = .readable

    init(peer: ControlPeer, server: ControlServer) {
        self.peer = peer
        self.fd = peer.fileDescriptor
        self.server = server
    }

    // MARK: - Events

    func ready(_ events: IOEvents) {
        if events.contains(.writable) { flush() }
        if isOpen, !inputEnded, !events.isDisjoint(with: [.readable, .readHangup, .hangup]) { readAvailable() }
        // Both directions shut (the peer closed): nothing can be sent any more.
        if isOpen, !events.isDisjoint(with: [.hangup, .error]) { close(because: "closed the connection") }
    }

    /// Reads what waits, a bounded amount per wake-up so that one busy client cannot keep the
    /// loop from its timers (the watch is level-triggered: the rest comes on the next iteration).
    private func readAvailable() {
        guard let server else { return }
        for _ in 0..<16 where isOpen && !inputEnded {
            switch UnixSocket.receive(fd, into: &server.readBuffer) {
            case .success(nil):
                return
            case .success(0):
                endOfInput()
                return
            case .success(let count?):
                consume(server.readBuffer[0..<count], server: server)
            case .failure(let errno):
                close(because: "recv: \(errno)")
                return
            }
        }
    }

    /// Splits `bytes` at `\n` and hands each whole line to the server; keeps the rest.
    private func consume(_ bytes: ArraySlice<UInt8>, server: ControlServer) {
        var start = bytes.startIndex
        while start < bytes.endIndex, isOpen, !inputEnded {
            guard let newline = bytes[start...].firstIndex(of: 0x0A) else {
                let rest = bytes[start...]
                guard partialLine.count + rest.count <= server.maxRequestBytes else { return requestTooLong(server) }
                partialLine += rest
                server.noteBuffered(partialLine.count)
                return
            }
            let piece = bytes[start..<newline]
            guard partialLine.count + piece.count <= server.maxRequestBytes else { return requestTooLong(server) }
            start = newline + 1
            if partialLine.isEmpty {
                server.handle(piece, from: self)
            } else {
                partialLine += piece
                server.noteBuffered(partialLine.count)
                let line = partialLine
                partialLine = []
                server.handle(line[...], from: self)
            }
        }
    }

    /// One error reply, then the connection closes: a client that sends a line this long is not
    /// speaking the protocol, and reading on to its end would only burn CPU.
    private func requestTooLong(_ server: ControlServer) {
        partialLine = []
        server.requestTooLong(self)
        unanswered += 1
        sendReply(ControlProtocol.reply(requestID: nil, .failure(
            .requestTooLong("a request line holds at most \(server.maxRequestBytes) bytes"))))
        close(because: nil)
    }

    private func endOfInput() {
        inputEnded = true
        // A last request without its "\n" still counts (mpv drops it; `printf` users forget it).
        if !partialLine.isEmpty, let server {
            let line = partialLine
            partialLine = []
            server.handle(line[...], from: self)
        }
        updateWatch()
        closeIfDone()
    }

    // MARK: - Output

    /// Queues a reply; see `enqueue`. Closes a half-closed connection once it was the last one.
    @discardableResult
    func sendReply(_ line: String) -> Bool {
        unanswered = max(0, unanswered - 1)
        let sent = enqueue(Array(line.utf8))
        closeIfDone()
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
    }

    /// Waits for readable while requests may come, writable while output waits.
    private func updateWatch() {
        guard isOpen, let registration else { return }
        var wanted: IOEvents = inputEnded ? [] : .readable
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
        partialLine = []
        pendingBytes = 0
        server?.removed(self, reason: reason)
    }
}

@available(*, unavailable)
extension ControlConnection: Sendable {}
