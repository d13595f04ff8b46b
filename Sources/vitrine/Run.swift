// `vitrine run` and `vitrine play`: options, the appliance's supervisor loop (library, slate,
// imports, display restarts) and the exit code of a run.

import Foundation
import Vitrine
import VitrineCore
import CatalogStore
import FileIO

let outputOptions: Set<String> = ["events", "output", "record", "snapshot-at", "snapshot-dir", "duration", "audio-device",
                                  "connector", "card", "config", "log-file"]
let outputFlags: Set<String> = ["realtime", "verbose"]

/// The log: `--log-file FILE` (timestamped lines), else standard error (timestamped unless it is
/// the journal's stream).
func makeLog(_ args: Arguments) throws -> Logger {
    let level: LogRecord.Level = args.flags.contains("verbose") ? .debug : .info
    if let path = args.options["log-file"] {
        do { return Logger(label: "vitrine", sink: try LogSink.file(path, minimumLevel: level)) } catch {
            throw UsageError(description: "--log-file: \(error)")
        }
    }
    return Logger(label: "vitrine", sink: .standardError(minimumLevel: level))
}

/// The appliance config: `--config FILE`, else /etc/vitrine/config.json when present, else defaults.
func loadConfig(_ args: Arguments) throws -> PlayerConfig {
    let configPath = args.options["config"] ?? (FileManager.default.fileExists(atPath: PlayerConfig.defaultPath) ? PlayerConfig.defaultPath : nil)
    guard let configPath else { return PlayerConfig() }
    guard let data = FileManager.default.contents(atPath: configPath) else {
        throw UsageError(description: "cannot read config \(configPath)")
    }
    do { return try PlayerConfig(json: [UInt8](data)) } catch {
        throw UsageError(description: "config \(configPath):\n\(error)")
    }
}

func runOptions(_ args: Arguments) throws -> RunOptions {
    var o = RunOptions()
    try loadConfig(args).apply(to: &o)
    if let s = args.options["output"] {
        guard let k = RunOptions.OutputKind(rawValue: s), k != .auto || s == "auto" else {
            throw UsageError(description: "--output: expected drm or headless, got \(s)")
        }
        o.output = k
    }
    o.recordPath = args.options["record"]
    o.eventsPath = args.options["events"]
    if let s = args.options["snapshot-at"] {
        o.snapshotTimes = try s.split(separator: ",").map {
            guard let d = Double($0.trimmingCharacters(in: .whitespaces)), d >= 0 else {
                throw UsageError(description: "--snapshot-at: expected seconds, got \($0)")
            }
            return d
        }
    }
    if let d = args.options["snapshot-dir"] { o.snapshotDirectory = d }
    o.duration = try args.double("duration")
    if args.flags.contains("realtime") { o.realtime = true }
    if let a = args.options["audio-device"] { o.audioDevice = a }
    if let c = args.options["connector"] { o.connector = c }
    if let c = args.options["card"] { o.card = c }
    if o.output == .drm && (o.recordPath != nil || !o.snapshotTimes.isEmpty) {
        throw UsageError(description: "--record and --snapshot-at need the headless output")
    }
    if o.audioDevice != nil && o.audioDevice != "none" && (o.recordPath != nil || !o.snapshotTimes.isEmpty) {
        throw UsageError(description: "--record and --snapshot-at play into memory and cannot be combined with --audio-device")
    }
    if let r = o.recordPath, (r as NSString).pathExtension.lowercased() != "mkv" {
        throw UsageError(description: "--record: the recording is Matroska (H.264 + PCM); give a .mkv file name, not \(r)")
    }
    if let bad = o.snapshotTimes.first(where: { !$0.isFinite }) {
        throw UsageError(description: "--snapshot-at: \(bad) is not a time")
    }
    // Snapshots alone: stop after the last one instead of running on as fast as possible.
    if o.duration == nil, o.recordPath == nil, let last = o.snapshotTimes.max() { o.duration = last + 0.1 }
    if !o.snapshotTimes.isEmpty {
        try FileManager.default.createDirectory(atPath: o.snapshotDirectory, withIntermediateDirectories: true)
    }
    if let r = o.recordPath {
        let dir = (r as NSString).deletingLastPathComponent
        if !dir.isEmpty { try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true) }
    }
    return o
}

