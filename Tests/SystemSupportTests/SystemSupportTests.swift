import Foundation
import Synchronization
import Testing
@testable import SystemSupport

@Suite("Errno: one type, one text")
struct ErrnoTests {
    @Test("strerror text and the symbolic name", arguments: [
        (ENOSPC, "No space left on device (ENOSPC)"),
        (ENOENT, "No such file or directory (ENOENT)"),
        (EINVAL, "Invalid argument (EINVAL)"),
        (EPIPE, "Broken pipe (EPIPE)"),
        (ESTRPIPE, "Streams pipe error (ESTRPIPE)"),
        (999, "Unknown error 999 (errno 999)"),
    ])
    func description(code: Int32, text: String) {
        #expect(Errno(code).description == text)
    }

    @Test("static members are the C constants; EAGAIN is EWOULDBLOCK, EOPNOTSUPP is ENOTSUP on Linux")
    func members() {
        #expect(Errno.noSpace.rawValue == 28)
        #expect(Errno.wouldBlock == EAGAIN)
        #expect(Errno.notSupported == ENOTSUP)
        #expect(Errno.interrupted.name == "EINTR")
        #expect(Errno(12345).name == nil)
        #expect(Errno(12345).symbol == "errno 12345")
        #expect([Errno.noSpace, .quotaExceeded, .fileTooLarge].allSatisfy { $0.isOutOfSpace })
        #expect(!Errno.ioError.isOutOfSpace)
    }
}

@Suite("The C-call gateway")
struct GatewayTests {
    @Test("-1 with errno set becomes that Errno; EINTR is retried until the call succeeds")
    func minusOneSetsErrno() {
        var calls = 0
        let result = valueOrErrno(SystemCall("test")) { () -> Int32 in
            calls += 1
            if calls < 3 { Errno.current = .interrupted; return -1 }
            return 7
        }
        #expect(result == .success(7))
        #expect(calls == 3)
        let failure = valueOrErrno(SystemCall("test")) { () -> Int32 in Errno.current = .noSpace; return -1 }
        #expect(failure == .failure(.noSpace))
    }

    @Test("without retryOnInterrupt, EINTR is returned to the caller after one call")
    func noRetry() {
        var calls = 0
        let result = valueOrErrno(SystemCall("poll"), retryOnInterrupt: false) { () -> Int32 in
            calls += 1
            Errno.current = .interrupted
            return -1
        }
        #expect(result == .failure(.interrupted))
        #expect(calls == 1)
    }

    @Test("negative results are -errno (alsa-lib, libinput); libdrm's -1 reads errno, EIO when it is 0")
    func conventions() {
        #expect(valueOrErrno(SystemCall("snd_pcm_open"), convention: .negativeErrno) { -ENOENT } == .failure(.noSuchFile))
        #expect(valueOrErrno(SystemCall("snd_pcm_writei"), convention: .negativeErrno) { 480 } == .success(480))
        let drmMinusOne = valueOrErrno(SystemCall("drmHandleEvent"), convention: .minusOneSetsErrnoOrNegativeErrno) { () -> Int32 in -1 }
        #expect(drmMinusOne == .failure(.ioError))
        let drmErrno = valueOrErrno(SystemCall("drmIoctl"), convention: .minusOneSetsErrnoOrNegativeErrno) { () -> Int32 in
            Errno.current = .permissionDenied
            return -1
        }
        #expect(drmErrno == .failure(.permissionDenied))
        #expect(valueOrErrno(SystemCall("drmModeAtomicCommit"), convention: .minusOneSetsErrnoOrNegativeErrno) { -EINVAL }
            == .failure(.invalidArgument))
    }

    @Test("NULL takes errno, the binding's reason before it, and `unknown` when errno is 0")
    func pointers() {
        let value = 5
        #expect(pointerOrErrno(SystemCall("opendir"), unknown: .ioError) { Optional(value) } == .success(5))
        #expect(pointerOrErrno(SystemCall("opendir"), unknown: .ioError) { () -> Int? in Errno.current = .notDirectory; return nil }
            == .failure(.notDirectory))
        #expect(pointerOrErrno(SystemCall("udev_new"), unknown: .noSuchDevice) { () -> Int? in nil } == .failure(.noSuchDevice))
        #expect(pointerOrErrno(SystemCall("libinput_path_add_device"), reason: { .noSuchFile }, unknown: .noSuchDevice) { () -> Int? in
            Errno.current = .notTerminal
            return nil
        } == .failure(.noSuchFile))
    }
}

