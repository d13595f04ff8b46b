import Foundation
import Synchronization
import Testing
@testable import ControlSocket
import RunLoop
import VitrineCore

/// The bounds: a request line's length, a client's queued output, and the loop that never waits
/// for a client.
@Suite("Control socket: limits and slow clients")
struct LimitsTests {
    @Test("a line of exactly maxRequestBytes is a request; one byte more is \"request too long\" and the connection closes")
    func requestLengthBoundary() throws {
        let folder = try SocketFolder("boundary")
        defer { folder.remove() }
        let loop = try EventLoop()
        let log = LogLines()
        let limit = 1000
        let server = try makeTestServer(path: folder.socket, loop: loop, log: log, maxRequestBytes: limit)
        func request(length: Int) -> String {
            let head = #"{"command":["echo"],"request_id":1,"async":""#, tail = #""}"#
            return head + String(repeating: "a", count: length - head.utf8.count - tail.utf8.count) + tail
        }
        let client = try ControlClient(path: folder.socket)
        #expect(request(length: limit).utf8.count == limit)
        try client.send(line: request(length: limit))
        try loop.run(until: { server.statistics.requests == 1 })
        #expect(try client.readLine(timeout: .seconds(5)) == #"{"request_id":1,"error":"success","data":["echo"]}"#)
        try client.send(line: request(length: limit + 1))
        try loop.run(until: { server.clientCount == 0 })
        #expect(try client.readLine(timeout: .seconds(5))
                == #"{"request_id":0,"error":"request too long","message":"a request line holds at most 1000 bytes"}"#)
        #expect(try client.readLine(timeout: .seconds(5)) == nil)
        #expect(server.statistics.requestsTooLong == 1)
        #expect(log.contains("client 1 (fd") && log.contains("a request line longer than 1000 bytes"))
    }

