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

    public static func standardError(minimumLevel: LogRecord.Level = .info) -> LogSink {
        LogSink(minimumLevel: minimumLevel) { r in
            var line = "\(r.level.name) [\(r.label)] \(r.message)"
            if !r.metadata.isEmpty {
                line += " " + r.metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            }
            FileHandle.standardError.write(Data((line + "\n").utf8))
        }
    }

    /// A sink that keeps every record in memory; read them with `records`.
    public static func memory() -> (LogSink, @Sendable () -> [LogRecord]) {
        let store = Mutex<[LogRecord]>([])
        let sink = LogSink(minimumLevel: .debug) { r in store.withLock { $0.append(r) } }
        return (sink, { store.withLock { $0 } })
    }
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
