import Foundation
import Testing
import RunLoop

/// The loop belongs to the thread that created it. Misuse stops the program, so it is tested in
/// exit tests (a child process).
@Suite("thread confinement")
struct ThreadConfinementTests {
    @Test("isInLoop holds on the loop's thread only")
    func isInLoop() throws {
        let loop = try EventLoop()
        #expect(loop.isInLoop)
        nonisolated(unsafe) let shared = loop
        let elsewhere = Recorder<Bool>()
        onAnotherThread { elsewhere.append(shared.isInLoop) }
        #expect(elsewhere.all == [false])
    }

    #if DEBUG
    @Test("debug builds: scheduling a timer from another thread stops the program")
    func timerOffThread() async {
        await #expect(processExitsWith: .failure) {
            let loop = try EventLoop()
            nonisolated(unsafe) let shared = loop
            onAnotherThread { shared.scheduleTimer(after: .seconds(1)) {} }
        }
    }
    #endif

    @Test("every build: running the loop from another thread stops the program")
    func runOffThread() async {
        await #expect(processExitsWith: .failure) {
            let loop = try EventLoop()
            nonisolated(unsafe) let shared = loop
            onAnotherThread { try? shared.runOnce(timeout: .zero) }
        }
    }
}
