import Foundation
import SystemSupport
import CatalogStore
import FileIO
import Inotify
import VitrineCore
import RunLoop

/// USB catalog updates inside the running player: watches the stick folder (`/run/vitrine/media`,
/// where `rootfs/etc/udev/rules.d/80-vitrine-usb.rules` mounts sticks) and the library's `requests/`
/// folder (`vitrine import` while a player runs) with inotify, runs each import on a thread of its
/// own, shows its progress and result in the status banner (the result for 10 s), records it in the
/// event log, and hands a switched catalog to the run loop.
///
/// On the run loop (`attach(to:)`) the watches' descriptors and one timer drive it; it never blocks
/// (a non-blocking inotify read, and a folder scan every 2 s while a stick may still be mounting).
/// The import thread talks to the run loop only through this object's lock.
///
/// Network updates (`startNetworkUpdates(settings:)`, `NetworkUpdateService`) share its one-import-
/// at-a-time flag, its banner, its event log and its hand-off of the switched catalog: a stick, a
/// request and a network update never run together.
public final class ImportService: @unchecked Sendable {  // the watches, scan times and loop handles are the run loop's; what the import thread shares is behind `lock`
    public let library: CatalogLibrary
    public let settings: ImportSettings
    /// The folder sticks are mounted under, one sub-folder each.
    public let mediaRoot: String
    /// The status banner of the engine on screen (set by the player as each run starts).
    /// A new one (the slate restarting, or the player leaving the slate for an imported catalog) gets
    /// the banner up on the old one: the import's progress, or its result for the rest of its 10 s.
    public var banner: StatusBanner? {
        get { lock.lock(); defer { lock.unlock() }; return bannerBoard }
        set {
            lock.lock()
            let changed = newValue !== bannerBoard
            bannerBoard = newValue
            // A new engine after the run loop took the switched catalog plays it (the slate left for
            // it, or a display restart): the result says so.
            if changed, awaitingSwitch, switchTaken, let last = lastBanner {
                awaitingSwitch = false
                lastBanner = (Self.playing(last.banner), last.at)
            }
            var carried = lastBanner?.banner
            if let h = carried?.hideAfter, let at = lastBanner?.at {
                let left = h - (monotonicNow() - at)
                if left > 0.5 { carried?.hideAfter = left } else { carried = nil }
            }
            lock.unlock()
            if changed, let carried { newValue?.show(carried) }
        }
    }
    private var bannerBoard: StatusBanner?
    /// The last banner an import showed, and when (`CLOCK_MONOTONIC`).
    private var lastBanner: (banner: Banner, at: Double)?

    /// Whether the last banner says the switched catalog plays "after the current item", and that
    /// has not happened yet; and whether the run loop has taken that catalog (`takeSwitchedCatalog`).
    private var awaitingSwitch = false
    private var switchTaken = false

    /// The detail of a switched import's result once its catalog is on screen.
    public static let playingNowDetail = "Playing now"

    /// `b` with the detail saying the new catalog is on screen.
    private static func playing(_ b: Banner) -> Banner {
        var b = b
        b.detail = playingNowDetail
        return b
    }

    /// The switched catalog's first item is on screen (`Player.catalogStarted`): a result banner
    /// that said "Playing it after the current item" now says "Playing now", for the rest of its time.
    public func catalogStarted() {
        lock.lock()
        guard awaitingSwitch, let last = lastBanner else { lock.unlock(); return }
        awaitingSwitch = false
        var b = Self.playing(last.banner)
        if let h = b.hideAfter { b.hideAfter = max(0.5, h - (monotonicNow() - last.at)) }
        lastBanner = (b, monotonicNow())
        let board = bannerBoard
        lock.unlock()
        board?.show(b)
    }

    /// Shows `b` on the banner of the engine on screen and remembers it for the next one.
    func show(_ b: Banner, awaitingSwitch awaiting: Bool = false) {
        lock.lock()
        awaitingSwitch = awaiting
        switchTaken = false
        lastBanner = (b, monotonicNow())
        let board = bannerBoard
        lock.unlock()
        board?.show(b)
    }
    let eventLog: EventLog?
    let log: Logger
    /// Network catalog updates: polls of `update.url` once `startNetworkUpdates(settings:)` is
    /// called, and one-off imports of a URL (`importURL(_:)`, `vitrine import URL`).
    public let network: NetworkUpdateService

