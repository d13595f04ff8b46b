// HTTPClient and CatalogPoller against a real nginx over HTTPS on loopback (NginxServer).
import Foundation
import Testing
import Crypto
import FileIO
import HTTPFetch
import VitrineTestSupport

/// `count` bytes from a seeded generator (SplitMix64), so a failing run can be repeated.
func randomBytes(_ count: Int, seed: UInt64) -> [UInt8] {
    var generator = SplitMix64(seed: seed)
    var out = [UInt8]()
    out.reserveCapacity(count + 8)
    while out.count < count { withUnsafeBytes(of: generator.next()) { out.append(contentsOf: $0) } }
    return Array(out.prefix(count))
}

func makeTemporaryFolder() throws -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("vitrine-http-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

/// A temporary folder removed when the value goes away.
final class TemporaryFolder {
    let path: String
    init() throws { path = try makeTemporaryFolder() }
    deinit { try? FileManager.default.removeItem(atPath: path) }
}

func contents(_ path: String) -> [UInt8]? { FileManager.default.contents(atPath: path).map { Array($0) } }
func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }
func fileSize(_ path: String) -> Int { ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? -1 }

@Suite(.enabled(if: NginxAvailability.installed, NginxAvailability.absent))
struct HTTPFetchTests {
    let server: NginxServer
    private let temporary: TemporaryFolder
    /// A fresh temporary folder for this test, removed with it.
    var folder: String { temporary.path }
    init() throws {
        server = try NginxServer()
        temporary = try TemporaryFolder()
    }

    func client(_ settings: FetchSettings = FetchSettings()) throws -> HTTPClient {
        var settings = settings
        if settings.caFile == nil { settings.caFile = server.caFile }
        return try HTTPClient(settings: settings)
    }

