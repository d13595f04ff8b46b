import Foundation
import Synchronization
import Media
import VitrineCore
import ControlSocket

/// What a command answers: its data (nil: `null`), or an error in mpv's words
/// (`ControlSocket`'s `ControlProtocol.reply` writes either as the reply line).
public typealias CommandResult = Result<JSONValue?, ControlError>

extension ControlError.Code {
    /// A command the config's `mqtt.allow` does not let the network run.
    public static let notAllowed = ControlError.Code(rawValue: "command not allowed")
    /// Nothing to do it with (no catalog playing, `sync-now` without `update.url`).
    public static let unavailable = ControlError.Code(rawValue: "unavailable")
}

/// Where a command came from: the local control socket (every command), or the network (MQTT,
/// only the commands of the config's `mqtt.allow`).
public enum ControlOrigin: Sendable, Equatable {
    case local
    case network
}

/// What the commands act on: the run in progress (`Player.run`, on its run loop).
protocol ControlTarget: AnyObject {
    /// The status's fields of the run (the catalog, the item, the schedule, the display, frames).
    func runStatus() -> [(key: String, value: JSONValue)]
    /// A copy of the picture on screen (XRGB8888), or nil before the first frame.
    func screenImage() -> ImageBuffer?
    /// Posts an action as a cue point would, from `source`.
    func post(_ action: Action, source: String)
    /// A tap at screen pixel (x, y), as libinput's touch-down and touch-up would be routed.
    func tap(x: Double, y: Double) -> Bool
    /// The screen's size in pixels.
    var screenSize: (width: Int, height: Int) { get }
    /// Whether the catalog playing has an item, an overlay, a playlist with this id.
    func hasItem(_ id: String) -> Bool
    func hasOverlay(_ id: String) -> Bool
    func hasPlaylist(_ name: String) -> Bool
    /// Reads the catalog again and plays it at once; nil, or why it could not.
    func reload() -> String?
    /// Starts an import of a folder (a stick's mount point) or a catalog URL; nil, or why not.
    func startImport(_ source: String) -> String?
    /// Polls `update.url` now; nil, or why not.
    func syncNow() -> String?
    /// Whether the catalog playing is synchronised to the wall clock (`sync`): `pause` and `jump`
    /// would take the screen out of step with the others, so they are refused.
    var isSynchronized: Bool { get }
}

/// The commands of the control socket and of MQTT's `…/cmd`, shared by both (one vocabulary):
/// `status`, `screenshot`, `show-overlay`, `hide-overlays`, `jump`, `pause`, `resume`,
/// `set-volume`, `tap`, `reload`, `interrupt-start`, `interrupt-stop`, `import`, `sync-now`
/// (`observe` is the socket's own). Confined to the run loop's thread.
final class ControlCommands {
    /// Every command's name, in the order `docs/control.md` lists them.
    static let names = ["status", "screenshot", "show-overlay", "hide-overlays", "jump", "pause", "resume", "set-volume",
                        "tap", "reload", "interrupt-start", "interrupt-stop", "import", "sync-now", "observe"]
    /// The network's allow-list when the config names none.
    static let defaultNetworkAllow: Set<String> = ["status", "screenshot", "sync-now"]

    weak var target: ControlTarget?
    /// Status fields that are not the run's (box, uptime, imports, errors).
    var extraStatus: () -> [(key: String, value: JSONValue)] = { [] }
    /// Commands the network may run.
    let networkAllow: Set<String>
    /// Where `screenshot path` writes (inside the library).
    let screenshotFolder: String
    private let log: Logger
    /// Hops a finished screenshot back onto the run loop.
    var onLoop: @Sendable (@escaping @Sendable () -> Void) -> Void = { $0() }

    init(networkAllow: Set<String>, screenshotFolder: String, log: Logger) {
        self.networkAllow = networkAllow
        self.screenshotFolder = screenshotFolder
        self.log = log
    }

    /// An id given as a string, or as a number (`vitrine ctl jump 12` sends 12, a JSON number): its
    /// literal, as the manifest would spell the id.
    static func idText(_ v: JSONValue) -> String? {
        switch v {
        case .string(let s): return s
        case .number(let n): return n.literal
        default: return nil
        }
    }

    /// The status object: `{"online": true, …}` (`docs/control.md` lists the fields).
    func status() -> JSONValue {
        .object([("online", .bool(true))] + extraStatus() + (target?.runStatus() ?? []))
    }