    private let lock = NSLock()
    /// The thread that polls (the run loop's), checked in debug builds.
    private let confinement = ThreadConfinement()
    private var busy = false
    private var switched: LibraryCatalog?
    /// Sticks imported (or refused) while they stay mounted: mount folder → identity.
    private var handled: [String: String] = [:]
    private var stickWatch: DirectoryWatcher?
    private var requestWatch: DirectoryWatcher?
    private var nextScan = 0.0
    private var nextWatchAttempt = 0.0
    /// Requests waiting for the running import to end (request file paths).
    private var queuedRequests: [String] = []

    /// Where `rootfs/etc/udev/rules.d/80-vitrine-usb.rules` mounts USB sticks.
    public static let defaultMediaRoot = "/run/vitrine/media"

    /// How long a result stays on screen, in seconds.
    public static let resultSeconds = 10.0
    /// How often the stick folder is scanned while watched (mounts do not always raise inotify events
    /// in the parent folder: a stick mounted over an existing empty folder raises none).
    public static let scanInterval = 2.0

    public init(library: CatalogLibrary, settings: ImportSettings, mediaRoot: String = ImportService.defaultMediaRoot,
                eventLog: EventLog?, log: Logger) {
        self.library = library
        self.settings = settings
        self.mediaRoot = mediaRoot
        self.eventLog = eventLog
        self.log = log
        network = NetworkUpdateService(log: log.child("update"))
        network.bind(to: self)
    }

    /// Polls `settings.url` from now on: the first poll `firstPollDelay` seconds from now (not
    /// blocking playback), then every `settings.interval` ± jitter, on the run loop's timer once
    /// attached; each poll and download on a thread of its own. See `NetworkUpdateService`.
    public func startNetworkUpdates(settings: UpdateSettings, firstPollDelay: Double = NetworkUpdateService.firstPollDelay) {
        network.start(settings: settings, firstPollDelay: firstPollDelay)
    }

    /// Polls `update.url` at once (after the import running, if one is). `vitrine ctl sync`.
    public func syncNow() { network.syncNow() }

    /// Imports the catalog folder at `url` once (its manifest fetched whole, then as a poll that
    /// found it changed), with the `update` settings (defaults when there is no `update.url`).
    /// `vitrine ctl import URL`.
    public func importURL(_ url: String) { network.importURL(url, requestFile: nil) }

    /// The last import's outcome (a stick, a request, a network update), for the status command.
    public var lastImport: ImportRecord? { lock.lock(); defer { lock.unlock() }; return lastRecord }
    private var lastRecord: ImportRecord?

    /// The last poll of `update.url`, for the status command; nil before the first.
    public var lastPoll: PollRecord? { network.lastPoll }

    func record(_ r: ImportRecord) { lock.lock(); lastRecord = r; lock.unlock() }

    /// Takes the one-import-at-a-time flag; false when an import (stick, request, network) runs.
    func claim() -> Bool {
        lock.lock(); defer { lock.unlock() }
        if busy { return false }
        busy = true
        return true
    }

    /// Ends an import begun with `claim()`: hands `catalog` (a switch) to the run loop
    /// (`takeSwitchedCatalog`), then starts what waited: a queued request, a network poll.
    func release(switched catalog: LibraryCatalog?) {
        lock.lock()
        if let catalog { switched = catalog }
        busy = false
        let next = queuedRequests.isEmpty ? nil : queuedRequests.removeFirst()
        lock.unlock()
        if let next { request(next) }
        network.resume()
    }

    /// The result banner of a switched import: "Playing it now", or "… after the current item".
    func showSwitched(_ result: ImportResult) {
        let immediate = result.switchMode == .immediate
        show(Banner(title: result.message, detail: immediate ? "Playing it now" : "Playing it after the current item",
                    progress: nil, style: .success, hideAfter: Self.resultSeconds), awaitingSwitch: !immediate)
    }

    /// Takes the import's banner down (a stick pulled, a network update that stopped).
    func hideBanner() {
        lock.lock()
        lastBanner = nil
        let board = bannerBoard
        lock.unlock()
        board?.hide()
    }

