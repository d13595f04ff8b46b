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

    @Test("a running child that writes 1 MB on standard error and one line on standard output is never blocked: the line comes while it runs")
    func lineWhileStandardErrorFills() throws {
        // `exec sleep` keeps the child running (same pid) after both writes: a runner that does not
        // drain standard error while it waits for the line leaves the child blocked in `head`.
        let p = try Subprocess.start("/bin/sh", ["-c", "head -c 1000000 /dev/zero >&2; echo ready; exec sleep 30"])
        let ready = try #require(p.waitForLine(containing: "ready", on: .standardOutput, timeout: .seconds(20)),
                                 "no line; \(p.outputSoFar.err.utf8.count) bytes of standard error read")
        #expect(ready.text == "ready" && ready.stream == .standardOutput)
        #expect(p.isRunning)
        // The 1 MB has no newline: it is still a partial line, so no standard-error line yet.
        #expect(p.lines.filter { $0.stream == .standardError }.isEmpty)
        p.terminate()
        let r = p.wait()
        #expect(r.signaled && r.status == SIGTERM && !r.overstayed)
        #expect(r.standardError.count == 1_000_000 && r.out == "ready\n")
        // At end of file the tail without a newline becomes the stream's last line.
        #expect(p.lines.map(\.stream) == [.standardOutput, .standardError])
        #expect(p.lines.last?.text.utf8.count == 1_000_000)
    }

    @Test("each line is timed when it arrives, on the monotonic clock: times never decrease, across both streams")
    func lineTimes() throws {
        let p = try Subprocess.start("/bin/sh", ["-c", "echo one; sleep 0.3; echo two >&2; sleep 0.3; printf 'three\\nfour'"])
        let r = p.wait(timeout: .seconds(30))
        #expect(r.code == 0 && !r.overstayed)
        let lines = p.lines
        #expect(lines.map(\.text) == ["one", "two", "three", "four"])
        #expect(lines.map(\.stream) == [.standardOutput, .standardError, .standardOutput, .standardOutput])
        let times = lines.map(\.time)
        #expect(times.first.map { $0 >= 0 } == true)
        #expect(zip(times, times.dropFirst()).allSatisfy { $0 <= $1 }, "\(times)")
        // Each `sleep 0.3` separates two lines by at least 0.3 s (a lower bound: a busy machine only adds).
        #expect(times[1] - times[0] >= 0.29 && times[2] - times[1] >= 0.29, "\(times)")
        #expect(times.last! <= p.elapsed)
        // A line already there is returned at once; after end of file one that never came is nil.
        #expect(p.waitForLine(containing: "tw", timeout: .seconds(30)) == lines[1])
        #expect(p.waitForLine(containing: "two", on: .standardOutput, timeout: .seconds(30)) == nil)
    }

    @Test("a bounded wait kills a child that overstays and says so; one that ends in time is waited for")
    func boundedWait() throws {
        let slow = try Subprocess.start("/bin/sleep", ["30"])
        #expect(slow.waitForLine(containing: "never", timeout: .milliseconds(300)) == nil)
        let killed = slow.wait(timeout: .milliseconds(300))
        #expect(killed.overstayed && killed.signaled && killed.status == SIGKILL)
        #expect(!slow.isRunning)
        // Well before sleep's 30 s: the wait ended at its bound.
        #expect(slow.elapsed < 20, "\(slow.elapsed) s")
        #expect(slow.wait().overstayed, "a later wait reports the same")

        let quick = try Subprocess.start("/bin/sh", ["-c", "echo bye; exit 7"])
        let ended = quick.wait(timeout: .seconds(30))
        #expect(!ended.overstayed && ended.code == 7 && ended.out == "bye\n")
        #expect(quick.lines.map(\.text) == ["bye"])
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

    @Test("the locators name the built executables, the binary and the media folder")
    func locators() {
        #expect(VitrineBinary.path.hasSuffix("/vitrine"))
        #expect(BuildProducts.path("runloop-probe") == BuildProducts.folder + "/runloop-probe")
        #expect(!BuildProducts.available("no-such-product"))
        #expect(RealMedia.folder.hasSuffix("shared/media/real"))
        #expect(FileManager.default.fileExists(atPath: Repository.path("Package.swift")))
    }
}
