import Foundation
import Synchronization
import KMS
import VitrineCore
import CatalogStore

/// One screen of a box that drives several (config `outputs`).
///
/// ```json
/// "outputs": [ { "connector": "HDMI-A-1" },
///              { "connector": "HDMI-A-2", "playlist": "menu" },
///              { "connector": "DP-1", "wall": { "columns": 2, "rows": 1, "column": 1, "row": 0 } } ]
/// ```
/// Each may also set `mode` (`"1280x720@60"`; else the catalog's `display.mode`).
/// Without `playlist` an output mirrors the catalog (its playlist and schedule); with it, it loops
/// that named playlist of the catalog's `playlists` (a catalog without it: the catalog's own
/// playlist, with an error in the log). `wall` is the output's place in a video wall, key by key
/// over the config's `wall` (`WallSettings.over`), and that key by key over the catalog's
/// `display.wall`.
public struct OutputSettings: Sendable, Equatable {
    /// The connector's name, e.g. `HDMI-A-2` (`Connector.named`: `hdmi-a-2` matches too).
    public var connector: String
    /// A name of the catalog's `playlists`; nil: the catalog as it is.
    public var playlist: String?
    /// This output's tile of a wall, key by key over the config's `wall`; nil: the config's `wall`.
    public var wall: WallSettings?
    /// This output's mode (`"1920x1080@60"`, `"preferred"`, `"highest"`, as the manifest's
    /// `display.mode`); nil: the catalog's `display.mode`.
    public var mode: DisplayModeRequest?

    public init(connector: String, playlist: String? = nil, wall: WallSettings? = nil, mode: DisplayModeRequest? = nil) {
        self.connector = connector
        self.playlist = playlist
        self.wall = wall
        self.mode = mode
    }

    /// The wall this output shows a tile of: its own `wall` key by key over the config's
    /// (`WallSettings.over`), or the config's when it has none. (`VideoWall.merge` puts that over
    /// the catalog's `display.wall`.)
    public func wall(over config: WallSettings?) -> WallSettings? { wall?.over(config) ?? config }

    /// Why `name` cannot be a connector's name, or nil. The kernel's names (drm_connector.c: `HDMI-A-1`,
    /// `DP-2`, `eDP-1`, `Virtual-1`) are printable ASCII without spaces; anything else is a typo, and
    /// could break a log or status line.
    public static func connectorProblem(_ name: String) -> String? {
        guard name.unicodeScalars.allSatisfy({ (0x21...0x7e).contains($0.value) }) else {
            return "\(JSONPath.quoted(name)) is not a connector name (the kernel's are printable ASCII without spaces, such as \"HDMI-A-1\")"
        }
        return nil
    }

    /// Reads the config's `outputs` array; each problem names its JSON path (`outputs[1].connector`).
    static func parseList(_ value: JSONValue, at path: String) -> ([OutputSettings], [String]) {
        if case .null = value { return ([], []) }
        guard case let .array(items) = value else { return ([], ["\(path): expected an array of outputs, such as [{\"connector\": \"HDMI-A-1\"}, {\"connector\": \"HDMI-A-2\"}]"]) }
        var list: [OutputSettings] = [], problems: [String] = []
        for (i, item) in items.enumerated() {
            let at = "\(path)[\(i)]"
            guard case let .object(members) = item else { problems.append("\(at): expected an object with a \"connector\""); continue }
            var connector: String?, playlist: String?, wall: WallSettings?, mode: DisplayModeRequest?
            for (k, v) in members {
                switch k {
                case "connector":
                    guard case let .string(s) = v, !s.isEmpty else { problems.append("\(at).connector: expected a connector name such as \"HDMI-A-1\""); continue }
                    if let why = Self.connectorProblem(s) { problems.append("\(at).connector: \(why)"); continue }
                    connector = s
                case "playlist":
                    if case .null = v { continue }
                    guard case let .string(s) = v, !s.isEmpty else { problems.append("\(at).playlist: expected the name of one of the catalog's playlists, or null"); continue }
                    playlist = s
                case "mode":
                    guard case let .string(text) = v, let m = DisplayModeRequest(parsing: text) else {
                        problems.append("\(at).mode: expected \"WxH@Hz\", \"preferred\" or \"highest\""); continue
                    }
                    if let why = m.outOfRange { problems.append("\(at).mode: \(why)"); continue }
                    mode = m
                case "wall":
                    let (settings, found) = WallSettings.parse(v, at: "\(at).wall")
                    problems += found.map { "\($0.path): \($0.reason)" }
                    wall = settings
                default:
                    problems.append("\(at): unknown field \(JSONPath.quoted(k))")
                }
            }
            guard let connector else {
                if !problems.contains(where: { $0.hasPrefix("\(at).connector") }) { problems.append("\(at): \"connector\" is required") }
                continue
            }
            if list.contains(where: { $0.connector.lowercased() == connector.lowercased() }) {
                problems.append("\(at).connector: \(JSONPath.quoted(connector)) is named twice"); continue
            }
            list.append(OutputSettings(connector: connector, playlist: playlist, wall: wall, mode: mode))
        }
        if list.count == 1 && problems.isEmpty {
            problems.append("\(path): one output is the config's \"connector\"; list two or more here")
        }
        return (list, problems)
    }
}