    /// `<library>/player.lock`: a running player holds `flock(LOCK_EX)` on it, so `vitrine import`
    /// knows to hand its stick to the player instead of importing on its own.
    public static func playerLockPath(library: String) -> String { library + "/player.lock" }

    /// Takes the player lock; nil when another process holds it (or the library cannot be written).
    public static func lockAsPlayer(library: String) -> FileDescriptor? {
        guard let fd = try? FileDescriptor(opening: playerLockPath(library: library), .readWrite, options: [.create], permissions: 0o644),
              (try? fd.tryLockExclusive()) == true else { return nil }
        return fd
    }

    /// Takes the player lock, trying again every 50 ms for up to `seconds` (`vitrine import` takes it
    /// for an instant to see whether a player runs), on an event loop's timer of its own; nil when
    /// another process still holds it.
    public static func lockAsPlayer(library: String, retryingFor seconds: Double) -> FileDescriptor? {
        if let fd = lockAsPlayer(library: library) { return fd }
        guard let loop = try? EventLoop() else { return nil }
        defer { loop.close() }
        var fd: FileDescriptor?
        var tries = 1
        let retry = loop.scheduleRepeatingTimer(every: .milliseconds(50)) { _ in
            fd = lockAsPlayer(library: library)
            tries += 1
            if fd != nil || Double(tries) * 0.05 >= seconds { loop.stop() }
        }
        defer { retry.cancel() }
        try? loop.run()
        return fd
    }

    /// Whether a player holds the lock of `library` now.
    public static func isPlayerRunning(library: String) -> Bool {
        guard FileManager.default.fileExists(atPath: playerLockPath(library: library)) else { return false }
        guard let fd = try? FileDescriptor(opening: playerLockPath(library: library), .readOnly) else { return false }
        // Unlocked before closing: a process spawned meanwhile shares the descriptor until it execs.
        defer { try? fd.unlock(); try? fd.close() }
        return (try? fd.tryLockExclusive()) == false
    }

    /// The request folder of `vitrine import` (inside the library, which the player may write).
    public static func requestFolder(library: String) -> String { library + "/requests" }

    /// The catalog an import switched to, once; nil when there is none new.
    public func takeSwitchedCatalog() -> LibraryCatalog? {
        lock.lock(); defer { lock.unlock() }
        let c = switched
        switched = nil
        if c != nil { switchTaken = true }
        return c
    }

    /// Whether an import is running.
    public var isImporting: Bool { lock.lock(); defer { lock.unlock() }; return busy }

    /// The run loop the watches are registered on (`attach(to:)`): the loop's own, like the watches.
    private var attached: (loop: EventLoop, watches: [IORegistration], next: LoopTimer?)?

    /// Watches on `loop` (the calling thread's): each watch's inotify descriptor is registered for
    /// readable, and one timer brings the next folder scan (every `scanInterval`) and, while a folder
    /// cannot be watched, the next attempt (every 10 s). Nothing is looked at between those.
    public func attach(to loop: EventLoop) {
        loop.assertInLoop()
        attached = (loop, [], nil)
        look()
        network.attach(to: loop)
    }

    /// Stops watching on the loop given to `attach(to:)`; an import running goes on.
    public func detach() {
        network.detach()
        guard let a = attached else { return }
        a.watches.forEach { $0.cancel() }
        a.next?.cancel()
        attached = nil
    }

    /// One `poll`, then the loop's registrations follow the watches (a folder gone, a watch reopened)
    /// and the timer moves to the next scan or reopening attempt.
    private func look() {
        poll(now: monotonicNow())
        guard let a = attached else { return }
        a.watches.forEach { $0.cancel() }
        var watches: [IORegistration] = []
        for fd in [stickWatch?.fileDescriptor, requestWatch?.fileDescriptor].compactMap({ $0 }) {
            do {
                watches.append(try a.loop.register(fd, for: .readable) { [unowned self] _ in look() })
            } catch {
                log.error("import: cannot watch on the run loop: \(error)")
            }
        }
        var due = nextScan
        if stickWatch == nil || requestWatch == nil { due = min(due, nextWatchAttempt) }
        a.next?.cancel()
        let next = a.loop.scheduleTimer(at: Deadline(seconds: due)) { [unowned self] in look() }
        attached = (a.loop, watches, next)
    }

