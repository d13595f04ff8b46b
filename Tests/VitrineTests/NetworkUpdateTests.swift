// Network catalog updates against a real nginx over HTTPS on loopback, with a test CA the fixture
// makes (NginxServer) and catalogs signed by the minisign CLI: the service and NetworkUpdate end to
// end, every fault, a restart, and a player that switches to the downloaded catalog on screen.
import Foundation
import Testing
import SystemSupport
@testable import Vitrine
import CatalogStore
import Crypto
import FileIO
import HTTPFetch
import VitrineCore
import VitrineTestSupport
#if canImport(Glibc)
import Glibc
#endif

let minisignInstalled = FileManager.default.isExecutableFile(atPath: "/usr/bin/minisign")

/// nginx serving `server.root` at `/catalog/` (and its other locations), a minisign key pair, a
/// library, an event log and a log in memory.
final class NetworkFixture: @unchecked Sendable {
    let server: NginxServer
    let root: String
    let library: CatalogLibrary
    let events: String
    let keyFolder: String
    let publicKey: MinisignPublicKey
    let records: @Sendable () -> [LogRecord]
    let log: Logger
    /// mtimes handed out to published manifests, one second apart, so nginx's ETag ("mtime-size")
    /// always changes with the manifest.
    private var nextTime = Date().timeIntervalSince1970.rounded(.down) - 100_000

    init() throws {
        server = try NginxServer()
        root = try Harness.newFolder("network")
        library = CatalogLibrary(path: root + "/lib")
        events = root + "/events.jsonl"
        keyFolder = root + "/keys"
        try FileManager.default.createDirectory(atPath: keyFolder, withIntermediateDirectories: true)
        try Self.minisign(["-G", "-W", "-p", keyFolder + "/k.pub", "-s", keyFolder + "/k.key"])
        publicKey = try MinisignPublicKey(String(contentsOfFile: keyFolder + "/k.pub", encoding: .utf8))
        let (sink, records) = LogSink.memory()
        self.records = records
        log = Logger(label: "test", sink: sink)
    }

    static func minisign(_ args: [String]) throws {
        let r = try Subprocess.run("/usr/bin/minisign", args, standardOutput: .discard, standardError: .capture)
        if r.code != 0 { throw HarnessError(description: "minisign \(args): \(r.err)") }
    }

    /// `import.*` of the box: the test key, and `switch: immediate`.
    var importSettings: ImportSettings { ImportSettings(trustedKeys: [publicKey], switchMode: .immediate) }

    /// The update settings for `location` on the server's HTTPS port (or `port`), trusting the test CA.
    func settings(_ location: String = "catalog", port: Int32? = nil, requireSignature: Bool = true) -> UpdateSettings {
        UpdateSettings(url: "https://localhost:\(port ?? server.port)/\(location)/", caFile: server.caFile,
                       requireSignature: requireSignature, connectTimeout: 3, lowSpeedTimeout: 3)
    }

    /// Publishes a catalog in the served folder: the media, then the signature and the manifest
    /// (one video item per file, with its size and SHA-256 from `sha256:` or the bytes). Returns the manifest.
    @discardableResult
    func publish(version: Int, media: [(path: String, bytes: [UInt8])], signed: Bool = true,
                 sha256: [String: String] = [:]) throws -> [UInt8] {
        for file in media { try server.put(file.path, file.bytes) }
        let items = media.enumerated().map { i, f in
            "{\"id\": \"item\(i)\", \"type\": \"video\", \"src\": \"\(f.path)\", \"size\": \(f.bytes.count), "
                + "\"sha256\": \"\(sha256[f.path] ?? SHA256.hash(f.bytes).hex)\"}"
        }
        let text = "{\"schema\": \"vitrine.manifest/1\", \"version\": \(version), \"title\": \"v\(version)\",\n \"playlist\": [\n  "
            + items.joined(separator: ",\n  ") + "]}\n"
        let bytes = Array(text.utf8)
        try publishManifest(bytes, signed: signed, version: version)
        return bytes
    }

