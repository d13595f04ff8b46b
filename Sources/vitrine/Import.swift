// `vitrine import`: a USB stick (or a catalog folder's URL) into the library, with progress on stderr
// and sysexits codes.
import Foundation
import RunLoop
import Inotify
import Vitrine
import CatalogStore
import FileIO
import VitrineCore
import SystemSupport

func commandImport(_ argv: [String]) throws -> Exit {
    let args = try Arguments(argv, valued: ["library", "config", "events"], flags: ["check", "deep", "quiet", "standalone"])
    if args.wantsHelp { say(importHelp); return .ok }
    let config = try loadConfig(args)
    let library = CatalogLibrary(path: args.options["library"] ?? config.library)
    if args.flags.contains("check") {
        guard args.positional.isEmpty else { throw UsageError(description: "import --check takes no PATH") }
        return checkLibrary(library, deep: args.flags.contains("deep"))
    }
    guard args.positional.count == 1 else {
        throw UsageError(description: "import needs exactly one PATH (the stick, or its vitrine/ folder) or URL (a catalog folder, https://…/)")
    }
    if args.flags.contains("deep") { throw UsageError(description: "--deep goes with --check") }
    let source = args.positional[0]
    let isURL = UpdateSettings.isURL(source)
    if ImportService.isPlayerRunning(library: library.path), !args.flags.contains("standalone") {
        return try importThroughPlayer(source, library: library, quiet: args.flags.contains("quiet"))
    }
    if let failure = becomeLibraryOwner(library.path) {
        StandardStreams.err("vitrine import: \(failure)\n")
        return .failure
    }
    let events = try args.options["events"].map { path -> EventLog in
        do { return try EventLog(path: path) } catch { throw UsageError(description: "--events: cannot open \(path): \(error.localizedDescription)") }
    }
    let quiet = args.flags.contains("quiet")
    if isURL {
        return importFromNetwork(source, library: library, config: config, events: events, quiet: quiet)
    }
    events?.writeImportStarted(source: source)
    var lastLine = -1.0
    let result = library.importStick(at: source, settings: config.importSettings) { progress in
        guard !quiet else { return }
        // At most one progress line a second, plus one per phase.
        if progress.phase == .copying, progress.elapsed - lastLine < 1 { return }
        lastLine = progress.elapsed
        StandardStreams.err("vitrine import: \(progress.summary)\n")
    }
    events?.writeImportFinished(result, source: source)
    for note in result.notes { StandardStreams.err("vitrine import: note: \(note)\n") }
    switch result.outcome {
    case .switched:
        sayImported(result)
    case .refused where ImportService.isAlreadyPlaying(source: source, library: library):
        // The same stick again: the catalog on it is the one playing.
        say(ImportService.upToDateMessage(version: result.version))
        return .ok
    case .refused, .failed:
        StandardStreams.err("vitrine import: \(result.message)\n")
        if result.problems.count > 1 {
            for problem in result.problems { StandardStreams.err("  \(problem)\n") }
        }
    }
    return Exit(rawValue: result.exitCode) ?? .failure
}

/// The line of a switched import: `Updated to version 2: 4 items (4 files, 256.0 MiB in 3.1 s, …)`.
func sayImported(_ result: ImportResult) {
    let rate = result.seconds > 0 ? Double(result.bytes) / result.seconds : 0
    say("\(result.message) (\(result.files) files, \(ByteCount.text(result.bytes)) in "
          + "\(String(format: "%.1f", result.seconds)) s, \(ByteCount.mebibytes(Int64(rate))) MiB/s; "
          + "\(result.catalog.map { "gen.\($0.generation)" } ?? "?"), switch: \(result.switchMode.rawValue))")
}

