// Running programs from tests: one runner that drains standard output and standard error at the
// same time (a child that fills one pipe while the test waits on the other would deadlock).

import Foundation
import Synchronization

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
    /// The exit status; -1 when a signal ended the process.
    public var code: Int32 { signaled ? -1 : status }
}

/// A program that could not be started, or that exited with a failure where success was required.
public struct SubprocessError: Error, CustomStringConvertible {
    public var description: String
}

/// Where a child's standard output or error goes.
public enum SubprocessOutput: Sendable {
    /// Read into memory, concurrently with the other stream (`SubprocessResult`, `RunningProcess.outputSoFar`).
    case capture
    /// `/dev/null`.
    case discard
    /// Appended to this file (created when missing), so a test can read it while the child runs.
    case file(String)
    /// A pipe read until this many bytes have come (kept in the result), then closed while the child
    /// runs: the reader that goes away, as `vitrine run | head -c N` makes it.
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

/// A child process started by `Subprocess.start`. Captured output is read as it comes, so the child
/// never blocks on a full pipe; `wait()` returns it all.
// `Process` is not `Sendable`; every use of it here is one of its own thread-safe calls (waitUntilExit,
// isRunning, terminate, processIdentifier), and the captured bytes are behind a `Mutex`.
public final class RunningProcess: @unchecked Sendable {
    private let process: Process
    private let readers: [Thread]
    private let captured = Captured()
    private let done = DispatchGroup()

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
        var pipes: [(pipe: Pipe, isOut: Bool, limit: Int?)] = []
        for (destination, isOut) in [(standardOutput, true), (standardError, false)] {
            let handle: Any
            switch destination {
            case .capture, .closeAfter:
                let pipe = Pipe()
                var limit: Int?
                if case .closeAfter(let bytes) = destination { limit = bytes }
                pipes.append((pipe, isOut, limit))
                handle = pipe
            case .discard:
                handle = FileHandle.nullDevice
            case .file(let path):
                if !FileManager.default.fileExists(atPath: path) { _ = FileManager.default.createFile(atPath: path, contents: nil) }
                guard let h = FileHandle(forWritingAtPath: path) else { throw SubprocessError(description: "cannot open \(path)") }
                h.seekToEndOfFile()
                handle = h
            }
            if isOut { p.standardOutput = handle } else { p.standardError = handle }
        }
        do { try p.run() } catch {
            throw SubprocessError(description: "cannot start \(executable): \(error.localizedDescription)")
        }
        process = p
        // Our copies of the write ends must be closed, or the readers never see end of file.
        for (pipe, _, _) in pipes { try? pipe.fileHandleForWriting.close() }
        var threads: [Thread] = []
        for (pipe, isOut, limit) in pipes {
            done.enter()
            let reader = pipe.fileHandleForReading
            threads.append(Thread { [captured, done] in
                var read = 0
                while read < limit ?? .max {
                    let chunk = reader.availableData
                    if chunk.isEmpty { break }
                    read += chunk.count
                    captured.bytes.withLock { if isOut { $0.out.append(chunk) } else { $0.err.append(chunk) } }
                }
                try? reader.close()
                done.leave()
            })
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
        readers = threads
        signal(SIGPIPE, SIG_IGN)
        threads.forEach { $0.start() }
    }

    /// The child's process id.
    public var pid: Int32 { process.processIdentifier }
    public var isRunning: Bool { process.isRunning }

    /// What the child has written so far to its captured standard output and standard error.
    public var outputSoFar: (out: String, err: String) {
        captured.bytes.withLock { (String(decoding: $0.out, as: UTF8.self), String(decoding: $0.err, as: UTF8.self)) }
    }

    /// Sends SIGTERM.
    public func terminate() { if process.isRunning { process.terminate() } }

    /// Sends `signal` (SIGKILL, SIGINT…) while the child runs.
    public func send(_ signal: Int32) { if process.isRunning { kill(process.processIdentifier, signal) } }

    /// Waits for the child to exit and for its captured output to end; returns both.
    @discardableResult
    public func wait() -> SubprocessResult {
        process.waitUntilExit()
        done.wait()
        let (out, err) = captured.bytes.withLock { ($0.out, $0.err) }
        return SubprocessResult(status: process.terminationStatus, signaled: process.terminationReason == .uncaughtSignal,
                                standardOutput: out, standardError: err)
    }
}

/// The bytes read so far from a child's captured streams.
private final class Captured: Sendable {
    let bytes = Mutex<(out: Data, err: Data)>((Data(), Data()))
}
