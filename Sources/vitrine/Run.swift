// `vitrine run` and `vitrine play`: options, and the exit code of the appliance's runs (the
// supervisor itself, library, slate, imports and display restarts, is `ApplianceSupervisor`).

import Foundation
import Vitrine
import VitrineCore
import CatalogStore
import FileIO

let outputOptions: Set<String> = ["events", "output", "record", "snapshot-at", "snapshot-dir", "duration", "audio-device",
                                  "connector", "card", "config", "log-file", "clock", "timezone", "vblank-log",
                                  "test-display-ppm", "test-audio-ppm"]
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
    o.vblankLogPath = args.options["vblank-log"]
    for (key, keyPath) in [("test-display-ppm", \RunOptions.displayDriftPPM), ("test-audio-ppm", \RunOptions.audioDriftPPM)] {
        guard let text = args.options[key] else { continue }
        guard let ppm = Double(text), abs(ppm) <= 1000 else { throw UsageError(description: "--\(key): expected parts per million within ±1000, got \(text)") }
        o[keyPath: keyPath] = ppm
    }
    if args.flags.contains("realtime") { o.realtime = true }
    if let a = args.options["audio-device"] { o.audioDevice = a }
    if let c = args.options["connector"] { o.connector = c }
    if let c = args.options["card"] { o.card = c }
    if let z = args.options["timezone"] {
        do { _ = try ZoneRules(identifier: z) } catch { throw UsageError(description: "--timezone: \(error)") }
        o.timezone = z
    }
    if let c = args.options["clock"] {
        guard parseInstant(c, zone: .utc) != nil else {
            throw UsageError(description: "--clock: expected an ISO 8601 time such as 2026-12-07T10:59:50Z, 2026-12-07T11:59:50+01:00 or 2026-12-07T10:59:50 (local), got \(c)")
        }
        o.clock = c
    }
    if o.clock != nil && o.output == .auto { o.output = .headless }
    if o.output == .drm && o.clock != nil {
        throw UsageError(description: "--clock runs the headless output's virtual clock; a screen (--output drm) reads the real one")
    }
    if o.output == .drm && (o.recordPath != nil || !o.snapshotTimes.isEmpty) {
        throw UsageError(description: "--record and --snapshot-at need the headless output")
    }
    if o.audioDevice != nil && o.audioDevice != "none" && (o.recordPath != nil || !o.snapshotTimes.isEmpty) {
        throw UsageError(description: "--record and --snapshot-at play into memory and cannot be combined with --audio-device \(o.audioDevice!) (only --audio-device none)")
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

/// The exit code of the appliance's last run (sysexits): 0 played, 65 nothing could play, 69 no
/// display, 1 another error.
func exitCode(_ outcome: ApplianceSupervisor.Outcome) -> Exit {
    switch outcome {
    case .played: return .ok
    case .nothingPlayable: return .dataError
    case .unavailable: return .unavailable
    case .failed: return .failure
    }
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
    let options = try runOptions(args)
    let config = try loadConfig(args)
    let source: ApplianceSupervisor.Source = location.map { .catalog(folder: $0.catalog, manifest: $0.manifest) }
        ?? .library(CatalogLibrary(path: args.options["library"] ?? config.library))
    // The last warnings and errors, for the status of the control socket and MQTT.
    let problems = RecentProblems()
    let base = try makeLog(args)
    let log = Logger(label: base.label, sink: problems.recording(base.sink))
    Player.installSignalHandlers()
    // One event log for the whole run: the player's events and the imports (it rotates itself).
    let eventLog: EventLog?
    do { eventLog = try options.eventsPath.map { try EventLog(path: $0) } } catch {
        throw UsageError(description: "--events: cannot open \(options.eventsPath ?? ""): \(error.localizedDescription)")
    }
    let supervisor = ApplianceSupervisor(source: source, options: options, importSettings: config.importSettings,
                                         update: config.update, updateDefaults: config.updateDefaults,
                                         mediaRoot: args.options["media-root"] ?? ImportService.defaultMediaRoot,
                                         eventLog: eventLog,
                                         fleet: FleetService(mqtt: config.mqtt, control: config.control, library: args.options["library"] ?? config.library,
                                                             problems: problems, log: log.child("fleet")),
                                         log: log)
    return exitCode(supervisor.run())
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
    return exitCode(ApplianceSupervisor.play(manifest, catalog: "/", options: options, log: log))
}
