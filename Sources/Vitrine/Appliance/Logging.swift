import Foundation
import Synchronization
import Media

/// A log record: subsystem label (`vitrine.kms`), level, message and structured metadata.
public struct LogRecord: Sendable {
    public enum Level: Int, Sendable, Comparable {
        case debug, info, warning, error
        public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
        var name: String { ["debug", "info", "warning", "error"][rawValue] }
    }
    public var label: String
    public var level: Level
    public var message: String
    public var metadata: [String: String]
}

/// Where log records go. `LogSink.standardError` prints one line per record; tests use `LogSink.memory()`.
public final class LogSink: Sendable {
    private let write: @Sendable (LogRecord) -> Void
    public let minimumLevel: LogRecord.Level
    public init(minimumLevel: LogRecord.Level = .info, _ write: @escaping @Sendable (LogRecord) -> Void) {
        self.write = write
        self.minimumLevel = minimumLevel
    }
    func emit(_ r: LogRecord) { if r.level >= minimumLevel { write(r) } }

    /// One line per record on standard error: `info [vitrine.kms] message key=value…`, preceded by
    /// the UTC time (`2026-12-01T21:30:00.123Z `) unless `timestamps` is false. By default the time
    /// is written when standard error is not the journal's stream (journald stamps each line itself):
    /// see `isJournalStream`. A write that fails (a closed pipe) loses the line, never the process.
    public static func standardError(minimumLevel: LogRecord.Level = .info, timestamps: Bool? = nil) -> LogSink {
        let stamped = timestamps ?? !isJournalStream(STDERR_FILENO)
        return LogSink(minimumLevel: minimumLevel) { r in
            StandardStreams.err(line(r, timestamp: stamped ? timeNow() : nil))
        }
    }

    /// One line per record, with its UTC time, appended to the file at `path` (created with mode
    /// 0644 when missing). Lines are written whole with one `write(2)` each (`O_APPEND`), so several
    /// processes may share the file; a failed write loses the line.
    /// - Throws: `LogFileError` when the file cannot be opened for appending.
    public static func file(_ path: String, minimumLevel: LogRecord.Level = .info) throws(LogFileError) -> LogSink {
        let fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw LogFileError(path: path, reason: String(cString: strerror(errno))) }
        let file = LogFile(fd: fd)
        return LogSink(minimumLevel: minimumLevel) { r in
            StandardStreams.write(line(r, timestamp: timeNow()), to: file.fd)
        }
    }

    /// `[time ]level [label] message key=value…` and a newline.
    static func line(_ r: LogRecord, timestamp: String?) -> String {
        var line = timestamp.map { $0 + " " } ?? ""
        line += "\(r.level.name) [\(r.label)] \(r.message)"
        if !r.metadata.isEmpty {
            line += " " + r.metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        }
        return line + "\n"
    }

    /// Whether `fd` is the stream systemd connected to the journal: `JOURNAL_STREAM` holds that
    /// stream's `device:inode` (systemd.exec(5), "JOURNAL_STREAM"), and `fd`'s `fstat(2)` matches it.
    /// False when the variable is unset, malformed, or names another file (a child whose stderr was
    /// redirected inherits the variable).
    public static func isJournalStream(_ fd: Int32, environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        guard let value = environment["JOURNAL_STREAM"] else { return false }
        let parts = value.split(separator: ":")
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var st = stat()
        guard fstat(fd, &st) == 0 else { return false }
        return UInt64(st.st_dev) == device && UInt64(st.st_ino) == inode
    }

    /// The UTC time now, to the millisecond: `2026-12-01T21:30:00.123Z` (ISO 8601).
    static func timeNow() -> String {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        var t = ts.tv_sec, parts = tm()
        gmtime_r(&t, &parts)
        func pad(_ v: Int32, _ width: Int) -> String {
            let s = String(v)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(Int32(ts.tv_nsec / 1_000_000), 3))Z"
    }

    /// A sink that keeps every record in memory; read them with `records`.
    public static func memory() -> (LogSink, @Sendable () -> [LogRecord]) {
        let store = Mutex<[LogRecord]>([])
        let sink = LogSink(minimumLevel: .debug) { r in store.withLock { $0.append(r) } }
        return (sink, { store.withLock { $0 } })
    }
}

/// A log file that could not be opened (`--log-file`).
public struct LogFileError: Error, CustomStringConvertible {
    public var path: String
    public var reason: String
    public var description: String { "cannot open log file \(path): \(reason)" }
}

/// The descriptor of a log file, closed when the last sink writing to it goes.
private final class LogFile: Sendable {
    let fd: Int32
    init(fd: Int32) { self.fd = fd }
    deinit { close(fd) }
}

/// A logger for one subsystem. Libraries take one; they never make their own sink.
public struct Logger: Sendable {
    public let label: String
    public let sink: LogSink
    public init(label: String, sink: LogSink) { self.label = label; self.sink = sink }
    public func child(_ suffix: String) -> Logger { Logger(label: label + "." + suffix, sink: sink) }
    public func debug(_ m: @autoclosure () -> String, _ md: [String: String] = [:]) { log(.debug, m(), md) }
    public func info(_ m: @autoclosure () -> String, _ md: [String: String] = [:]) { log(.info, m(), md) }
    public func warning(_ m: @autoclosure () -> String, _ md: [String: String] = [:]) { log(.warning, m(), md) }
    public func error(_ m: @autoclosure () -> String, _ md: [String: String] = [:]) { log(.error, m(), md) }
    func log(_ level: LogRecord.Level, _ message: String, _ md: [String: String]) {
        guard level >= sink.minimumLevel else { return }
        sink.emit(LogRecord(label: label, level: level, message: message, metadata: md))
    }
}

/// FFmpeg's own logging, kept to errors only so encoders do not chatter on stderr.
public enum MediaLog {
    public static func quiet() { Media.FFmpegLog.silent() }
}
