// What a child process has written to its captured streams: the bytes, and the same split into
// lines, each with the time it arrived.

import Foundation
internal import SystemSupport

/// One of a child's output streams.
public enum SubprocessStream: Sendable, Hashable {
    case standardOutput, standardError
}

/// One line a child wrote on a captured stream.
public struct SubprocessLine: Sendable, Equatable {
    /// When the read that completed the line returned: seconds since the child was started
    /// (`RunningProcess.started`), on CLOCK_MONOTONIC (`MonotonicClock.seconds()`). Never decreases
    /// from one line to the next, across both streams.
    public var time: Double
    /// The stream it was written on.
    public var stream: SubprocessStream
    /// The line without its newline, as UTF-8 (invalid bytes replaced). A stream's last bytes
    /// without a newline are a line too, timed when the stream ended.
    public var text: String
}

/// The captured streams of one child, filled by its reader threads and read by the test.
// Every stored property is read and written with `condition` locked; waiters sleep on it.
final class CapturedOutput: @unchecked Sendable {
    private let condition = NSCondition()
    private let started: Double
    private var out = Data(), err = Data()
    private var lineList: [SubprocessLine] = []
    /// The bytes after each stream's last newline.
    private var partial: [SubprocessStream: [UInt8]] = [:]
    private var openStreams: Set<SubprocessStream>

    /// - Parameters:
    ///   - started: `MonotonicClock.seconds()` when the child was started.
    ///   - streams: the streams that will be read (each ends with `closed`).
    init(started: Double, streams: Set<SubprocessStream>) {
        self.started = started
        openStreams = streams
    }

    /// Appends `chunk`, just read from `stream`, and the lines it completes.
    func received(_ chunk: Data, on stream: SubprocessStream) {
        condition.lock()
        defer { condition.broadcast(); condition.unlock() }
        // Read under the lock, so the lines of both streams are in time order.
        let time = MonotonicClock.seconds() - started
        if stream == .standardOutput { out.append(chunk) } else { err.append(chunk) }
        var pending = partial[stream] ?? []
        var lineStart = chunk.startIndex
        while let newline = chunk[lineStart...].firstIndex(of: 0x0A) {
            pending += chunk[lineStart..<newline]
            lineList.append(SubprocessLine(time: time, stream: stream, text: String(decoding: pending, as: UTF8.self)))
            pending.removeAll(keepingCapacity: true)
            lineStart = newline + 1
        }
        pending += chunk[lineStart...]
        partial[stream] = pending
    }

    /// Marks `stream` ended: its unterminated tail, if any, becomes its last line.
    func closed(_ stream: SubprocessStream) {
        condition.lock()
        defer { condition.broadcast(); condition.unlock() }
        if let tail = partial[stream], !tail.isEmpty {
            lineList.append(SubprocessLine(time: MonotonicClock.seconds() - started, stream: stream, text: String(decoding: tail, as: UTF8.self)))
        }
        partial[stream] = nil
        openStreams.remove(stream)
    }

    var bytes: (out: Data, err: Data) {
        condition.lock(); defer { condition.unlock() }
        return (out, err)
    }

    var lines: [SubprocessLine] {
        condition.lock(); defer { condition.unlock() }
        return lineList
    }

    /// The first line that satisfies `matches`, waiting for it until `deadline` (a value of
    /// `MonotonicClock.seconds()`); nil at the deadline, or once every stream ended without one.
    func waitForLine(until deadline: Double, where matches: (SubprocessLine) -> Bool) -> SubprocessLine? {
        condition.lock(); defer { condition.unlock() }
        var looked = 0
        while true {
            if let line = lineList[looked...].first(where: matches) { return line }
            looked = lineList.count
            let left = deadline - MonotonicClock.seconds()
            if openStreams.isEmpty || left <= 0 { return nil }
            // `wait(until:)` takes a wall-clock date; the deadline is looked at again on the
            // monotonic clock after each wake, so a step of the wall clock cannot stretch it.
            _ = condition.wait(until: Date(timeIntervalSinceNow: left))
        }
    }
}
