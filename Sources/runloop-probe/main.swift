// runloop-probe: an event loop doing one thing, for measurements and for tests that need a
// process of their own.
//
//   runloop-probe idle SECONDS   one timer SECONDS from now and nothing else; measure it with
//                                /usr/bin/time: the loop sleeps in epoll_wait until the timerfd fires
//   runloop-probe signal         blocks SIGHUP, SIGINT and SIGTERM first thing, starts a thread, which
//                                sends the process a SIGHUP with kill(getpid(), SIGHUP); the loop
//                                reads it from its signalfd (RunLoopTests checks the output)
//
// Output, one line each:
//   fired after=10.000081 late=0.000081                 (idle: seconds since start, past the deadline)
//   worker SIGHUP-blocked=true                          (signal: the thread inherited the mask)
//   signal SIGHUP                                       (signal: delivered on the loop)
// Exit 0; 1 when the signal did not arrive within 5 s; 64 on a usage error.
import Foundation
import RunLoop

/// Writes one line to stdout at once (unbuffered, so lines from two threads arrive whole and in order).
func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

func usageError() -> Never {
    FileHandle.standardError.write(Data("usage: runloop-probe idle SECONDS | runloop-probe signal\n".utf8))
    exit(64)
}

let arguments = CommandLine.arguments.dropFirst()
switch arguments.first {
case "idle":
    guard arguments.count == 2, let seconds = Double(arguments.last!), seconds >= 0 else { usageError() }
    let loop = try EventLoop()
    let start = loop.now
    let deadline = start + .nanoseconds(Int64(seconds * 1_000_000_000))
    loop.scheduleTimer(at: deadline) {
        let now = loop.now
        say("fired after=\(String(format: "%.6f", (now - start) / .seconds(1))) late=\(String(format: "%.6f", (now - deadline) / .seconds(1)))")
        loop.stop()
    }
    try loop.run()

case "signal":
    guard arguments.count == 1 else { usageError() }
    // Before any other thread exists, so that every thread inherits the block.
    SignalMask.block([.hangup, .interrupt, .terminate])
    let loop = try EventLoop()
    var received: [Signal] = []
    var workerReport = false
    func finishIfDone() { if !received.isEmpty && workerReport { loop.stop() } }
    try loop.handleSignals([.hangup, .interrupt, .terminate]) { signal in
        say("signal \(signal)")
        received.append(signal)
        finishIfDone()
    }
    // The worker's wake-up runs this on the loop thread.
    let workerDone = loop.makeWaker {
        workerReport = true
        finishIfDone()
    }
    let worker = Thread {
        say("worker SIGHUP-blocked=\(SignalMask.isBlocked(.hangup))")
        kill(getpid(), SIGHUP)  // Process-directed: a thread not blocking SIGHUP would take it and die.
        workerDone.wake()
    }
    worker.start()
    let watchdog = loop.scheduleTimer(after: .seconds(5)) {
        say("timeout: received \(received)")
        exit(1)
    }
    try loop.run()
    watchdog.cancel()

default:
    usageError()
}