    /// Runs one command; `reply` is called once, on the loop's thread (at once, or later for `screenshot`).
    func execute(_ command: [JSONValue], origin: ControlOrigin, reply: @escaping (CommandResult) -> Void) {
        guard let name = command.first?.stringValue else {
            reply(.failure(.invalidParameter("command: expected an array whose first element is the command's name")))
            return
        }
        let args = Array(command.dropFirst())
        guard Self.names.contains(name) else {
            // Spelling.suggestion is quadratic in the name's length: a name longer than any
            // command's by far is no typo of one (a 60 KB name took 0.6 s).
            let near = name.count > ControlProtocol.echoedNameLimit ? ""
                : Spelling.suggestion(for: name, among: Self.names).map { " (did you mean \($0)?)" } ?? ""
            reply(.failure(.unknownCommand("\(ControlProtocol.echoed(name)): no such command\(near)")))
            return
        }
        if origin == .network && !networkAllow.contains(name) {
            reply(.failure(ControlError(.notAllowed, "\(name) is not in the config's mqtt.allow")))
            return
        }
        guard let target else { reply(.failure(ControlError(.unavailable, "nothing is playing"))); return }
        func bad(_ why: String) { reply(.failure(.invalidParameter("\(name): \(why)"))) }
        func done(_ problem: String?) {
            if let problem { reply(.failure(.commandFailed("\(name): \(problem)"))) } else { reply(.success(nil)) }
        }
        let source = origin == .local ? "control" : "mqtt"
        if target.isSynchronized && ["pause", "jump"].contains(name) {
            reply(.failure(ControlError(.notAllowed, "\(name): the catalog playing is synchronized to the wall clock (sync): "
                                        + "every screen plays its cycle in step, so it does not \(name)")))
            return
        }
        switch name {
        case "status":
            reply(.success(status()))
        case "screenshot":
            let mode = args.first?.stringValue ?? "base64"
            guard args.count <= 1, mode == "base64" || mode == "path" else { bad("expected no argument, \"base64\" or \"path\""); return }
            screenshot(target, toFile: mode == "path", reply: reply)
        case "show-overlay":
            guard args.count == 1, let id = Self.idText(args[0]) else { bad("expected an overlay id"); return }
            guard target.hasOverlay(id) else { bad("no overlay \(JSONPath.quoted(id)) in the catalog playing"); return }
            target.post(.showOverlay(id), source: source); reply(.success(nil))
        case "hide-overlays", "pause", "resume", "interrupt-stop":
            guard args.isEmpty else { bad("takes no argument"); return }
            let action: Action = name == "pause" ? .pause : name == "resume" ? .resume : name == "hide-overlays" ? .hideOverlays : .endInterrupt
            target.post(action, source: source); reply(.success(nil))
        case "jump":
            guard (1...2).contains(args.count), let id = Self.idText(args[0]) else { bad("expected an item id and an optional time in seconds"); return }
            let time = args.count == 2 ? args[1].doubleValue : nil
            if args.count == 2, time == nil || !time!.isFinite || time! < 0 { bad("the time must be seconds ≥ 0"); return }
            guard target.hasItem(id) else { bad("no item \(JSONPath.quoted(id)) in the catalog playing"); return }
            target.post(.jump(item: id, time: time), source: source); reply(.success(nil))
        case "set-volume":
            guard args.count == 1, let v = args[0].doubleValue, v.isFinite, (0...1).contains(v) else { bad("expected a gain from 0 to 1"); return }
            target.post(.setVolume(v), source: source); reply(.success(nil))
        case "tap":
            let size = target.screenSize
            guard args.count == 2, let x = args[0].doubleValue, let y = args[1].doubleValue,
                  x >= 0, y >= 0, x < Double(size.width), y < Double(size.height) else {
                bad("expected X and Y, screen pixels inside \(size.width)x\(size.height)"); return
            }
            if target.tap(x: x, y: y) { reply(.success(nil)) } else { done("the display is off") }
        case "reload":
            guard args.isEmpty else { bad("takes no argument"); return }
            done(target.reload())
        case "interrupt-start":
            // interrupt-start playlist NAME [SECONDS] | interrupt-start overlay ID [SECONDS]
            guard (2...3).contains(args.count), let kind = args[0].stringValue, let id = Self.idText(args[1]),
                  kind == "playlist" || kind == "overlay" else {
                bad("expected playlist NAME or overlay ID, then an optional timeout in seconds"); return
            }
            let timeout = args.count == 3 ? args[2].doubleValue : 300
            guard let timeout, timeout.isFinite, timeout > 0 else { bad("the timeout must be seconds > 0"); return }
            if kind == "playlist" && !target.hasPlaylist(id) { bad("no playlist \(JSONPath.quoted(id)) in the catalog playing"); return }
            if kind == "overlay" && !target.hasOverlay(id) { bad("no overlay \(JSONPath.quoted(id)) in the catalog playing"); return }
            let content: InterruptAction.Content = kind == "playlist" ? .playlist(id) : .overlay(id)
            target.post(.interrupt(InterruptAction(content: content, timeout: timeout)), source: source); reply(.success(nil))
        case "import":
            guard args.count == 1, let s = args[0].stringValue, !s.isEmpty else { bad("expected a folder or an https:// URL"); return }
            done(target.startImport(s))
        case "sync-now":
            guard args.isEmpty else { bad("takes no argument"); return }
            done(target.syncNow())
        default:  // observe: the socket's own; over MQTT the events have their own topic
            reply(.failure(ControlError(.unavailable, "\(name): only on the control socket (MQTT publishes events on …/events)")))
        }
    }

