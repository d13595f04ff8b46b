import Foundation
import Testing
import RunLoop
import VitrineTestSupport

/// Signals read from a signalfd. In this process only thread-directed signals are sent (to the
/// test's own thread, which blocks them): a process-directed one could go to any thread of the
/// test runner, which does not block it. The process-directed case runs in `runloop-probe`.
@Suite("signalfd signals")
struct SignalTests {
    @Test("SIGUSR1 and SIGHUP sent to the loop's thread are read from the signalfd and handled on the loop",
          arguments: [Signal.user1, Signal.hangup])
    func threadDirected(signal: Signal) throws {
        let wasBlocked = SignalMask.isBlocked(signal)
        SignalMask.block([signal])
        defer { if !wasBlocked { SignalMask.unblock([signal]) } }
        let loop = try EventLoop()
        var received: [Signal] = []
        let subscription = try loop.handleSignals([signal]) { received.append($0) }
        #expect(pthread_kill(pthread_self(), signal.rawValue) == 0)
        try loop.run(until: { !received.isEmpty })
        #expect(received == [signal])
        subscription.cancel()
        // Read, so nothing is left pending to be delivered when the block is lifted.
        #expect(!Self.isPending(signal))
    }

    @Test("kill(getpid(), SIGHUP) from a worker thread reaches the loop when main blocked SIGHUP before starting threads",
          .enabled(if: BuildProducts.available("runloop-probe"), BuildProducts.absent("runloop-probe")))
    func processDirected() throws {
        let result = try Subprocess.run(BuildProducts.path("runloop-probe"), ["signal"])
        let lines = result.out.split(separator: "\n").map(String.init)
        #expect(result.status == 0, "\(result.err)")
        #expect(lines.sorted() == ["signal SIGHUP", "worker SIGHUP-blocked=true"])
    }

    @Test("handling a signal that is not blocked stops the program (it would end the process instead)")
    func unblockedSignalIsABug() async {
        await #expect(processExitsWith: .failure) {
            SignalMask.unblock([.user2])
            let loop = try EventLoop()
            try loop.handleSignals([.user2]) { _ in }
        }
    }

    static func isPending(_ signal: Signal) -> Bool {
        var pending = sigset_t()
        sigpending(&pending)
        return sigismember(&pending, signal.rawValue) == 1
    }
}