    @Test("a second poll of an unchanged catalog costs one small 304, after a restart too")
    func conditionalPoll() throws {
        let manifest = Array(#"{"version": 1, "items": []}"#.utf8)
        try server.put("manifest.json", manifest)
        try server.put("manifest.json.minisig", Array("untrusted comment: test\nRWQ...\n".utf8))
        let statePath = folder + "/update-state.json"
        let poller = CatalogPoller(baseURL: server.catalogURL, client: try client(), statePath: statePath)

        let first = try poller.poll()
        #expect(first == .changed(manifestBytes: manifest, signature: Array("untrusted comment: test\nRWQ...\n".utf8)))
        try poller.commit()
        let second = try poller.poll()
        #expect(second == .unchanged)
        print("304 poll: \(poller.lastPollBytes) bytes received (headers + body)")
        #expect(poller.lastPollBytes > 0 && poller.lastPollBytes < 400)
        #expect(server.accessLog(containing: "GET /catalog/manifest.json HTTP").last?.hasSuffix(" 304 0") == true)

        // A reboot: a new client and poller read the state file and still get a 304.
        let rebooted = CatalogPoller(baseURL: server.catalogURL, client: try client(), statePath: statePath)
        #expect(rebooted.stateProblem == nil)
        #expect(try rebooted.poll() == .unchanged)

        // A new manifest (another size, so nginx's mtime-size ETag differs) is fetched in full.
        let newer = Array(#"{"version": 2, "items": [], "note": "spring"}"#.utf8)
        try server.put("manifest.json", newer)
        try FileManager.default.removeItem(atPath: server.root + "/manifest.json.minisig")
        #expect(try rebooted.poll() == .changed(manifestBytes: newer, signature: nil))
    }

    @Test("a manifest polled but not committed is fetched again after a restart")
    func uncommittedPollRefetches() throws {
        try server.put("manifest.json", Array("{}".utf8))
        let statePath = folder + "/state.json"
        let poller = CatalogPoller(baseURL: server.catalogURL, client: try client(), statePath: statePath)
        #expect(try poller.poll() == .changed(manifestBytes: Array("{}".utf8), signature: nil))
        #expect(!exists(statePath))
        let rebooted = CatalogPoller(baseURL: server.catalogURL, client: try client(), statePath: statePath)
        #expect(try rebooted.poll() == .changed(manifestBytes: Array("{}".utf8), signature: nil))
    }

    @Test("a malformed state file is reported with its path and costs one full GET")
    func malformedState() throws {
        try server.put("manifest.json", Array("{}".utf8))
        let statePath = folder + "/state.json"
        try Data(#"{"url": 3}"#.utf8).write(to: URL(fileURLWithPath: statePath))
        let poller = CatalogPoller(baseURL: server.catalogURL, client: try client(), statePath: statePath)
        let problem = try #require(poller.stateProblem)
        #expect(problem.contains(statePath) && problem.contains("$.url"))
        #expect(try poller.poll() == .changed(manifestBytes: Array("{}".utf8), signature: nil))
    }

    @Test("plain http:// is refused unless allowPlainHTTP")
    func plainHTTP() throws {
        try server.put("manifest.json", Array("{}".utf8))
        let url = "http://127.0.0.1:\(server.plainPort)/catalog/manifest.json"
        #expect(throws: FetchError.plainHTTPRefused(url: url)) { try client().get(url, maxBytes: 1000) }
        #expect(server.accessLog(containing: "manifest.json").isEmpty)
        let allowed = try client(FetchSettings(allowPlainHTTP: true)).get(url, maxBytes: 1000)
        #expect(allowed.status == 200 && allowed.body == Array("{}".utf8))
    }

    @Test("a certificate from another CA, or for another host, is refused")
    func badCertificate() throws {
        try server.put("manifest.json", Array("{}".utf8))
        // The system store does not hold the test CA.
        let system = try HTTPClient(settings: FetchSettings())
        #expect {
            try system.get(server.catalogURL + "manifest.json", maxBytes: 1000)
        } throws: { error in
            guard case .tls(_, let detail)? = error as? FetchError else { return false }
            print("untrusted CA: \(detail)")
            return true
        }
        // The test CA, but a certificate for wrong.invalid.
        let url = "https://localhost:\(server.wrongHostPort)/catalog/manifest.json"
        #expect {
            try client().get(url, maxBytes: 1000)
        } throws: { error in
            guard case .tls(url, let detail)? = error as? FetchError else { return false }
            print("wrong host: \(detail)")
            return true
        }
        #expect(server.accessLog(containing: "manifest.json").isEmpty)
    }

    @Test("404 and 500 replies are errors, and nothing lands in the file")
    func errorStatuses() throws {
        let http = try client()
        let missing = server.catalogURL + "nothing.json"
        #expect(throws: FetchError.http(status: 404, url: missing)) { try http.get(missing, maxBytes: 1000) }
        let failing = server.url("fail500", "media/a.bin")
        let target = folder + "/a.bin"
        #expect(throws: FetchError.http(status: 500, url: failing)) {
            try http.download(failing, to: target, size: 10, sha256: SHA256.hash([]).hex)
        }
        #expect(!exists(target))
        #expect(fileSize(target + ".part") <= 0)
        #expect(FetchError.http(status: 500, url: failing).isRetryable)
        #expect(!FetchError.http(status: 404, url: missing).isRetryable)
    }

