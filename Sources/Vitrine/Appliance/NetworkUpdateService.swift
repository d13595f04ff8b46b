// Network catalog updates inside the running player: polls of update.url on the run loop's timer,
// each poll and download on a thread of its own, sharing ImportService's one-import-at-a-time flag,
// banner, event log and switched-catalog hand-off. docs/network.md.
import Foundation
import SystemSupport
import CatalogStore
import HTTPFetch
import RunLoop
import VitrineCore

/// How the last import ended (a stick, a `vitrine import` request, a network update), for the
/// status command (`ImportService.lastImport`).
public struct ImportRecord: Sendable, Equatable {
    /// The stick's mount folder, the request's path, or the catalog folder's URL.
    public var source: String
    /// `switched`, `refused`, `failed` (`ImportResult.Outcome`), or `upToDate`.
    public var outcome: String
    /// `Updated to version 42: 12 items`, or the refusal or failure with its first reason.
    public var message: String
    /// When it ended, in Unix seconds (the wall clock).
    public var wall: Double

    public init(source: String, outcome: String, message: String, wall: Double = Date().timeIntervalSince1970) {
        self.source = source; self.outcome = outcome; self.message = message; self.wall = wall
    }
}

/// The last poll of `update.url` (`ImportService.lastPoll`).
public struct PollRecord: Sendable, Equatable {
    public enum Outcome: String, Sendable, Equatable {
        /// 304 Not Modified: the manifest last imported (or refused for good).
        case unchanged
        /// A manifest to check (then imported, refused, or found to be the one playing).
        case changed
        /// No answer to use: unreachable, a timeout, a refused certificate, a 404 or 5xx.
        case failed
    }
    /// The catalog folder polled.
    public var url: String
    public var outcome: Outcome
    /// Bytes received by the poll: headers and bodies of its requests (a 304 is about 180 bytes).
    public var bytes: Int
    /// Why it failed (the `FetchError`'s text); nil otherwise.
    public var message: String?
    /// When it ended, in Unix seconds (the wall clock).
    public var wall: Double
}

/// The player's network updates (owned by `ImportService`: `ImportService.network`).
///
/// - Polls `update.url` once `start(settings:firstPollDelay:)` is called: the first poll
///   `firstPollDelay` seconds later (5 s by default: playback starts first), then every
///   `update.interval` seconds ± `update.jitter` (`CatalogPoller.nextDelay`), on the run loop's
///   timer while `ImportService` is attached to a loop. `syncNow()` polls at once.
/// - Each poll, and the download and import it leads to, runs on a thread of its own (never on
///   the run loop), holding `ImportService`'s busy flag, so a stick, a request and a network update
///   never run together; a poll due while another import runs waits for its end.
/// - A changed manifest: `NetworkUpdate` checks it, links and downloads its files, and imports the
///   downloads folder as a stick; the progress goes on the status banner ("Downloading catalog…
///   N %", then the import's own banner), `importStarted`/`importFinished` (source: the URL) in the
///   event log, the switched catalog to the run loop (`ImportService.takeSwitchedCatalog`).
/// - Faults never touch playback and never show on screen: an unreachable server, a timeout or a
///   5xx is one log line when it starts and one when the server answers again, however many polls
///   fail between. The validators are committed (the next poll a 304) only after a switch, when the
///   manifest is the catalog playing, or when it is refused for good (signature, validity,
///   version); a download that failed is tried again at the next poll, resuming its parts.
///
/// Thread-safe: every member is behind `lock`; the timer and waker are the loop's.
public final class NetworkUpdateService: @unchecked Sendable {  // the mutable state is behind `lock`; the timer is touched on the loop only
    /// Seconds from `start` to the first poll by default.
    public static let firstPollDelay = 5.0