extension Manifest {
    /// The catalog as an output with its own `playlist` plays it: that named playlist, looped, with
    /// no `schedule` (which picks the catalog's playlists by time; `display.power` still applies).
    /// Nil or an unknown name: the catalog as it is (an unknown name is logged).
    func forOutput(playlist name: String?, log: Logger) -> Manifest {
        guard let name else { return self }
        guard let list = playlists[name], !list.isEmpty else {
            let have = playlistNames.isEmpty ? "it has none" : "it has " + playlistNames.joined(separator: ", ")
            log.error("output playlist \(JSONPath.quoted(name)): the catalog has no such playlist (\(have)); this screen plays the catalog's playlist")
            return self
        }
        var m = self
        m.playlist = list
        m.schedule = nil
        m.loop = true
        return m
    }
}

/// The card of a box with several outputs, held open as DRM master for the whole process, and the
/// leases its outputs drive (`KMSDevice.lease`): each output's run opens a lease of its connector,
/// a CRTC and that CRTC's primary plane, so the runs set modes and flip pages on their own files,
/// each with its own page-flip events, and one run failing or restarting touches only its own
/// objects. A connector keeps the CRTC it was first given, so a run that restarts leases the same.
public final class DRMLessor: Sendable {
    /// The card, opened first (the DRM master).
    public let card: KMSDevice
    /// Connector name (as configured) → the objects it leases.
    private let assigned = Mutex<[String: LeaseObjects]>([:])

    /// - Throws: `DRMError` from `open`, or `EACCES` when another process is the card's master (a
    ///   compositor, another player).
    public init(card path: String?) throws {
        guard let path = path ?? KMSDevice.cardPaths().first else { throw DRMOutputError.noDevice }
        card = try KMSDevice(path: path)
        guard card.isMaster else {
            throw DRMError(operation: "lease outputs of \(path)", errno: EACCES, detail: "another process is the card's DRM master")
        }
    }

    /// A lease of `connector`'s objects. Throws `DRMError`: see `KMSDevice.leaseObjects` and `lease`
    /// (`EBUSY` while an earlier lease of the same connector is still open).
    func lease(connector: String, log: Logger) throws -> KMSDevice {
        let objects = try assigned.withLock { map throws in
            if let known = map[connector] { return known }
            let reserved = Set(map.values.map(\.crtcID))
            let objects = try card.leaseObjects(connector: connector, reserved: reserved)
            map[connector] = objects
            return objects
        }
        let device = try card.lease(connector: objects.connectorID, crtc: objects.crtcID, plane: objects.planeID)
        log.info("\(objects.connectorName): DRM lease of connector \(objects.connectorID), CRTC \(objects.crtcID)\(objects.planeID.map { ", plane \($0)" } ?? "")")
        return device
    }
}

/// What each screen of the config's `outputs` is doing, for the status (`vitrine ctl status` and
/// MQTT's: the `outputs` array, `docs/control.md`). The first output's entry is read from its own
/// engine when the status is asked for; each further output's run writes its entry here from its
/// own thread, four times a second while it plays, and when it starts, fails or ends.
public final class OutputReports: Sendable {
    /// One output's entry.
    public struct Report: Sendable, Equatable {
        /// `starting` (the run is opening its output), the engine's `playing`/`paused`/`stopped`,
        /// `slate` (the run shows the slate: nothing of its playlist could play, or its wall tile
        /// is wrong; `error` says why), `failed` (the run could not start or ended with an error:
        /// `error` says why; tried again every 5 s), `waiting` (no playable catalog yet).
        public var state: String = "starting"
        public var connector: String
        /// The output's named playlist; nil: the catalog's own.
        public var playlist: String?
        /// `connected` or `disconnected` (the DRM output's sink, hot-plug); nil on the headless output.
        public var connection: String?
        /// The item on screen (its manifest `id`) and the position in it, in seconds.
        public var item: String?
        public var position: Double?
        /// The output's mode: pixels and vblanks per second.
        public var width = 0, height = 0
        public var refresh = 0.0
        public var framesPresented = 0, framesDropped = 0, vblanks = 0
        /// Why the run failed (`state` `failed`).
        public var error: String?

        public init(connector: String, playlist: String?) {
            self.connector = connector
            self.playlist = playlist
        }

