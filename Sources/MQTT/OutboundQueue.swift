// The messages `publish` keeps while the broker is out of reach: bounded, oldest dropped.

/// One message waiting for a connection.
struct PendingMessage {
    var topic: String
    var payload: [UInt8]
    var qos: Int
    var retain: Bool
}

/// A first-in first-out queue of at most `limit` messages; adding to a full queue drops the
/// oldest and counts it.
struct OutboundQueue {
    let limit: Int
    private var items: [PendingMessage] = []
    private var head = 0
    /// Messages dropped since the queue was last drained.
    private(set) var droppedSinceDrain = 0

    init(limit: Int) { self.limit = limit }

    var count: Int { items.count - head }

    /// Appends `message`; returns false when an older one (or this one, with a limit of 0) was dropped.
    @discardableResult
    mutating func append(_ message: PendingMessage) -> Bool {
        guard limit > 0 else { droppedSinceDrain += 1; return false }
        items.append(message)
        guard count > limit else { return true }
        head += 1
        droppedSinceDrain += 1
        if head > 64 && head * 2 > items.count {
            items.removeFirst(head)
            head = 0
        }
        return false
    }

    /// Takes every message out, oldest first, and the count of those dropped before them.
    mutating func drain() -> (messages: [PendingMessage], dropped: Int) {
        defer { items.removeAll(); head = 0; droppedSinceDrain = 0 }
        return (Array(items[head...]), droppedSinceDrain)
    }
}