    /// The import service that owns this one (`ImportService.network`), set once by its init.
    private weak var owner: ImportService?
    /// `owner`, kept alive by the worker thread for as long as it runs (`kick`).
    private var imports: ImportService { owner! }
    private let log: Logger
    private let lock = NSLock()
    /// The polling settings (`update`), once `start` is called.
    private var polling: UpdateSettings?
    /// The poller of `polling.url`, made on the worker thread at its first poll.
    private var updater: NetworkUpdate?
    /// `CLOCK_MONOTONIC` seconds of the next poll; nil while polling is off.
    private var nextPollAt: Double?
    private var pollDue = false
    private var oneOffs: [(url: String, requestFile: String?)] = []
    private var running = false
    private var attachment: (loop: EventLoop, waker: LoopWaker, timer: LoopTimer?)?
    private var random = SystemRandomNumberGenerator()
    private var lastPollRecord: PollRecord?
    /// The failure logged for the polls, until one succeeds (logged once).
    private var pollFailure: String?
    private var failedPolls = 0
    /// The last failed import's message (a repeat is logged at debug).
    private var importFailure: String?

    init(log: Logger) {
        self.log = log
    }

    /// Called once by `ImportService.init`.
    func bind(to owner: ImportService) { self.owner = owner }

    private func locked<T>(_ body: () -> T) -> T { lock.lock(); defer { lock.unlock() }; return body() }

    /// The settings polls use; nil before `start`.
    public var settings: UpdateSettings? { locked { polling } }

    /// The settings of a one-off import (`importURL`) while polling is off: the config's `update.*`
    /// (`PlayerConfig.updateDefaults`), its URL replaced; nil: `UpdateSettings`' defaults.
    public var defaults: UpdateSettings? {
        get { locked { oneOffDefaults } }
        set { locked { oneOffDefaults = newValue } }
    }
    private var oneOffDefaults: UpdateSettings?

    /// The last poll of `update.url`; nil before the first.
    public var lastPoll: PollRecord? { locked { lastPollRecord } }

    /// Whether a poll or a network import is running (or waiting for another import to end).
    public var isWorking: Bool { locked { running } }

    /// `CLOCK_MONOTONIC` seconds of the next poll (nil while polling is off).
    public var nextPoll: Double? { locked { nextPollAt } }

    /// Starts polling `settings.url`: the first poll `firstPollDelay` seconds from now.
    public func start(settings: UpdateSettings, firstPollDelay: Double = NetworkUpdateService.firstPollDelay) {
        locked {
            polling = settings
            updater = nil
            nextPollAt = monotonicNow() + max(0, firstPollDelay)
        }
        log.info("polling \(settings.url) every \(Int(settings.interval)) s (± \(Int(settings.jitter * 100)) %), first in "
                 + String(format: "%.0f", firstPollDelay) + " s")
        wakeLoop()
    }

    /// Whether `update.url` is polled (`start(settings:)` was called).
    public var isPolling: Bool { locked { polling != nil } }

    /// Polls at once, or as soon as the import running ends. Any thread. Nothing when polling is off.
    public func syncNow() {
        let on = locked { () -> Bool in
            guard polling != nil else { return false }
            pollDue = true
            return true
        }
        if on { kick() } else { log.warning("sync requested, but there is no update.url in the config") }
    }

    /// Imports the catalog folder at `url` once: its manifest fetched whole (no validators), then
    /// checked, downloaded and imported as a poll's; the validators are not committed. With
    /// `requestFile`, the answer goes there (`vitrine import URL` while the player runs).
    public func importURL(_ url: String, requestFile: String?) {
        let queued = locked { () -> Bool in
            if let requestFile, oneOffs.contains(where: { $0.requestFile == requestFile }) { return false }
            oneOffs.append((url, requestFile))
            return true
        }
        if queued { kick() }
    }

    // MARK: The run loop

    /// Schedules the next poll on `loop`'s timer (the calling thread's loop), and again after each poll.
    func attach(to loop: EventLoop) {
        loop.assertInLoop()
        let waker = loop.makeWaker { [weak self] in self?.reschedule() }
        locked { attachment = (loop, waker, nil) }
        reschedule()
    }

