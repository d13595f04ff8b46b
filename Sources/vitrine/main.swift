// vitrine: the signage player's command line. See `vitrine --help`.
import Foundation
import Vitrine
import VitrineCore
import CatalogStore
import FileIO

/// sysexits(3) codes.
enum Exit: Int32 {
    case ok = 0, failure = 1, usage = 64, dataError = 65, unavailable = 69
}

let version = "0.1.0"

let topHelp = """
usage: vitrine <command> [options]

Plays a signage catalog (a folder with manifest.json and its media) on a DRM/KMS screen with
ALSA sound, or into a headless output that can record and take snapshots.

commands:
  run        play a catalog folder (or the library's current catalog) in a loop
  import     copy a USB stick's catalog into the library, verified, and switch to it
  play       play files given on the command line (an ad-hoc playlist)
  validate   check a manifest and report every problem with its JSON path
  probe      list DRM devices, connectors, modes, planes, ALSA PCMs, and what is missing
  bench      decode, convert and present one file untimed; print frames per second

Run `vitrine <command> --help` for a command's options.
exit codes: 0 ok, 64 usage, 65 invalid manifest or media, 69 device unavailable, 1 other.
"""

let outputHelp = """
  --events FILE            append every player event to FILE as JSON lines (proof of play)
  --output drm|headless    output (default: drm when /dev/dri/card* exists, else headless)
  --record FILE            headless: write the screen and sound to FILE (.mkv), as fast as possible
  --snapshot-at T1,T2,…    headless: write PNG snapshots at these catalog times (seconds)
  --snapshot-dir DIR       where snapshots go (default: .)
  --duration S             stop after S seconds of catalog time
  --realtime               headless: pace vblanks in real time even when recording
  --audio-device NAME      ALSA PCM name (overrides the manifest); `none` for no sound
  --connector NAME         DRM connector, e.g. HDMI-A-1 (default: first connected)
  --card PATH              DRM device (default: first /dev/dri/card*)
  --config FILE            appliance config (default: /etc/vitrine/config.json if present)
  --verbose                debug logging
"""

let runHelp = """
usage: vitrine run [--catalog DIR | --library DIR] [options]

Plays DIR/manifest.json (or DIR/catalog.json). Without --catalog, plays the library's current
catalog (config `library`, default /var/lib/vitrine), or its previous one when current is broken.
Missing or broken media files are logged and skipped; when nothing can play, a slate says why and
the player keeps checking. Prints frames presented, frames dropped, xruns and the A/V offset at exit.

options:
  --catalog DIR            the catalog folder (holds manifest.json or catalog.json)
  --library DIR            the catalog library (default: config `library`)
  --media-root DIR         where USB sticks are mounted (default: /run/vitrine/media); the player
                           imports each stick that appears there with vitrine/manifest.json
\(outputHelp)
"""

let importHelp = """
usage: vitrine import PATH [--library DIR] [--config FILE] [--events FILE] [--quiet] [--standalone]
       vitrine import --check [--deep] [--library DIR] [--config FILE]

Copies the catalog on a USB stick into the library and switches to it. PATH is the stick's mount
point (holding vitrine/) or the vitrine/ folder. The manifest must give size and sha256 for every
file; vitrine/manifest.json.minisig is verified against config import.trustedKeys. Every file is
hashed while it is copied; the playing catalog is untouched until the new one is whole on disk.
When a player is playing this library (it holds <library>/player.lock), the import runs in the
player, which shows its progress and result on screen and switches at the next item boundary;
this command waits for its answer and exits the same way.

--check cleans up after an interrupted import and prints what would play (--deep also re-hashes
every file).

options:
  --library DIR            the catalog library (default: config `library`, /var/lib/vitrine)
  --config FILE            appliance config (default: /etc/vitrine/config.json if present)
  --events FILE            append importStarted/importFinished JSON lines to FILE
  --quiet                  no progress lines on stderr
  --standalone             import here even when a player is running

exit codes: 0 switched (--check: a catalog can play), 65 refused (reasons on stderr; --check:
nothing can play), 1 failed (I/O error, disk full, another import running), 64 usage.
"""

let playHelp = """
usage: vitrine play FILE… [options]

Plays the files in order as an ad-hoc playlist (video, audio, or images for --image-duration s).

options:
  --image-duration S       seconds to show each image (default 5)
  --once                   stop after the last file instead of looping
  --fit contain|cover|stretch   (default contain)
  --rotation 0|90|180|270  (default 0)
  --mode WxH@Hz            screen mode (headless size)
\(outputHelp)
"""

