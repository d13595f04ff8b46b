// A full disk (a 1 MiB tmpfs, mounted by the test as root) and the loopback throughput against
// curl + sha256sum (only with VITRINE_HTTP_THROUGHPUT=1: 64 MiB, no timing assertions).
import Foundation
import Testing
import Crypto
import HTTPFetch
import VitrineTestSupport
#if canImport(Glibc)
import Glibc
#endif

@Test("a full disk: noSpace naming the part, the part kept, and the download resumes once there is room",
      .enabled(if: NginxAvailability.installed, NginxAvailability.absent),
      .enabled(if: SmallTmpfs.canMount, "mounting a tmpfs needs root and a system that allows mount(2)"))
func fullDisk() throws {
    let server = try NginxServer()
    let bytes = randomBytes(3 << 20, seed: 20)
    try server.put("media/big.bin", bytes)
    let disk = try SmallTmpfs(megabytes: 1)
    defer { disk.unmount() }
    let target = disk.path + "/big.bin"
    let http = try HTTPClient(settings: FetchSettings(caFile: server.caFile))
    #expect(throws: FetchError.noSpace(path: target + ".part")) {
        try http.download(server.catalogURL + "media/big.bin", to: target, size: bytes.count, sha256: SHA256.hash(bytes).hex)
    }
    #expect(!FileManager.default.fileExists(atPath: target))
    let partSize = fileSize(target + ".part")
    print("full disk: \(partSize) bytes kept in the part")
    #expect(partSize > 0 && partSize < bytes.count)

    try disk.resize(megabytes: 8)
    let result = try http.download(server.catalogURL + "media/big.bin", to: target, size: bytes.count, sha256: SHA256.hash(bytes).hex)
    #expect(result.resumedFrom == partSize)
    #expect(contents(target) == bytes)
}

@Test("throughput over loopback: HTTPClient.download against curl -o and sha256sum (64 MiB)",
      .enabled(if: NginxAvailability.installed, NginxAvailability.absent),
      .enabled(if: ProcessInfo.processInfo.environment["VITRINE_HTTP_THROUGHPUT"] == "1",
               "a measurement, not a check: run with VITRINE_HTTP_THROUGHPUT=1"))
func throughput() throws {
    let server = try NginxServer()
    let bytes = randomBytes(64 << 20, seed: 21)
    try server.put("media/64m.bin", bytes)
    let digest = SHA256.hash(bytes).hex
    let folder = try makeTemporaryFolder()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let url = server.catalogURL + "media/64m.bin"

    let http = try HTTPClient(settings: FetchSettings(caFile: server.caFile))
    var start = Date()
    let result = try http.download(url, to: folder + "/ours.bin", size: bytes.count, sha256: digest)
    let ours = Date().timeIntervalSince(start)
    #expect(result.bytesTransferred == bytes.count)

    start = Date()
    let curl = try Subprocess.run("/usr/bin/curl", ["-sS", "--cacert", server.caFile, "-o", folder + "/curl.bin", url])
    let sum = try Subprocess.run("/usr/bin/sha256sum", [folder + "/curl.bin"])
    let theirs = Date().timeIntervalSince(start)
    #expect(curl.code == 0 && sum.out.hasPrefix(digest))

    let mib = Double(bytes.count) / Double(1 << 20)
    print(String(format: "HTTPClient.download (hash while writing, fsync): %.3f s, %.0f MiB/s", ours, mib / ours))
    print(String(format: "curl -o + sha256sum: %.3f s, %.0f MiB/s", theirs, mib / theirs))
    print(String(format: "ratio (HTTPClient / curl+sha256sum throughput): %.2f", theirs / ours))
}
