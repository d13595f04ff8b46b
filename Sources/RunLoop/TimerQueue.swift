// The deadline heap: the timers of one clock, earliest first. The real loop and the manual-clock
// loop both fire timers through it; only where "now" comes from differs.

/// A binary min-heap of scheduled timers ordered by (due time, scheduling order), so timers with
/// the same due time fire in the order they were scheduled. Each timer knows its index, so
/// cancelling and rescheduling are O(log n) and nothing cancelled lingers in the heap.
struct TimerQueue {
    private var heap: [LoopTimer] = []
    private var nextSequence: UInt64 = 0

    var isEmpty: Bool { heap.isEmpty }
    var count: Int { heap.count }

    /// The earliest due time, in nanoseconds on the queue's clock.
    var earliest: Int64? { heap.first?.due }

    /// The sequence number the next insertion gets: timers scheduled from now on have one at least this big.
    var sequenceMark: UInt64 { nextSequence }

    /// Adds `timer`, due at `timer.due`.
    mutating func insert(_ timer: LoopTimer) {
        precondition(timer.heapIndex == nil, "TimerQueue.insert: already queued")
        timer.sequence = nextSequence
        nextSequence += 1
        timer.heapIndex = heap.count
        heap.append(timer)
        siftUp(heap.count - 1)
    }

    /// Takes `timer` out; nothing happens if it is not queued.
    mutating func remove(_ timer: LoopTimer) {
        guard let index = timer.heapIndex else { return }
        let last = heap.count - 1
        if index != last { swapAt(index, last) }
        heap.removeLast()
        timer.heapIndex = nil
        if index < heap.count {
            siftDown(index)
            siftUp(index)
        }
    }

    /// Takes the earliest timer if it is due at `now` and was scheduled before `mark`.
    ///
    /// The mark keeps a handler that schedules a timer due at once from starving the rest of
    /// the loop: such a timer fires on the next pass.
    mutating func popDue(at now: Int64, scheduledBefore mark: UInt64) -> LoopTimer? {
        guard let first = heap.first, first.due <= now, first.sequence < mark else { return nil }
        remove(first)
        return first
    }

    /// Takes every timer out (the loop is closing).
    mutating func removeAll() -> [LoopTimer] {
        let all = heap
        for timer in all { timer.heapIndex = nil }
        heap.removeAll()
        return all
    }

    private func precedes(_ a: LoopTimer, _ b: LoopTimer) -> Bool {
        a.due != b.due ? a.due < b.due : a.sequence < b.sequence
    }

    private mutating func swapAt(_ i: Int, _ j: Int) {
        heap.swapAt(i, j)
        heap[i].heapIndex = i
        heap[j].heapIndex = j
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard precedes(heap[child], heap[parent]) else { return }
            swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1, right = left + 1
            var first = parent
            if left < heap.count && precedes(heap[left], heap[first]) { first = left }
            if right < heap.count && precedes(heap[right], heap[first]) { first = right }
            if first == parent { return }
            swapAt(parent, first)
            parent = first
        }
    }
}