let validateHelp = """
usage: vitrine validate MANIFEST

Checks MANIFEST (a manifest.json, or a folder holding one) and every media file it names.
Prints each problem as `path: reason`. Exit 0 when valid, 65 when not.
"""

let probeHelp = """
usage: vitrine probe

Lists DRM devices (driver, capabilities, connectors, modes, CRTCs, planes), ALSA cards and PCMs,
and what is missing for each output.
"""

let benchHelp = """
usage: vitrine bench FILE [--mode WxH]

Decodes FILE, converts every frame to XRGB8888 and presents it on the headless output with no
clock. Prints frames, seconds and frames per second. Used by `make bench`.
"""

struct UsageError: Error, CustomStringConvertible { var description: String }

/// A minimal argument reader: kebab-case long options, `--help`, values in the next argument.
struct Arguments {
    var rest: [String]
    var positional: [String] = []
    var options: [String: String] = [:]
    var flags: Set<String> = []

    init(_ args: [String], valued: Set<String>, flags allowed: Set<String>) throws {
        rest = []
        var i = 0
        while i < args.count {
            let a = args[i]
            if a.hasPrefix("--") {
                var name = String(a.dropFirst(2))
                var value: String? = nil
                if let eq = name.firstIndex(of: "=") { value = String(name[name.index(after: eq)...]); name = String(name[..<eq]) }
                if valued.contains(name) {
                    if value == nil {
                        i += 1
                        guard i < args.count else { throw UsageError(description: "--\(name) needs a value") }
                        value = args[i]
                    }
                    options[name] = value
                } else if allowed.contains(name) {
                    flags.insert(name)
                } else {
                    throw UsageError(description: "unknown option --\(name)")
                }
            } else {
                positional.append(a)
            }
            i += 1
        }
    }

    func double(_ name: String) throws -> Double? {
        guard let s = options[name] else { return nil }
        guard let d = Double(s), d >= 0, d.isFinite else { throw UsageError(description: "--\(name): expected seconds, got \(s)") }
        return d
    }
}

let outputOptions: Set<String> = ["events", "output", "record", "snapshot-at", "snapshot-dir", "duration", "audio-device", "connector", "card", "config"]
let outputFlags: Set<String> = ["realtime", "verbose", "help"]