/// How a run ended, for the caller of `play`.
struct RunEnd {
    /// For an imported catalog with other display settings: the caller plays the library again.
    var forDisplayChange = false
    /// Catalog seconds the run played (what `--duration` has used up).
    var catalogSeconds = 0.0
}

/// Plays one run and returns its exit code: 65 when nothing of the catalog could play (the slate
/// was asked for, or every item that was tried failed), whatever the options; 0 otherwise.
/// `ended` says whether it ended for a display change, and how long it played.
func play(manifest: Manifest, catalog: String, options: RunOptions, log: Logger, slate: SlateMessage? = nil,
          importer: ImportService? = nil, eventLog: EventLog? = nil, ended: inout RunEnd) -> Exit {
    do {
        let player = Player(manifest: manifest, catalogDirectory: catalog, options: options, log: log, slateMessage: slate)
        player.eventLog = eventLog
        if let importer {
            // USB sticks and `vitrine import` requests, watched on the run's loop; a finished import
            // hands its catalog over (at the next item boundary, or at once).
            player.importer = importer
            // "Playing it after the current item" becomes "Playing now" when it is.
            player.catalogStarted = { importer.catalogStarted() }
        }
        let stats = try player.run()
        say(stats.description)
        ended = RunEnd(forDisplayChange: player.endedForDisplayChange, catalogSeconds: stats.catalogSeconds)
        if ended.forDisplayChange { return .ok }
        if slate != nil { return .dataError }
        // Nothing in the playlist could play at all: invalid media.
        if stats.itemsStarted == 0 && stats.itemsFailed > 0 { return .dataError }
        return .ok
    } catch let e as PlayerError {
        log.error("\(e)")
        if case .invalidConfiguration = e { return .dataError }
        return .unavailable
    } catch {
        log.error("\(error)")
        return .failure
    }
}

func play(manifest: Manifest, catalog: String, options: RunOptions, log: Logger, slate: SlateMessage? = nil,
          importer: ImportService? = nil, eventLog: EventLog? = nil) -> Exit {
    var ended = RunEnd()
    return play(manifest: manifest, catalog: catalog, options: options, log: log, slate: slate, importer: importer,
                eventLog: eventLog, ended: &ended)
}

/// The manifest of a catalog folder: `manifest.json`, or `catalog.json` (a library generation).
func manifestPath(inCatalog catalog: String) -> String {
    let manifest = (catalog as NSString).appendingPathComponent("manifest.json")
    let accepted = (catalog as NSString).appendingPathComponent("catalog.json")
    return !FileManager.default.fileExists(atPath: manifest) && FileManager.default.fileExists(atPath: accepted) ? accepted : manifest
}

/// `--catalog PATH`: a catalog folder, or a manifest file in one (its folder is the catalog).
/// - Throws: `InputError` (exit 66) when PATH does not exist.
func catalogLocation(_ path: String) throws -> (catalog: String, manifest: String) {
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
        throw InputError(description: "catalog not found: \(path) (no such folder)")
    }
    if isDirectory.boolValue { return (path, manifestPath(inCatalog: path)) }
    let folder = (path as NSString).deletingLastPathComponent
    return (folder.isEmpty ? "." : folder, path)
}

