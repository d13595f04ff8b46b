import Foundation

/// A child process whose standard output and standard error are read at the same time, one thread
/// each, so a child that fills one pipe while the test waits on the other can never block. Each line
/// is kept with the time it arrived (seconds since `start`, on the monotonic `systemUptime`), a test
/// can wait for a line, and `wait(timeout:)` kills a child that overstays, so a test that checks a
/// bound never hangs on the bug it looks for.
final class LineTimedProcess: @unchecked Sendable {
    enum Stream: Sendable { case standardOutput, standardError }
    struct Line: Sendable { var time: Double; var stream: Stream; var text: String }

    private let process = Process()
    private let lock = NSCondition()
    private var lineList: [Line] = []
    private var partial: [Stream: Data] = [:]
    private var openStreams = 2
    private let exited = DispatchSemaphore(value: 0)
    /// `systemUptime` when the child was started.
    let start: Double

    /// Starts `executable` with `arguments`; standard input is /dev/null.
    init(_ executable: String, _ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.terminationHandler = { [exited] _ in exited.signal() }
        start = ProcessInfo.processInfo.systemUptime
        try process.run()
        for (pipe, stream) in [(out, Stream.standardOutput), (err, Stream.standardError)] {
            let reader = Thread { [self] in
                let handle = pipe.fileHandleForReading
                while true {
                    let data = handle.availableData
                    self.received(data, on: stream)
                    if data.isEmpty { break }
                }
            }
            reader.name = "subprocess \(stream)"
            reader.start()
        }
    }

    private func received(_ data: Data, on stream: Stream) {
        let now = ProcessInfo.processInfo.systemUptime - start
        lock.lock(); defer { lock.broadcast(); lock.unlock() }
        var buffer = (partial[stream] ?? Data()) + data
        while let nl = buffer.firstIndex(of: 0x0A) {
            lineList.append(Line(time: now, stream: stream, text: String(decoding: buffer[buffer.startIndex..<nl], as: UTF8.self)))
            buffer = Data(buffer[(nl + 1)...])
        }
        if data.isEmpty {
            if !buffer.isEmpty { lineList.append(Line(time: now, stream: stream, text: String(decoding: buffer, as: UTF8.self))) }
            buffer = Data()
            openStreams -= 1
        }
        partial[stream] = buffer
    }

    var pid: Int32 { process.processIdentifier }
    var lines: [Line] { lock.lock(); defer { lock.unlock() }; return lineList }
    func text(_ stream: Stream) -> String { lines.filter { $0.stream == stream }.map(\.text).joined(separator: "\n") }

    /// Waits up to `timeout` seconds for a line containing `needle`; returns it (nil on timeout or
    /// when both streams closed without one).
    func waitForLine(containing needle: String, on stream: Stream? = nil, timeout: Double) -> Line? {
        let deadline = Date(timeIntervalSinceNow: timeout)
        lock.lock(); defer { lock.unlock() }
        while true {
            if let l = lineList.first(where: { (stream == nil || $0.stream == stream) && $0.text.contains(needle) }) { return l }
            if openStreams == 0 || !lock.wait(until: deadline) { return nil }
        }
    }

    /// Sends `signal` to the child.
    func send(_ signal: Int32) { kill(process.processIdentifier, signal) }

    /// Waits up to `timeout` seconds for the child to exit and for both pipes to close. Returns its
    /// exit status (128 + the signal for one that killed it), or nil when it was still running: it is
    /// then killed with SIGKILL, so a test never leaves it behind.
    func wait(timeout: Double) -> Int32? {
        if exited.wait(timeout: .now() + timeout) == .timedOut {
            kill(process.processIdentifier, SIGKILL)
            exited.wait()
            drain()
            return nil
        }
        drain()
        return process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
    }

    /// Waits (briefly) until both reader threads have seen end of file.
    private func drain() {
        let deadline = Date(timeIntervalSinceNow: 5)
        lock.lock(); defer { lock.unlock() }
        while openStreams > 0 { if !lock.wait(until: deadline) { return } }
    }

    /// Runs `executable` to its end (at most `timeout` seconds) and returns its status and output.
    static func run(_ executable: String, _ arguments: [String], timeout: Double = 120) throws -> (status: Int32?, out: String, err: String) {
        let p = try LineTimedProcess(executable, arguments)
        let status = p.wait(timeout: timeout)
        return (status, p.text(.standardOutput), p.text(.standardError))
    }
}