@Suite("The fault-injection seam")
struct FaultInjectionTests {
    @Test("an injected failure is returned without making the call; other calls run")
    func failsWithoutCalling() {
        var calls = 0
        let plan = FaultPlan { $0.function == "write" && $0.subject == "/a" ? .fail(.noSpace) : nil }
        FaultInjection.withPlan(plan) {
            #expect(valueOrErrno(SystemCall("write", "/a")) { () -> Int in calls += 1; return 10 } == .failure(.noSpace))
            #expect(valueOrErrno(SystemCall("write", "/b")) { () -> Int in calls += 1; return 10 } == .success(10))
            #expect(pointerOrErrno(SystemCall("write", "/a"), unknown: .ioError) { () -> Int? in calls += 1; return 1 } == .failure(.noSpace))
        }
        #expect(calls == 1)
        // Outside the plan the same call runs.
        #expect(valueOrErrno(SystemCall("write", "/a")) { () -> Int in calls += 1; return 10 } == .success(10))
        #expect(calls == 2)
    }

    @Test("a sequence: the next calls of one function get one fault each, in order; an injected EINTR is retried")
    func sequence() {
        var calls = 0
        let plan = FaultPlan.sequence("snd_pcm_writei", [.fail(.interrupted), .fail(.brokenPipe), .result(300)])
        let results = FaultInjection.withPlan(plan) {
            (0..<3).map { _ in
                valueOrErrno(SystemCall("snd_pcm_writei", "null"), convention: .negativeErrno) { () -> Int in calls += 1; return 480 }
            }
        }
        #expect(results == [.failure(.brokenPipe), .success(300), .success(480)])
        #expect(calls == 1)
    }

    @Test("the plan follows work onto a thread through propagating(_:), and reaches no other thread")
    func threads() {
        let seen = Mutex<[String: Errno?]>([:])
        let plan = FaultPlan { _ in .fail(.ioError) }
        let probe: @Sendable () -> Errno? = {
            if case .failure(let e) = valueOrErrno(SystemCall("read"), { () -> Int in 0 }) { return e }
            return nil
        }
        FaultInjection.withPlan(plan) {
            let done = DispatchGroup()
            done.enter()
            Thread(block: FaultInjection.propagating { seen.withLock { $0["carried"] = probe() }; done.leave() }).start()
            done.enter()
            Thread { seen.withLock { $0["plain"] = probe() }; done.leave() }.start()
            done.wait()
        }
        let results = seen.withLock { $0 }
        #expect(results["carried"] == .some(.ioError))
        #expect(results["plain"] == .some(nil))
    }

    @Test("plans of tests running at once stay apart (task-local)")
    func parallelPlans() async {
        await withTaskGroup(of: (Int, Errno?).self) { group in
            for i in 0..<8 {
                group.addTask {
                    FaultInjection.withPlan(FaultPlan { _ in .fail(Errno(Int32(100 + i))) }) {
                        if case .failure(let e) = valueOrErrno(SystemCall("read"), { () -> Int in 0 }) { return (i, e) }
                        return (i, nil)
                    }
                }
            }
            for await (i, errno) in group { #expect(errno == Errno(Int32(100 + i))) }
        }
    }

    @Test("a call's description names the function, subject and target")
    func callDescription() {
        #expect(SystemCall("rename", "/lib/.current.tmp", target: "/lib/current").description == "rename /lib/.current.tmp → /lib/current")
        #expect(SystemCall("fsync").description == "fsync")
    }
}

@Suite("The monotonic clock")
struct MonotonicClockTests {
    @Test("seconds and nanoseconds are one clock, CLOCK_MONOTONIC, and never go back")
    func oneClock() {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        let c = Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
        let s = MonotonicClock.seconds()
        let n = MonotonicClock.nanoseconds()
        let s2 = monotonicNow()
        #expect(s >= c && s - c < 1)
        #expect(Double(n) / 1e9 >= s && Double(n) / 1e9 - s < 1)
        #expect(s2 >= Double(n) / 1e9 - 1e-6)
        let start = MonotonicClock.nanoseconds()
        var later = start
        while later - start < 1_000_000 { later = MonotonicClock.nanoseconds() }
        let elapsed = MonotonicClock.elapsed(sinceNanoseconds: start)
        #expect(elapsed >= .milliseconds(1) && elapsed < .seconds(5))
    }
}