    /// Stops the timer (a poll running goes on; the next loop attached schedules the next one).
    func detach() {
        let timer = locked { () -> LoopTimer? in
            let t = attachment?.timer
            attachment = nil
            return t
        }
        timer?.cancel()
    }

    /// On the loop: the timer moves to `nextPollAt`.
    private func reschedule() {
        guard let (loop, old, due) = locked({ attachment.map { ($0.loop, $0.timer, nextPollAt) } }) else { return }
        old?.cancel()
        guard let due else { return }
        let timer = loop.scheduleTimer(at: Deadline(seconds: due)) { [weak self] in
            guard let self else { return }
            self.locked { self.pollDue = self.polling != nil }
            self.kick()
        }
        locked { if attachment?.loop === loop { attachment?.timer = timer } }
    }

    private func wakeLoop() {
        _ = locked { attachment?.waker }?.wake()
    }

    /// After an import of `ImportService` ended: runs what waited for it.
    func resume() { kick() }

    // MARK: The worker

    private enum Job {
        case poll
        case oneOff(url: String, requestFile: String?)
    }

    /// Starts the worker thread when there is a job and none runs.
    private func kick() {
        let start = locked { () -> Bool in
            guard !running, pollDue || !oneOffs.isEmpty else { return false }
            running = true
            return true
        }
        guard start, let owner else {
            if start { locked { running = false } }
            return
        }
        let thread = Thread { [self] in withExtendedLifetime(owner) { work() } }
        thread.name = "vitrine-update"
        thread.start()
    }

    private func work() {
        while true {
            let job = locked { () -> Job? in
                if !oneOffs.isEmpty { let o = oneOffs.removeFirst(); return .oneOff(url: o.url, requestFile: o.requestFile) }
                if pollDue { pollDue = false; return .poll }
                running = false
                return nil
            }
            guard let job else { return }
            guard imports.claim() else {
                // Another import runs: this job waits for its end (`resume`).
                locked {
                    switch job {
                    case .poll: pollDue = true
                    case let .oneOff(url, requestFile): oneOffs.insert((url, requestFile), at: 0)
                    }
                    running = false
                }
                return
            }
            var switched: LibraryCatalog?
            switch job {
            case .poll:
                switched = poll()
                locked {
                    if let s = polling {
                        nextPollAt = monotonicNow() + CatalogPoller.nextDelay(interval: s.interval, jitter: s.jitter, random: &random)
                    }
                }
                wakeLoop()
            case let .oneOff(url, requestFile):
                switched = oneOff(url, requestFile: requestFile)
            }
            imports.release(switched: switched)
        }
    }

    /// The manifest and signature last refused before any download (to log a refusal once).
    private var lastRefused: (manifest: [UInt8], signature: [UInt8]?)?

    private func recordPoll(_ url: String, _ outcome: PollRecord.Outcome, bytes: Int, message: String? = nil) {
        let r = PollRecord(url: url, outcome: outcome, bytes: bytes, message: message, wall: Date().timeIntervalSince1970)
        locked { lastPollRecord = r }
    }

    /// One poll of `update.url`, and what it leads to. Returns the catalog switched to.
    private func poll() -> LibraryCatalog? {
        guard let settings = locked({ polling }) else { return nil }
        let update: NetworkUpdate
        do {
            if let u = locked({ updater }) { update = u } else {
                update = try NetworkUpdate(library: imports.library, settings: settings, importSettings: imports.settings)
                if let problem = update.poller.stateProblem { log.warning("\(problem); the next manifest is fetched whole") }
                locked { updater = update }
            }
        } catch {
            recordPoll(settings.url, .failed, bytes: 0, message: error.description)
            pollFailed(settings.url, error.description)
            return nil
        }
        let outcome: PollOutcome
        do { outcome = try update.poll() } catch {
            recordPoll(settings.url, .failed, bytes: update.poller.lastPollBytes, message: error.description)
            pollFailed(settings.url, error.description)
            return nil
        }
        let failed = locked { () -> (String, Int)? in
            defer { pollFailure = nil; failedPolls = 0 }
            return pollFailure.map { ($0, failedPolls) }
        }
        if let (_, count) = failed {
            log.info("update: \(settings.url) answers again (after \(count) failed poll\(count == 1 ? "" : "s"))")
        }
        switch outcome {
        case .unchanged:
            recordPoll(settings.url, .unchanged, bytes: update.poller.lastPollBytes)
            log.debug("update: \(settings.url): not modified (\(update.poller.lastPollBytes) bytes)")
            return nil
        case let .changed(manifest, signature):
            recordPoll(settings.url, .changed, bytes: update.poller.lastPollBytes)
            return apply(update, manifest: manifest, signature: signature, commit: true, requestFile: nil)
        }
    }