func commandRun(_ argv: [String]) throws -> Exit {
    let args = try Arguments(argv, valued: outputOptions.union(["catalog", "library", "media-root"]), flags: outputFlags)
    if args.wantsHelp { say(runHelp); return .ok }
    guard args.positional.isEmpty else { throw UsageError(description: "unexpected argument \(args.positional[0])") }
    if args.options["catalog"] != nil && args.options["library"] != nil {
        throw UsageError(description: "give --catalog or --library, not both")
    }
    let location = try args.options["catalog"].map(catalogLocation)
    var options = try runOptions(args)
    let library = location == nil ? CatalogLibrary(path: try args.options["library"] ?? loadConfig(args).library) : nil
    let log = try makeLog(args)
    Player.installSignalHandlers()
    // Playing the library: watch for USB sticks and `vitrine import` requests, and hold the player lock
    // (so `vitrine import` hands its stick over instead of importing beside the player).
    var importer: ImportService?
    var playerLock: FileDescriptor?
    // One event log for the whole run: the player's events and the imports (it rotates itself).
    let eventLog: EventLog?
    do { eventLog = try options.eventsPath.map { try EventLog(path: $0) } } catch {
        throw UsageError(description: "--events: cannot open \(options.eventsPath ?? ""): \(error.localizedDescription)")
    }
    if let library {
        try? FileManager.default.createDirectory(atPath: library.path, withIntermediateDirectories: true)
        // `vitrine import` takes the lock for an instant to see whether a player runs: try for a second.
        playerLock = ImportService.lockAsPlayer(library: library.path, retryingFor: 1)
        if playerLock == nil {
            log.warning("library \(library.path): another player holds \(ImportService.playerLockPath(library: library.path)); "
                        + "this one does not import USB sticks")
        } else {
            importer = ImportService(library: library, settings: try loadConfig(args).importSettings,
                                     mediaRoot: args.options["media-root"] ?? ImportService.defaultMediaRoot,
                                     eventLog: eventLog, log: log.child("import"))
        }
    }
    defer { _ = playerLock }
    var firstLook = true
    while true {
        let catalog: String, manifestPath: String
        var slate: SlateMessage?
        if let library {
            // Start-up: clean up after an interrupted import, then current, else previous, else the slate.
            let resolution = firstLook ? library.openForPlayback() : library.resolve()
            firstLook = false
            for skipped in resolution.skipped { log.warning("library \(library.path): \(skipped)") }
            if let found = resolution.catalog {
                log.info("library \(library.path): playing \(found.slot.rawValue), \(found.summary)")
                catalog = found.directory
                manifestPath = found.manifestPath
            } else {
                catalog = library.path
                manifestPath = library.path + "/current/catalog.json"
                slate = .noCatalog(library: library.path, skipped: resolution.skipped)
                log.error("library \(library.path): no playable catalog; showing the slate and checking again in 10 s")
            }
        } else {
            (catalog, manifestPath) = location!
        }
        if slate == nil, !FileManager.default.fileExists(atPath: manifestPath) {
            slate = .missingManifest(manifestPath)
            log.error("\(manifestPath): no such file; showing the slate and checking again in 10 s")
        }
        if slate == nil {
            // Structure first; missing media is only logged here, because the player skips such items and
            // keeps the rest of the catalog on screen.
            let result = ManifestParser.load(path: manifestPath)
            let fatal = result.errors.filter { !$0.reason.hasPrefix("file not found") && !$0.reason.hasPrefix("file is empty") && !$0.reason.hasPrefix("not a regular file") }
            for p in result.problems { log.log(fatal.contains(p) ? .error : .warning, "\(manifestPath): \(p)", [:]) }
            if fatal.isEmpty, let manifest = result.manifest ?? reparseIgnoringFiles(manifestPath) {
                var ended = RunEnd()
                let code = play(manifest: manifest, catalog: catalog, options: options, log: log, importer: importer,
                                eventLog: eventLog, ended: &ended)
                // An imported catalog with other display settings: play the library again, with them,
                // for what is left of --duration and the snapshot times.
                guard ended.forDisplayChange, library != nil, !Player.stopRequested else { return code }
                if let d = options.duration {
                    if d - ended.catalogSeconds <= 1e-6 { return code }
                    options.duration = d - ended.catalogSeconds
                }
                options.snapshotTimes = options.snapshotTimes.filter { $0 >= ended.catalogSeconds }.map { $0 - ended.catalogSeconds }
                continue
            }
            // Invalid: show the slate with the errors, then read the manifest again in 10 s.
            log.error("invalid manifest: \(fatal.count) problem(s); showing the slate and checking again in 10 s")
            slate = .invalidManifest(manifestPath, problems: fatal.map(\.description))
        }
        var slateOptions = options
        // Recording or snapshotting: one slate for the whole run (a re-check would restart the file).
        let once = options.recordPath != nil || !options.snapshotTimes.isEmpty
        slateOptions.duration = once ? (options.duration ?? 10) : min(options.duration ?? 10, 10)
        if once {
            return play(manifest: Manifest(), catalog: catalog, options: slateOptions, log: log, slate: slate, importer: importer, eventLog: eventLog)
        }
        let code = play(manifest: Manifest(), catalog: catalog, options: slateOptions, log: log, slate: slate, importer: importer, eventLog: eventLog)
        if code != .dataError || Player.stopRequested { return code == .ok ? .dataError : code }
        if let d = options.duration {
            if d <= 10 { return .dataError }
            options.duration = d - 10
        }
        options.snapshotTimes = options.snapshotTimes.filter { $0 >= 10 }.map { $0 - 10 }
    }
}