    @Test("a body larger than maxBytes is refused")
    func tooLarge() throws {
        try server.put("manifest.json", randomBytes(5000, seed: 7))
        let url = server.catalogURL + "manifest.json"
        #expect {
            try client().get(url, maxBytes: 1000)
        } throws: { error in
            guard case .sizeMismatch(url, 1000, let got)? = error as? FetchError else { return false }
            return got > 1000
        }
    }

    @Test("a download is checked, renamed into place, and not fetched again")
    func download() throws {
        let bytes = randomBytes(3 << 20, seed: 1)
        try server.put("media/clip.bin", bytes)
        let target = folder + "/clip.bin"
        var reports: [(Int, Int)] = []
        let http = try client()
        let result = try http.download(server.catalogURL + "media/clip.bin", to: target, size: bytes.count,
                                       sha256: SHA256.hash(bytes).hex) { reports.append(($0, $1)) }
        #expect(result == DownloadResult(bytesTransferred: bytes.count, resumedFrom: 0, wasPresent: false))
        #expect(contents(target) == bytes)
        #expect(!exists(target + ".part"))
        #expect(reports.last.map { $0 == (bytes.count, bytes.count) } == true)

        let again = try client().download(server.catalogURL + "media/clip.bin", to: target, size: bytes.count,
                                          sha256: SHA256.hash(bytes).hex)
        #expect(again.wasPresent && again.bytesTransferred == 0)
        #expect(server.accessLog(containing: "clip.bin").count == 1)
    }

    @Test("a file that changed on the server (another hash) is refused and nothing is renamed")
    func hashMismatch() throws {
        let served = randomBytes(200_000, seed: 2)
        let listed = randomBytes(200_000, seed: 3)
        try server.put("media/changed.bin", served)
        let target = folder + "/changed.bin"
        let url = server.catalogURL + "media/changed.bin"
        #expect(throws: FetchError.hashMismatch(url: url, expected: SHA256.hash(listed).hex, got: SHA256.hash(served).hex)) {
            try client().download(url, to: target, size: listed.count, sha256: SHA256.hash(listed).hex)
        }
        #expect(!exists(target))
        #expect(!exists(target + ".part"))
        let short = randomBytes(1000, seed: 4)
        #expect(throws: FetchError.sizeMismatch(url: url, expected: short.count, got: served.count)) {
            try client().download(url, to: target, size: short.count, sha256: SHA256.hash(short).hex)
        }
        #expect(!exists(target) && !exists(target + ".part"))
    }

    @Test("the server cut mid-file: the download resumes with Range and the hash is right")
    func serverCut() throws {
        let bytes = randomBytes(2 << 20, seed: 5)
        try server.put("media/cut.bin", bytes)
        let target = folder + "/cut.bin"
        let url = server.url("throttled", "media/cut.bin")
        let digest = SHA256.hash(bytes).hex
        var stopped = false
        #expect {
            try client().download(url, to: target, size: bytes.count, sha256: digest) { done, _ in
                // nginx is stopped (SIGTERM, fast shutdown) while it sends the file at 512 KiB/s.
                if done >= 300_000 && !stopped { stopped = true; server.stop() }
            }
        } throws: { error in
            guard case .unreachable(url, let detail)? = error as? FetchError else { return false }
            print("server cut: \(detail)")
            return true
        }
        let partSize = fileSize(target + ".part")
        #expect(partSize >= 300_000 && partSize < bytes.count)
        #expect(!exists(target))

        try server.start()
        let result = try client().download(url, to: target, size: bytes.count, sha256: digest)
        #expect(result.resumedFrom == partSize)
        #expect(result.bytesTransferred == bytes.count - partSize)
        #expect(contents(target) == bytes)
        #expect(!exists(target + ".part"))
        #expect(server.accessLog(containing: "cut.bin").last == "GET /throttled/media/cut.bin HTTP/1.1 206 \(bytes.count - partSize)")
    }

    @Test("a cancelled download keeps its part and resumes")
    func cancelAndResume() throws {
        let bytes = randomBytes(1 << 20, seed: 6)
        try server.put("media/cancel.bin", bytes)
        let target = folder + "/cancel.bin"
        let url = server.url("throttled", "media/cancel.bin")
        let http = try client()
        #expect(throws: FetchError.cancelled) {
            try http.download(url, to: target, size: bytes.count, sha256: SHA256.hash(bytes).hex) { done, _ in
                if done >= 100_000 { http.cancellation.cancel() }
            }
        }
        let partSize = fileSize(target + ".part")
        #expect(partSize >= 100_000 && partSize < bytes.count)
        http.cancellation.reset()
        let result = try http.download(server.catalogURL + "media/cancel.bin", to: target, size: bytes.count,
                                       sha256: SHA256.hash(bytes).hex)
        #expect(result.resumedFrom == partSize)
        #expect(contents(target) == bytes)
    }

    @Test("a part that the server answers with 200 (no Range) restarts from byte 0")
    func rangeIgnored() throws {
        let bytes = randomBytes(100_000, seed: 8)
        try server.put("media/whole.bin", bytes)
        let target = folder + "/whole.bin"
        // A part with wrong bytes, longer than the file: dropped, then a fresh download.
        try Data(randomBytes(150_000, seed: 9)).write(to: URL(fileURLWithPath: target + ".part"))
        let result = try client().download(server.catalogURL + "media/whole.bin", to: target, size: bytes.count,
                                           sha256: SHA256.hash(bytes).hex)
        #expect(result.resumedFrom == 0 && result.bytesTransferred == bytes.count)
        #expect(contents(target) == bytes)
    }

    @Test("a slow server times out, then a retry resumes and completes")
    func slowServer() throws {
        let bytes = randomBytes(50_000, seed: 10)
        try server.put("media/slow.bin", bytes)
        let target = folder + "/slow.bin"
        let slowURL = server.url("slow", "media/slow.bin")
        let http = try client(FetchSettings(lowSpeedTimeout: 2, lowSpeedLimit: 1000))
        let started = Date()
        #expect(throws: FetchError.timedOut(url: slowURL)) {
            try http.download(slowURL, to: target, size: bytes.count, sha256: SHA256.hash(bytes).hex)
        }
        print("slow server: timed out after \(Date().timeIntervalSince(started)) s with \(fileSize(target + ".part")) bytes")
        #expect(!exists(target))
        let partSize = fileSize(target + ".part")
        let result = try http.download(server.catalogURL + "media/slow.bin", to: target, size: bytes.count,
                                       sha256: SHA256.hash(bytes).hex)
        #expect(result.resumedFrom == partSize)
        #expect(contents(target) == bytes)
    }

    @Test("the bandwidth limit holds a download to about its rate")
    func bandwidthLimit() throws {
        let bytes = randomBytes(4 << 20, seed: 11)
        try server.put("media/limited.bin", bytes)
        let http = try client(FetchSettings(bandwidthLimit: 1 << 20))
        let started = Date()
        _ = try http.download(server.catalogURL + "media/limited.bin", to: folder + "/limited.bin", size: bytes.count,
                              sha256: SHA256.hash(bytes).hex)
        let elapsed = Date().timeIntervalSince(started)
        print("4 MiB at a 1 MiB/s limit: \(elapsed) s")
        // Unlimited, 4 MiB take well under 0.1 s over loopback. libcurl averages the rate over
        // seconds and lets the start burst, so only "at most twice the limit" is asserted.
        #expect(elapsed >= 2.0)
    }

    @Test("fetchMedia downloads into subfolders, skips verified files, and refuses unsafe paths")
    func fetchMedia() throws {
        let a = randomBytes(70_000, seed: 12), b = randomBytes(30_000, seed: 13)
        try server.put("media/spring/a b.bin", a)
        try server.put("media/b.bin", b)
        let files = [MediaFile(path: "spring/a b.bin", size: a.count, sha256: SHA256.hash(a).hex),
                     MediaFile(path: "b.bin", size: b.count, sha256: SHA256.hash(b).hex)]
        let media = folder + "/media"
        try FileManager.default.createDirectory(atPath: media, withIntermediateDirectories: true)
        let poller = CatalogPoller(baseURL: server.catalogURL, client: try client(), statePath: folder + "/state.json")
        var last = (0, 0)
        let first = try poller.fetchMedia(files: files, into: media) { last = ($0, $1) }
        #expect(first == MediaFetchSummary(downloaded: 2, alreadyPresent: 0, bytesTransferred: a.count + b.count, retries: 0))
        #expect(last == (a.count + b.count, a.count + b.count))
        #expect(contents(media + "/spring/a b.bin") == a && contents(media + "/b.bin") == b)
        #expect(server.accessLog(containing: "GET /catalog/media/spring/a%20b.bin").count == 1)

        // After a reboot: a new client and poller, nothing is fetched again.
        let rebooted = CatalogPoller(baseURL: server.catalogURL, client: try client(), statePath: folder + "/state.json")
        let second = try rebooted.fetchMedia(files: files, into: media)
        #expect(second == MediaFetchSummary(downloaded: 0, alreadyPresent: 2, bytesTransferred: 0, retries: 0))
        #expect(server.accessLog(containing: "/catalog/media/").count == 2)

        for bad in ["../escape.bin", "/etc/passwd", "a/../../b", "a//b", "./a", "a\u{1}b", "a\\b", "", "a/\u{7F}"] {
            #expect(throws: FetchError.unsafePath(bad)) {
                try poller.fetchMedia(files: [MediaFile(path: bad, size: 1, sha256: SHA256.hash([0]).hex)], into: media)
            }
        }
        #expect(server.accessLog(containing: "/catalog/media/").count == 2)
        #expect(!exists(folder + "/escape.bin"))
    }

    @Test("fetchMedia retries a 500 and gives up with it after the last attempt")
    func fetchMediaRetries() throws {
        let poller = CatalogPoller(baseURL: server.url("fail500", ""), client: try client(), statePath: folder + "/state.json")
        let file = MediaFile(path: "x.bin", size: 10, sha256: SHA256.hash([]).hex)
        #expect(throws: FetchError.http(status: 500, url: server.url("fail500", "media/x.bin"))) {
            try poller.fetchMedia(files: [file], into: folder, attempts: 3, retryDelay: 0)
        }
        #expect(server.accessLog(containing: "/fail500/media/x.bin").count == 3)
    }
}

