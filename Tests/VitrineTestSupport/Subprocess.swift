// Running programs from tests: one runner that drains standard output and standard error at the
// same time (a child that fills one pipe while the test waits on the other would deadlock), times
// each line as it arrives, and bounds every wait it is asked to bound.

import Foundation
import Synchronization
internal import SystemSupport

/// How a child process ended and what it wrote.
public struct SubprocessResult: Sendable {
    /// The exit status, or the signal number when `signaled` (as `Process.terminationStatus`).
    public var status: Int32
    /// True when a signal ended the process (`Process.TerminationReason.uncaughtSignal`).
    public var signaled: Bool
    /// Everything written to standard output (empty unless it was captured).
    public var standardOutput: Data
    /// Everything written to standard error (empty unless it was captured).
    public var standardError: Data

    /// Standard output as UTF-8 (invalid bytes replaced).
    public var out: String { String(decoding: standardOutput, as: UTF8.self) }
    /// Standard error as UTF-8 (invalid bytes replaced).
    public var err: String { String(decoding: standardError, as: UTF8.self) }
    /// True when the child was still running at the deadline of `RunningProcess.wait(timeout:)` and
    /// that wait killed it with SIGKILL (`signaled` and `status` then tell how it ended).
    public var overstayed = false

    /// The exit status; -1 when a signal ended the process.
    public var code: Int32 { signaled ? -1 : status }
}

/// A program that could not be started, or that exited with a failure where success was required.
public struct SubprocessError: Error, CustomStringConvertible {
    public var description: String
}

/// Where a child's standard output or error goes.
public enum SubprocessOutput: Sendable {
    /// Read into memory, concurrently with the other stream, and split into timed lines
    /// (`SubprocessResult`, `RunningProcess.outputSoFar`, `RunningProcess.lines`).
    case capture
    /// `/dev/null`.
    case discard
    /// Appended to this file (created when missing), so a test can read it while the child runs.
    case file(String)
    /// A pipe read until this many bytes have come (kept in the result and its lines), then closed
    /// while the child runs: the reader that goes away, as `vitrine run | head -c N` makes it.
    case closeAfter(bytes: Int)
}

/// Starts and waits for child processes (Foundation's `Process`), draining every captured pipe on a
/// thread of its own while the child runs.
public enum Subprocess {
    /// Runs `executable` with `arguments` to its end.
    /// - Parameters:
    ///   - executable: a path; a bare name is looked up in `/usr/bin`, then `/bin`.
    ///   - input: written to the child's standard input (on a thread of its own), which is then closed;
    ///     nil gives the child an empty standard input.
    ///   - environment: added to (or overriding) the test process's environment.
    /// - Throws: `SubprocessError` when the program cannot be started.
    @discardableResult
    public static func run(_ executable: String, _ arguments: [String], input: Data? = nil,
                           environment: [String: String] = [:], currentDirectory: String? = nil,
                           standardOutput: SubprocessOutput = .capture,
                           standardError: SubprocessOutput = .capture) throws -> SubprocessResult {
        try start(executable, arguments, input: input, environment: environment, currentDirectory: currentDirectory,
                  standardOutput: standardOutput, standardError: standardError).wait()
    }

    /// Runs `executable` and returns its standard output; throws when it exits with a status other
    /// than 0 (the error holds the status and standard error).
    @discardableResult
    public static func output(_ executable: String, _ arguments: [String], input: Data? = nil) throws -> String {
        let r = try run(executable, arguments, input: input)
        guard !r.signaled, r.status == 0 else {
            throw SubprocessError(description: "\(executable) \(arguments.joined(separator: " ")): "
                                  + (r.signaled ? "signal \(r.status)" : "exit \(r.status)") + ": \(r.err)")
        }
        return r.out
    }

    /// Starts `executable` and returns at once; see `run` for the parameters.
    public static func start(_ executable: String, _ arguments: [String], input: Data? = nil,
                             environment: [String: String] = [:], currentDirectory: String? = nil,
                             standardOutput: SubprocessOutput = .capture,
                             standardError: SubprocessOutput = .capture) throws -> RunningProcess {
        try RunningProcess(executable: resolve(executable), arguments: arguments, input: input, environment: environment,
                           currentDirectory: currentDirectory, standardOutput: standardOutput, standardError: standardError)
    }

