import Foundation
import Synchronization
import Testing
import RunLoop

extension EventLoop {
    /// Runs the loop until `done()` holds. Records an issue instead of hanging when it does not
    /// within `limit` (each wait is capped at 100 ms so the limit is looked at).
    func run(until done: () -> Bool, limit: Duration = .seconds(10), sourceLocation: SourceLocation = #_sourceLocation) throws {
        let start = ContinuousClock.now
        while !done() {
            if ContinuousClock.now - start > limit {
                Issue.record("the loop did not get there within \(limit)", sourceLocation: sourceLocation)
                return
            }
            try runOnce(timeout: .milliseconds(100))
        }
    }
}

/// Values recorded from any thread.
final class Recorder<Value: Sendable>: Sendable {
    private let values = Mutex<[Value]>([])
    func append(_ value: Value) { values.withLock { $0.append(value) } }
    var all: [Value] { values.withLock { $0 } }
}

/// The calling thread's id.
func currentThread() -> UInt { UInt(pthread_self()) }

/// Starts a thread running `body` and waits for it to finish.
func onAnotherThread(_ body: @escaping @Sendable () -> Void) {
    let finished = DispatchSemaphore(value: 0)
    let thread = Thread {
        body()
        finished.signal()
    }
    thread.start()
    finished.wait()
}

/// A pipe, both ends non-blocking and close-on-exec; closed when the value goes away.
final class TestPipe {
    let readEnd: Int32
    let writeEnd: Int32
    private var open: Set<Int32>

    init() throws {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw Errno(errno) }
        for fd in fds {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        readEnd = fds[0]
        writeEnd = fds[1]
        open = Set(fds)
    }

    deinit { open.forEach { _ = Glibc.close($0) } }

    func write(_ text: String) { writeText(text, to: writeEnd) }

    /// Everything waiting in the pipe.
    func readAll() -> String {
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 256)
        while true {
            let n = Glibc.read(readEnd, &buffer, buffer.count)
            if n <= 0 { break }
            out += buffer[0..<n]
        }
        return String(decoding: out, as: UTF8.self)
    }

    func close(_ fd: Int32) {
        _ = Glibc.close(fd)
        open.remove(fd)
    }
}

/// Writes `text` to `fd` in one `write` (from any thread: it takes only the number).
func writeText(_ text: String, to fd: Int32) {
    let bytes = Array(text.utf8)
    #expect(Glibc.write(fd, bytes, bytes.count) == bytes.count)
}