/// `vitrine import URL` without a running player: the manifest fetched whole, checked as a stick's,
/// its files linked from the catalog playing or downloaded into `<library>/downloads/vitrine/`, and
/// that folder imported (`NetworkUpdate`, the code the player's network updates run). The `update`
/// settings of the config apply (CA, timeouts, bandwidth, `update.requireSignature`); when the URL
/// is `update.url`, the validators are recorded so the player's next poll is a 304.
/// Exits 0 switched (or up to date), 65 refused, 1 failed.
func importFromNetwork(_ url: String, library: CatalogLibrary, config: PlayerConfig, events: EventLog?, quiet: Bool) -> Exit {
    let settings = (config.update ?? config.updateDefaults).with(url: url)
    let configured = config.update?.url == settings.url
    let update: NetworkUpdate
    do {
        update = try NetworkUpdate(library: library, settings: settings, importSettings: config.importSettings)
    } catch {
        StandardStreams.err("vitrine import: \(error)\n")
        return .failure
    }
    events?.writeImportStarted(source: settings.url)
    func failed(_ problem: ImportProblem) -> Exit {
        let result = ImportResult(outcome: .failed, message: ImportResult.message(for: .failed, problems: [problem], version: nil, items: nil),
                                  problems: [problem], notes: [], version: nil, items: nil, files: 0, bytes: 0, seconds: 0,
                                  catalog: nil, switchMode: config.importSettings.switchMode)
        events?.writeImportFinished(result, source: settings.url)
        StandardStreams.err("vitrine import: \(result.message)\n")
        return .failure
    }
    let manifest: [UInt8], signature: [UInt8]?
    do {
        guard case let .changed(m, s) = try update.poll(conditional: false) else { return failed(ImportProblem(.downloadFailed, "no manifest")) }
        (manifest, signature) = (m, s)
    } catch {
        return failed(ImportProblem(.downloadFailed, file: "manifest.json", error.description))
    }
    let check = update.check(manifest: manifest, signature: signature)
    switch check.outcome {
    case .upToDate:
        if configured { try? update.commit() }
        say(ImportService.upToDateMessage(version: check.version))
        return .ok
    case .refused:
        let result = check.result!
        events?.writeImportFinished(result, source: settings.url)
        if configured { try? update.commit() }
        StandardStreams.err("vitrine import: \(result.message)\n")
        if result.problems.count > 1 { for problem in result.problems { StandardStreams.err("  \(problem)\n") } }
        return .dataError
    case .accepted:
        break
    }
    var lastLine = -1.0
    let start = monotonicNow()
    let done = update.fetchAndImport(check, manifest: manifest, signature: signature) { p in
        guard !quiet else { return }
        let t = monotonicNow() - start
        switch p {
        case let .downloading(doneBytes, total, files):
            if t - lastLine < 1 && doneBytes < total { return }
            lastLine = t
            let pct = total > 0 ? doneBytes * 100 / total : 100
            StandardStreams.err("vitrine import: downloading \(files) file(s): \(ByteCount.mebibytes(Int64(doneBytes))) of "
                                + "\(ByteCount.mebibytes(Int64(total))) MiB (\(pct) %)\n")
        case .importing(let i):
            if i.phase == .copying, t - lastLine < 1 { return }
            lastLine = t
            StandardStreams.err("vitrine import: \(i.summary)\n")
        }
    }
    let result = done.result
    events?.writeImportFinished(result, source: settings.url)
    for note in result.notes { StandardStreams.err("vitrine import: note: \(note)\n") }
    if !quiet {
        StandardStreams.err("vitrine import: \(done.download.downloaded) file(s) downloaded (\(ByteCount.text(Int64(done.download.bytesTransferred)))), "
                            + "\(done.linkedFromCurrent) linked from the catalog playing, \(done.download.alreadyPresent) already downloaded, "
                            + "\(done.download.retries) retries\n")
    }
    switch result.outcome {
    case .switched:
        if configured { try? update.commit() }
        sayImported(result)
    case .refused, .failed:
        StandardStreams.err("vitrine import: \(result.message)\n")
        if result.problems.count > 1 { for problem in result.problems { StandardStreams.err("  \(problem)\n") } }
    }
    return Exit(rawValue: result.exitCode) ?? .failure
}