    /// A poll that failed: logged when the failures start (and when their reason changes), not at every poll.
    private func pollFailed(_ url: String, _ message: String) {
        let first = locked { () -> Bool in
            failedPolls += 1
            defer { pollFailure = message }
            return pollFailure != message
        }
        if first {
            log.warning("update: cannot poll \(url): \(message); playback goes on, polling again later")
        } else {
            log.debug("update: poll failed again: \(message)")
        }
    }

    /// A one-off import of `url`. Returns the catalog switched to.
    private func oneOff(_ url: String, requestFile: String?) -> LibraryCatalog? {
        let settings = (locked { polling ?? oneOffDefaults } ?? UpdateSettings(url: url)).with(url: url)
        let update: NetworkUpdate
        let outcome: PollOutcome
        do {
            update = try NetworkUpdate(library: imports.library, settings: settings, importSettings: imports.settings)
            outcome = try update.poll(conditional: false)
        } catch {
            // Asked for (a request, `vitrine ctl import`): an import that failed, in the event log and the answer.
            let problem = ImportProblem(.downloadFailed, file: "manifest.json", error.description)
            let result = ImportResult(outcome: .failed, message: ImportResult.message(for: .failed, problems: [problem], version: nil, items: nil),
                                      problems: [problem], notes: [], version: nil, items: nil, files: 0, bytes: 0, seconds: 0,
                                      catalog: nil, switchMode: imports.settings.switchMode)
            imports.eventLog?.writeImportStarted(source: settings.url)
            imports.eventLog?.writeImportFinished(result, source: settings.url)
            log.error("import from \(settings.url) failed: \(result.message)")
            finish(source: settings.url, outcome: result.outcome.rawValue, message: result.message,
                   problems: result.problems, requestFile: requestFile)
            return nil
        }
        guard case let .changed(manifest, signature) = outcome else { return nil }  // an unconditional GET is never a 304
        return apply(update, manifest: manifest, signature: signature, commit: false, requestFile: requestFile)
    }

    /// Records the outcome, and answers the request when there is one.
    private func finish(source: String, outcome: String, message: String, problems: [ImportProblem], requestFile: String?) {
        imports.record(ImportRecord(source: source, outcome: outcome, message: message))
        if let requestFile {
            ImportService.answer(requestFile, ImportService.ImportAnswer(outcome: outcome, message: message,
                                                                         problems: problems.map(\.description)))
        }
    }

    private func commit(_ update: NetworkUpdate) {
        do { try update.commit() } catch {
            log.error("update: cannot record the manifest's validators (\(error)); the next poll fetches it whole")
        }
    }

