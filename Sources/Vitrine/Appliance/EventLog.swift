import Foundation
import SystemSupport
import FileIO
import Synchronization
import VitrineCore

/// The proof-of-play log (`vitrine run --events FILE`): one JSON object per line,
/// `{"event": NAME, "monotonic": S, "wall": "ISO 8601", …fields}`, appended and flushed per event.
///
/// Bounded for a box that plays for months: when the file would pass `maxBytes`, it is renamed to
/// `FILE.1` (replacing the previous one) and a new `FILE` is started, so at most about twice
/// `maxBytes` are kept. Share one instance per file (the player's events and the imports).
public final class EventLog: Sendable {
    public let path: String
    /// The size at which the file is rotated, in bytes.
    public let maxBytes: Int
    /// The open file and its size in bytes.
    private let file: Mutex<(handle: FileHandle, size: Int)>

    /// Opens (creates or appends to) `path`; `maxBytes` defaults to 16 MiB.
    /// - Throws: the file system's error when `path` cannot be created or opened for writing.
    public init(path: String, maxBytes: Int = 16 << 20) throws {
        self.path = path
        self.maxBytes = max(4096, maxBytes)
        file = Mutex(try Self.open(path))
    }

    private static func open(_ path: String) throws -> (FileHandle, Int) {
        if !FileManager.default.fileExists(atPath: path) {
            guard FileManager.default.createFile(atPath: path, contents: nil) else {
                throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: path])
            }
        }
        let h = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        return (h, Int(try h.seekToEnd()))
    }

    deinit { file.withLock { try? $0.handle.close() } }

    public func write(_ e: TimedEvent) {
        append(Self.json(e) + "\n")
    }

    /// Appends an event that does not come from the player (a catalog import, say):
    /// `{"event": name, "monotonic": now, "wall": now, …fields}`. Each field's value must already be JSON
    /// (use `EventLog.quote` for strings).
    public func write(event name: String, fields: [(String, String)]) {
        var f: [(String, String)] = [("event", Self.quote(name)), ("monotonic", Self.num(monotonicNow())),
                                     ("wall", Self.quote(Self.iso(Date().timeIntervalSince1970)))]
        f += fields
        append("{" + f.map { "\(Self.quote($0.0)):\($0.1)" }.joined(separator: ",") + "}\n")
    }

    /// Observers of every line written (without its newline): the control socket's `observe` and
    /// MQTT's `…/events`. Called on the writing thread, after the line is in the file.
    private let lineObservers = Mutex<[UUID: @Sendable (String) -> Void]>([:])

    /// Calls `body` with every line written from now on (JSON, no newline), on the writing thread.
    @discardableResult
    public func observeLines(_ body: @escaping @Sendable (String) -> Void) -> UUID {
        let id = UUID()
        lineObservers.withLock { $0[id] = body }
        return id
    }

    public func removeLineObserver(_ id: UUID) { _ = lineObservers.withLock { $0.removeValue(forKey: id) } }

    private func append(_ line: String) {
        defer {
            let observers = lineObservers.withLock { Array($0.values) }
            if !observers.isEmpty {
                let text = String(line.dropLast())
                for o in observers { o(text) }
            }
        }
        let data = Data(line.utf8)
        file.withLock { f in
            if f.size > 0, f.size + data.count > maxBytes {
                try? f.handle.close()
                try? FileSystem.rename(path, to: path + ".1")
                if let (h, n) = try? Self.open(path) { f = (h, n) } else { return }
            }
            if (try? f.handle.write(contentsOf: data)) != nil { f.size += data.count }
        }
    }

    /// The JSON line for one event (without the newline).
    public static func json(_ e: TimedEvent) -> String {
        var f: [(String, String)] = [("event", quote(e.event.name)), ("monotonic", num(e.monotonic)),
                                     ("wall", quote(iso(e.wall)))]
        switch e.event {
        case .decodingStarted(let i), .decodingComplete(let i), .renderingStarted(let i), .renderingComplete(let i),
             .didAdvanceToPlaybackSession(let i):
            f.append(("item", quote(i)))
        case let .renderingWillStart(i, at), let .renderingWillComplete(i, at):
            f += [("item", quote(i)), ("at", num(at))]
        case .nowPlayingChanged(let i): f.append(("item", i.map(quote) ?? "null"))
        case .playbackStateChanged(let s): f.append(("state", quote(s.rawValue)))
        case .endOfAudio: break
        case let .decoderCanceled(i, n): f += [("item", quote(i)), ("framesRendered", String(n))]
        case let .decodingAborted(i, err, n): f += [("item", quote(i)), ("error", quote(err)), ("framesRendered", String(n))]
        case .encounteredError(let s): f.append(("error", quote(s)))
        case let .durationChanged(i, d): f += [("item", quote(i)), ("duration", num(d))]
        case let .progress(i, t, d): f += [("item", quote(i)), ("time", num(t)), ("duration", d.map(num) ?? "null")]
        case .cuePoints(let c):
            f += [("item", quote(c.itemID)), ("previousTime", num(c.previousTime)), ("currentTime", num(c.currentTime)),
                  ("bySeek", c.bySeek ? "true" : "false"),
                  ("cuePoints", "[" + c.cuePoints.map { "{\"id\":\(quote($0.id)),\"time\":\(num($0.time))}" }.joined(separator: ",") + "]")]
        case let .action(a, source): f += [("action", quote(describe(a))), ("source", quote(source))]
        case let .audioGap(from, to, ms): f += [("from", quote(from)), ("to", quote(to)), ("milliseconds", num(ms))]
        case let .overlayAnimation(r):
            f += [("phases", "[" + r.phases.map(quote).joined(separator: ",") + "]"), ("seconds", num(r.seconds)),
                  ("vblanks", String(r.vblanks)), ("missedVblanks", String(r.missedVblanks)),
                  ("framesPresented", String(r.framesPresented)), ("framesDropped", String(r.framesDropped)),
                  ("droppedDecoderLate", String(r.dropped.decoderLate)), ("droppedRunLoopLate", String(r.dropped.runLoopLate)),
                  ("droppedDisplayStall", String(r.dropped.displayStall)), ("droppedItemEnded", String(r.dropped.itemEnded)),
                  ("droppedSkipped", String(r.dropped.skipped)),
                  ("longestWaitMs", num(r.longestWaitMs)),
                  ("drawMeanMs", num(r.drawMeanMs)), ("drawMaxMs", num(r.drawMaxMs)), ("periodMs", num(r.periodMs)),
                  ("stepsYielded", String(r.stepsYielded))]
        case let .scheduleChanged(entry, playlist, reason, wall, overlay):
            f += [("entry", entry.map(quote) ?? "null"), ("playlist", quote(playlist)), ("reason", quote(reason)),
                  ("scheduleClock", quote(iso(wall)))]
            if let overlay { f.append(("overlay", quote(overlay))) }
        case let .displayPower(on, reason, wall):
            f += [("state", quote(on ? "on" : "off")), ("reason", quote(reason)), ("scheduleClock", quote(iso(wall)))]
        }
        return "{" + f.map { "\(quote($0.0)):\($0.1)" }.joined(separator: ",") + "}"
    }

    static func describe(_ a: Action) -> String {
        switch a {
        case .log(let m): return "log \(m)"
        case let .jump(item, t): return "jump \(item)" + (t.map { " at \($0)" } ?? "")
        case .seek(let t): return "seek \(t)"
        case .pause: return "pause"
        case .resume: return "resume"
        case .setVolume(let v): return "setVolume \(v)"
        case .showOverlay(let o): return "showOverlay \(o)"
        case .hideOverlays: return "hideOverlays"
        case let .interrupt(i):
            switch i.content {
            case .playlist(let p): return "interrupt playlist \(p) for \(i.timeout)"
            case .overlay(let o): return "interrupt overlay \(o) for \(i.timeout)"
            }
        case .endInterrupt: return "endInterrupt"
        }
    }

    public static func num(_ d: Double) -> String { d.isFinite ? String(format: "%.6f", d) : "null" }

    /// `s` as a JSON string literal (`JSONPath.quoted`: control and line-separator characters escaped).
    public static func quote(_ s: String) -> String { JSONPath.quoted(s) }

    static func iso(_ t: Double) -> String {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return f.string(from: Date(timeIntervalSince1970: t))
    }
}