    /// Writes `manifest.json` (and its signature, or none) with a fresh mtime.
    func publishManifest(_ bytes: [UInt8], signed: Bool, version: Int) throws {
        let manifest = server.root + "/manifest.json", signature = manifest + ".minisig"
        try? FileManager.default.removeItem(atPath: signature)
        try server.put("manifest.json", bytes)
        if signed { try Self.minisign(["-S", "-s", keyFolder + "/k.key", "-m", manifest, "-t", "vitrine version \(version)"]) }
        nextTime += 1
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: nextTime)], ofItemAtPath: manifest)
    }

    /// An import service on the library with network updates of `settings` (not attached to a loop:
    /// the tests poll with `syncNow()`).
    func service(_ settings: UpdateSettings? = nil, banner: StatusBanner? = nil) throws -> ImportService {
        try FileManager.default.createDirectory(atPath: root + "/media", withIntermediateDirectories: true)
        let service = ImportService(library: library, settings: importSettings, mediaRoot: root + "/media",
                                    eventLog: try EventLog(path: events), log: log)
        service.banner = banner
        service.startNetworkUpdates(settings: settings ?? self.settings(), firstPollDelay: 0)
        return service
    }

    /// `syncNow()`, then waits for the poll and what it led to to end; returns the poll's record.
    @discardableResult
    func sync(_ service: ImportService, timeout: Double = 60) -> PollRecord? {
        let before = service.lastPoll
        service.syncNow()
        _ = PlayerImportTests.waitFor(timeout) { service.lastPoll != before && !service.network.isWorking }
        return service.lastPoll
    }

    func eventLines(_ name: String) -> [String] { PlayerImportTests.events(events, name) }
    func logLines(containing text: String) -> [LogRecord] { records().filter { $0.message.contains(text) } }

    /// The media requests of the access log (`GET /<location>/media/… HTTP/1.1 <status> <bytes>`).
    func mediaRequests(_ location: String = "catalog") -> [String] { server.accessLog(containing: "/\(location)/media/") }

    var currentTarget: String? { try? FileSystem.readLink(library.path + "/current") }

    func inode(_ path: String) -> UInt64? { (try? FileSystem.status(path, followLinks: false))??.inode }
}

/// `count` seeded random bytes (SplitMix64).
func networkBytes(_ count: Int, seed: UInt64) -> [UInt8] {
    var generator = SplitMix64(seed: seed)
    var out = [UInt8]()
    out.reserveCapacity(count + 8)
    while out.count < count { withUnsafeBytes(of: generator.next()) { out.append(contentsOf: $0) } }
    return Array(out.prefix(count))
}

@Suite("Network updates: nginx over HTTPS with a test CA", .serialized,
       .enabled(if: NginxAvailability.installed, NginxAvailability.absent),
       .enabled(if: minisignInstalled, "minisign not installed (tools/setup)"))
