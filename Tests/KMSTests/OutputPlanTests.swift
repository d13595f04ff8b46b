import Testing
@testable import KMS

/// Connector lists as a card reports them before and after a hot-plug: a TV with a 1080p EDID,
/// the same port after another EDID (a 4K sink), a port with nothing on it.
private enum Sinks {
    static func timing(_ w: Int, _ h: Int, clock: UInt32, htotal: Int, vtotal: Int, preferred: Bool = false) -> Mode.Timing {
        Mode.Timing(clock: clock, hdisplay: w, hsyncStart: w + 88, hsyncEnd: w + 132, htotal: htotal,
                    vdisplay: h, vsyncStart: h + 4, vsyncEnd: h + 9, vtotal: vtotal,
                    type: preferred ? Mode.Timing.typePreferred : 0)
    }
    /// 1920x1080@60.00 (148.5 MHz, 2200 x 1125), preferred.
    static let fullHD = Mode(timing: timing(1920, 1080, clock: 148_500, htotal: 2200, vtotal: 1125, preferred: true))
    /// The same timings without the PREFERRED mark.
    static let fullHDPlain = Mode(timing: timing(1920, 1080, clock: 148_500, htotal: 2200, vtotal: 1125))
    /// 1280x720@60.00 (74.25 MHz, 1650 x 750).
    static let hd = Mode(timing: timing(1280, 720, clock: 74_250, htotal: 1650, vtotal: 750))
    /// 1280x720@50.00 (74.25 MHz, 1980 x 750).
    static let hd50 = Mode(timing: timing(1280, 720, clock: 74_250, htotal: 1980, vtotal: 750))
    /// 3840x2160@30.00 (297 MHz, 4400 x 2250), preferred.
    static let uhd = Mode(timing: timing(3840, 2160, clock: 297_000, htotal: 4400, vtotal: 2250, preferred: true))

    static func hdmi(_ index: UInt32, _ connection: ConnectionState, _ modes: [Mode]) -> Connector {
        Connector(id: 40 + index, type: .hdmiA, typeIndex: index, connection: connection, modes: modes)
    }
    static let tv = [fullHD, hd, hd50]
}

@Suite("Connector-state decisions after a hot-plug (OutputPlanner)")
struct OutputPlanTests {
    fileprivate typealias S = Sinks
    let named1 = OutputRequest(connectorName: "HDMI-A-1")

    @Test("the modes are Mode.select's: exact if offered, else preferred, else largest")
    func modeChoice() {
        let tv = S.hdmi(1, .connected, S.tv)
        #expect(OutputPlanner.mode(for: .exact(width: 1280, height: 720, refresh: 50), on: tv) == S.hd50)
        #expect(OutputPlanner.mode(for: .exact(width: 1024, height: 768, refresh: 60), on: tv) == S.fullHD)
        #expect(OutputPlanner.mode(for: .preferred, on: S.hdmi(1, .connected, [S.hd, S.hd50, S.fullHDPlain])) == S.fullHDPlain)
        #expect(OutputPlanner.mode(for: .highest, on: S.hdmi(1, .connected, [S.fullHD, S.uhd])) == S.uhd)
        #expect(OutputPlanner.mode(for: .preferred, on: S.hdmi(1, .disconnected, [])) == nil)
    }

