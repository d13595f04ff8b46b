import Foundation
import Synchronization
import Testing
@testable import ControlSocket
import RunLoop
import SystemSupport
import VitrineCore

/// A folder for one test's socket, under /tmp (a socket path holds at most 107 bytes, and
/// `TMPDIR` may be long); removed by `remove()`.
struct SocketFolder {
    let path: String

    init(_ name: String) throws {
        path = "/tmp/vctl-\(name)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
    }

    var socket: String { path + "/control.sock" }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}

/// The lines a server logged.
final class LogLines {
    private(set) var lines: [String] = []
    func append(_ line: String) { lines.append(line) }
    func contains(_ needle: String) -> Bool { lines.contains { $0.contains(needle) } }
    var sink: (String) -> Void { { [self] line in append(line) } }
}

extension EventLoop {
    /// Runs the loop until `done()` holds. Records an issue instead of hanging when it does not
    /// within `limit` (each wait is capped at 50 ms so the limit is looked at).
    func run(until done: () -> Bool, limit: Duration = .seconds(20), sourceLocation: SourceLocation = #_sourceLocation) throws {
        let start = ContinuousClock.now
        while !done() {
            if ContinuousClock.now - start > limit {
                Issue.record("the loop did not get there within \(limit)", sourceLocation: sourceLocation)
                return
            }
            try runOnce(timeout: .milliseconds(50))
        }
    }
}

/// Work on a thread of its own (a blocking client) while the test's thread runs the loop.
final class Background<Value: Sendable>: Sendable {
    private final class Outcome: Sendable {
        let result = Mutex<Result<Value, any Error>?>(nil)
    }
    private let outcome = Outcome()

    init(_ body: @escaping @Sendable () throws -> Value) {
        let outcome = self.outcome
        let thread = Thread {
            let result = Result { try body() }
            outcome.result.withLock { $0 = result }
        }
        thread.start()
    }

    var isDone: Bool { outcome.result.withLock { $0 != nil } }

    /// The body's value (or its error), once `isDone`.
    func value() throws -> Value {
        guard let result = outcome.result.withLock({ $0 }) else { throw TestError("the background work has not finished") }
        return try result.get()
    }
}

struct TestError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

extension JSONValue {
    static func literal(_ text: String) -> JSONValue { .number(JSONNumber(literal: text)!) }
}

/// A server on `loop` whose handler answers the test commands:
/// - `echo ARGS…`: success with the command array as data.
/// - `later MS`: success with `"late"` after MS milliseconds (a loop timer).
/// - `fail`: `invalid parameter` with a message.
/// - `big N`: success with a string of N bytes.
/// - `spin MICROSECONDS`: busy that long on the loop's thread, then answered like `echo`.
/// - `drop`: never answered (the reply is released).
/// - anything else: `unknown command`.
func makeTestServer(path: String, loop: EventLoop, log: LogLines, group: String? = nil, mode: UInt32 = 0o660,
                    maxRequestBytes: Int = 64 << 10, maxPendingOutputBytes: Int = 4 << 20, maxClients: Int = 16,
                    kept: KeptReplies? = nil) throws -> ControlServer {
    try ControlServer(path: path, group: group, mode: mode, loop: loop, log: log.sink, maxRequestBytes: maxRequestBytes,
                      maxPendingOutputBytes: maxPendingOutputBytes, maxClients: maxClients) { request, reply in
        switch request.name {
        case "echo":
            reply.succeed(.array(request.command))
        case "later":
            let milliseconds = Int(request.number(at: 0) ?? 50)
            loop.scheduleTimer(after: .milliseconds(milliseconds)) { reply.succeed(.string("late")) }
        case "fail":
            reply.fail(.invalidParameter("fail: as asked"))
        case "big":
            reply.succeed(.string(String(repeating: "b", count: Int(request.number(at: 0) ?? 0))))
        case "spin":
            // Busy for MICROSECONDS, then answers like echo: a handler with a cost (`status`
            // took about 0.3 ms in a debug build).
            let until = MonotonicClock.nanoseconds() + UInt64((request.number(at: 0) ?? 0) * 1000)
            while MonotonicClock.nanoseconds() < until {}
            reply.succeed(.array(request.command))
        case "drop":
            break
        case "keep":
            kept?.replies.append(reply)
        default:
            reply.fail(.unknownCommand(ControlProtocol.echoed(request.name)))
        }
    }
}

/// Replies a handler keeps to answer later in the test.
final class KeptReplies {
    var replies: [ControlReply] = []
}