    static func resolve(_ executable: String) -> String {
        if executable.contains("/") { return executable }
        for folder in ["/usr/bin", "/bin", "/usr/local/bin", "/usr/sbin", "/sbin"] {
            let path = folder + "/" + executable
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return "/usr/bin/" + executable
    }
}

/// A child process started by `Subprocess.start`. Captured output is read as it comes, one thread per
/// stream, so the child never blocks on a full pipe; each line is kept with the time it arrived, a
/// test can wait for a line, and `wait(timeout:)` kills a child that overstays its bound, so a test
/// that checks a bound never hangs on the bug it looks for.
// `Process` is not `Sendable`; every use of it here is one of its own thread-safe calls (isRunning,
// terminate, processIdentifier, and terminationStatus/Reason once its termination handler ran), and
// the captured bytes and lines are behind `CapturedOutput`'s lock.
public final class RunningProcess: @unchecked Sendable {
    private let process: Process
    private let captured: CapturedOutput
    /// Entered before the child starts, left by its termination handler.
    private let exited = DispatchGroup()
    /// One member per thread (a reader of each captured stream, the writer of standard input).
    private let done = DispatchGroup()
    /// Set when `wait(timeout:)` killed the child at its deadline.
    private let overstayed = Atomic<Bool>(false)
    /// `MonotonicClock.seconds()` just before the child was started: line times count from here.
    public let started: Double

    fileprivate init(executable: String, arguments: [String], input: Data?, environment: [String: String],
                     currentDirectory: String?, standardOutput: SubprocessOutput, standardError: SubprocessOutput) throws {
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw SubprocessError(description: "cannot start \(executable): no such program")
        }
        let p = Process()
        // Through `env --default-signal`: the child starts with every signal at its default
        // disposition, as a shell or systemd starts it. Ignored signals survive exec, and this test
        // process ignores SIGPIPE (the players it runs in-process set that up).
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["--default-signal", executable] + arguments
        if !environment.isEmpty {
            p.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        if let currentDirectory { p.currentDirectoryURL = URL(fileURLWithPath: currentDirectory) }
        let inPipe = Pipe()
        p.standardInput = inPipe
        var pipes: [(pipe: Pipe, stream: SubprocessStream, limit: Int?)] = []
        for (destination, stream) in [(standardOutput, SubprocessStream.standardOutput), (standardError, .standardError)] {
            let handle: Any
            switch destination {
            case .capture, .closeAfter:
                let pipe = Pipe()
                var limit: Int?
                if case .closeAfter(let bytes) = destination { limit = bytes }
                pipes.append((pipe, stream, limit))
                handle = pipe
            case .discard:
                handle = FileHandle.nullDevice
            case .file(let path):
                if !FileManager.default.fileExists(atPath: path) { _ = FileManager.default.createFile(atPath: path, contents: nil) }
                guard let h = FileHandle(forWritingAtPath: path) else { throw SubprocessError(description: "cannot open \(path)") }
                h.seekToEndOfFile()
                handle = h
            }
            if stream == .standardOutput { p.standardOutput = handle } else { p.standardError = handle }
        }
        exited.enter()
        p.terminationHandler = { [exited] _ in exited.leave() }
        started = MonotonicClock.seconds()
        captured = CapturedOutput(started: started, streams: Set(pipes.map(\.stream)))
        do { try p.run() } catch {
            exited.leave()  // A group released while entered is a libdispatch trap.
            throw SubprocessError(description: "cannot start \(executable): \(error.localizedDescription)")
        }
        process = p
        // Our copies of the write ends must be closed, or the readers never see end of file.
        for (pipe, _, _) in pipes { try? pipe.fileHandleForWriting.close() }
        var threads: [Thread] = []
        for (pipe, stream, limit) in pipes {
            done.enter()
            let reader = pipe.fileHandleForReading
            let thread = Thread { [captured, done] in
                var read = 0
                while read < limit ?? .max {
                    let chunk = reader.availableData
                    if chunk.isEmpty { break }
                    read += chunk.count
                    captured.received(chunk, on: stream)
                }
                try? reader.close()
                captured.closed(stream)
                done.leave()
            }
            thread.name = "subprocess \(stream)"
            threads.append(thread)
        }
        let writer = inPipe.fileHandleForWriting
        try? inPipe.fileHandleForReading.close()
        if let input {
            done.enter()
            threads.append(Thread { [done] in
                // A child that exits without reading gets EPIPE here, not a crash (SIGPIPE is ignored).
                _ = try? writer.write(contentsOf: input)
                try? writer.close()
                done.leave()
            })
        } else {
            try? writer.close()
        }
        signal(SIGPIPE, SIG_IGN)
        threads.forEach { $0.start() }
    }

