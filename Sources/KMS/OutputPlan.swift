// What each configured output does after the connectors were read again (a hot-plug uevent, the
// first look at start): pure, so that `make test` covers it without a display.

/// One output the configuration asks for: a connector and a mode.
public struct OutputRequest: Sendable, Equatable {
    /// The connector's name, e.g. `"HDMI-A-1"` (matched as `Connector.named(_:in:)` does: exact,
    /// else in another case); `nil` for the first connected connector no other output names or holds.
    public var connectorName: String?
    /// The mode to drive it at (`display.mode`).
    public var mode: ModeRequest

    public init(connectorName: String? = nil, mode: ModeRequest = .preferred) {
        self.connectorName = connectorName
        self.mode = mode
    }
}

/// What an output was doing after the last decision: what the player keeps between two looks at
/// the connectors. (A list of connectors alone cannot hold it: a connector disconnected now may
/// have been driven before, `.lost`, or never, `.idle`; only the first comes back as `.returned`.)
public enum OutputState: Sendable, Equatable {
    /// Not driven since start: the player booted with nothing connected (or nothing it could drive).
    case idle
    /// Scanning out to `connector` at `mode`.
    case driving(connector: String, mode: Mode)
    /// Was scanning out to `connector` at `mode` until the sink went away: flips are stopped, the
    /// timeline (and audio on a device of its own) goes on.
    case lost(connector: String, mode: Mode)

    /// The connector driven or lost; nil when idle.
    public var connectorName: String? {
        switch self {
        case .idle: return nil
        case let .driving(name, _), let .lost(name, _): return name
        }
    }
}

/// What to do with one output now.
public enum OutputAction: Sendable, Equatable {
    /// Same connector, still connected, the chosen mode unchanged: nothing to do.
    case keep
    /// The connector driven until now is disconnected (or gone from the list): stop flips, keep
    /// the timeline running, log it and show it in the status.
    case lost
    /// A connector the output never drove (since start) is connected: modeset it at the mode,
    /// with a TEST_ONLY commit first.
    case appeared(Mode)
    /// The connector lost earlier is connected again: modeset it at the mode (chosen again from the
    /// modes it reports now), TEST_ONLY first, and show the frame the timeline is at.
    case returned(Mode)
    /// Still connected, but the mode chosen from what it reports now differs (another EDID: a
    /// different sink on the same port, or the sink's preferred mode changed): modeset again.
    case modeChanged(Mode)
    /// Nothing connected that this output can drive, and nothing was driven: nothing to do.
    case none

    /// The mode to set, for the actions that modeset.
    public var mode: Mode? {
        switch self {
        case let .appeared(mode), let .returned(mode), let .modeChanged(mode): return mode
        case .keep, .lost, .none: return nil
        }
    }
}

/// The decision for one output.
public struct OutputDecision: Sendable, Equatable {
    /// The output's index in the requests.
    public var output: Int
    /// The connector the action is about: the one driven, lost, or to modeset; nil when there is none.
    public var connector: String?
    public var action: OutputAction
    /// The output's state once the action is carried out, to pass as `previous` next time. (If the
    /// modeset of `.appeared`, `.returned` or `.modeChanged` fails, keep the previous state
    /// instead, or `.lost` of it: the next uevent decides again.)
    public var state: OutputState

    public init(output: Int, connector: String?, action: OutputAction, state: OutputState) {
        self.output = output
        self.connector = connector
        self.action = action
        self.state = state
    }
}

/// Decides, for each configured output, what to do with the connectors as they are now.
///
/// **Drivable.** A connector can be driven when it is `.connected` and reports at least one mode
/// (what `Scanout` requires). A connector in `.unknown` state is not picked up, but one already
/// driven stays driven (`.keep`): an uncertain probe does not blank a screen. A connector missing
/// from the list (a DisplayPort MST branch unplugged) counts as disconnected.
///
/// **Mode.** `Mode.select`: the configured exact mode if the connector offers it, else its
/// PREFERRED mode, else the largest (`.highest`: the largest).
///
/// **Table**, for an output whose connector is X (named, or the one it holds):
///
/// | previous   | X now                         | action            | state after      |
/// |------------|-------------------------------|-------------------|------------------|
/// | idle       | drivable                      | `.appeared(m)`    | driving(X, m)    |
/// | idle       | not drivable                  | `.none`           | idle             |
/// | driving m  | drivable, chosen mode m       | `.keep`           | driving(X, m)    |
/// | driving m  | drivable, chosen mode m' ≠ m  | `.modeChanged(m')`| driving(X, m')   |
/// | driving m  | unknown                       | `.keep`           | driving(X, m)    |
/// | driving m  | disconnected, gone, no modes  | `.lost`           | lost(X, m)       |
/// | lost m     | drivable                      | `.returned(m')`   | driving(X, m')   |
/// | lost m     | not drivable                  | `.none`           | lost(X, m)       |
///
/// An output with no connector name holds the connector it drives; when that one is lost and
/// another free connector is drivable, it moves there (`.appeared` on that connector). "Free":
/// named by no other request, held (driven or lost) by no other output, not taken by an earlier
/// unnamed output in this pass. Named outputs are decided each on its own: one connector failing
/// never changes another output's decision.
public enum OutputPlanner {
    /// The mode `request` picks on `connector` (`Mode.select`); nil when it reports no modes.
    public static func mode(for request: ModeRequest, on connector: Connector) -> Mode? {
        Mode.select(request, from: connector.modes)
    }

    /// Whether an output can start driving `connector`: `.connected` with at least one mode.
    public static func isDrivable(_ connector: Connector) -> Bool {
        connector.connection == .connected && !connector.modes.isEmpty
    }

