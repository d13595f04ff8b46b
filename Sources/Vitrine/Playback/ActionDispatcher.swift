import VitrineCore

/// What the engine does itself when an action is dispatched to it.
protocol ActionPerformer: AnyObject {
    @discardableResult func seek(time: Double) -> Bool
    @discardableResult func pause() -> Bool
    @discardableResult func resume() -> Bool
    var volume: Double { get set }
    /// The popups that `showOverlay` and `hideOverlays` act on; nil when the catalog has none.
    var overlays: OverlayLayer? { get }
    /// `CLOCK_MONOTONIC` seconds of the vblank being prepared (popups animate on presentation times).
    var lastHostTime: Double { get }
}

/// The one way an action (from a cue point, a button or tap, or the idle rule) reaches everyone who
/// acts on it: `dispatch` posts it as an `action` event, posts it on the action bus (the catalog
/// driver's `jump`, other subscribers), and queues the engine's own share, which `performPending`
/// carries out after the vblank (so a handler never re-enters the step that fired it).
///
/// The engine's share: `log`, `seek`, `pause`, `resume`, `setVolume`, `showOverlay` and
/// `hideOverlays`; `jump` is the catalog driver's. Confined to the run loop's thread.
final class ActionDispatcher {
    private let events: EventHub
    private let bus: ActionBus
    private let log: Logger
    private var pending: [(action: Action, source: String)] = []

    init(events: EventHub, bus: ActionBus, log: Logger) {
        self.events = events
        self.bus = bus
        self.log = log
    }

    /// Actions dispatched and not yet performed.
    var pendingCount: Int { pending.count }

    /// Dispatches `action` from `source` (like `cue welcome/promo`, `overlay menu/button 0`, `tap`, `idle`).
    func dispatch(_ action: Action, source: String) {
        events.post(.action(action, source: source))
        pending.append((action, source))
        bus.post(action, source: source)
    }

    /// Dispatches each action in order.
    func dispatch(_ list: [(Action, String)]) {
        for (action, source) in list { dispatch(action, source: source) }
    }

    /// Dispatches the actions of the cue points the playhead passed (after their `cuePoints` event).
    func dispatch(_ cue: CuePointEvent) {
        events.post(.cuePoints(cue))
        for c in cue.cuePoints { dispatch(c.action, source: "cue \(cue.itemID)/\(c.id)") }
    }

    /// Carries out the engine's share of the actions dispatched since the last call, in order.
    func performPending(on engine: ActionPerformer) {
        let list = pending
        pending.removeAll()
        for (action, source) in list {
            switch action {
            case .log(let m): log.info("\(source): \(m)")
            case .seek(let t): engine.seek(time: t)
            case .pause: engine.pause()
            case .resume: engine.resume()
            case .setVolume(let v): engine.volume = v
            case .showOverlay, .hideOverlays:
                if let overlays = engine.overlays {
                    let done = overlays.presenter.perform(action, at: engine.lastHostTime)
                    if done == false { log.info("\(source): \(action) had no effect") }
                } else {
                    log.info("\(source): \(action) (no overlays in this catalog)")
                }
            case .jump, .interrupt, .endInterrupt: break  // the player's
            }
        }
    }
}