    @Test("a 10 MB request: one \"request too long\" reply, the connection closed, and at most maxRequestBytes of it held")
    func tenMegabyteRequest() throws {
        let folder = try SocketFolder("10mb")
        defer { folder.remove() }
        let loop = try EventLoop()
        let log = LogLines()
        let server = try makeTestServer(path: folder.socket, loop: loop, log: log)  // 64 KiB
        let path = folder.socket
        let size = 10_000_000
        let work = Background<(sent: Bool, reply: String?, end: String?)> {
            let client = try ControlClient(path: path)
            var request = Array(#"{"command":["echo",""#.utf8)
            request += [UInt8](repeating: UInt8(ascii: "x"), count: size - request.count - 4)
            request += Array("\"]}\n".utf8)
            var sent = true
            do { try client.send(bytes: request, timeout: .seconds(30)) } catch ControlSocketError.closedByServer {
                sent = false  // The server closed while the rest was being written: expected.
            }
            return (sent, try client.readLine(timeout: .seconds(30)), try client.readLine(timeout: .seconds(30)))
        }
        try loop.run(until: { work.isDone }, limit: .seconds(60))
        let outcome = try work.value()
        #expect(!outcome.sent, "the server closed before taking 10 MB")
        #expect(outcome.reply == #"{"request_id":0,"error":"request too long","message":"a request line holds at most 65536 bytes"}"#)
        #expect(outcome.end == nil)
        #expect(server.clientCount == 0 && server.statistics.requestsTooLong == 1 && server.statistics.requests == 1)
        #expect(server.statistics.largestBufferedRequest > 0)
        #expect(server.statistics.largestBufferedRequest <= server.maxRequestBytes,
                "held \(server.statistics.largestBufferedRequest) bytes of the request")
        #expect(log.contains("a request line longer than 65536 bytes; replying \"request too long\" and closing the connection"))
        // The server goes on serving.
        let client = try ControlClient(path: folder.socket)
        try client.send(line: #"{"command":["echo"],"request_id":2}"#)
        try loop.run(until: { server.statistics.requests == 2 })
        #expect(try client.readLine(timeout: .seconds(5)) == #"{"request_id":2,"error":"success","data":["echo"]}"#)
    }

    @Test("observe: the reply first, then every broadcast line in order; closing the client ends it")
    func observeDeliversEveryLine() throws {
        let folder = try SocketFolder("observe")
        defer { folder.remove() }
        let loop = try EventLoop()
        let log = LogLines()
        let server = try makeTestServer(path: folder.socket, loop: loop, log: log)
        let path = folder.socket
        let count = 2000
        let work = Background<(String, [String])> {
            let client = try ControlClient(path: path)
            var lines: [String] = []
            let reply = try client.observe { line in
                lines.append(line)
                return lines.count < count
            }
            return (reply.line, lines)
        }
        try loop.run(until: { server.observerCount == 1 })
        var expected: [String] = []
        for i in 0..<count {
            let line = #"{"event":"progress","n":\#(i),"pad":""# + String(repeating: "p", count: i % 300) + #""}"#
            expected.append(line)
            server.broadcast(eventLine: i % 2 == 0 ? line : line + "\n")
            if i == 10 { server.broadcast(eventLine: "{\"event\":\n\"split\"}") }  // not sent: it would be two lines
            if i % 100 == 0 { try loop.runOnce(timeout: .zero) }
        }
        try loop.run(until: { work.isDone })
        let (reply, lines) = try work.value()
        #expect(reply == #"{"request_id":1,"error":"success","data":null}"#)
        #expect(lines == expected)
        #expect(log.contains("an event line holding a newline was not sent"))
        try loop.run(until: { server.observerCount == 0 && server.clientCount == 0 })
        #expect(server.statistics.broadcastLines == count && server.statistics.dropped == 0)
        server.broadcast(eventLine: #"{"event":"nobody"}"#)  // no observer: nothing happens
        #expect(server.statistics.broadcastLines == count)
    }

    @Test("a client that never reads while observe streams 100 MB is dropped with a log line; timers keep firing meanwhile")
    func neverReadingObserver() throws {
        let folder = try SocketFolder("flood")
        defer { folder.remove() }
        let loop = try EventLoop()
        let log = LogLines()
        let server = try makeTestServer(path: folder.socket, loop: loop, log: log)  // 4 MiB per client
        let slow = try ControlClient(path: folder.socket)
        try slow.send(line: #"{"command":["observe"],"request_id":1}"#)
        try loop.run(until: { server.observerCount == 1 })

        // 100 ticks of 100 lines of 10 KiB: 102.4 MB offered to the observer, 1 ms apart.
        let line = #"{"event":"flood","pad":""# + String(repeating: "f", count: 10 * 1024 - 26) + #""}"#
        #expect(line.utf8.count == 10 * 1024)
        var ticks = 0
        var offered = 0
        var droppedAtTick: Int?
        let flood = loop.scheduleRepeatingTimer(every: .milliseconds(1)) { _ in
            guard ticks < 100 else { return }
            ticks += 1
            for _ in 0..<100 {
                server.broadcast(eventLine: line)
                offered += line.utf8.count + 1
            }
            if droppedAtTick == nil, server.observerCount == 0 { droppedAtTick = ticks }
        }
        // A 10 ms heartbeat: how often, and how late, it fires during the flood.
        var beats = 0
        var latest = Duration.zero
        let heartbeat = loop.scheduleRepeatingTimer(every: .milliseconds(10)) { tick in
            guard ticks < 100 else { return }
            beats += 1
            latest = max(latest, loop.now - tick.deadline)
        }
        let started = ContinuousClock.now
        try loop.run(until: { ticks == 100 }, limit: .seconds(60))
        let elapsed = ContinuousClock.now - started
        flood.cancel()
        heartbeat.cancel()

        #expect(offered == 100 * 100 * (10 * 1024 + 1))
        #expect(server.statistics.dropped == 1 && server.observerCount == 0 && server.clientCount == 0)
        #expect(droppedAtTick != nil, "dropped during the flood")
        #expect(server.statistics.largestPendingOutput <= server.maxPendingOutputBytes)
        #expect(server.statistics.largestPendingOutput > server.maxPendingOutputBytes - 2 * (10 * 1024 + 1))
        #expect(log.contains("control: client 1 (fd ") && log.contains("pid \(getpid())")
                && log.contains("dropped:") && log.contains("(it is not reading)"), "\(log.lines)")
        #expect(beats >= 1, "the heartbeat fired during the flood")
        print("flood: 100 ticks in \(elapsed), dropped at tick \(droppedAtTick ?? -1), heartbeat fired \(beats) times, at most \(latest) late")
        slow.close()
    }
}
