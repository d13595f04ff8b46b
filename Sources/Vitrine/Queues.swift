import Foundation

/// A bounded FIFO shared by one producer (a decoder thread) and one consumer.
/// `push` blocks while full unless `force` is set; `close()` wakes everyone and ends the stream.
final class FrameQueue<Element>: @unchecked Sendable {
    private let condition = NSCondition()
    /// Slots before `head` were popped and hold nil, so a taken frame (and the decoder buffer it pins)
    /// is released as soon as its consumer drops it, not when the array is next compacted.
    private var items: [Element?] = []
    private var head = 0
    private(set) var closed = false
    private var finished = false
    let capacity: Int
    /// The bytes an item holds (a decoded picture's buffers), for `push(_:limit:maxBytes:)`.
    private let cost: (Element) -> Int
    private var bytes = 0

    init(capacity: Int, cost: @escaping (Element) -> Int = { _ in 0 }) { self.capacity = capacity; self.cost = cost }

    /// Appends `item`; blocks while the queue holds `capacity` items (or `limit` if given), unless closed.
    /// Returns false if the queue was closed (the consumer is gone).
    @discardableResult
    func push(_ item: Element, limit: Int? = nil) -> Bool {
        push(item) { limit ?? self.capacity }
    }

    /// Like `push(_:limit:)`, with a limit re-read every 10 ms while waiting (it may depend on
    /// another queue, such as how much audio is buffered), and a bound in bytes: it also waits while
    /// the queued items' `cost` plus this one's would pass `maxBytes` (a lone item always goes in).
    @discardableResult
    func push(_ item: Element, limit: () -> Int, maxBytes: Int = .max) -> Bool {
        let size = cost(item)
        condition.lock(); defer { condition.unlock() }
        while !closed && (count >= limit() || count > 0 && bytes + size > maxBytes) {
            _ = condition.wait(until: Date(timeIntervalSinceNow: 0.01))
        }
        if closed { return false }
        items.append(item)
        bytes += size
        condition.broadcast()
        return true
    }

    /// Bytes held by the items waiting to be taken (their `cost`).
    var bufferedBytes: Int { condition.lock(); defer { condition.unlock() }; return bytes }

    /// Marks the end of the stream: no more pushes will come.
    func finish() {
        condition.lock(); finished = true; condition.broadcast(); condition.unlock()
    }

    /// Closes the queue: producers stop, waiting calls return.
    func close() {
        condition.lock(); closed = true; items.removeAll(); head = 0; bytes = 0; condition.broadcast(); condition.unlock()
    }

    private var count: Int { items.count - head }

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
        while count == 0 && !finished && !closed {
            if !condition.wait(until: deadline) { return }
        }
    }
}

/// Interleaved S16 samples from one decoder thread to the audio consumer, bounded in frames.
final class SampleQueue: @unchecked Sendable {
    private let condition = NSCondition()
    private var chunks: [[Int16]] = []
    private var offset = 0          // samples already taken from chunks[0]
    private(set) var bufferedFrames = 0
    private var finished = false
    private var closed = false
    let channels: Int
    /// Upper bound in frames before `push` blocks.
    let capacityFrames: Int

    init(channels: Int, capacityFrames: Int) { self.channels = channels; self.capacityFrames = capacityFrames }

    @discardableResult
    func push(_ samples: [Int16]) -> Bool {
        guard !samples.isEmpty else { return !closed }
        condition.lock(); defer { condition.unlock() }
        while !closed && bufferedFrames >= capacityFrames { condition.wait() }
        if closed { return false }
        chunks.append(samples)
        bufferedFrames += samples.count / channels
        condition.broadcast()
        return true
    }

    func finish() { condition.lock(); finished = true; condition.broadcast(); condition.unlock() }
    func close() { condition.lock(); closed = true; chunks.removeAll(); bufferedFrames = 0; condition.broadcast(); condition.unlock() }

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
