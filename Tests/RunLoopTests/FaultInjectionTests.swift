import Foundation
import Synchronization
import Testing
import RunLoop
import SystemSupport

/// The loop's kernel calls go through SystemSupport's gateway, so a test's `FaultPlan` makes them
/// fail as the kernel would: out of memory or watches, out of descriptors, a wall-clock step seen
/// by `ECANCELED` (which otherwise needs `CAP_SYS_TIME`, see `WallClockStepTests`).
@Suite("faults injected into the loop's calls")
struct LoopFaultTests {
    @Test("epoll_ctl(ADD) failing with ENOMEM or ENOSPC (the user's watch limit) throws that error and registers nothing",
          arguments: [Errno.noMemory, .noSpace])
    func registrationRefused(errno: Errno) throws {
        let loop = try EventLoop()
        let pipe = try TestPipe()
        let error = try FaultInjection.withPlan(.sequence("epoll_ctl", [.fail(errno)])) {
            try #require(throws: RunLoopError.self) { try loop.register(pipe.readEnd, for: .readable) { _ in } }
        }
        #expect(error == RunLoopError(operation: "epoll_ctl(ADD, fd \(pipe.readEnd))", errno: errno))
        #expect(error.description.hasSuffix("(\(errno.symbol))"))

        // Nothing was kept: the same descriptor registers now, and its handler runs.
        var read = ""
        let registration = try loop.register(pipe.readEnd, for: .readable) { _ in read += pipe.readAll() }
        pipe.write("after")
        try loop.run(until: { read == "after" })
        #expect(read == "after")
        registration.cancel()
    }

    @Test("an EINTR from epoll_ctl is retried by the gateway, once per interruption, and the registration is made")
    func interruptionRetried() throws {
        let loop = try EventLoop()
        let pipe = try TestPipe()
        let calls = Recorder<String>()
        let interruptions = Mutex(2)
        let plan = FaultPlan { call in
            calls.append(call.description)
            return interruptions.withLock { left in
                guard left > 0 else { return nil }
                left -= 1
                return .fail(.interrupted)
            }
        }
        let registration = try FaultInjection.withPlan(plan) { try loop.register(pipe.readEnd, for: .readable) { _ in } }
        #expect(calls.all == Array(repeating: "epoll_ctl ADD, fd \(pipe.readEnd)", count: 3))
        #expect(registration.isActive)
        registration.cancel()
    }

    @Test("an EventLoop that cannot make its wall-clock timerfd (EMFILE) throws, and closes the three descriptors it made")
    func creationFailsCleanly() throws {
        let calls = Recorder<String>()
        let plan = FaultPlan { call in
            calls.append(call.function == "timerfd_create" ? call.description : call.function)
            return call.function == "timerfd_create" && call.subject == "CLOCK_REALTIME" ? .fail(.tooManyOpenFiles) : nil
        }
        let error = FaultInjection.withPlan(plan) { #expect(throws: RunLoopError.self) { _ = try EventLoop() } }
        #expect(error == RunLoopError(operation: "timerfd_create(CLOCK_REALTIME)", errno: .tooManyOpenFiles))
        #expect(calls.all == ["epoll_create1", "eventfd", "timerfd_create CLOCK_MONOTONIC", "timerfd_create CLOCK_REALTIME",
                              "close", "close", "close"])
    }

    @Test("re-arming the wall-clock timerfd fails with ECANCELED (a step since it was armed): the change handlers run, then the wall-clock timers due")
    func rearmSeesStep() throws {
        let loop = try EventLoop()
        var order: [String] = []
        loop.onWallClockChange { order.append("step") }
        loop.scheduleTimer(atWallClock: loop.wallClockNow - .seconds(1)) { order.append("edge") }
        try FaultInjection.withPlan(.sequence("timerfd_settime", [.fail(.canceled)])) {
            try loop.runOnce(timeout: .zero)
        }
        #expect(order == ["step", "edge"])
        try loop.runOnce(timeout: .zero)  // Without a fault, no step.
        #expect(order == ["step", "edge"])
    }

    @Test("a read of the wall-clock timerfd that fails with ECANCELED is reported as one step; the edge it was armed for fires")
    func readSeesStep() throws {
        let loop = try EventLoop()
        var steps = 0
        var fired = false
        loop.onWallClockChange { steps += 1 }
        loop.scheduleTimer(atWallClock: loop.wallClockNow + .milliseconds(20)) { fired = true }
        let pending = Mutex(true)
        let plan = FaultPlan { call in
            guard call.function == "read", call.subject?.hasPrefix("timerfd ") == true else { return nil }
            return pending.withLock { first in
                defer { first = false }
                return first ? .fail(.canceled) : nil
            }
        }
        try FaultInjection.withPlan(plan) { try loop.run(until: { steps == 1 && fired }) }
        #expect(steps == 1)
        #expect(fired)
        #expect(pending.withLock { $0 } == false)
    }
}