    /// One look for sticks and requests, with `CLOCK_MONOTONIC` seconds: reads the watches (never
    /// blocks), scans the stick folder when `scanInterval` has passed, retries a missing watch every 10 s.
    public func poll(now: Double) {
        confinement.check()
        if stickWatch == nil || requestWatch == nil, now >= nextWatchAttempt {
            nextWatchAttempt = now + 10
            openWatches()
        }
        var scan = now >= nextScan
        if let w = stickWatch {
            let changes = w.changes()
            if changes.contains(.folderGone) { stickWatch = nil }
            if !changes.isEmpty { scan = true }
        }
        if let w = requestWatch {
            let changes = w.changes()
            if changes.contains(.folderGone) { requestWatch = nil }
            for case .added(let name) in changes where name.hasSuffix(".json") {
                request(Self.requestFolder(library: library.path) + "/" + name)
            }
            if changes.contains(.overflow) { rescanRequests() }
        }
        if scan {
            nextScan = now + Self.scanInterval
            scanSticks()
        }
    }

    private func openWatches() {
        if stickWatch == nil {
            do { stickWatch = try DirectoryWatcher(path: mediaRoot); scanSticks() } catch {
                log.debug("not watching \(mediaRoot) for USB sticks: \(error)")
            }
        }
        if requestWatch == nil {
            let folder = Self.requestFolder(library: library.path)
            try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            do { requestWatch = try DirectoryWatcher(path: folder); rescanRequests() } catch {
                log.warning("not accepting `vitrine import` requests: \(error)")
            }
        }
    }

    /// Whether the stick mounted at `folder` still gives its `vitrine/manifest.json` whole: false once
    /// it is pulled (EIO, or the folder gone), true for a stick that is there, however wrong its catalog.
    static func manifestReadable(stick folder: String) -> Bool {
        FileManager.default.contents(atPath: folder + "/vitrine/manifest.json") != nil
    }

    /// The identity of a mounted stick folder that holds `vitrine/manifest.json`: its device, the
    /// manifest's inode, size and change time; nil when there is no manifest (yet).
    static func stickIdentity(_ folder: String) -> String? {
        guard let dir = try? FileSystem.status(folder, followLinks: true),
              let manifest = try? FileSystem.status(folder + "/vitrine/manifest.json", followLinks: true) else { return nil }
        return "\(dir.device):\(manifest.inode):\(manifest.size):\(manifest.changeTime)"
    }

