import Foundation
import Testing
import VitrineTestSupport

@Suite("Subprocess runner")
struct SubprocessTests {
    @Test("a child that fills standard error before writing standard output ends, with both streams whole")
    func drainsBothStreams() throws {
        // 1 MB on stderr is far past a pipe's 64 KiB: a runner that reads stdout to its end first never returns.
        let r = try Subprocess.run("/bin/sh", ["-c", "head -c 1000000 /dev/zero >&2; echo done; head -c 300000 /dev/zero"])
        #expect(r.code == 0)
        #expect(r.standardError.count == 1_000_000)
        #expect(r.standardOutput.count == 5 + 300_000)
        #expect(r.out.hasPrefix("done\n"))
    }

    @Test("input reaches standard input; exit status and signals are told apart")
    func inputAndStatus() throws {
        let r = try Subprocess.run("/bin/sh", ["-c", "wc -c; exit 3"], input: Data(repeating: 65, count: 200_000))
        #expect(r.out.trimmingCharacters(in: .whitespacesAndNewlines) == "200000")
        #expect(r.code == 3 && !r.signaled)
        let p = try Subprocess.start("/bin/sleep", ["30"])
        #expect(p.isRunning)
        p.send(SIGKILL)
        let killed = p.wait()
        #expect(killed.signaled && killed.status == SIGKILL && killed.code == -1)
        #expect(throws: SubprocessError.self) { try Subprocess.output("/bin/sh", ["-c", "echo no >&2; exit 1"]) }
    }

    @Test("a child starts with SIGPIPE at its default, as from a shell, even when this process ignores it")
    func defaultSignals() throws {
        signal(SIGPIPE, SIG_IGN)
        let status = try Subprocess.output("/bin/grep", ["SigIgn", "/proc/self/status"])
        let mask = try #require(UInt64(status.split(separator: "\t").last!.trimmingCharacters(in: .whitespacesAndNewlines), radix: 16))
        #expect(mask & (1 << (UInt64(SIGPIPE) - 1)) == 0, "SigIgn \(status)")
        #expect(throws: SubprocessError.self) { try Subprocess.run("/no/such/program", []) }
    }

    @Test("the locators name the built binary and the media folder")
    func locators() {
        #expect(VitrineBinary.path.hasSuffix("/vitrine"))
        #expect(RealMedia.folder.hasSuffix("shared/media/real"))
        #expect(FileManager.default.fileExists(atPath: Repository.path("Package.swift")))
    }
}