    /// The child's process id.
    public var pid: Int32 { process.processIdentifier }
    public var isRunning: Bool { process.isRunning }

    /// Seconds since the child was started (`started`), on CLOCK_MONOTONIC: the scale of `SubprocessLine.time`.
    public var elapsed: Double { MonotonicClock.seconds() - started }

    /// What the child has written so far to its captured standard output and standard error.
    public var outputSoFar: (out: String, err: String) {
        let (out, err) = captured.bytes
        return (String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
    }

    /// The lines of the captured streams so far, in the order they arrived (both streams
    /// interleaved). A stream's last bytes without a newline become a line when it ends.
    public var lines: [SubprocessLine] { captured.lines }

    /// Waits up to `timeout` for a line containing `needle` (on `stream`, or on either when nil).
    /// - Returns: the first such line, already there or yet to come; nil when `timeout` passed, or
    ///   when every captured stream ended without one.
    public func waitForLine(containing needle: String, on stream: SubprocessStream? = nil, timeout: Duration) -> SubprocessLine? {
        captured.waitForLine(until: MonotonicClock.seconds() + timeout.seconds) {
            (stream == nil || $0.stream == stream) && $0.text.contains(needle)
        }
    }

    /// Sends SIGTERM.
    public func terminate() { if process.isRunning { process.terminate() } }

    /// Sends `signal` (SIGKILL, SIGINT…) while the child runs.
    public func send(_ signal: Int32) { if process.isRunning { kill(process.processIdentifier, signal) } }

    /// Waits for the child to exit and for its captured output to end; returns both. May be called
    /// again: it returns the same.
    @discardableResult
    public func wait() -> SubprocessResult {
        exited.wait()
        done.wait()
        return result()
    }

    /// How a server started: `ready()` held, it exited first (its result), or neither within the time.
    public enum Readiness {
        case ready
        case exited(SubprocessResult)
        /// Still not ready: the child was killed (SIGKILL) and waited for.
        case timedOut
    }

    /// Waits until `ready()` holds (checked every `interval`), the child exits, or `seconds`
    /// pass; a child not ready in time is killed, so a fixture never leaves one behind.
    public func waitUntilReady(seconds: Double, interval: Duration = .milliseconds(10), _ ready: () -> Bool) -> Readiness {
        let deadline = MonotonicClock.seconds() + seconds
        while MonotonicClock.seconds() < deadline {
            if !isRunning { return .exited(wait()) }
            if ready() { return .ready }
            usleep(UInt32(interval.seconds * 1_000_000))
        }
        send(SIGKILL)
        wait()
        return .timedOut
    }

    /// Waits up to `timeout` for the child to exit. A child still running then is killed with
    /// SIGKILL (so a test never leaves it behind), and the result says so (`overstayed`). Its
    /// captured output is waited for a further 5 s at most: a grandchild may hold the pipes open.
    @discardableResult
    public func wait(timeout: Duration) -> SubprocessResult {
        if exited.wait(timeout: .now() + max(0, timeout.seconds)) == .timedOut {
            overstayed.store(true, ordering: .relaxed)
            kill(process.processIdentifier, SIGKILL)
            exited.wait()
        }
        _ = done.wait(timeout: .now() + 5)
        return result()
    }

    private func result() -> SubprocessResult {
        let (out, err) = captured.bytes
        var r = SubprocessResult(status: process.terminationStatus, signaled: process.terminationReason == .uncaughtSignal,
                                 standardOutput: out, standardError: err)
        r.overstayed = overstayed.load(ordering: .relaxed)
        return r
    }
}

extension Duration {
    /// This duration in seconds, e.g. `1.5` for `.milliseconds(1500)`.
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