    @Test("boot with nothing, then the TV appears: none, then appeared at its preferred mode")
    func appears() {
        let first = OutputPlanner.decide([named1], previous: [], connectors: [S.hdmi(1, .disconnected, [])])
        #expect(first == [OutputDecision(output: 0, connector: "HDMI-A-1", action: .none, state: .idle)])
        let second = OutputPlanner.decide([named1], previous: first.map(\.state), connectors: [S.hdmi(1, .connected, S.tv)])
        #expect(second == [OutputDecision(output: 0, connector: "HDMI-A-1", action: .appeared(S.fullHD),
                                          state: .driving(connector: "HDMI-A-1", mode: S.fullHD))])
    }

    @Test("the TV switched off and on: lost (mode kept in the state), none while off, returned")
    func lostAndReturned() {
        let driving = OutputState.driving(connector: "HDMI-A-1", mode: S.fullHD)
        let off = OutputPlanner.decide(named1, previous: driving, connectors: [S.hdmi(1, .disconnected, [])])
        #expect(off == OutputDecision(output: 0, connector: "HDMI-A-1", action: .lost,
                                      state: .lost(connector: "HDMI-A-1", mode: S.fullHD)))
        let stillOff = OutputPlanner.decide(named1, previous: off.state, connectors: [S.hdmi(1, .disconnected, [])])
        #expect(stillOff.action == .none)
        #expect(stillOff.state == off.state)
        let on = OutputPlanner.decide(named1, previous: stillOff.state, connectors: [S.hdmi(1, .connected, S.tv)])
        #expect(on == OutputDecision(output: 0, connector: "HDMI-A-1", action: .returned(S.fullHD), state: driving))
    }

    @Test("returned picks the mode again from what the sink reports now")
    func returnedWithAnotherSink() {
        let lost = OutputState.lost(connector: "HDMI-A-1", mode: S.fullHD)
        let on = OutputPlanner.decide(named1, previous: lost, connectors: [S.hdmi(1, .connected, [S.uhd, S.fullHDPlain])])
        #expect(on.action == .returned(S.uhd))
        #expect(on.state == .driving(connector: "HDMI-A-1", mode: S.uhd))
    }

    @Test("same connector, same modes: keep; the PREFERRED mark moving off the exact mode is still keep")
    func keep() {
        let driving = OutputState.driving(connector: "HDMI-A-1", mode: S.fullHD)
        let same = OutputPlanner.decide(named1, previous: driving, connectors: [S.hdmi(1, .connected, S.tv)])
        #expect(same == OutputDecision(output: 0, connector: "HDMI-A-1", action: .keep, state: driving))
        let exact = OutputRequest(connectorName: "HDMI-A-1", mode: .exact(width: 1920, height: 1080, refresh: 60))
        let moved = OutputPlanner.decide(exact, previous: driving, connectors: [S.hdmi(1, .connected, [S.fullHDPlain, S.uhd])])
        #expect(moved.action == .keep)
        #expect(OutputPlanner.drivesAlike(S.fullHD, S.fullHDPlain))
        #expect(!OutputPlanner.drivesAlike(S.hd, S.hd50))
    }

    @Test("another EDID on the same port (a different preferred mode): modeChanged")
    func modeChanged() {
        let driving = OutputState.driving(connector: "HDMI-A-1", mode: S.fullHD)
        let d = OutputPlanner.decide(named1, previous: driving, connectors: [S.hdmi(1, .connected, [S.uhd, S.fullHDPlain])])
        #expect(d == OutputDecision(output: 0, connector: "HDMI-A-1", action: .modeChanged(S.uhd),
                                    state: .driving(connector: "HDMI-A-1", mode: S.uhd)))
        #expect(d.action.mode == S.uhd)
    }

    @Test("unknown connection: an output driving it keeps it; an idle one does not start")
    func unknown() {
        let driving = OutputState.driving(connector: "HDMI-A-1", mode: S.fullHD)
        #expect(OutputPlanner.decide(named1, previous: driving, connectors: [S.hdmi(1, .unknown, [])]).action == .keep)
        #expect(OutputPlanner.decide(named1, previous: .idle, connectors: [S.hdmi(1, .unknown, S.tv)]).action == .none)
        #expect(ConnectionState(drmValue: 1) == .connected && ConnectionState(drmValue: 2) == .disconnected)
        #expect(ConnectionState(drmValue: 3) == .unknown && ConnectionState(drmValue: 9) == .unknown)
    }

    @Test("a connector gone from the list (MST), or connected with no modes, is lost")
    func goneOrNoModes() {
        let driving = OutputState.driving(connector: "HDMI-A-1", mode: S.fullHD)
        #expect(OutputPlanner.decide(named1, previous: driving, connectors: []).action == .lost)
        #expect(OutputPlanner.decide(named1, previous: driving, connectors: [S.hdmi(1, .connected, [])]).action == .lost)
        #expect(OutputPlanner.decide(named1, previous: .idle, connectors: []) ==
                OutputDecision(output: 0, connector: "HDMI-A-1", action: .none, state: .idle))
    }

    @Test("two named outputs: one connector failing leaves the other's decision as it was")
    func twoOutputsIndependent() {
        let requests = [named1, OutputRequest(connectorName: "hdmi-a-2", mode: .exact(width: 1280, height: 720, refresh: 50))]
        let both = OutputPlanner.decide(requests, previous: [], connectors: [S.hdmi(1, .connected, S.tv), S.hdmi(2, .connected, S.tv)])
        #expect(both.map(\.action) == [.appeared(S.fullHD), .appeared(S.hd50)])
        #expect(both.map(\.connector) == ["HDMI-A-1", "HDMI-A-2"])
        #expect(both.map(\.output) == [0, 1])
        let oneOff = OutputPlanner.decide(requests, previous: both.map(\.state),
                                          connectors: [S.hdmi(1, .disconnected, []), S.hdmi(2, .connected, S.tv)])
        #expect(oneOff.map(\.action) == [.lost, .keep])
        let otherEDID = OutputPlanner.decide(requests, previous: oneOff.map(\.state),
                                             connectors: [S.hdmi(1, .connected, S.tv), S.hdmi(2, .connected, [S.uhd])])
        #expect(otherEDID.map(\.action) == [.returned(S.fullHD), .modeChanged(S.uhd)])
    }

    @Test("an unnamed output takes the first free connected connector, never one another output names or holds")
    func unnamed() {
        let requests = [OutputRequest(), OutputRequest(connectorName: "HDMI-A-1")]
        let cards = [S.hdmi(1, .connected, S.tv), S.hdmi(2, .connected, [S.hd]), S.hdmi(3, .connected, [S.uhd])]
        let first = OutputPlanner.decide(requests, previous: [], connectors: cards)
        #expect(first.map(\.connector) == ["HDMI-A-2", "HDMI-A-1"])
        #expect(first[0].action == .appeared(S.hd))
        // Two unnamed outputs share nothing.
        let pair = OutputPlanner.decide([OutputRequest(), OutputRequest()], previous: [], connectors: cards)
        #expect(pair.map(\.connector) == ["HDMI-A-1", "HDMI-A-2"])
        // HDMI-A-2 lost: the unnamed output moves to HDMI-A-3 (free), not to HDMI-A-1 (named by the other).
        let moved = OutputPlanner.decide(requests, previous: first.map(\.state),
                                         connectors: [cards[0], S.hdmi(2, .disconnected, []), cards[2]])
        #expect(moved[0] == OutputDecision(output: 0, connector: "HDMI-A-3", action: .appeared(S.uhd),
                                           state: .driving(connector: "HDMI-A-3", mode: S.uhd)))
        #expect(moved[1].action == .keep)
        // Nothing free: lost.
        let lost = OutputPlanner.decide(requests, previous: first.map(\.state),
                                        connectors: [cards[0], S.hdmi(2, .disconnected, [])])
        #expect(lost[0].action == .lost)
        #expect(lost[0].state == .lost(connector: "HDMI-A-2", mode: S.hd))
        // Nothing at all: none, idle.
        #expect(OutputPlanner.decide([OutputRequest()], previous: [.idle], connectors: [S.hdmi(1, .disconnected, [])])
                == [OutputDecision(output: 0, connector: nil, action: .none, state: .idle)])
    }

    @Test("a state about another connector than the one named now starts over (appeared, not returned)")
    func configurationChanged() {
        let d = OutputPlanner.decide(OutputRequest(connectorName: "HDMI-A-2"),
                                     previous: .lost(connector: "HDMI-A-1", mode: S.fullHD),
                                     connectors: [S.hdmi(2, .connected, S.tv)])
        #expect(d.action == .appeared(S.fullHD))
    }
}
