import KMS

/// What the hot-plug reaction acts on: the DRM output (`DRMOutput`), or a test double.
protocol HotplugScreen: AnyObject {
    /// The buffers' size in pixels and the vblank rate: a mode of another size or rate needs a new
    /// output (the compositor draws at the output's size, the presenter paces on its period).
    var width: Int { get }
    var height: Int { get }
    var refreshRate: Double { get }
    /// The connector driven (or lost), e.g. `"HDMI-A-1"`, and its object id.
    var connectorName: String { get }
    var connectorID: UInt32 { get }
    /// The sink went away: stop page flips (the vblank clock goes on by itself), keep the timeline.
    func screenLost()
    /// The sink is back (or its mode changed, at the same size): modeset `connector` at `mode`
    /// (TEST_ONLY first); the next picture goes on screen with it.
    /// - Throws: the driver's refusal (`DRMError`); the screen is then lost (flips stopped), also
    ///   when it was driven before (a mode change).
    func reconnect(to connector: Connector, mode: Mode) throws
}

/// The player's reaction to hot-plug events for its one screen: each look at the connectors (a
/// uevent, the slow poll) goes through `OutputPlanner.decide` with the state kept from the last
/// look, and its action is carried out on the screen (`HotplugScreen`).
///
/// | planner action | what happens | `Reaction` |
/// | --- | --- | --- |
/// | `.keep`, `.none` | nothing | `.unchanged` |
/// | `.lost` | `screenLost()`: flips stop, the timeline and the sound go on | `.lost` |
/// | `.returned(m)`, `.appeared(m)`, `.modeChanged(m)`, same connector, m the buffers' size and rate | `reconnect(to:mode:)` | `.restored`, or `.refused` (stays lost) |
/// | the same, m of another size or rate, another connector, or the same name with a new object id (MST) | nothing here: the run ends and the supervisor opens the display again | `.restart` |
///
/// Confined to the run loop's thread.
final class ScreenHotplug {
    enum Reaction: Equatable {
        /// Nothing changed for this screen.
        case unchanged
        /// The connector's sink went away.
        case lost(connector: String)
        /// The connector is driven again at `mode`.
        case restored(connector: String, mode: Mode)
        /// The connector is back but the modeset was refused (TEST_ONLY); it stays lost until the
        /// next look.
        case refused(connector: String, why: String)
        /// The screen needs a new output: `mode` has another size than the buffers, or the output
        /// moves to another connector.
        case restart(connector: String, mode: Mode, why: String)
    }

    let request: OutputRequest
    /// The state after the last look (`OutputPlanner`).
    private(set) var state: OutputState

    /// - Parameters:
    ///   - request: the configured connector (nil: the first connected) and mode.
    ///   - connector, mode: what the output drives since it opened.
    init(request: OutputRequest, driving connector: String, mode: Mode) {
        self.request = request
        state = .driving(connector: connector, mode: mode)
    }

    /// Whether the screen is lost now.
    var isLost: Bool {
        if case .lost = state { return true }
        return false
    }

    /// Decides on `connectors` (as read now) and carries the action out on `screen`.
    func connectorsChanged(_ connectors: [Connector], screen: HotplugScreen) -> Reaction {
        // A named output decides on its connector; an unnamed one holds the connector it drives.
        let effective = OutputRequest(connectorName: request.connectorName ?? screen.connectorName, mode: request.mode)
        let decision = OutputPlanner.decide(effective, previous: state, connectors: connectors)
        let name = decision.connector ?? screen.connectorName
        switch decision.action {
        case .keep, .none:
            state = decision.state
            return .unchanged
        case .lost:
            state = decision.state
            screen.screenLost()
            return .lost(connector: name)
        case .appeared(let mode), .returned(let mode), .modeChanged(let mode):
            guard name.lowercased() == screen.connectorName.lowercased(),
                  let connector = Connector.named(name, in: connectors) else {
                return .restart(connector: name, mode: mode, why: "another connector than \(screen.connectorName)")
            }
            // A DisplayPort MST branch plugged back gets a new connector object: a new output.
            guard connector.id == screen.connectorID else {
                return .restart(connector: name, mode: mode, why: "it came back as connector \(connector.id), not \(screen.connectorID)")
            }
            guard mode.width == screen.width, mode.height == screen.height else {
                return .restart(connector: name, mode: mode,
                                why: "its mode \(mode.width)x\(mode.height) is not the \(screen.width)x\(screen.height) the output was opened at")
            }
            let rate = mode.refreshRate > 0 ? mode.refreshRate : 60
            // 59.94 for 60 is the same pacing (0.1 %); 50 for 60 is not.
            guard abs(rate - screen.refreshRate) <= 0.005 * screen.refreshRate else {
                return .restart(connector: name, mode: mode,
                                why: String(format: "its mode runs at %.2f Hz, not the %.2f Hz the output was opened at", rate, screen.refreshRate))
            }
            do {
                try screen.reconnect(to: connector, mode: mode)
                state = decision.state
                return .restored(connector: name, mode: mode)
            } catch {
                // The screen is lost until the next look (a refused mode change too).
                switch state {
                case let .driving(_, previous), let .lost(_, previous): state = .lost(connector: name, mode: previous)
                case .idle: state = .lost(connector: name, mode: mode)
                }
                return .refused(connector: name, why: "\(error)")
            }
        }
    }
}

/// The screen's connection as the status (`vitrine ctl status`, `display.connection`) and systemd's
/// STATUS line say it.
enum ScreenConnection: Equatable {
    case connected(connector: String)
    case disconnected(connector: String)

    /// `"connected"` or `"disconnected"`.
    var statusText: String {
        switch self {
        case .connected: return "connected"
        case .disconnected: return "disconnected"
        }
    }

    var connector: String {
        switch self {
        case let .connected(c), let .disconnected(c): return c
        }
    }

    /// systemd's `STATUS=` while it lasts.
    var serviceStatus: String {
        switch self {
        case .connected: return "playing"
        case let .disconnected(c): return "no screen connected (\(c)); playing on"
        }
    }
}
