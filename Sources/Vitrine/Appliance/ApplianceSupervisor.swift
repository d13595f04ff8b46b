import Foundation
import CatalogStore
import FileIO
import VitrineCore

/// The appliance's life, run after run: plays a catalog folder, or the library's current catalog
/// (else the previous one, else the slate), and carries on for as long as `--duration` allows.
/// - A library that plays holds its player lock and imports USB sticks, `vitrine import` requests
///   and, with `update.url`, network updates (`ImportService`, `NetworkUpdateService`) in the running player.
/// - An imported catalog with other display settings ends the run; the library plays again, with a
///   new output in the new mode, for what is left of the duration and the snapshot times.
/// - On the DRM screen with no connector connected (a box booted with the TV off), it waits for one
///   (`ScreenWait`: udev hot-plug events and a look every 3 s, systemd's watchdog fed); a screen
///   that comes back at another size ends the run, and the display is opened again in the new mode.
/// - While nothing can play (no catalog, no manifest, an invalid one) the slate says why for 10 s at
///   a time, and the library or the manifest is looked at again after each.
///
/// Each run's statistics go to standard output as it ends. `vitrine run` is this; `vitrine play`
/// is one `Player` run (`play(_:catalog:options:log:)`).
public final class ApplianceSupervisor {
    /// What plays.
    public enum Source {
        /// A catalog folder and its manifest file.
        case catalog(folder: String, manifest: String)
        /// The library's current catalog (else previous), with USB imports into it.
        case library(CatalogLibrary)
    }

    /// How a run (or the appliance's last run) ended, as the command line's exit code sees it.
    public enum Outcome: Sendable, Equatable {
        /// It played (or was stopped while playing).
        case played
        /// Nothing of the catalog could play: the slate was shown, or every item of a whole pass failed; or the
        /// configuration cannot be played (`PlayerError.invalidConfiguration`).
        case nothingPlayable
        /// The display asked for cannot be opened (`PlayerError.deviceUnavailable`).
        case unavailable
        /// Another error ended the run.
        case failed
    }

    public let source: Source
    private var options: RunOptions
    private let importSettings: ImportSettings
    private let update: UpdateSettings?
    private let updateDefaults: UpdateSettings?
    private let mediaRoot: String
    private let eventLog: EventLog?
    private let fleet: FleetService?
    private let log: Logger

    /// How long the slate shows before the library (or manifest) is looked at again, in seconds.
    public static let slateSeconds = 10.0

    /// - Parameters:
    ///   - options: the runs' options; `duration` and `snapshotTimes` count across runs.
    ///   - importSettings, mediaRoot: for USB imports while a library plays.
    ///   - update: network updates of the library (config `update`), polled while it plays; nil for none.
    ///   - updateDefaults: the settings of a one-off network import (`vitrine import URL` handed to
    ///     the player) when `update` is nil (`PlayerConfig.updateDefaults`).
    ///   - eventLog: one event log for every run and the imports (it rotates itself).
    public init(source: Source, options: RunOptions, importSettings: ImportSettings = ImportSettings(),
                update: UpdateSettings? = nil, updateDefaults: UpdateSettings? = nil,
                mediaRoot: String = ImportService.defaultMediaRoot, eventLog: EventLog?, fleet: FleetService? = nil, log: Logger) {
        self.source = source
        self.options = options
        self.importSettings = importSettings
        self.update = update
        self.updateDefaults = updateDefaults
        self.mediaRoot = mediaRoot
        self.eventLog = eventLog
        self.fleet = fleet
        self.log = log
    }