func makeLog(_ args: Arguments) -> Logger {
    Logger(label: "vitrine", sink: .standardError(minimumLevel: args.flags.contains("verbose") ? .debug : .info))
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

func play(manifest: Manifest, catalog: String, options: RunOptions, log: Logger, slate: String? = nil,
          importer: ImportService? = nil, eventLog: EventLog? = nil) -> Exit {
    var ended = RunEnd()
    return play(manifest: manifest, catalog: catalog, options: options, log: log, slate: slate, importer: importer,
                eventLog: eventLog, ended: &ended)
}

/// How a run ended, for the caller of `play`.
struct RunEnd {
    /// For an imported catalog with other display settings: the caller plays the library again.
    var forDisplayChange = false
    /// Catalog seconds the run played (what `--duration` has used up).
    var catalogSeconds = 0.0
}

/// Plays one run; `ended` says whether it ended for a display change, and how long it played.
func play(manifest: Manifest, catalog: String, options: RunOptions, log: Logger, slate: String? = nil,
          importer: ImportService? = nil, eventLog: EventLog? = nil, ended: inout RunEnd) -> Exit {
    do {
        let player = Player(manifest: manifest, catalogDirectory: catalog, options: options, log: log, slateMessage: slate)
        player.eventLog = eventLog
        // USB sticks and `vitrine import` requests, watched on the run's loop; a finished import hands
        // its catalog over (at the next item boundary, or at once).
        player.importer = importer
        let stats = try player.run()
        print(stats.description)
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

/// The manifest of a catalog folder: `manifest.json`, or `catalog.json` (a library generation).
func manifestPath(inCatalog catalog: String) -> String {
    let manifest = (catalog as NSString).appendingPathComponent("manifest.json")
    let accepted = (catalog as NSString).appendingPathComponent("catalog.json")
    return !FileManager.default.fileExists(atPath: manifest) && FileManager.default.fileExists(atPath: accepted) ? accepted : manifest
}

func commandRun(_ argv: [String]) throws -> Exit {
    let args = try Arguments(argv, valued: outputOptions.union(["catalog", "library", "media-root"]), flags: outputFlags)
    if args.flags.contains("help") { print(runHelp); return .ok }
    guard args.positional.isEmpty else { throw UsageError(description: "unexpected argument \(args.positional[0])") }
    if args.options["catalog"] != nil && args.options["library"] != nil {
        throw UsageError(description: "give --catalog or --library, not both")
    }
    var options = try runOptions(args)
    let library = args.options["catalog"] == nil ? CatalogLibrary(path: try args.options["library"] ?? loadConfig(args).library) : nil
    let log = makeLog(args)
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
        var slate: String?
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
                slate = "No catalog to play yet\nInsert a USB stick with vitrine/manifest.json"
                log.error("library \(library.path): no playable catalog; showing the slate and checking again in 10 s")
            }
        } else {
            catalog = args.options["catalog"]!
            manifestPath = vitrine.manifestPath(inCatalog: catalog)
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
            // Invalid: show the slate with the first errors, then read the manifest again in 10 s.
            let shown = fatal.prefix(5).map(\.description).joined(separator: "\n")
            log.error("invalid manifest: \(fatal.count) problem(s); showing the slate and checking again in 10 s")
            slate = "Invalid manifest: \(manifestPath)\n" + shown
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
    if args.flags.contains("help") { print(playHelp); return .ok }
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
    Player.installSignalHandlers()
    return play(manifest: manifest, catalog: "/", options: options, log: makeLog(args))
}

func commandValidate(_ argv: [String]) throws -> Exit {
    let args = try Arguments(argv, valued: [], flags: ["help"])
    if args.flags.contains("help") { print(validateHelp); return .ok }
    guard args.positional.count == 1 else { throw UsageError(description: "validate needs exactly one MANIFEST") }
    var path = args.positional[0]
    var isDir: ObjCBool = false
    if FileManager.default.fileExists(atPath: path, isDirectory: &isDir), isDir.boolValue {
        path = manifestPath(inCatalog: path)
    }
    let result = ManifestParser.load(path: path)
    for p in result.problems { print("\(path): \(p.severity == .warning ? "warning: " : "")\(p)") }
    if result.errors.isEmpty, let m = result.manifest {
        print("\(path): valid: \(m.playlist.count) item(s), version \(m.version)")
        return .ok
    }
    print("\(path): invalid: \(result.errors.count) error(s)")
    return .dataError
}

func commandProbe(_ argv: [String]) throws -> Exit {
    let args = try Arguments(argv, valued: [], flags: ["help"])
    if args.flags.contains("help") { print(probeHelp); return .ok }
    print(Probe.report())
    return .ok
}

func commandBench(_ argv: [String]) throws -> Exit {
    let args = try Arguments(argv, valued: ["mode"], flags: ["help"])
    if args.flags.contains("help") { print(benchHelp); return .ok }
    guard args.positional.count == 1 else { throw UsageError(description: "bench needs exactly one FILE") }
    var w: Int? = nil, h: Int? = nil
    if let m = args.options["mode"] {
        let parts = m.split(separator: "x").compactMap { Int($0) }
        guard parts.count == 2 else { throw UsageError(description: "--mode: expected WxH") }
        w = parts[0]; h = parts[1]
    }
    let log = Logger(label: "vitrine", sink: .standardError(minimumLevel: .warning))
    do {
        let r = try UntimedPlayback.run(path: args.positional[0], width: w, height: h, log: log)
        print("frames \(r.frames) seconds \(String(format: "%.3f", r.seconds)) fps \(String(format: "%.1f", r.framesPerSecond))")
        return .ok
    } catch {
        FileHandle.standardError.write(Data("vitrine bench: \(error)\n".utf8))
        return .dataError
    }
}

func main() -> Int32 {
    var argv = Array(CommandLine.arguments.dropFirst())
    // First, before any thread starts: a player's SIGINT, SIGTERM and SIGHUP go to its run loop's
    // signalfd (the other commands keep the default actions).
    if argv.first == "run" || argv.first == "play" { Player.installSignalHandlers() }
    MediaLog.quiet()
    guard let command = argv.first else {
        FileHandle.standardError.write(Data((topHelp + "\n").utf8))
        return Exit.usage.rawValue
    }
    argv.removeFirst()
    do {
        let code: Exit
        switch command {
        case "run": code = try commandRun(argv)
        case "import": code = try commandImport(argv)
        case "play": code = try commandPlay(argv)
        case "validate": code = try commandValidate(argv)
        case "probe": code = try commandProbe(argv)
        case "bench": code = try commandBench(argv)
        case "--help", "-h", "help": print(topHelp); code = .ok
        case "--version": print("vitrine \(version)"); code = .ok
        default: throw UsageError(description: "unknown command \(command)")
        }
        return code.rawValue
    } catch let e as UsageError {
        FileHandle.standardError.write(Data("vitrine: \(e)\nRun `vitrine --help` for usage.\n".utf8))
        return Exit.usage.rawValue
    } catch {
        FileHandle.standardError.write(Data("vitrine: \(error)\n".utf8))
        return Exit.failure.rawValue
    }
}

exit(main())