    /// The picture on screen as PNG: its bytes in base64 (`{"png_base64", "width", "height"}`), or
    /// a file in `screenshotFolder` (`{"path", "width", "height"}`; the last 5 are kept). The
    /// copy is taken now, on the loop; the PNG is encoded on a thread of its own.
    private func screenshot(_ target: ControlTarget, toFile: Bool, reply: @escaping (CommandResult) -> Void) {
        guard let image = target.screenImage() else { reply(.failure(.commandFailed("screenshot: nothing on screen yet"))); return }
        let folder = screenshotFolder, log = log
        let box = UncheckedReply(reply)
        let hop = onLoop
        Thread.detachNewThread {
            let result: CommandResult
            do {
                let png = try image.withTarget { try PNGWriter.encode($0) }
                var data: [(key: String, value: JSONValue)] = [("width", .int(image.width)), ("height", .int(image.height))]
                if toFile {
                    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
                    let path = folder + "/" + "screenshot-" + EventLog.iso(Date().timeIntervalSince1970).replacingOccurrences(of: ":", with: "") + ".png"
                    try Data(png).write(to: URL(fileURLWithPath: path), options: .atomic)
                    let old = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [])
                        .filter { $0.hasPrefix("screenshot-") && $0.hasSuffix(".png") }.sorted().dropLast(5)
                    for name in old { try? FileManager.default.removeItem(atPath: folder + "/" + name) }
                    data.insert(("path", .string(path)), at: 0)
                } else {
                    data.insert(("png_base64", .string(Data(png).base64EncodedString())), at: 0)
                }
                result = .success(.object(data))
            } catch {
                log.error("screenshot: \(error)")
                result = .failure(.commandFailed("screenshot: \(error)"))
            }
            hop { box.reply(result) }
        }
    }
}

/// A reply closure carried to another thread and back: it is only ever called on the loop's thread.
private final class UncheckedReply: @unchecked Sendable {
    let reply: (CommandResult) -> Void
    init(_ reply: @escaping (CommandResult) -> Void) { self.reply = reply }
}

/// The last warnings and errors logged (for `status`), newest last, at most `capacity`.
public final class RecentProblems: Sendable {
    public struct Entry: Sendable {
        /// UTC seconds.
        public var time: Double
        public var level: String
        public var label: String
        public var message: String
    }
    private let entries = Mutex<[Entry]>([])
    public let capacity: Int
    public init(capacity: Int = 10) { self.capacity = capacity }

    public func add(_ r: LogRecord) {
        let e = Entry(time: Date().timeIntervalSince1970, level: r.level == .error ? "error" : "warning", label: r.label, message: r.message)
        entries.withLock { list in
            list.append(e)
            if list.count > capacity { list.removeFirst(list.count - capacity) }
        }
    }

    public var list: [Entry] { entries.withLock { $0 } }

    /// A sink that writes to `base` and keeps its warnings and errors here.
    public func recording(_ base: LogSink) -> LogSink {
        LogSink(minimumLevel: base.minimumLevel) { [self] r in
            base.emit(r)
            if r.level >= .warning { add(r) }
        }
    }

    var json: JSONValue {
        .array(list.map { e in
            .object([("time", .string(EventLog.iso(e.time))), ("level", .string(e.level)), ("label", .string(e.label)),
                     ("message", .string(e.message))])
        })
    }
}
