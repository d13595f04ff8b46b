import Foundation
import RunLoop

/// The decoders' progress, for a presenter that waits on it: each decoder calls `notify()` after it
/// queues a frame or samples and when its state changes (opened, finished, failed).
///
/// A waiter reads `generation`, checks what it waits for, and if that is not there yet waits for a
/// later generation: the run loop by `arm()`ing its waker (woken once, at the next `notify()`, through
/// the loop's eventfd), or a thread with no loop by `wait(after:timeout:)`. Reading the generation
/// before checking means no notification between the check and the wait is missed.
final class DecoderProgress: @unchecked Sendable {  // every field is guarded by `condition`
    private let condition = NSCondition()
    private var count = 0
    private var armed: LoopWaker?

    /// Grows with every `notify()`.
    var generation: Int { condition.lock(); defer { condition.unlock() }; return count }

    /// A decoder made progress: wakes an armed loop once, and any blocking waiter.
    func notify() {
        condition.lock()
        count += 1
        let waker = armed
        armed = nil
        condition.broadcast()
        condition.unlock()
        waker?.wake()
    }

    /// Wakes `waker` at the first `notify()` after generation `generation` (at once if one came since).
    func arm(_ waker: LoopWaker, after generation: Int) {
        condition.lock()
        if count != generation {
            condition.unlock()
            waker.wake()
            return
        }
        armed = waker
        condition.unlock()
    }

    /// Blocks until a `notify()` after generation `generation`, or `timeout` seconds.
    func wait(after generation: Int, timeout: Double) {
        condition.lock(); defer { condition.unlock() }
        let deadline = Date(timeIntervalSinceNow: timeout)
        while count == generation {
            if !condition.wait(until: deadline) { return }
        }
    }
}