struct NetworkUpdateTests {
    @Test("the service switches the library to the server's signed catalog (hashes right, files linked, events), then a poll costs one 304")
    func updatesThenNotModified() throws {
        let f = try NetworkFixture()
        let media = [("media/a.bin", networkBytes(700_000, seed: 1)), ("media/spring/b c.bin", networkBytes(1_500_000, seed: 2))]
        try f.publish(version: 1, media: media)
        let banner = StatusBanner()
        let service = try f.service(banner: banner)
        let first = f.sync(service)
        #expect(first?.outcome == .changed)
        let switched = try #require(service.takeSwitchedCatalog())
        #expect(switched.generation == 1 && f.currentTarget == "gen.1")
        let current = try #require(f.library.resolve(verifyHashes: true).catalog)
        #expect(current.generation == 1)
        #expect(current.files.map(\.sha256) == media.map { SHA256.hash($0.1).hex })
        for (path, bytes) in media {
            #expect(FileManager.default.contents(atPath: f.library.path + "/gen.1/" + path).map(Array.init) == bytes)
            // One copy on disk: the generation's file is the download, linked.
            #expect(f.inode(f.library.path + "/gen.1/" + path) == f.inode(f.library.downloadsFolder + "/" + path))
        }
        #expect(banner.current?.title == "Updated to version 1: 2 items" && banner.current?.detail == "Playing it now")
        let url = f.settings().url
        #expect(f.eventLines("importStarted").count == 1 && f.eventLines("importStarted")[0].contains("\"source\":\(EventLog.quote(url))"))
        let finished = try #require(f.eventLines("importFinished").first)
        #expect(finished.contains("\"result\":\"switched\"") && finished.contains("\"version\":1") && finished.contains("\"files\":2"))
        #expect(service.lastImport?.outcome == "switched" && service.lastImport?.source == url)
        #expect(service.lastImport?.message == "Updated to version 1: 2 items")
        #expect(f.mediaRequests().sorted() == ["GET /catalog/media/a.bin HTTP/1.1 200 700000",
                                               "GET /catalog/media/spring/b%20c.bin HTTP/1.1 200 1500000"])

        // Unchanged: one conditional GET answered 304, nothing else.
        let second = f.sync(service)
        #expect(second?.outcome == .unchanged)
        print("network update: the second poll received \(second?.bytes ?? -1) bytes (a 304)")
        #expect((second?.bytes ?? 0) > 0 && (second?.bytes ?? 999) < 400)
        let manifestGets = f.server.accessLog(containing: "GET /catalog/manifest.json HTTP")
        #expect(manifestGets.count == 2 && manifestGets.last == "GET /catalog/manifest.json HTTP/1.1 304 0")
        #expect(f.mediaRequests().count == 2)
        #expect(service.takeSwitchedCatalog() == nil)
        #expect(f.eventLines("importStarted").count == 1)
        // The next poll is `interval` ± `jitter` away (300 s ± 10 %).
        let delay = (service.network.nextPoll ?? 0) - monotonicNow()
        #expect(delay > 269 && delay <= 330, "next poll in \(delay) s")
    }

    @Test("vitrine import URL handed to a running player: a request file {\"url\": …} is imported by its network service and answered")
    func requestFileWithURL() throws {
        let f = try NetworkFixture()
        try f.publish(version: 7, media: [("media/a.bin", networkBytes(40_000, seed: 21))])
        try FileManager.default.createDirectory(atPath: f.root + "/media", withIntermediateDirectories: true)
        // No update.url: a one-off with the config's update.* (here: the test CA).
        let service = ImportService(library: f.library, settings: f.importSettings, mediaRoot: f.root + "/media",
                                    eventLog: try EventLog(path: f.events), log: f.log)
        service.network.defaults = f.settings().with(url: "")
        let folder = ImportService.requestFolder(library: f.library.path)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try Data("{\"url\":\(EventLog.quote(f.settings().url))}\n".utf8).write(to: URL(fileURLWithPath: folder + "/r1.json"))
        var answer: ImportService.ImportAnswer?
        #expect(PlayerImportTests.waitFor(30) {
            service.poll(now: monotonicNow())
            answer = ImportService.ImportAnswer.read(folder + "/r1.result")
            return answer != nil
        })
        #expect(answer == ImportService.ImportAnswer(outcome: "switched", message: "Updated to version 7: 1 item", problems: []))
        #expect(!FileManager.default.fileExists(atPath: folder + "/r1.json"))
        #expect(service.takeSwitchedCatalog()?.manifest.version == 7)
        #expect(service.lastPoll == nil, "a one-off is not a poll")
        // Not committed: the state file was not written.
        #expect(!FileManager.default.fileExists(atPath: NetworkUpdate.statePath(library: f.library)))
    }

    @Test("while a file downloads the banner says 'Downloading catalog… N %', then the import's own banner")
    func downloadBanner() throws {
        let f = try NetworkFixture()
        try f.publish(version: 1, media: [("media/big.bin", networkBytes(1_600_000, seed: 3))])
        let banner = StatusBanner()
        let service = try f.service(f.settings("throttled"), banner: banner)
        let seen = BannerTitles()
        let watching = Thread { while !seen.stopped { seen.note(banner.current); usleep(5_000) } }
        watching.start()
        f.sync(service)
        seen.stop()
        #expect(service.lastImport?.outcome == "switched")
        let titles = seen.titles
        #expect(titles.contains { $0.hasPrefix("Downloading catalog… ") && $0.hasSuffix(" %") && $0 != "Downloading catalog… 100 %" }, "\(titles)")
        #expect(titles.contains("Updating catalog…"))
        #expect(titles.last == "Updated to version 1: 1 item")
        let fractions = seen.progress
        #expect(fractions == fractions.sorted(), "the download's progress only grows")
    }

    @Test("a file that changed on the server after the manifest: refused (hash mismatch), current unchanged, fetched again at the next poll")
    func fileChangedOnServer() throws {
        let f = try NetworkFixture()
        let a = networkBytes(300_000, seed: 4)
        try f.publish(version: 1, media: [("media/a.bin", a)])
        let service = try f.service()
        f.sync(service)
        #expect(f.currentTarget == "gen.1")
        #expect(service.takeSwitchedCatalog()?.generation == 1)
        let playing = try #require(f.library.resolve(verifyHashes: true).catalog)
        // Version 2 promises b, but the server's b has other bytes of the same size.
        let b = networkBytes(400_000, seed: 5), served = networkBytes(400_000, seed: 6)
        try f.publish(version: 2, media: [("media/a.bin", a), ("media/b.bin", served)], sha256: ["media/b.bin": SHA256.hash(b).hex])
        f.sync(service)
        let last = try #require(service.lastImport)
        #expect(last.outcome == "refused")
        #expect(last.message.hasPrefix("Catalog from \(f.settings().url) refused: playlist[1].sha256: media/b.bin: hash mismatch: the server's file is not the manifest's"), "\(last.message)")
        #expect(f.library.resolve(verifyHashes: true).catalog == playing && f.currentTarget == "gen.1")
        #expect(service.takeSwitchedCatalog() == nil)
        #expect(!FileManager.default.fileExists(atPath: f.library.downloadsFolder + "/media/b.bin"))
        #expect(!FileManager.default.fileExists(atPath: f.library.downloadsFolder + "/media/b.bin.part"))
        // a was linked from the catalog playing, not fetched again.
        #expect(f.mediaRequests().filter { $0.contains("a.bin") }.count == 1)
        // Not committed: the next poll fetches the manifest whole and tries again.
        f.sync(service)
        #expect(f.server.accessLog(containing: "GET /catalog/manifest.json HTTP").suffix(2).allSatisfy { $0.contains(" 200 ") })
        #expect(f.mediaRequests().filter { $0.contains("b.bin") }.count == 2)
        // The log says it once; the repeat is at debug.
        #expect(f.records().filter { $0.level == .error && $0.message.contains("hash mismatch") }.count == 1)
        // The server is mended: the next poll switches.
        try f.server.put("media/b.bin", b)
        f.sync(service)
        #expect(service.lastImport?.outcome == "switched")
        #expect(f.library.resolve(verifyHashes: true).catalog?.manifest.version == 2)
    }

    @Test("an unsigned manifest, or one signed by another key, is refused before any media request; a refusal is not committed: the signature uploaded after the manifest is found at the next poll")
    func unsignedRefusedFirst() throws {
        let f = try NetworkFixture()
        let unsigned = try f.publish(version: 1, media: [("media/a.bin", networkBytes(50_000, seed: 7))], signed: false)
        let service = try f.service()
        f.sync(service)
        let last = try #require(service.lastImport)
        #expect(last.outcome == "refused")
        #expect(last.message == "Catalog from \(f.settings().url) refused: manifest.json.minisig: missing, and update.requireSignature is on")
        #expect(f.mediaRequests().isEmpty)
        #expect(f.eventLines("importFinished").first?.contains("\"result\":\"refused\"") == true)
        #expect(f.library.resolve().catalog == nil && f.currentTarget == nil)
        // Asked again at the next poll (not a 304), refused again, logged and recorded once.
        #expect(f.sync(service)?.outcome == .changed)
        #expect(f.eventLines("importFinished").count == 1)
        #expect(f.logLines(containing: "refused before any download").count == 1)

        // Signed by a key the box does not trust.
        let other = f.root + "/other"
        try FileManager.default.createDirectory(atPath: other, withIntermediateDirectories: true)
        try NetworkFixture.minisign(["-G", "-W", "-p", other + "/k.pub", "-s", other + "/k.key"])
        let manifest = Array(try Data(contentsOf: URL(fileURLWithPath: f.server.root + "/manifest.json"))) + Array(" ".utf8)
        try f.publishManifest(manifest, signed: false, version: 1)
        try NetworkFixture.minisign(["-S", "-s", other + "/k.key", "-m", f.server.root + "/manifest.json", "-t", "other"])
        f.sync(service)
        #expect(service.lastImport?.outcome == "refused")
        #expect(service.lastImport?.message.contains("manifest.json.minisig: ") == true)
        #expect(f.mediaRequests().isEmpty)

        // The first manifest again, now with its signature by the trusted key (uploaded after it,
        // as rsync would): switched at the next poll.
        try f.publishManifest(unsigned, signed: true, version: 1)
        f.sync(service)
        #expect(service.lastImport?.outcome == "switched")
        #expect(f.library.resolve().catalog?.manifest.version == 1)
    }

    @Test("a file whose name ends in .part (the suffix of partial downloads) is refused before any media request, with its JSON path")
    func partSuffixRefused() throws {
        let f = try NetworkFixture()
        try f.publish(version: 1, media: [("media/a.mp4.part", networkBytes(1000, seed: 3)), ("media/a.mp4", networkBytes(1000, seed: 4))])
        let service = try f.service()
        f.sync(service)
        #expect(service.lastImport?.outcome == "refused")
        #expect(service.lastImport?.message.contains("media/a.mp4.part") == true)
        #expect(service.lastImport?.message.contains("ends in .part") == true)
        #expect(f.mediaRequests().isEmpty)
        #expect(f.library.resolve().catalog == nil)
    }

    @Test("the server down: no switch, playback's catalog untouched, one log line for all the failed polls and one when it answers again")
    func serverDown() throws {
        let f = try NetworkFixture()
        try f.publish(version: 1, media: [("media/a.bin", networkBytes(60_000, seed: 8))])
        f.server.stop()
        let service = try f.service()
        for _ in 0..<3 {
            let poll = f.sync(service)
            #expect(poll?.outcome == .failed)
            #expect(poll?.message?.contains("unreachable") == true, "\(poll?.message ?? "")")
            // libcurl's "after 0 ms" is dropped: the same fault reads the same at every poll.
            #expect(poll?.message?.contains(" ms") == false, "\(poll?.message ?? "")")
        }
        #expect(f.logLines(containing: "cannot poll").count == 1)
        #expect(f.logLines(containing: "cannot poll").first?.level == .warning)
        #expect(f.eventLines("importStarted").isEmpty && service.lastImport == nil)
        #expect(service.takeSwitchedCatalog() == nil)
        try f.server.start()
        f.sync(service)
        #expect(f.logLines(containing: "answers again (after 3 failed polls)").count == 1)
        #expect(service.lastImport?.outcome == "switched")
    }

    @Test("a restart (a new service, the same library) fetches nothing it already holds: verified downloads stay, a switched catalog is a 304")
    func restartFetchesNothingAgain() throws {
        let f = try NetworkFixture()
        let a = networkBytes(500_000, seed: 9), b = networkBytes(200_000, seed: 10)
        try f.publish(version: 1, media: [("media/a.bin", a), ("media/b.bin", b)])
        try FileManager.default.removeItem(atPath: f.server.root + "/media/b.bin")  // not there yet: 404
        do {
            let service = try f.service()
            f.sync(service)
            #expect(service.lastImport?.outcome == "refused")
            #expect(service.lastImport?.message.contains("media/b.bin: not on the server (HTTP 404") == true, "\(service.lastImport?.message ?? "")")
            #expect(f.currentTarget == nil)
        }
        #expect(FileManager.default.contents(atPath: f.library.downloadsFolder + "/media/a.bin").map(Array.init) == a)
        // The box restarts: a new service on the same library.
        try f.server.put("media/b.bin", b)
        do {
            let service = try f.service()
            f.sync(service)
            #expect(service.lastImport?.outcome == "switched")
        }
        #expect(f.mediaRequests().filter { $0.contains("a.bin") } == ["GET /catalog/media/a.bin HTTP/1.1 200 500000"])
        #expect(f.mediaRequests().filter { $0.contains("b.bin") }.map { $0.split(separator: " ")[3] } == ["404", "200"])
        // And again after the switch: the state file makes the first poll a 304.
        let service = try f.service()
        #expect(f.sync(service)?.outcome == .unchanged)
        #expect(f.mediaRequests().count == 3)
        #expect(f.server.accessLog(containing: "GET /catalog/manifest.json HTTP").last == "GET /catalog/manifest.json HTTP/1.1 304 0")
    }

    @Test("a file the catalog playing holds (same SHA-256) is linked, not fetched; files the new manifest drops leave the downloads folder")
    func unchangedFilesAreLinked() throws {
        let f = try NetworkFixture()
        let keep = networkBytes(800_000, seed: 11), old = networkBytes(100_000, seed: 12), new = networkBytes(120_000, seed: 13)
        try f.publish(version: 1, media: [("media/keep.bin", keep), ("media/old.bin", old)])
        let service = try f.service()
        f.sync(service)
        #expect(f.currentTarget == "gen.1")
        // Version 2 keeps `keep` under another name, drops `old`, adds `new`.
        try f.publish(version: 2, media: [("media/renamed.bin", keep), ("media/new.bin", new)])
        f.sync(service)
        #expect(service.lastImport?.outcome == "switched", "\(service.lastImport?.message ?? "")")
        #expect(f.mediaRequests().filter { $0.contains("renamed.bin") }.isEmpty)
        #expect(f.mediaRequests().filter { $0.contains("new.bin") }.count == 1)
        let gen2 = f.library.path + "/gen.2/media/renamed.bin"
        #expect(f.inode(gen2) == f.inode(f.library.path + "/gen.1/media/keep.bin"))
        #expect(FileManager.default.contents(atPath: gen2).map(Array.init) == keep)
        let left = try FileManager.default.subpathsOfDirectory(atPath: f.library.downloadsFolder).sorted()
        #expect(left == ["manifest.json", "manifest.json.minisig", "media", "media/new.bin", "media/renamed.bin"])
    }

    @Test("404 of a media file: refused; a 500 for the manifest: a failed poll; 500 for the media: retried, then failed, nothing switched")
    func serverErrors() throws {
        let f = try NetworkFixture()
        try f.publish(version: 1, media: [("media/a.bin", networkBytes(10_000, seed: 14))])
        let service = try f.service(f.settings("fail500"))
        let poll = f.sync(service)
        #expect(poll?.outcome == .failed && poll?.message == "\(f.settings("fail500").url)manifest.json: HTTP status 500")
        #expect(f.logLines(containing: "cannot poll").count == 1 && service.lastImport == nil)

        let update = try NetworkUpdate(library: f.library, settings: f.settings("media500"), importSettings: f.importSettings)
        update.retryDelay = 0
        guard case let .changed(manifest, signature) = try update.poll() else { Issue.record("no manifest"); return }
        let check = update.check(manifest: manifest, signature: signature)
        #expect(check.outcome == .accepted)
        let done = update.fetchAndImport(check, manifest: manifest, signature: signature)
        #expect(done.result.outcome == .failed)
        #expect(done.result.problems.map(\.kind) == [.downloadFailed])
        #expect(done.fetchError == .http(status: 500, url: f.settings("media500").url + "media/a.bin"))
        #expect(f.server.accessLog(containing: "/media500/media/a.bin").count == update.attempts)
        #expect(f.library.resolve().catalog == nil)
    }

    @Test("the connection cut mid-file: the download fails, its part kept; the next poll resumes it (206) and the hash is right")
    func cutMidFile() throws {
        let f = try NetworkFixture()
        let big = networkBytes(3 << 20, seed: 15)
        try f.publish(version: 1, media: [("media/big.bin", big)])
        let update = try NetworkUpdate(library: f.library, settings: f.settings("throttled"), importSettings: f.importSettings)
        update.attempts = 1
        guard case let .changed(manifest, signature) = try update.poll() else { Issue.record("no manifest"); return }
        let check = update.check(manifest: manifest, signature: signature)
        var cut = false
        let first = update.fetchAndImport(check, manifest: manifest, signature: signature) { p in
            if case let .downloading(done, _, _) = p, done > 1 << 20, !cut { cut = true; f.server.stop() }
        }
        #expect(first.result.outcome == .failed && first.result.problems.map(\.kind) == [.downloadFailed])
        guard case .unreachable? = first.fetchError else { Issue.record("expected unreachable, got \(String(describing: first.fetchError))"); return }
        let part = f.library.downloadsFolder + "/media/big.bin.part"
        let kept = ((try? FileSystem.status(part, followLinks: false)) ?? nil)?.size ?? 0
        #expect(kept > 1 << 20 && kept < Int64(big.count))
        #expect(f.library.resolve().catalog == nil)

        try f.server.start()
        // Not committed: the manifest again, then the rest of the file.
        guard case let .changed(again, signature2) = try update.poll() else { Issue.record("no manifest"); return }
        let second = update.fetchAndImport(update.check(manifest: again, signature: signature2), manifest: again, signature: signature2)
        #expect(second.result.outcome == .switched, "\(second.result.message)")
        #expect(second.download.bytesTransferred == big.count - Int(kept))
        #expect(f.server.accessLog(containing: "/throttled/media/big.bin").last == "GET /throttled/media/big.bin HTTP/1.1 206 \(big.count - Int(kept))")
        let current = try #require(f.library.resolve(verifyHashes: true).catalog)
        #expect(current.files.first?.sha256 == SHA256.hash(big).hex)
        #expect(FileManager.default.contents(atPath: current.directory + "/media/big.bin").map(Array.init) == big)
    }

    @Test("a server that stalls mid-file: the transfer times out (lowSpeedTimeout), is retried, and resumes once the server answers")
    func stalledServer() throws {
        let f = try NetworkFixture()
        let big = networkBytes(2 << 20, seed: 16)
        try f.publish(version: 1, media: [("media/big.bin", big)])
        var settings = f.settings("throttled")
        settings.lowSpeedTimeout = 2
        settings.connectTimeout = 2
        let update = try NetworkUpdate(library: f.library, settings: settings, importSettings: f.importSettings)
        update.attempts = 10
        update.retryDelay = 0.5
        guard case let .changed(manifest, signature) = try update.poll() else { Issue.record("no manifest"); return }
        var paused = false
        var pausedAt = 0.0
        let done = update.fetchAndImport(update.check(manifest: manifest, signature: signature), manifest: manifest, signature: signature) { p in
            guard case let .downloading(bytes, _, _) = p, bytes > 512 << 10, !paused else { return }
            paused = true
            pausedAt = monotonicNow()
            f.server.pause()
            // libcurl's speed is an average over its last 5 s: a stall counts as one once that
            // window is empty, and times out `lowSpeedTimeout` (2 s) later, about 7 s in. The
            // server comes back at 10 s, while the retries' handshakes wait (connectTimeout 2 s).
            Thread.detachNewThread { Thread.sleep(forTimeInterval: 10); f.server.resume() }
        }
        #expect(paused)
        print("stalled server: switched \(String(format: "%.1f", monotonicNow() - pausedAt)) s after the stall began, "
              + "\(done.download.retries) retries")
        #expect(done.result.outcome == .switched, "\(done.result.message)")
        #expect(done.download.retries >= 1)
        #expect(f.server.accessLog(containing: "/throttled/media/big.bin").contains { $0.contains(" 206 ") })
        #expect(f.library.resolve(verifyHashes: true).catalog?.files.first?.sha256 == SHA256.hash(big).hex)
    }

    @Test("a bad certificate (another host's, or a CA the box does not trust): refused, nothing requested, nothing switched")
    func badCertificate() throws {
        let f = try NetworkFixture()
        try f.publish(version: 1, media: [("media/a.bin", networkBytes(10_000, seed: 17))])
        let service = try f.service(f.settings(port: f.server.wrongHostPort))
        let poll = f.sync(service)
        #expect(poll?.outcome == .failed)
        #expect(poll?.message?.contains("TLS failed") == true, "\(poll?.message ?? "")")
        var system = f.settings()
        system.caFile = nil
        let untrusted = try f.service(system)
        #expect(f.sync(untrusted)?.message?.contains("TLS failed") == true)
        #expect(f.server.accessLog(containing: "manifest.json").isEmpty)
        #expect(f.library.resolve().catalog == nil && service.lastImport == nil)
    }

    @Test("a full disk, as for sticks: too little room is refused before any media request; ENOSPC mid-file keeps the part, and it resumes",
          .enabled(if: SmallTmpfs.canMount, "mounting a tmpfs needs root and a system that allows mount(2)"))
    func fullDisk() throws {
        let f = try NetworkFixture()
        try f.publish(version: 1, media: [("media/a.bin", networkBytes(6 << 20, seed: 18)), ("media/b.bin", networkBytes(4 << 20, seed: 19))])
        // 10 MiB to download needs 10 + 64 MiB free: a 72 MiB disk is too small.
        let small = try SmallTmpfs(megabytes: 72)
        defer { small.unmount() }
        let tight = CatalogLibrary(path: small.path + "/lib")
        let update = try NetworkUpdate(library: tight, settings: f.settings(), importSettings: f.importSettings)
        guard case let .changed(manifest, signature) = try update.poll() else { Issue.record("no manifest"); return }
        let refused = update.fetchAndImport(update.check(manifest: manifest, signature: signature), manifest: manifest, signature: signature)
        #expect(refused.result.outcome == .failed && refused.result.problems.map(\.kind) == [.noSpace])
        #expect(refused.result.message.contains("not enough free space in \(tight.path): 10.0 MiB to download plus a 64.0 MiB margin"),
                "\(refused.result.message)")
        #expect(f.mediaRequests().isEmpty)

        // Room enough at first; the disk fills while a.bin downloads (another process's file).
        let disk = try SmallTmpfs(megabytes: 100)
        defer { disk.unmount() }
        let library = CatalogLibrary(path: disk.path + "/lib")
        let second = try NetworkUpdate(library: library, settings: f.settings(), importSettings: f.importSettings)
        second.attempts = 1
        guard case let .changed(m, s) = try second.poll() else { Issue.record("no manifest"); return }
        let filler = disk.path + "/filler"
        var filled = false
        let full = second.fetchAndImport(second.check(manifest: m, signature: s), manifest: m, signature: s) { p in
            guard case let .downloading(done, _, _) = p, done > 2 << 20, !filled else { return }
            filled = true
            // Another process's file takes all but 64 KiB of what is free.
            var left = Int(((try? FileSystem.space(disk.path))?.available ?? 0)) - (64 << 10)
            _ = FileManager.default.createFile(atPath: filler, contents: nil)
            guard let handle = FileHandle(forWritingAtPath: filler) else { return }
            let chunk = Data(count: 4 << 20)
            while left > 0 {
                let piece = left >= chunk.count ? chunk : chunk.prefix(left)
                guard (try? handle.write(contentsOf: piece)) != nil else { break }
                left -= piece.count
            }
            try? handle.close()
        }
        #expect(filled)
        #expect(full.result.outcome == .failed && full.result.problems.map(\.kind) == [.noSpace], "\(full.result.message)")
        #expect(full.fetchError == .noSpace(path: library.downloadsFolder + "/media/a.bin.part"))
        let kept = ((try? FileSystem.status(library.downloadsFolder + "/media/a.bin.part", followLinks: false)) ?? nil)?.size ?? 0
        #expect(kept >= 2 << 20)
        #expect(library.resolve().catalog == nil)
        try FileManager.default.removeItem(atPath: filler)
        guard case let .changed(m2, s2) = try second.poll() else { Issue.record("no manifest"); return }
        let resumed = second.fetchAndImport(second.check(manifest: m2, signature: s2), manifest: m2, signature: s2)
        #expect(resumed.result.outcome == .switched, "\(resumed.result.message)")
        #expect(f.mediaRequests().filter { $0.contains("a.bin") }.last?.contains(" 206 ") == true)
        #expect(library.resolve(verifyHashes: true).catalog?.generation == 1)
    }

    @Test("vitrine import URL (no player): downloads and switches with the config's CA and keys; again: up to date; an http:// URL is refused",
          .enabled(if: VitrineBinary.available, VitrineBinary.absent))
    func commandLine() throws {
        let f = try NetworkFixture()
        try f.publish(version: 3, media: [("media/a.bin", networkBytes(250_000, seed: 20))])
        let config = f.root + "/config.json"
        let keyLine = try String(contentsOfFile: f.keyFolder + "/k.pub", encoding: .utf8).split(separator: "\n")[1]
        try Data(#"{"import": {"trustedKeys": ["\#(keyLine)"]}, "update": {"url": null, "caFile": "\#(f.server.caFile)"}}"#.utf8)
            .write(to: URL(fileURLWithPath: config))
        let url = f.settings().url
        let first = try VitrineBinary.run(["import", url, "--library", f.library.path, "--config", config, "--events", f.events])
        #expect(first.code == 0, "\(first.err)")
        #expect(first.out.hasPrefix("Updated to version 3: 1 item (1 files, "), "\(first.out)")
        #expect(first.err.contains("downloading 1 file(s)"), "\(first.err)")
        #expect(f.library.resolve(verifyHashes: true).catalog?.manifest.version == 3)
        #expect(f.eventLines("importFinished").first?.contains("\"source\":\(EventLog.quote(url))") == true)
        let again = try VitrineBinary.run(["import", url, "--library", f.library.path, "--config", config, "--quiet"])
        #expect(again.code == 0 && again.out == "Catalog is up to date: version 3 is already playing\n", "\(again.out) \(again.err)")
        #expect(f.mediaRequests().count == 1)
        let plain = try VitrineBinary.run(["import", "http://localhost:\(f.server.plainPort)/catalog/", "--library", f.library.path,
                                           "--config", config, "--quiet"])
        #expect(plain.code == 1 && plain.err.contains("plain HTTP is not allowed"), "\(plain.err)")
    }
}