/// `vitrine import --check`: cleans up, then prints what would play and the last accepted version.
func checkLibrary(_ library: CatalogLibrary, deep: Bool) -> Exit {
    do {
        if let cleanup = try library.cleanUp() {
            for name in cleanup.removed { say("removed \(library.path)/\(name)") }
        } else {
            say("an import is running: nothing cleaned up")
        }
    } catch {
        StandardStreams.err("vitrine import: \(error)\n")
        return .failure
    }
    let resolution = library.resolve(verifyHashes: deep)
    for skipped in resolution.skipped { say("skipped \(skipped)") }
    say("last accepted version: \(library.lastAcceptedVersion().map(String.init) ?? "none")")
    guard let catalog = resolution.catalog else {
        say("nothing to play: the player shows its slate")
        return .dataError
    }
    say("\(catalog.slot.rawValue): \(catalog.summary) (\(deep ? "sizes and hashes" : "sizes") checked) \(catalog.directory)")
    return .ok
}

/// A player runs on this library: the import runs there (its progress and result on screen, in its
/// event log), through a request file in `<library>/requests/` that the player watches with inotify.
/// Waits for the player's answer and exits as a standalone import would (0, 65 or 1).
func importThroughPlayer(_ source: String, library: CatalogLibrary, quiet: Bool) throws -> Exit {
    let folder = ImportService.requestFolder(library: library.path)
    let isURL = UpdateSettings.isURL(source)
    let absolute = isURL || source.hasPrefix("/") ? source : FileManager.default.currentDirectoryPath + "/" + source
    let id = "\(ProcessInfo.processInfo.processIdentifier)-\(UUID().uuidString.prefix(8))"
    let request = folder + "/" + id + ".json", answer = folder + "/" + id + ".result"
    let watch: DirectoryWatcher
    do {
        try FileSystem.makeDirectories(folder)
        // Watched before the request is written, so the answer's arrival cannot be missed.
        watch = try DirectoryWatcher(path: folder)
        try FileSystem.writeAtomically(Array("{\"\(isURL ? "url" : "path")\":\(EventLog.quote(absolute))}\n".utf8), to: request)
    } catch {
        StandardStreams.err("vitrine import: cannot hand \(source) to the running player (\(folder)): \(error)\n")
        return .failure
    }
    if !quiet { StandardStreams.err("vitrine import: the player is running; it imports \(absolute) (progress on its screen)\n") }
    // The player answers when the import ends, with a file in the request folder: wait for it there
    // (inotify), and from 10 s on look every 0.2 s whether the player still runs.
    let loop = try EventLoop()
    defer { loop.close() }
    var exit: Exit?
    func look(checkingThePlayer: Bool) {
        if let a = ImportService.ImportAnswer.read(answer) {
            try? FileManager.default.removeItem(atPath: answer)
            switch a.outcome {
            case "switched", ImportService.ImportAnswer.upToDate:
                say(a.message)
                exit = .ok
            default:
                StandardStreams.err("vitrine import: \(a.message)\n")
                if a.problems.count > 1 { for p in a.problems { StandardStreams.err("  \(p)\n") } }
                exit = a.outcome == "refused" ? .dataError : .failure
            }
        } else if checkingThePlayer, !ImportService.isPlayerRunning(library: library.path) {
            try? FileManager.default.removeItem(atPath: request)
            StandardStreams.err("vitrine import: the player stopped before answering\n")
            exit = .failure
        }
        if exit != nil { loop.stop() }
    }
    let registration = try loop.register(watch.fileDescriptor, for: .readable) { _ in
        _ = watch.changes()
        look(checkingThePlayer: false)
    }
    defer { registration.cancel() }
    let liveness = loop.scheduleRepeatingTimer(every: .milliseconds(200), startingAt: loop.now + .seconds(10)) { _ in
        look(checkingThePlayer: true)
    }
    defer { liveness.cancel() }
    look(checkingThePlayer: false)
    if exit == nil { try loop.run() }
    return exit ?? .failure
}

/// Run as root on a library another user owns (the appliance's `vitrine`), an import takes that
/// user's identity first, so the generations it writes stay the player's to replace and delete.
/// Returns why it could not, or nil (also when there is nothing to do).
func becomeLibraryOwner(_ library: String) -> String? {
    guard ProcessIdentity.userID == 0,
          let status = try? FileSystem.status(of: library), status.owner != 0 else { return nil }
    do {
        try ProcessIdentity.become(user: status.owner, group: status.group)
    } catch {
        return "cannot take the library owner's identity (uid \(status.owner)): \(error)"
    }
    return nil
}