    /// Runs until the catalog ends (a catalog that does not loop), `--duration` has passed, a stop is
    /// requested, or a run fails.
    public func run() -> Outcome {
        // Playing the library: watch for USB sticks and `vitrine import` requests, and hold the player
        // lock (so `vitrine import` hands its stick over instead of importing beside the player).
        var importer: ImportService?
        var playerLock: FileDescriptor?
        if case .library(let library) = source {
            try? FileSystem.makeDirectories(library.path)
            // `vitrine import` takes the lock for an instant to see whether a player runs: try for a second.
            playerLock = ImportService.lockAsPlayer(library: library.path, retryingFor: 1)
            if playerLock == nil {
                log.warning("library \(library.path): another player holds \(ImportService.playerLockPath(library: library.path)); "
                            + "this one does not import USB sticks")
            } else {
                importer = ImportService(library: library, settings: importSettings, mediaRoot: mediaRoot,
                                         eventLog: eventLog, log: log.child("import"))
                importer?.network.defaults = updateDefaults
                if let update { importer?.startNetworkUpdates(settings: update) }
            }
        }
        defer { _ = playerLock }
        // Two or more screens (config `outputs`): the card is held as the lessor, each screen plays on
        // a lease of its own; this thread plays the first, `SecondaryScreens` the others. With
        // `--output headless` each output has a headless output of its own (what tests drive).
        var secondary: SecondaryScreens?
        if options.outputs.count >= 2 && (usesDRM || options.output == .headless) {
            do {
                let first = options.outputs[0]
                let configWall = options.wall  // each output's `wall` sits on the config's, not on the first output's
                var on = "headless outputs"
                if usesDRM {
                    let lessor = try DRMLessor(card: options.card)
                    options.lessor = lessor
                    on = lessor.card.path
                }
                options.connector = first.connector
                options.playlist = first.playlist
                options.wall = first.wall(over: options.wall)
                options.outputMode = first.mode
                let reports = OutputReports(outputs: options.outputs)
                options.outputReports = reports
                log.info("\(options.outputs.count) outputs on \(on): " + options.outputs.map {
                    "\($0.connector) (\($0.playlist.map { "playlist \($0)" } ?? "the catalog"))"
                }.joined(separator: ", "))
                var others = options
                others.wall = configWall
                secondary = SecondaryScreens(outputs: Array(options.outputs.dropFirst()), source: source, options: others,
                                             reports: reports, eventLog: eventLog, log: log.child("screen"))
                secondary?.start()
            } catch {
                log.error("outputs: \(error); playing one screen, the first output's")
                options.connector = options.outputs[0].connector
            }
        }
        defer {
            if let secondary {
                if !Player.stopRequested { Player.requestStop() }
                secondary.join()
            }
        }
        var firstLook = true
        while true {
            // The DRM screen: a box booted with the TV off waits for it (watchdog fed, READY=1 said).
            guard waitForScreen() else { return .played }
            let catalog: String, manifestPath: String
            var slate: SlateMessage?
            switch source {
            case .library(let library):
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
            case let .catalog(folder, manifest):
                (catalog, manifestPath) = (folder, manifest)
            }
            if slate == nil, !FileManager.default.fileExists(atPath: manifestPath) {
                slate = .missingManifest(manifestPath)
                log.error("\(manifestPath): no such file; showing the slate and checking again in 10 s")
            }
            if slate == nil {
                // Structure first; missing media is only logged here, because the player skips such items
                // and keeps the rest of the catalog on screen.
                let result = ManifestParser.load(path: manifestPath)
                let fatal = result.errors.filter {
                    !$0.reason.hasPrefix("file not found") && !$0.reason.hasPrefix("file is empty") && !$0.reason.hasPrefix("not a regular file")
                }
                for p in result.problems { log.log(fatal.contains(p) ? .error : .warning, "\(manifestPath): \(p)", [:]) }
                if fatal.isEmpty, let manifest = result.manifest ?? Self.reparseIgnoringFiles(manifestPath) {
                    let (outcome, ended) = play(manifest, catalog: catalog, options: options, importer: importer)
                    // The screen came back at another size, or went before the output opened: open it again.
                    if (ended.forScreenChange || screenWentAway(outcome)) && !Player.stopRequested {
                        guard consume(ended.catalogSeconds) else { return outcome }
                        continue
                    }
                    // An imported catalog with other display settings: play the library again, with them,
                    // for what is left of --duration and the snapshot times.
                    guard ended.forDisplayChange, case .library = source, !Player.stopRequested else { return outcome }
                    guard consume(ended.catalogSeconds) else { return outcome }
                    continue
                }
                // Invalid: show the slate with the errors, then read the manifest again in 10 s.
                log.error("invalid manifest: \(fatal.count) problem(s); showing the slate and checking again in 10 s")
                slate = .invalidManifest(manifestPath, problems: fatal.map(\.description))
            }
            var slateOptions = options
            // Recording or snapshotting: one slate for the whole run (a re-check would restart the file).
            let once = options.recordPath != nil || !options.snapshotTimes.isEmpty
            slateOptions.duration = once ? (options.duration ?? Self.slateSeconds) : min(options.duration ?? Self.slateSeconds, Self.slateSeconds)
            let (outcome, ended) = play(Manifest(), catalog: catalog, options: slateOptions, slate: slate, importer: importer)
            if (ended.forScreenChange || screenWentAway(outcome)) && !once && !Player.stopRequested {
                guard consume(ended.catalogSeconds) else { return .nothingPlayable }
                continue
            }
            if once { return outcome }
            if outcome != .nothingPlayable || Player.stopRequested { return outcome == .played ? .nothingPlayable : outcome }
            guard consume(Self.slateSeconds) else { return .nothingPlayable }
        }
    }