    private func scanSticks() {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: mediaRoot)) ?? []
        var present: [String: String] = [:]
        for name in names.sorted() where !name.hasPrefix(".") {
            let folder = mediaRoot + "/" + name
            if let id = Self.stickIdentity(folder) { present[folder] = id }
        }
        lock.lock()
        // A stick that went away (or changed) may be imported again when it comes back.
        handled = handled.filter { present[$0.key] == $0.value }
        let fresh = present.filter { handled[$0.key] == nil }.keys.sorted()
        lock.unlock()
        log.debug("scanned \(mediaRoot): \(present.count) stick(s) with a manifest, \(fresh.count) new")
        for folder in fresh {
            guard start(source: folder, requestFile: nil) else { return }
            lock.lock(); handled[folder] = present[folder]; lock.unlock()
        }
    }

    private func rescanRequests() {
        let folder = Self.requestFolder(library: library.path)
        for name in ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted() where name.hasSuffix(".json") {
            request(folder + "/" + name)
        }
    }

    /// A request file from `vitrine import`: `{"path": "/media/stick"}`, or `{"url": "https://…/"}`
    /// (a network import, `NetworkUpdateService.importURL`), answered by `<id>.result`.
    private func request(_ file: String) {
        lock.lock()
        if queuedRequests.contains(file) { lock.unlock(); return }
        lock.unlock()
        guard let data = FileManager.default.contents(atPath: file),
              case let .object(members)? = try? JSONValue(parsing: data) else {
            log.warning("import request \(file): unreadable; expected {\"path\": \"…\"} or {\"url\": \"…\"}")
            Self.answer(file, ImportAnswer(outcome: "failed", message: "unreadable request", problems: []))
            return
        }
        if case let .string(url)? = members.first(where: { $0.key == "url" })?.value {
            network.importURL(url, requestFile: file)
            return
        }
        guard case let .string(path)? = members.first(where: { $0.key == "path" })?.value else {
            log.warning("import request \(file): unreadable; expected {\"path\": \"…\"} or {\"url\": \"…\"}")
            Self.answer(file, ImportAnswer(outcome: "failed", message: "unreadable request", problems: []))
            return
        }
        if !start(source: path, requestFile: file) {
            lock.lock(); queuedRequests.append(file); lock.unlock()
        }
    }

    /// Starts an import on its own thread; false when one is already running.
    @discardableResult
    func start(source: String, requestFile: String?) -> Bool {
        guard claim() else { return false }
        log.info("importing a catalog from \(source)")
        eventLog?.writeImportStarted(source: source)
        show(Banner(title: "Updating catalog…", detail: "Checking \(source)", progress: nil, style: .progress))
        let thread = Thread { [self] in
            var lastShown = 0.0
            let result = library.importStick(at: source, settings: settings) { p in
                let t = monotonicNow()
                guard t - lastShown >= 0.1 || p.phase != .copying else { return }
                lastShown = t
                self.show(Self.progressBanner(p))
            }
            finish(result, source: source, requestFile: requestFile)
        }
        thread.name = "vitrine-import"
        thread.start()
        return true
    }

    /// The banner for one progress report: percent and time left while copying.
    static func progressBanner(_ p: ImportProgress, network: Bool = false) -> Banner {
        switch p.phase {
        case .checking:
            return Banner(title: "Updating catalog…", detail: network ? "Checking the download" : "Checking the stick",
                          progress: nil, style: .progress)
        case .copying:
            var detail = "\(Int((p.fraction * 100).rounded(.down))) %"
            if let eta = p.eta { detail += " · about \(max(1, Int(eta.rounded(.up)))) s left" }
            detail += " · \(p.filesDone) of \(p.filesTotal) files"
            return Banner(title: "Updating catalog…", detail: detail, progress: p.fraction, style: .progress)
        case .syncing, .switching:
            return Banner(title: "Updating catalog…", detail: "Saving", progress: 1, style: .progress)
        }
    }

    private func finish(_ result: ImportResult, source: String, requestFile: String?) {
        eventLog?.writeImportFinished(result, source: source)
        var answer = ImportAnswer(outcome: result.outcome.rawValue, message: result.message, problems: result.problems.map(\.description))
        switch result.outcome {
        case .switched:
            log.info("import from \(source): \(result.message) (\(result.bytes) bytes in \(String(format: "%.1f", result.seconds)) s)")
            showSwitched(result)
        case .refused where Self.isAlreadyPlaying(source: source, library: library):
            // The same stick again (its manifest byte for byte the catalog that plays): not a fault.
            log.info("import from \(source): the catalog on it is the one playing (\(result.message))")
            show(Banner(title: "Catalog is up to date", detail: result.version.map { "Version \($0) is already playing" } ?? "",
                        progress: nil, style: .success, hideAfter: Self.resultSeconds))
            answer = ImportAnswer(outcome: ImportAnswer.upToDate, message: Self.upToDateMessage(version: result.version), problems: [])
        case .failed where requestFile == nil && !Self.manifestReadable(stick: source):
            // The stick was pulled (its manifest cannot be read any more, as during its unmount): not
            // a failed update to show the public, and nothing changed.
            log.warning("import from \(source) stopped: the stick was removed (\(result.message)); the playing catalog is unchanged")
            hideBanner()
        case .refused, .failed:
            log.error("import from \(source) \(result.outcome.rawValue): \(result.message)")
            for p in result.problems.dropFirst() { log.error("  \(p)") }
            show(Banner(title: result.outcome == .refused ? "Catalog update refused" : "Catalog update failed",
                               detail: result.message, progress: nil, style: .failure, hideAfter: Self.resultSeconds))
        }
        if let requestFile { Self.answer(requestFile, answer) }
        record(ImportRecord(source: source, outcome: answer.outcome, message: answer.message))
        release(switched: result.outcome == .switched ? result.catalog : nil)
    }

    /// Whether the stick's `vitrine/manifest.json` is byte for byte the `catalog.json` of the library's
    /// `current` (an import keeps the manifest as it was on the stick): importing it again is not a
    /// fault, the catalog is up to date.
    public static func isAlreadyPlaying(source: String, library: CatalogLibrary) -> Bool {
        let stick = source.hasSuffix("/vitrine") || source.hasSuffix("/vitrine/") ? source : source + "/vitrine"
        guard let a = FileManager.default.contents(atPath: stick + "/manifest.json"), !a.isEmpty,
              let b = FileManager.default.contents(atPath: library.path + "/current/catalog.json") else { return false }
        return a == b
    }

    /// What `vitrine import` prints, and the player answers, for a stick that holds the catalog
    /// playing: `Catalog is up to date: version 4 is already playing`.
    public static func upToDateMessage(version: Int?) -> String {
        "Catalog is up to date" + (version.map { ": version \($0) is already playing" } ?? "")
    }

    /// What the player answers a `vitrine import` request with (`<request>.result`, JSON).
    public struct ImportAnswer: Sendable, Equatable {
        /// The outcome of a stick that holds the catalog already playing (not a refusal: exit 0).
        public static let upToDate = "upToDate"
        /// `switched`, `refused`, `failed` (`ImportResult.Outcome`), or `upToDate`.
        public var outcome: String
        public var message: String
        public var problems: [String]

        public var json: String {
            "{\"outcome\":\(EventLog.quote(outcome)),\"message\":\(EventLog.quote(message)),\"problems\":["
                + problems.map(EventLog.quote).joined(separator: ",") + "]}\n"
        }

        /// Reads an answer file; nil when it is not one.
        public static func read(_ path: String) -> ImportAnswer? {
            guard let data = FileManager.default.contents(atPath: path),
                  case let .object(m)? = try? JSONValue(parsing: data) else { return nil }
            func s(_ k: String) -> String? { if case let .string(v)? = m.first(where: { $0.key == k })?.value { return v } else { return nil } }
            var problems: [String] = []
            if case let .array(a)? = m.first(where: { $0.key == "problems" })?.value {
                for case let .string(p) in a { problems.append(p) }
            }
            guard let outcome = s("outcome"), let message = s("message") else { return nil }
            return ImportAnswer(outcome: outcome, message: message, problems: problems)
        }
    }

    /// Writes `<request without .json>.result` atomically (`FileSystem.writeAtomically`), then removes the request.
    static func answer(_ requestFile: String, _ answer: ImportAnswer) {
        let base = String(requestFile.dropLast(".json".count))
        try? FileSystem.writeAtomically(Array(answer.json.utf8), to: base + ".result")
        try? FileSystem.unlink(requestFile)
    }
}

