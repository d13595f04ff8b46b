import Foundation
import Synchronization
import VitrineCore

/// The action bus: cue points (and, later, overlay buttons and the idle rule) post `Action`s here;
/// the engine, the catalog driver and the overlay UI subscribe to the ones they carry out.
///
/// Handlers run synchronously on the posting thread (the run loop), in subscription order, and
/// every action is also recorded in `history` (the last 256).
public final class ActionBus: Sendable {
    public typealias Handler = @Sendable (Action, _ source: String) -> Void
    private struct State {
        var handlers: [(UUID, Handler)] = []
        var history: [(action: Action, source: String)] = []
    }
    private let state = Mutex(State())

    public init() {}

    /// Adds a handler; returns a token for `unsubscribe`.
    @discardableResult
    public func subscribe(_ handler: @escaping Handler) -> UUID {
        let id = UUID()
        state.withLock { $0.handlers.append((id, handler)) }
        return id
    }

    public func unsubscribe(_ id: UUID) { state.withLock { $0.handlers.removeAll { $0.0 == id } } }

    /// Posts `action` from `source` (e.g. `cue welcome/promo`).
    public func post(_ action: Action, source: String) {
        let handlers = state.withLock { s -> [Handler] in
            s.history.append((action, source))
            if s.history.count > 256 { s.history.removeFirst(s.history.count - 256) }
            return s.handlers.map(\.1)
        }
        for h in handlers { h(action, source) }
    }

    /// The most recent actions, oldest first.
    public var history: [(action: Action, source: String)] { state.withLock { $0.history } }
}
