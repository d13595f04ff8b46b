import Foundation

/// A bounded FIFO shared by one producer (a decoder thread) and one consumer.
/// `push` blocks while full; `close()` wakes everyone and ends the stream; `flush()` (a seek) empties
/// it and starts a new `epoch`, so a push of the epoch before is refused.
///
/// The queue may share its condition with its item's `SampleQueue` (`init(capacity:condition:)`), so
/// that a push waiting for the audio to run short (`Growth`) is woken by the audio consumer's take:
/// every change to either queue broadcasts, and every waiter checks its own condition again.
final class FrameQueue<Element>: @unchecked Sendable {  // every field is guarded by `condition`
    private let condition: NSCondition
    /// Slots before `head` were popped and hold nil, so a taken frame (and the decoder buffer it pins)
    /// is released as soon as its consumer drops it, not when the array is next compacted.
    private var items: [Element?] = []
    private var head = 0
    private var isClosed = false
    private var finished = false
    let capacity: Int
    /// The bytes an item holds (a decoded picture's buffers), for `push(_:limit:maxBytes:)`.
    private let cost: (Element) -> Int
    private var bytes = 0
    private var currentEpoch = 0

    /// - Parameters:
    ///   - condition: the lock and condition guarding this queue (shared with the item's audio queue
    ///     when `push` grows with it).
    ///   - cost: the bytes an item holds (a decoded picture's buffers), for `push`'s `maxBytes`.
    init(capacity: Int, condition: NSCondition = NSCondition(), cost: @escaping (Element) -> Int = { _ in 0 }) {
        self.capacity = capacity
        self.condition = condition
        self.cost = cost
    }

    /// Lets the queue hold up to `limit` items while `audio` (which must share this queue's condition)
    /// holds fewer than `lowFrames` frames: interleaving skew (MPEG-PS stores video up to a second
    /// ahead of its audio) never starves the audio.
    struct Growth {
        let audio: SampleQueue
        let lowFrames: Int
        let limit: Int
    }

    /// Appends `item`; blocks while the queue holds `capacity` items (or `growth.limit` while its audio
    /// runs short), or while the queued items' `cost` plus this one's would pass `maxBytes` (a lone
    /// item always goes in), unless closed or flushed. Returns false if the queue was closed (the
    /// consumer is gone) or, with `epoch`, when it is no longer the queue's (a seek flushed it: the
    /// item belongs to the playback before the seek).
    @discardableResult
    func push(_ item: Element, growth: Growth? = nil, maxBytes: Int = .max, epoch: Int? = nil) -> Bool {
        if let growth { precondition(growth.audio.shares(condition), "a growing queue must share its audio's condition") }
        let size = cost(item)
        condition.lock(); defer { condition.unlock() }
        let stale = { epoch.map { $0 != self.currentEpoch } ?? false }
        while !isClosed && !stale() && (count >= limit(growth) || count > 0 && bytes + size > maxBytes) { condition.wait() }
        if isClosed || stale() { return false }
        items.append(item)
        bytes += size
        condition.broadcast()
        return true
    }

    /// The bound now (with the lock held).
    private func limit(_ growth: Growth?) -> Int {
        guard let growth, growth.audio.lockedFrames < growth.lowFrames else { return capacity }
        return max(capacity, growth.limit)
    }

    /// Bytes held by the items waiting to be taken (their `cost`).
    var bufferedBytes: Int { condition.lock(); defer { condition.unlock() }; return bytes }

    /// Marks the end of the stream: no more pushes will come. With `epoch`, only if no `flush()`
    /// started another stream since.
    func finish(epoch: Int? = nil) {
        condition.lock(); defer { condition.unlock() }
        if let epoch, epoch != currentEpoch { return }
        finished = true; condition.broadcast()
    }

    /// Closes the queue: producers stop, waiting calls return.
    func close() {
        condition.lock(); isClosed = true; items.removeAll(); head = 0; bytes = 0; condition.broadcast(); condition.unlock()
    }

    /// The pushes accepted now carry this epoch (0 until the first `flush()`).
    var epoch: Int { condition.lock(); defer { condition.unlock() }; return currentEpoch }

    /// Empties the queue for a new stream (a seek): its items are dropped, it is no longer finished,
    /// and a push of an earlier epoch (waiting or to come) is refused. Returns the new epoch.
    @discardableResult
    func flush() -> Int {
        condition.lock(); defer { condition.unlock() }
        items.removeAll(); head = 0; bytes = 0; finished = false
        currentEpoch += 1
        condition.broadcast()
        return currentEpoch
    }

    private var count: Int { items.count - head }

    /// Whether `close()` was called.
    var closed: Bool { condition.lock(); defer { condition.unlock() }; return isClosed }

    var isEmpty: Bool { condition.lock(); defer { condition.unlock() }; return count == 0 }
    /// Items waiting to be taken.
    var buffered: Int { condition.lock(); defer { condition.unlock() }; return count }
    /// True when the producer finished and every item was taken.
    var isDrained: Bool { condition.lock(); defer { condition.unlock() }; return finished && count == 0 }
    var isFinished: Bool { condition.lock(); defer { condition.unlock() }; return finished }

    /// The first item without removing it.
    func peek() -> Element? {
        condition.lock(); defer { condition.unlock() }
        return count > 0 ? items[head]! : nil
    }

