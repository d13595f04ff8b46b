// The player's state rules, as in SFBAudioPlayer (states, queue, play/pause/resume/stop/toggle/reset)
// and BCOVPlaybackFacade (advanceToNext, advanceToNextAndPlay). Pure: the engine applies the
// resulting changes to its decoders and outputs.

/// The playback state (SFBAudioPlayer's `PlaybackState`).
public enum PlaybackState: String, Sendable, Equatable {
    /// Nothing is rendering; no item is loaded, or the loaded one has not started.
    case stopped
    /// An item is loaded and rendering is suspended.
    case paused
    /// An item is rendering.
    case playing
}

/// What the engine must do after a call changed the queue or the state.
public enum PlaybackChange: Sendable, Equatable {
    /// Cancel the current item's decoder (and its prerolled successor); nothing is loaded now.
    case cancelCurrent
    /// Load this item as the current one (start its decoder from the beginning).
    case load(PlaylistItem)
    /// The state changed.
    case state(PlaybackState)
}

/// The current item, the queue of items after it, and the playback state, with the seeds' rules:
/// a call that has no effect in the current state returns false and changes nothing.
public struct PlaybackQueue: Sendable {
    public private(set) var state: PlaybackState = .stopped
    /// The item now loaded (what is or would be playing); nil when stopped with nothing loaded.
    public private(set) var current: PlaylistItem?
    /// Items waiting, in order.
    public private(set) var queue: [PlaylistItem] = []

    public init() {}

    public var queueIsEmpty: Bool { queue.isEmpty }

    /// Cancels the current item, clears the queue, loads `item` and plays it.
    public mutating func play(_ item: PlaylistItem) -> [PlaybackChange] {
        var changes = cancelAndClear()
        current = item
        changes.append(.load(item))
        changes += setState(.playing)
        return changes
    }

    /// Appends `item`; with `immediate`, first cancels the current item and clears the queue, and the
    /// item becomes current right away (playing on if the player was playing).
    public mutating func enqueue(_ item: PlaylistItem, immediate: Bool = false) -> [PlaybackChange] {
        guard immediate else { queue.append(item); return [] }
        var changes = cancelAndClear()
        current = item
        changes.append(.load(item))
        return changes
    }

    /// Removes every queued item (the current one plays on).
    public mutating func clearQueue() { queue.removeAll() }

    /// Makes the next queued item current (cancelling the current one). The state is unchanged, so
    /// a playing player plays it and a stopped one waits for `play()`. False when the queue is empty.
    @discardableResult
    public mutating func advanceToNext() -> (Bool, [PlaybackChange]) {
        guard !queue.isEmpty else { return (false, []) }
        var changes: [PlaybackChange] = current != nil ? [.cancelCurrent] : []
        let next = queue.removeFirst()
        current = next
        changes.append(.load(next))
        return (true, changes)
    }

    /// `advanceToNext()` then `play()`.
    public mutating func advanceToNextAndPlay() -> (Bool, [PlaybackChange]) {
        let (advanced, changes) = advanceToNext()
        guard advanced else { return (false, []) }
        return (true, changes + play().1)
    }

    /// Starts rendering. Playing: no effect. Paused: resumes. Stopped: plays the loaded item, or the
    /// next queued one; with nothing loaded or queued it has no effect.
    @discardableResult
    public mutating func play() -> (Bool, [PlaybackChange]) {
        switch state {
        case .playing: return (false, [])
        case .paused: return (true, setState(.playing))
        case .stopped:
            if current != nil { return (true, setState(.playing)) }
            guard !queue.isEmpty else { return (false, []) }
            let (_, changes) = advanceToNext()
            return (true, changes + setState(.playing))
        }
    }

    /// Playing → paused; no effect otherwise.
    public mutating func pause() -> (Bool, [PlaybackChange]) {
        guard state == .playing else { return (false, []) }
        return (true, setState(.paused))
    }

    /// Paused → playing; no effect otherwise.
    public mutating func resume() -> (Bool, [PlaybackChange]) {
        guard state == .paused else { return (false, []) }
        return (true, setState(.playing))
    }

    /// Cancels the current item and clears the queue → stopped. No effect when already stopped.
    public mutating func stop() -> (Bool, [PlaybackChange]) {
        guard state != .stopped else { return (false, []) }
        return (true, cancelAndClear() + setState(.stopped))
    }

    /// Stopped → `play()`, playing → `pause()`, paused → `resume()`.
    public mutating func togglePlayPause() -> (Bool, [PlaybackChange]) {
        switch state {
        case .stopped: return play()
        case .playing: return pause()
        case .paused: return resume()
        }
    }

    /// Cancels the current item and clears the queue, whatever the state; ends stopped.
    public mutating func reset() -> [PlaybackChange] {
        cancelAndClear() + setState(.stopped)
    }

    /// The current item ended by itself: the next queued item becomes current (the state is kept),
    /// or, with the queue empty, the player stops.
    public mutating func currentItemEnded() -> [PlaybackChange] {
        current = nil
        if !queue.isEmpty {
            let next = queue.removeFirst()
            current = next
            return [.load(next)]
        }
        return setState(.stopped)
    }

    /// Removes and returns the next queued item so its decoder can preroll (the engine calls this
    /// when the current item has finished decoding; SFB's decoder queue works the same way).
    public mutating func takeNextForPreroll() -> PlaylistItem? {
        queue.isEmpty ? nil : queue.removeFirst()
    }

    /// Puts a prerolled item back at the head of the queue (its decoder was dropped).
    public mutating func returnToQueue(_ item: PlaylistItem) { queue.insert(item, at: 0) }

    /// A prerolled item started rendering: it is now the current item.
    public mutating func nowPlaying(_ item: PlaylistItem) { current = item }

    /// Nothing follows the item that just ended: the player stops.
    public mutating func playbackEnded() -> [PlaybackChange] {
        current = nil
        return setState(.stopped)
    }

    private mutating func cancelAndClear() -> [PlaybackChange] {
        queue.removeAll()
        guard current != nil else { return [] }
        current = nil
        return [.cancelCurrent]
    }

    private mutating func setState(_ s: PlaybackState) -> [PlaybackChange] {
        guard s != state else { return [] }
        state = s
        return [.state(s)]
    }
}