    /// Whether runs use the DRM screen: `--output drm`, or `auto` with a card.
    private var usesDRM: Bool { options.output == .drm || (options.output == .auto && DRMOutput.isAvailable) }

    /// Before a run on the DRM screen: waits while no connector can be driven (`ScreenWait`).
    /// False when a stop was asked for meanwhile.
    private func waitForScreen() -> Bool {
        guard usesDRM, ScreenWait.cardHasConnectors(card: options.card) else { return true }
        let card = options.card, connector = options.connector
        return ScreenWait.wait(log: log.child("screen")) { ScreenWait.screenAvailable(card: card, connectorName: connector) }
    }

    /// A run that could not open the DRM screen because no connector is drivable any more (the TV
    /// went off between the look and the modeset): wait for it again rather than end.
    private func screenWentAway(_ outcome: Outcome) -> Bool {
        outcome == .unavailable && usesDRM && ScreenWait.cardHasConnectors(card: options.card)
            && !ScreenWait.screenAvailable(card: options.card, connectorName: options.connector)
    }

    /// Takes `seconds` of catalog time off `--duration` and the snapshot times; false when no time is left.
    private func consume(_ seconds: Double) -> Bool {
        if let d = options.duration {
            if d - seconds <= 1e-6 { return false }
            options.duration = d - seconds
        }
        options.snapshotTimes = options.snapshotTimes.filter { $0 >= seconds }.map { $0 - seconds }
        return true
    }

    /// How a run ended, beside its outcome.
    struct RunEnd {
        /// For an imported catalog with other display settings: the library plays again.
        var forDisplayChange = false
        /// The screen came back (hot-plug) at another size: the display is opened again.
        var forScreenChange = false
        /// Catalog seconds the run played (what `--duration` has used up).
        var catalogSeconds = 0.0
    }

    /// One run of the appliance.
    private func play(_ manifest: Manifest, catalog: String, options: RunOptions, slate: SlateMessage? = nil,
                      importer: ImportService?) -> (Outcome, RunEnd) {
        Self.play(manifest, catalog: catalog, options: options, log: log, slate: slate, importer: importer, eventLog: eventLog, fleet: fleet)
    }

    /// Plays one run (`vitrine play`: an ad-hoc playlist), prints its statistics on standard output,
    /// and says how it ended: `.nothingPlayable` when nothing of the catalog could play (the slate
    /// was asked for or came up, or every item of a catalog that does not loop failed), whatever the
    /// options; a run stopped before its items were all tried played.
    public static func play(_ manifest: Manifest, catalog: String, options: RunOptions, log: Logger) -> Outcome {
        play(manifest, catalog: catalog, options: options, log: log, slate: nil, importer: nil, eventLog: nil, fleet: nil).0
    }

    private static func play(_ manifest: Manifest, catalog: String, options: RunOptions, log: Logger, slate: SlateMessage?,
                             importer: ImportService?, eventLog: EventLog?, fleet: FleetService?) -> (Outcome, RunEnd) {
        do {
            let player = Player(manifest: manifest, catalogDirectory: catalog, options: options, log: log, slateMessage: slate)
            player.eventLog = eventLog
            player.fleet = fleet
            if let importer {
                // USB sticks and `vitrine import` requests, watched on the run's loop; a finished import
                // hands its catalog over (at the next item boundary, or at once).
                player.importer = importer
                // "Playing it after the current item" becomes "Playing now" when it is.
                player.catalogStarted = { importer.catalogStarted() }
            }
            let stats = try player.run()
            StandardStreams.out(stats.description + "\n")
            let ended = RunEnd(forDisplayChange: player.endedForDisplayChange, forScreenChange: player.endedForScreenChange,
                               catalogSeconds: stats.catalogSeconds)
            if ended.forDisplayChange || ended.forScreenChange { return (.played, ended) }
            if slate != nil { return (.nothingPlayable, ended) }
            // Nothing in the playlist could play at all: invalid media. A stop that came before every
            // item was tried (SIGTERM while the first files are skipped) is a stop: it played.
            if stats.itemsStarted == 0 && stats.itemsFailed > 0 && player.foundNothingPlayable { return (.nothingPlayable, ended) }
            return (.played, ended)
        } catch let e as PlayerError {
            log.error("\(e)")
            if case .invalidConfiguration = e { return (.nothingPlayable, RunEnd()) }
            return (.unavailable, RunEnd())
        } catch {
            log.error("\(error)")
            return (.failed, RunEnd())
        }
    }

    /// The manifest without its file checks (media problems are the player's to skip).
    private static func reparseIgnoringFiles(_ path: String) -> Manifest? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return ManifestParser.parse([UInt8](data), catalogDirectory: nil).manifest
    }
}