extension NetworkUpdateTests {
    @Test("a player playing red polls the server a moment after it starts, downloads blue, switches to it and shows it",
          .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/ffmpeg"), "ffmpeg not installed (tools/setup)"))
    func playerShowsTheDownloadedCatalog() throws {
        let f = try NetworkFixture()
        // The library plays red (a stick import); the server offers blue, version 2.
        try PlayerImportTests.stick(at: f.root + "/red", colour: "red", version: 1)
        #expect(f.library.importStick(at: f.root + "/red").outcome == .switched)
        let blue = try [UInt8](Data(contentsOf: URL(fileURLWithPath: try Harness.colorClip("blue", seconds: 1))))
        try f.publish(version: 2, media: [("media/blue.mp4", blue)])
        let events = try EventLog(path: f.events)
        try FileManager.default.createDirectory(atPath: f.root + "/media", withIntermediateDirectories: true)
        let service = ImportService(library: f.library, settings: f.importSettings, mediaRoot: f.root + "/media", eventLog: events, log: f.log)
        service.startNetworkUpdates(settings: f.settings(), firstPollDelay: 0.5)
        let playing = try #require(f.library.resolve().catalog)
        let shots = try Harness.newFolder("network-shots")
        var o = RunOptions()
        o.output = .headless
        o.duration = 6
        o.realtime = true
        o.snapshotTimes = [0.3, 5.5]
        o.snapshotDirectory = shots
        let player = Player(manifest: playing.manifest, catalogDirectory: playing.directory, options: o, log: f.log)
        player.eventLog = events
        player.importer = service
        player.catalogStarted = { service.catalogStarted() }
        _ = try player.run()
        #expect(CatalogSwitchTests.isRed(try Harness.readPNG(shots + "/snapshot-000.300.png")))
        #expect(CatalogSwitchTests.isBlue(try Harness.readPNG(shots + "/snapshot-005.500.png")))
        #expect(f.eventLines("importFinished").first?.contains("\"result\":\"switched\"") == true)
        #expect(f.eventLines("nowPlayingChanged").contains { $0.contains("\"item\":\"item0\"") })
        #expect(service.lastPoll?.outcome == .changed && f.currentTarget == "gen.2")
    }
}

/// The banner titles (and progress fractions) seen by a watching thread, each change once.
final class BannerTitles: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [String] = []
    private var fractions: [Double] = []
    private var done = false
    func note(_ b: Banner?) {
        lock.lock(); defer { lock.unlock() }
        guard let b else { return }
        if list.last != b.title { list.append(b.title) }
        if b.title.hasPrefix("Downloading"), let p = b.progress, fractions.last != p { fractions.append(p) }
    }
    func stop() { lock.lock(); done = true; lock.unlock() }
    var stopped: Bool { lock.lock(); defer { lock.unlock() }; return done }
    var titles: [String] { lock.lock(); defer { lock.unlock() }; return list }
    var progress: [Double] { lock.lock(); defer { lock.unlock() }; return fractions }
}