func reparseIgnoringFiles(_ path: String) -> Manifest? {
    guard let data = FileManager.default.contents(atPath: path) else { return nil }
    return ManifestParser.parse([UInt8](data), catalogDirectory: nil).manifest
}

extension Logger {
    func log(_ level: LogRecord.Level, _ message: String, _ md: [String: String]) {
        switch level {
        case .debug: debug(message, md)
        case .info: info(message, md)
        case .warning: warning(message, md)
        case .error: error(message, md)
        }
    }
}

func commandPlay(_ argv: [String]) throws -> Exit {
    let args = try Arguments(argv, valued: outputOptions.union(["image-duration", "fit", "rotation", "mode"]), flags: outputFlags.union(["once"]))
    if args.wantsHelp { say(playHelp); return .ok }
    guard !args.positional.isEmpty else { throw UsageError(description: "play needs at least one FILE") }
    let options = try runOptions(args)
    let imageDuration = try args.double("image-duration") ?? 5
    var display = DisplaySettings()
    if let f = args.options["fit"] {
        guard let fit = Fit(rawValue: f) else { throw UsageError(description: "--fit: expected contain, cover or stretch") }
        display.fit = fit
    }
    if let r = args.options["rotation"] {
        guard let v = Int(r), let rot = Rotation(rawValue: v) else { throw UsageError(description: "--rotation: expected 0, 90, 180 or 270") }
        display.rotation = rot
    }
    if let m = args.options["mode"] {
        guard let mode = DisplayModeRequest(parsing: m) else { throw UsageError(description: "--mode: expected WxH@Hz, preferred or highest") }
        if let why = mode.outOfRange { throw UsageError(description: "--mode: \(why)") }
        display.mode = mode
    }
    let images: Set<String> = ["png", "jpg", "jpeg", "bmp", "gif", "webp"]
    let audioExts: Set<String> = ["mp3", "opus", "ogg", "oga", "wav", "flac", "m4a", "aac", "mp2"]
    var items: [PlaylistItem] = []
    for (i, f) in args.positional.enumerated() {
        let ext = (f as NSString).pathExtension.lowercased()
        let path = (f as NSString).isAbsolutePath ? f : FileManager.default.currentDirectoryPath + "/" + f
        let type: PlaylistItem.Kind = images.contains(ext) ? .image : audioExts.contains(ext) ? .audio : .video
        items.append(PlaylistItem(id: "file\(i + 1)", type: type, src: path, duration: type == .image ? imageDuration : nil))
    }
    let manifest = Manifest(title: "ad-hoc", display: display, loop: !args.flags.contains("once"), playlist: items)
    let log = try makeLog(args)
    Player.installSignalHandlers()
    return play(manifest: manifest, catalog: "/", options: options, log: log)
}