        /// The entry as it stands in `engine` (on the engine's run loop thread).
        mutating func read(_ engine: PlaybackEngine) {
            let slate = engine.fixedSlate ?? engine.timeline.slateMessage
            state = slate == nil ? engine.playbackState.rawValue : "slate"
            error = slate?.description
            connection = engine.output.screenConnection?.statusText
            item = slate == nil ? engine.nowPlaying?.id : nil
            position = slate == nil ? engine.currentTime : nil
            (width, height, refresh) = (engine.output.width, engine.output.height, engine.output.refreshRate)
            let stats = engine.stats
            (framesPresented, framesDropped, vblanks) = (stats.framesPresented, stats.framesDropped, stats.vblanks)
        }

        var json: JSONValue {
            var fields: [(key: String, value: JSONValue)] = [
                ("connector", .string(connector)), ("playlist", playlist.map { .string($0) } ?? .null),
                ("state", .string(state)), ("connection", connection.map { .string($0) } ?? .null),
                ("item", item.map { .string($0) } ?? .null), ("position", position.map { .double($0, digits: 3) } ?? .null),
                ("width", .int(width)), ("height", .int(height)), ("refresh", .double(refresh, digits: 2)),
                ("frames", .object([("presented", .int(framesPresented)), ("dropped", .int(framesDropped)), ("vblanks", .int(vblanks))])),
            ]
            if let error { fields.append(("error", .string(error))) }
            return .object(fields)
        }
    }

    private let entries: Mutex<[Report]>
    /// The catalog the first output's run plays (the manifest as read, before an output's
    /// `playlist`), and how many times it was set: the other outputs follow it.
    private let catalog = Mutex<(generation: Int, directory: String, manifest: Manifest)?>(nil)

    /// The first output's run took `manifest` from `directory` (its start, a reload, an import).
    func publish(_ manifest: Manifest, directory: String) {
        catalog.withLock { c in c = ((c?.generation ?? 0) + 1, directory, manifest) }
    }

    /// The catalog the first output's run plays, and its generation; nil before its first run.
    var published: (generation: Int, directory: String, manifest: Manifest)? { catalog.withLock { $0 } }

    /// One entry per output of `outputs` after the first, in their order.
    public init(outputs: [OutputSettings]) {
        entries = Mutex(outputs.dropFirst().map { Report(connector: $0.connector, playlist: $0.playlist) })
    }

    /// The entries of the second and further outputs, as last written.
    public var others: [Report] { entries.withLock { $0 } }

    /// What is wrong with the other outputs, for systemd's `STATUS=` line: e.g. "HDMI-A-2: no
    /// screen connected; DP-1: failed"; nil when each is starting or playing with its screen.
    public var trouble: String? {
        let notes = others.compactMap { r -> String? in
            switch r.state {
            case "failed": return "\(r.connector): failed"
            case "waiting": return "\(r.connector): no catalog"
            case "slate": return "\(r.connector): nothing plays"
            default: break
            }
            if r.connection == "disconnected" { return "\(r.connector): no screen connected" }
            return nil
        }
        return notes.isEmpty ? nil : notes.joined(separator: "; ")
    }

    /// Changes the entry of `outputs[index + 1]`.
    func update(_ index: Int, _ change: (inout Report) -> Void) {
        entries.withLock { list in if list.indices.contains(index) { change(&list[index]) } }
    }
}

/// Plays the second and further outputs of the config's `outputs`, each on a thread of its own
/// with its own run loop and `Player` (its own engine, timeline, compositor and vblanks), beside the
/// supervisor's run of the first. Each run follows the library: when the first output's run takes a
/// new catalog (a USB stick, a network update), these notice it within a second and take it at
/// their next item boundary. A run that fails (its connector has no screen, its lease is refused)
/// is logged and tried again every 5 s; the other outputs play on.
final class SecondaryScreens: @unchecked Sendable {
    private let outputs: [OutputSettings]
    private let source: ApplianceSupervisor.Source
    private let options: RunOptions
    private let eventLog: EventLog?
    private let log: Logger
    private var threads: [Thread] = []
    private let finished = Atomic<Int>(0)
    /// Each run's entry for the status, in `outputs`' order.
    let reports: OutputReports
    /// `requestStop()` on these runs alone (the player's stop request ends them too).
    private let stopped = Atomic<Bool>(false)

    /// - Parameters:
    ///   - outputs: the config's `outputs` after the first.
    ///   - reports: where each run writes its status entry; `OutputReports(outputs:)` of all the
    ///     outputs (the first included), as `options.outputReports`.
    init(outputs: [OutputSettings], source: ApplianceSupervisor.Source, options: RunOptions, reports: OutputReports,
         eventLog: EventLog?, log: Logger) {
        self.outputs = outputs
        self.source = source
        self.options = options
        self.reports = reports
        self.eventLog = eventLog
        self.log = log
    }