extension ImportService {
    /// The status's `lastImport`: `{"source", "outcome", "message", "time"}`, or null.
    var lastImportStatus: JSONValue {
        guard let r = lastImport else { return .null }
        return .object([("source", .string(r.source)), ("outcome", .string(r.outcome)), ("message", .string(r.message)),
                        ("time", .string(EventLog.iso(r.wall)))])
    }

    /// The status's `lastPoll`: `{"url", "outcome", "bytes", "message", "time"}`, or null.
    var lastPollStatus: JSONValue {
        guard let p = lastPoll else { return .null }
        return .object([("url", .string(p.url)), ("outcome", .string(p.outcome.rawValue)), ("bytes", .int(p.bytes)),
                        ("message", .text(p.message)), ("time", .string(EventLog.iso(p.wall)))])
    }

    /// Starts importing the catalog folder (a stick's mount point or its `vitrine/` folder) or the
    /// catalog URL at `source`; nil, or why not (a folder while another import runs: a URL waits
    /// for it instead).
    func startImport(source: String) -> String? {
        if UpdateSettings.isURL(source) { importURL(source); return nil }
        guard source.hasPrefix("/") else { return "expected an absolute folder path or an https:// URL" }
        return start(source: source, requestFile: nil) ? nil : "an import is already running"
    }

    /// Polls `update.url` now; nil, or why not.
    func syncNowIfConfigured() -> String? {
        guard network.isPolling else { return "there is no update.url in the config" }
        syncNow()
        return nil
    }
}
