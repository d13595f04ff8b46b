import Foundation
import SystemSupport
import Media
import VitrineCore

/// The commands' view of one `Player` run (`ControlTarget`): its engine, schedule and output, on
/// the run loop's thread.
final class RunControl: ControlTarget {
    private unowned let engine: PlaybackEngine
    private unowned let scheduled: ScheduledPlayback
    private let importer: ImportService?
    /// Reads the catalog again and hands it to the run loop; nil, or why not.
    private let requestReload: () -> String?
    /// The catalog folder playing (a library generation, or `--catalog`).
    var catalogDirectory: String
    /// A box with several screens (config `outputs`): this run's connector and playlist, and the
    /// other outputs' entries; the status then has `outputs`, this run's entry first.
    var outputs: (first: OutputReports.Report, others: OutputReports)?

    init(engine: PlaybackEngine, scheduled: ScheduledPlayback, importer: ImportService?, catalogDirectory: String,
         reload: @escaping () -> String?) {
        self.engine = engine
        self.scheduled = scheduled
        self.importer = importer
        self.catalogDirectory = catalogDirectory
        self.requestReload = reload
    }

    private var manifest: Manifest { scheduled.director.manifest }

    func runStatus() -> [(key: String, value: JSONValue)] {
        let m = manifest
        let stats = engine.stats
        var item: JSONValue = .null
        if let now = engine.nowPlaying {
            item = .object([("id", .string(now.id)), ("src", .string(now.src)),
                            ("position", engine.currentTime.map { .double($0) } ?? .null),
                            ("duration", engine.totalTime.map { .double($0) } ?? .null)])
        }
        let director = scheduled.director
        var schedule: [(key: String, value: JSONValue)] = [
            ("entry", .text(director.selection.entryID)), ("playlist", .string(director.selection.playlist)),
            ("clockSet", .bool(!director.clockUnset)),
        ]
        if let i = director.interrupt {
            switch i.action.content {
            case .playlist(let p): schedule.append(("interrupt", .object([("playlist", .string(p))])))
            case .overlay(let o): schedule.append(("interrupt", .object([("overlay", .string(o))])))
            }
        }
        let output = engine.output
        var display: [(key: String, value: JSONValue)] = [
            ("power", .string(engine.displayIsOff ? "off" : "on")), ("output", .string(output.summary)),
            ("width", .int(output.width)), ("height", .int(output.height)), ("refresh", .double(output.refreshRate, digits: 2))]
        if let screen = output.screenConnection {
            // Hot-plug: "disconnected" while the sink is gone (the TV off at the wall); playback goes on.
            display += [("connection", .string(screen.statusText)), ("connector", .string(screen.connector))]
        }
        var fields: [(key: String, value: JSONValue)] = [
            ("catalog", .object([("version", .int(m.version)), ("title", .string(m.title)), ("directory", .string(catalogDirectory))])),
            ("item", item),
            ("state", .string(engine.playbackState.rawValue)),
            ("schedule", .object(schedule)),
            ("display", .object(display)),
            ("frames", .object([("presented", .int(stats.framesPresented)), ("dropped", .int(stats.framesDropped)),
                                ("vblanks", .int(stats.vblanks))])),
            ("xruns", .int(stats.xruns)),
            ("volume", .double(engine.volume)),
        ]
        if let sync = engine.sync {
            // Where the cycle stands by the wall clock, and how far the sound heard is from it.
            let c = engine.catalogTime
            let here = sync.cycle.locate(sinceEpoch: sync.sinceEpoch(catalog: c))
            var s: [(key: String, value: JSONValue)] = [
                ("epoch", .string(EventLog.iso(Double(sync.cycle.epoch)))), ("cycle", .double(sync.cycle.length, digits: 3)),
                ("pass", .int(here.pass)), ("slot", .string(sync.cycle.slots[here.index].id)),
                ("slotTime", .double(here.offset, digits: 3)),
            ]
            if let a = engine.audio {
                s.append(("soundOffsetMs", .double((a.catalogTime(at: engine.lastHostTime) - c) * 1000, digits: 3)))
                s.append(("soundStretchPpm", .int(a.correctionPPM.load(ordering: .relaxed))))
            }
            fields.append(("sync", .object(s)))
        }
        if let outputs {
            var first = outputs.first
            first.read(engine)
            fields.append(("outputs", .array([first.json] + outputs.others.others.map(\.json))))
        }
        if let importer {
            fields.append(("importing", .bool(importer.isImporting)))
            fields.append(("lastImport", importer.lastImportStatus))
            fields.append(("lastPoll", importer.lastPollStatus))
        }
        return fields
    }

    func screenImage() -> ImageBuffer? { engine.output.frontBufferCopy() }

    var isSynchronized: Bool { engine.sync != nil }

    /// Through the engine's dispatcher, as a cue point or a button: an `action` event, the bus
    /// (`jump`, interrupts), and the engine's own share after the next vblank.
    func post(_ action: Action, source: String) {
        engine.dispatcher.dispatch(action, source: source)
        engine.presenter.wake()
    }

    var screenSize: (width: Int, height: Int) { (engine.output.width, engine.output.height) }

    /// A touch down and up 50 ms apart at panel pixel (x, y): the normalized point libinput would
    /// report, through the inverse of the calibration matrix, so the router's transform (calibration,
    /// then rotation) lands on that pixel.
    func tap(x: Double, y: Double) -> Bool {
        guard !engine.displayIsOff, let input = engine.input else { return false }
        let t = input.transform
        let u = x / Double(t.screenWidth), v = y / Double(t.screenHeight)
        let c = t.calibration
        let det = c.a * c.e - c.b * c.d
        var n = (x: u, y: v)
        if abs(det) > 1e-12 {
            n = ((c.e * (u - c.c) - c.b * (v - c.f)) / det, (c.a * (v - c.f) - c.d * (u - c.c)) / det)
        }
        let now = monotonicNow()
        let slot = 31  // beyond the slots of real touchscreens (libinput numbers them from 0)
        engine.handleInput(.touchDown(slot: slot, x: n.x, y: n.y, time: now))
        engine.handleInput(.touchUp(slot: slot, time: now + 0.05))
        return true
    }

    func hasItem(_ id: String) -> Bool { manifest.allItems.contains { $0.id == id } }
    func hasOverlay(_ id: String) -> Bool { manifest.overlays[id] != nil }
    func hasPlaylist(_ name: String) -> Bool { name == "default" || manifest.playlists[name] != nil }

    func reload() -> String? { requestReload() }

    func startImport(_ source: String) -> String? {
        guard let importer else { return "imports need the library (vitrine run without --catalog)" }
        return importer.startImport(source: source)
    }

    func syncNow() -> String? {
        guard let importer else { return "network updates need the library (vitrine run without --catalog)" }
        return importer.syncNowIfConfigured()
    }
}