    /// Removes and returns the first item, or nil if empty (never blocks).
    func pop() -> Element? {
        condition.lock(); defer { condition.unlock() }
        guard count > 0 else { return nil }
        let e = items[head]!
        items[head] = nil
        head += 1
        bytes -= cost(e)
        if head > 64 && head * 2 > items.count { items.removeFirst(head); head = 0 }
        condition.broadcast()
        return e
    }

    /// Waits until an item is available, the stream finished, or `timeout` seconds passed.
    func waitForItem(timeout: Double) {
        condition.lock(); defer { condition.unlock() }
        let deadline = Date(timeIntervalSinceNow: timeout)
        while count == 0 && !finished && !isClosed {
            if !condition.wait(until: deadline) { return }
        }
    }
}

/// Interleaved S16 samples from one decoder thread to the audio consumer, bounded in frames.
final class SampleQueue: @unchecked Sendable {  // every field is guarded by `condition`
    private let condition: NSCondition
    private var chunks: [[Int16]] = []
    private var offset = 0          // samples already taken from chunks[0]
    private(set) var bufferedFrames = 0
    private var finished = false
    private var closed = false
    private var currentEpoch = 0
    let channels: Int
    /// Upper bound in frames before `push` blocks.
    let capacityFrames: Int

    /// - Parameter condition: the lock and condition guarding this queue (shared with its item's video queue).
    init(channels: Int, capacityFrames: Int, condition: NSCondition = NSCondition()) {
        self.channels = channels; self.capacityFrames = capacityFrames; self.condition = condition
    }

    /// Whether this queue is guarded by `c`.
    func shares(_ c: NSCondition) -> Bool { c === condition }

    /// Frames buffered, read with the shared condition's lock already held (by a `FrameQueue` push).
    var lockedFrames: Int { bufferedFrames }

    /// Appends `samples`; blocks while the queue holds `capacityFrames`. Returns false if the queue
    /// was closed or, with `epoch`, when a `flush()` started another one.
    @discardableResult
    func push(_ samples: [Int16], epoch: Int? = nil) -> Bool {
        condition.lock(); defer { condition.unlock() }
        let stale = { epoch.map { $0 != self.currentEpoch } ?? false }
        guard !samples.isEmpty else { return !closed && !stale() }
        while !closed && !stale() && bufferedFrames >= capacityFrames { condition.wait() }
        if closed || stale() { return false }
        chunks.append(samples)
        bufferedFrames += samples.count / channels
        condition.broadcast()
        return true
    }

    /// Marks the end of the stream; with `epoch`, only if no `flush()` started another one since.
    func finish(epoch: Int? = nil) {
        condition.lock(); defer { condition.unlock() }
        if let epoch, epoch != currentEpoch { return }
        finished = true; condition.broadcast()
    }
    func close() { condition.lock(); closed = true; chunks.removeAll(); offset = 0; bufferedFrames = 0; condition.broadcast(); condition.unlock() }

    /// The pushes accepted now carry this epoch (0 until the first `flush()`).
    var epoch: Int { condition.lock(); defer { condition.unlock() }; return currentEpoch }

    /// Empties the queue for a new stream (a seek), as `FrameQueue.flush()`. Returns the new epoch.
    @discardableResult
    func flush() -> Int {
        condition.lock(); defer { condition.unlock() }
        chunks.removeAll(); offset = 0; bufferedFrames = 0; finished = false
        currentEpoch += 1
        condition.broadcast()
        return currentEpoch
    }

    /// Whether `close()` was called.
    var isClosed: Bool { condition.lock(); defer { condition.unlock() }; return closed }

    var isDrained: Bool { condition.lock(); defer { condition.unlock() }; return finished && bufferedFrames == 0 }
    var isFinished: Bool { condition.lock(); defer { condition.unlock() }; return finished }
    var frames: Int { condition.lock(); defer { condition.unlock() }; return bufferedFrames }

    /// Takes up to `maxFrames` frames, appending them to `out`; waits up to `timeout` seconds for data.
    /// Returns the number of frames taken (0 on timeout or at the end of the stream).
    func take(maxFrames: Int, into out: inout [Int16], timeout: Double) -> Int {
        condition.lock(); defer { condition.unlock() }
        if bufferedFrames == 0 && !finished && !closed && timeout > 0 {
            let deadline = Date(timeIntervalSinceNow: timeout)
            while bufferedFrames == 0 && !finished && !closed {
                if !condition.wait(until: deadline) { break }
            }
        }
        var taken = 0
        while taken < maxFrames, !chunks.isEmpty {
            let chunk = chunks[0]
            let availableFrames = (chunk.count - offset) / channels
            let n = min(availableFrames, maxFrames - taken)
            out.append(contentsOf: chunk[offset..<(offset + n * channels)])
            offset += n * channels
            taken += n
            if offset >= chunk.count { chunks.removeFirst(); offset = 0 }
        }
        bufferedFrames -= taken
        if taken > 0 { condition.broadcast() }
        return taken
    }

    /// Discards up to `frames` frames (used to trim audio that starts before the item's time zero).
    func discard(frames: Int) {
        var sink: [Int16] = []
        _ = take(maxFrames: frames, into: &sink, timeout: 0)
    }
}