    func start() {
        for (index, output) in outputs.enumerated() {
            let thread = Thread { [self] in
                runLoop(output, index: index)
                finished.add(1, ordering: .relaxed)
            }
            thread.name = "vitrine-\(output.connector)"
            threads.append(thread)
            thread.start()
        }
    }

    /// Ends runs that are waiting to be tried again (a running `Player` ends on `Player.requestStop()`).
    func requestStop() { stopped.store(true, ordering: .relaxed) }

    private var isStopping: Bool { Player.stopRequested || stopped.load(ordering: .relaxed) }

    /// Waits (after a stop request) for the runs to end, at most `timeout` seconds.
    func join(timeout: Double = 5) {
        let deadline = Date().addingTimeInterval(timeout)
        while finished.load(ordering: .relaxed) < threads.count && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
    }

    /// The catalog to play now: the first output's (`OutputReports.published`), else the library's
    /// (current, else previous), or the fixed folder, read here.
    private func catalog() -> (directory: String, manifest: Manifest)? {
        if let p = reports.published { return (p.directory, p.manifest) }
        let directory: String, path: String
        switch source {
        case .library(let library):
            guard let found = library.resolve().catalog else { return nil }
            (directory, path) = (found.directory, found.manifestPath)
        case let .catalog(folder, manifest):
            (directory, path) = (folder, manifest)
        }
        guard let manifest = ManifestParser.load(path: path).manifest
                ?? FileManager.default.contents(atPath: path).flatMap({ ManifestParser.parse([UInt8]($0), catalogDirectory: nil).manifest }) else { return nil }
        return (directory, manifest)
    }

    private func runLoop(_ output: OutputSettings, index: Int) {
        let log = log.child(output.connector)
        var o = options
        o.connector = output.connector
        o.playlist = output.playlist
        o.wall = output.wall(over: options.wall)
        o.outputMode = output.mode
        o.outputs = []
        o.outputReports = nil
        o.isSecondaryOutput = true
        o.audioDevice = "none"
        o.recordPath = nil
        o.snapshotTimes = []
        o.vblankLogPath = nil
        func failed(_ state: String, _ why: String) {
            reports.update(index) { $0.state = state; $0.error = why; $0.item = nil; $0.position = nil }
        }
        while !isStopping {
            guard let (directory, manifest) = catalog() else {
                log.error("no playable catalog for this screen yet; looking again in 5 s")
                failed("waiting", "no playable catalog yet")
                pause(5); continue
            }
            reports.update(index) { $0.state = "starting"; $0.error = nil }
            let player = Player(manifest: manifest, catalogDirectory: directory, options: o, log: log)
            player.eventLog = eventLog
            weak var engine: PlaybackEngine?
            player.configureEngine = { engine = $0 }
            // The first output's run takes new catalogs (a stick, an update, `ctl reload`); this one
            // follows it: at its next item boundary, or with a new run when the display changes.
            var lastReport = -Double.infinity, seen = reports.published?.generation ?? 0
            var playing = (directory: directory, manifest: manifest)
            player.nextCatalog = { [self] in
                let now = monotonicNow()
                if now - lastReport >= 0.25, let engine {
                    lastReport = now
                    reports.update(index) { $0.read(engine) }
                }
                guard let p = reports.published, p.generation != seen else { return nil }
                seen = p.generation
                // The first run's start publishes the catalog this run may have read itself.
                guard p.directory != playing.directory || p.manifest != playing.manifest else { return nil }
                playing = (p.directory, p.manifest)
                log.info("following the first output's catalog \(p.directory) (version \(p.manifest.version))")
                return CatalogSwitch(manifest: p.manifest, directory: p.directory, immediate: false)
            }
            do {
                let stats = try player.run()
                log.info("run ended: \(stats.vblanks) vblanks")
                if let engine { reports.update(index) { $0.read(engine) } }
                reports.update(index) {
                    $0.state = "stopped"; $0.connection = nil
                    ($0.framesPresented, $0.framesDropped, $0.vblanks) = (stats.framesPresented, stats.framesDropped, stats.vblanks)
                }
                if player.endedForDisplayChange || player.endedForScreenChange { continue }
                if options.duration != nil { return }
            } catch {
                log.error("\(error); this screen is tried again in 5 s, the others play on")
                failed("failed", "\(error)")
            }
            pause(5)
        }
    }

    /// Sleeps up to `seconds`, less when a stop is asked for.
    private func pause(_ seconds: Double) {
        let end = monotonicNow() + seconds
        while monotonicNow() < end && !isStopping { Thread.sleep(forTimeInterval: 0.1) }
    }
}