    /// Checks a fetched manifest, and downloads and imports its catalog. Returns the catalog switched to.
    private func apply(_ update: NetworkUpdate, manifest: [UInt8], signature: [UInt8]?, commit shouldCommit: Bool,
                       requestFile: String?) -> LibraryCatalog? {
        let source = update.settings.url
        let check = update.check(manifest: manifest, signature: signature)
        switch check.outcome {
        case .upToDate:
            let message = ImportService.upToDateMessage(version: check.version)
            log.info("update from \(source): \(message)")
            if shouldCommit { commit(update) }
            finish(source: source, outcome: ImportService.ImportAnswer.upToDate, message: message, problems: [], requestFile: requestFile)
            return nil
        case .refused:
            let result = check.result!
            // Not committed: the same manifest may pass later without changing (its .minisig uploaded
            // after it, a key added to import.trustedKeys). The same refusal again is logged once.
            let again = locked { () -> Bool in
                defer { lastRefused = (manifest, signature) }
                return lastRefused.map { $0.manifest == manifest && $0.signature == signature } ?? false
            }
            if again {
                log.debug("update from \(source) refused again (the same manifest): \(result.message)")
            } else {
                imports.eventLog?.writeImportStarted(source: source)
                imports.eventLog?.writeImportFinished(result, source: source)
                log.error("update from \(source) refused before any download: \(result.message); asking again at each poll")
                for p in result.problems.dropFirst() { log.error("  \(p)") }
            }
            finish(source: source, outcome: result.outcome.rawValue, message: result.message, problems: result.problems,
                   requestFile: requestFile)
            return nil
        case .accepted:
            break
        }
        imports.eventLog?.writeImportStarted(source: source)
        log.info("importing a catalog from \(source): version \(check.version ?? 0), \(check.files.count) file(s)")
        var lastShown = 0.0
        var shown = false
        var lastPhase: ImportProgress.Phase?
        let done = update.fetchAndImport(check, manifest: manifest, signature: signature) { p in
            let t = monotonicNow()
            switch p {
            case .downloading:
                guard t - lastShown >= 0.1 || !shown else { return }
            case .importing(let i):
                guard t - lastShown >= 0.1 || i.phase != .copying || lastPhase != .copying else { return }
                lastPhase = i.phase
            }
            lastShown = t
            shown = true
            self.imports.show(Self.progressBanner(p))
        }
        let result = done.result
        imports.eventLog?.writeImportFinished(result, source: source)
        for note in result.notes { log.debug("update from \(source): note: \(note)") }
        finish(source: source, outcome: result.outcome.rawValue, message: result.message, problems: result.problems, requestFile: requestFile)
        switch result.outcome {
        case .switched:
            log.info("import from \(source): \(result.message) (\(done.download.downloaded) file(s) downloaded, "
                     + "\(done.download.bytesTransferred) bytes, \(done.download.retries) retr\(done.download.retries == 1 ? "y" : "ies"); "
                     + "\(done.linkedFromCurrent) linked from the catalog playing, \(done.download.alreadyPresent) already downloaded; "
                     + String(format: "%.1f s)", result.seconds))
            locked { importFailure = nil }
            if shouldCommit { commit(update) }
            imports.showSwitched(result)
            return result.catalog
        case .refused, .failed:
            let repeated = locked { () -> Bool in
                defer { importFailure = result.message }
                return importFailure == result.message
            }
            if repeated {
                log.debug("import from \(source) \(result.outcome.rawValue) again: \(result.message)")
            } else {
                log.error("import from \(source) \(result.outcome.rawValue): \(result.message); trying again at the next poll")
                for p in result.problems.dropFirst() { log.error("  \(p)") }
            }
            if shown { imports.hideBanner() }
            return nil
        }
    }

    /// The banner for one progress report: "Downloading catalog… N %", then the import's.
    static func progressBanner(_ p: NetworkUpdateProgress) -> Banner {
        switch p {
        case let .downloading(done, total, files):
            let fraction = total > 0 ? min(1, Double(done) / Double(total)) : 1
            return Banner(title: "Downloading catalog… \(Int((fraction * 100).rounded(.down))) %",
                          detail: "\(ByteCount.mebibytes(Int64(done))) of \(ByteCount.mebibytes(Int64(total))) MiB · "
                              + (files == 1 ? "1 file" : "\(files) files"),
                          progress: fraction, style: .progress)
        case .importing(let i):
            return ImportService.progressBanner(i, network: true)
        }
    }
}