    /// The decisions for every output, in the order of `requests`.
    ///
    /// - Parameters:
    ///   - requests: the configured outputs (one per screen).
    ///   - previous: each output's state from the last decision (`OutputDecision.state`), by index;
    ///     a missing entry is `.idle` (the first look at start), extra entries are ignored.
    ///   - connectors: the connectors as read now (`KMSDevice.connectors()`), of one card.
    public static func decide(_ requests: [OutputRequest], previous: [OutputState],
                              connectors: [Connector]) -> [OutputDecision] {
        let states = requests.indices.map { $0 < previous.count ? previous[$0] : .idle }
        var decisions = [OutputDecision?](repeating: nil, count: requests.count)
        // Named outputs first, each on its own.
        for (index, request) in requests.enumerated() where request.connectorName != nil {
            decisions[index] = decide(request, previous: states[index], connectors: connectors, output: index)
        }
        // Unnamed outputs: never a connector another output names or holds, nor one an earlier one takes now.
        var taken = Set(requests.compactMap { $0.connectorName?.lowercased() })
        for (index, request) in requests.enumerated() where request.connectorName == nil {
            var excluded = taken
            for (other, state) in states.enumerated() where other != index {
                if let name = state.connectorName { excluded.insert(name.lowercased()) }
            }
            let decision = decide(request, previous: states[index], connectors: connectors, output: index,
                                  excluding: excluded)
            if let name = decision.state.connectorName { taken.insert(name.lowercased()) }
            decisions[index] = decision
        }
        return decisions.map { $0! }
    }

    /// The decision for one output (see the table in `OutputPlanner`).
    ///
    /// - Parameters:
    ///   - excluding: lowercased connector names an unnamed output may not move to or pick.
    ///   - output: the index stored in the decision.
    public static func decide(_ request: OutputRequest, previous: OutputState, connectors: [Connector],
                              output: Int = 0, excluding excluded: Set<String> = []) -> OutputDecision {
        var previous = previous
        // A state about another connector than the one named (the configuration changed): start over.
        if let named = request.connectorName, let held = previous.connectorName, held.lowercased() != named.lowercased() {
            previous = .idle
        }
        let target = request.connectorName ?? previous.connectorName
        let current = target.flatMap { Connector.named($0, in: connectors) }

        switch previous {
        case let .driving(name, mode):
            if let current, current.connection == .unknown {
                return OutputDecision(output: output, connector: current.name, action: .keep, state: previous)
            }
            if let current, isDrivable(current), let chosen = self.mode(for: request.mode, on: current) {
                if drivesAlike(chosen, mode) {
                    return OutputDecision(output: output, connector: current.name, action: .keep,
                                          state: .driving(connector: current.name, mode: mode))
                }
                return OutputDecision(output: output, connector: current.name, action: .modeChanged(chosen),
                                      state: .driving(connector: current.name, mode: chosen))
            }
            if request.connectorName == nil, let moved = firstFree(connectors, for: request.mode, excluding: excluded, besides: name) {
                return moved.decision(output)
            }
            return OutputDecision(output: output, connector: name, action: .lost, state: .lost(connector: name, mode: mode))

        case let .lost(name, _):
            if let current, isDrivable(current), let chosen = self.mode(for: request.mode, on: current) {
                return OutputDecision(output: output, connector: current.name, action: .returned(chosen),
                                      state: .driving(connector: current.name, mode: chosen))
            }
            if request.connectorName == nil, let moved = firstFree(connectors, for: request.mode, excluding: excluded, besides: name) {
                return moved.decision(output)
            }
            return OutputDecision(output: output, connector: name, action: .none, state: previous)

        case .idle:
            if let named = request.connectorName {
                if let current, isDrivable(current), let chosen = self.mode(for: request.mode, on: current) {
                    return OutputDecision(output: output, connector: current.name, action: .appeared(chosen),
                                          state: .driving(connector: current.name, mode: chosen))
                }
                return OutputDecision(output: output, connector: current?.name ?? named, action: .none, state: .idle)
            }
            if let picked = firstFree(connectors, for: request.mode, excluding: excluded, besides: nil) {
                return picked.decision(output)
            }
            return OutputDecision(output: output, connector: nil, action: .none, state: .idle)
        }
    }

    /// The first drivable connector not in `excluded` (lowercased names) and not `besides`, with
    /// the mode `request` picks there.
    private static func firstFree(_ connectors: [Connector], for request: ModeRequest,
                                  excluding excluded: Set<String>, besides: String?) -> Pick? {
        for connector in connectors where isDrivable(connector) {
            let lower = connector.name.lowercased()
            if excluded.contains(lower) || lower == besides?.lowercased() { continue }
            if let mode = mode(for: request, on: connector) { return Pick(connector: connector.name, mode: mode) }
        }
        return nil
    }

    /// A connector an unnamed output starts driving.
    private struct Pick {
        var connector: String
        var mode: Mode
        func decision(_ output: Int) -> OutputDecision {
            OutputDecision(output: output, connector: connector, action: .appeared(mode),
                           state: .driving(connector: connector, mode: mode))
        }
    }

    /// Whether two modes program the CRTC alike: same size and timings (the `DRM_MODE_TYPE_*` bits
    /// aside: the PREFERRED mark moving does not change the signal); without timings, the same size,
    /// rate and scan.
    static func drivesAlike(_ a: Mode, _ b: Mode) -> Bool {
        guard a.width == b.width, a.height == b.height else { return false }
        if var ta = a.timing, var tb = b.timing {
            ta.type = 0; tb.type = 0
            ta.name = ""; tb.name = ""
            return ta == tb
        }
        return a.timing == nil && b.timing == nil && a.refreshRate == b.refreshRate && a.isInterlaced == b.isInterlaced
    }
}