@Test("an unreachable server makes poll() throw and leaves the state file alone")
func unreachableServer() throws {
    let folder = try makeTemporaryFolder()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let statePath = folder + "/state.json"
    let port = Int32(try LoopbackPort.free())  // nothing listens there
    let base = "https://127.0.0.1:\(port)/catalog/"
    let state = Array("{\"etag\":\"\\\"abc\\\"\",\"url\":\"\(base)\"}".utf8)
    try Data(state).write(to: URL(fileURLWithPath: statePath))
    let poller = CatalogPoller(baseURL: base, client: try HTTPClient(settings: FetchSettings(connectTimeout: 2)), statePath: statePath)
    #expect(poller.stateProblem == nil)
    #expect {
        try poller.poll()
    } throws: { error in
        guard case .unreachable(let url, let detail)? = error as? FetchError else { return false }
        // libcurl's "after 0 ms" is left out, so two attempts at the same fault read the same.
        #expect(detail == "Failed to connect to 127.0.0.1 port \(port): Couldn't connect to server")
        return url == base + "manifest.json"
    }
    #expect(contents(statePath) == state)
}

@Test("nextDelay spreads polls over interval ± jitter")
func nextDelay() {
    var random = SplitMix64(seed: 42)
    let delays = (0..<1000).map { _ in CatalogPoller.nextDelay(interval: 300, jitter: 0.1, random: &random) }
    #expect(delays.allSatisfy { (270...330).contains($0) })
    #expect(delays.min()! < 275 && delays.max()! > 325)
    #expect(CatalogPoller.nextDelay(interval: 300, jitter: 0, random: &random) == 300)
    #expect(CatalogPoller.nextDelay(interval: 10, jitter: 5, random: &random) >= 0)
}

@Test("CatalogPoller.isSafe accepts relative paths inside the folder only")
func safePaths() {
    for good in ["a.mp4", "spring/a b.mp4", "x/y/z.png", "été.jpg", "..a", "a.."] { #expect(CatalogPoller.isSafe(good), "\(good)") }
    for bad in ["..", "../a", "a/..", "/a", "a//b", "a/", "./a", "a/./b", "a\nb", "a\u{85}b", "a\\b", ""] {
        #expect(!CatalogPoller.isSafe(bad), "\(bad)")
    }
}
