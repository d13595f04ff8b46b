import Foundation
import Testing
import KMS
import Media
@testable import Vitrine
import VitrineCore

/// A screen that records what the hot-plug reaction asks of it.
private final class RecordingScreen: HotplugScreen {
    let width: Int, height: Int
    var refreshRate = 60.0
    var connectorName = "HDMI-A-1"
    var connectorID: UInt32 = 41
    private(set) var calls: [String] = []
    /// The driver's answer to the next `reconnect` (the TEST_ONLY commit); nil: accepted.
    var refusal: Error?

    init(width: Int, height: Int) { (self.width, self.height) = (width, height) }

    func screenLost() { calls.append("lost") }
    func reconnect(to connector: Connector, mode: Mode) throws {
        calls.append("reconnect \(connector.name) \(mode.name)@\(Int(mode.refreshRate.rounded()))")
        if let refusal { self.refusal = nil; throw refusal }
    }
}

private enum Sink {
    static func timing(_ w: Int, _ h: Int, clock: UInt32, htotal: Int, vtotal: Int, preferred: Bool = true) -> Mode.Timing {
        Mode.Timing(clock: clock, hdisplay: w, hsyncStart: w + 88, hsyncEnd: w + 132, htotal: htotal,
                    vdisplay: h, vsyncStart: h + 4, vsyncEnd: h + 9, vtotal: vtotal,
                    type: preferred ? Mode.Timing.typePreferred : 0)
    }
    /// 1920x1080@60 (148.5 MHz, 2200 x 1125), preferred.
    static let fullHD60 = Mode(timing: timing(1920, 1080, clock: 148_500, htotal: 2200, vtotal: 1125))
    /// 1920x1080@50 (148.5 MHz, 2640 x 1125), preferred: another TV on the same port.
    static let fullHD50 = Mode(timing: timing(1920, 1080, clock: 148_500, htotal: 2640, vtotal: 1125))
    /// 1920x1080@59.93 with CVT reduced blanking instead (138.5 MHz, 2080 x 1111): same size, the
    /// rate within 0.5 %, other timings.
    static let fullHD60RB = Mode(timing: timing(1920, 1080, clock: 138_500, htotal: 2080, vtotal: 1111))
    /// 3840x2160@30, preferred: a 4K TV.
    static let uhd = Mode(timing: timing(3840, 2160, clock: 297_000, htotal: 4400, vtotal: 2250))

    static func hdmi(_ connection: ConnectionState, _ modes: [Mode]) -> [Connector] {
        [Connector(id: 41, type: .hdmiA, typeIndex: 1, connection: connection, modes: modes),
         Connector(id: 42, type: .hdmiA, typeIndex: 2, connection: .disconnected, modes: [])]
    }
}

@Suite("The player's reaction to a screen that comes and goes (ScreenHotplug)")
struct ScreenHotplugTests {
    @Test("lost once, nothing more while it stays away, back at the same mode: one reconnect, then nothing")
    func lostAndBack() {
        let screen = RecordingScreen(width: 1920, height: 1080)
        let watch = ScreenHotplug(request: OutputRequest(), driving: "HDMI-A-1", mode: Sink.fullHD60)
        #expect(watch.connectorsChanged(Sink.hdmi(.connected, [Sink.fullHD60]), screen: screen) == .unchanged)
        #expect(watch.connectorsChanged(Sink.hdmi(.disconnected, []), screen: screen) == .lost(connector: "HDMI-A-1"))
        #expect(watch.isLost)
        // The poll and more uevents while the TV is off: no second "lost".
        #expect(watch.connectorsChanged(Sink.hdmi(.disconnected, []), screen: screen) == .unchanged)
        #expect(watch.connectorsChanged(Sink.hdmi(.disconnected, [Sink.fullHD60]), screen: screen) == .unchanged)
        #expect(watch.connectorsChanged(Sink.hdmi(.connected, [Sink.fullHD60]), screen: screen)
                == .restored(connector: "HDMI-A-1", mode: Sink.fullHD60))
        #expect(!watch.isLost)
        #expect(watch.connectorsChanged(Sink.hdmi(.connected, [Sink.fullHD60]), screen: screen) == .unchanged)
        #expect(screen.calls == ["lost", "reconnect HDMI-A-1 1920x1080@60"])
    }

    @Test("an uncertain probe (unknown) does not blank a driven screen")
    func unknownKeeps() {
        let screen = RecordingScreen(width: 1920, height: 1080)
        let watch = ScreenHotplug(request: OutputRequest(connectorName: "HDMI-A-1"), driving: "HDMI-A-1", mode: Sink.fullHD60)
        #expect(watch.connectorsChanged(Sink.hdmi(.unknown, []), screen: screen) == .unchanged)
        #expect(screen.calls.isEmpty)
    }

    @Test("another TV of the same size and rate within 0.5 % (other timings): modeset in place; at 50 Hz or 4K: a new output")
    func otherSinks() {
        let screen = RecordingScreen(width: 1920, height: 1080)
        let watch = ScreenHotplug(request: OutputRequest(), driving: "HDMI-A-1", mode: Sink.fullHD60)
        _ = watch.connectorsChanged(Sink.hdmi(.disconnected, []), screen: screen)
        #expect(watch.connectorsChanged(Sink.hdmi(.connected, [Sink.fullHD60RB]), screen: screen)
                == .restored(connector: "HDMI-A-1", mode: Sink.fullHD60RB))
        // Still connected, another EDID at the same size and rate: a mode change, the same route.
        #expect(watch.connectorsChanged(Sink.hdmi(.connected, [Sink.fullHD60]), screen: screen)
                == .restored(connector: "HDMI-A-1", mode: Sink.fullHD60))
        // 50 Hz: the presenter paces on the output's period, so a new output.
        let slower = watch.connectorsChanged(Sink.hdmi(.connected, [Sink.fullHD50]), screen: screen)
        #expect(slower == .restart(connector: "HDMI-A-1", mode: Sink.fullHD50,
                                   why: "its mode runs at 50.00 Hz, not the 60.00 Hz the output was opened at"))
        let reaction = watch.connectorsChanged(Sink.hdmi(.connected, [Sink.uhd, Sink.fullHD60]), screen: screen)
        guard case let .restart(connector, mode, why) = reaction else {
            Issue.record("expected a restart, got \(reaction)"); return
        }
        #expect(connector == "HDMI-A-1")
        #expect(mode == Sink.uhd)
        #expect(why.contains("3840x2160") && why.contains("1920x1080"))
        #expect(screen.calls == ["lost", "reconnect HDMI-A-1 1920x1080@60", "reconnect HDMI-A-1 1920x1080@60"])
    }

    @Test("a refused TEST_ONLY keeps the screen lost; the next look tries again")
    func refusedThenAccepted() {
        let screen = RecordingScreen(width: 1920, height: 1080)
        let watch = ScreenHotplug(request: OutputRequest(connectorName: "hdmi-a-1"), driving: "HDMI-A-1", mode: Sink.fullHD60)
        _ = watch.connectorsChanged(Sink.hdmi(.disconnected, []), screen: screen)
        screen.refusal = DRMError(operation: "drmModeAtomicCommit(TEST_ONLY)", errno: EINVAL, detail: "")
        let refused = watch.connectorsChanged(Sink.hdmi(.connected, [Sink.fullHD60]), screen: screen)
        guard case let .refused(connector, why) = refused else { Issue.record("expected a refusal, got \(refused)"); return }
        #expect(connector == "HDMI-A-1")
        #expect(why.contains("TEST_ONLY"))
        #expect(watch.isLost)
        #expect(watch.connectorsChanged(Sink.hdmi(.connected, [Sink.fullHD60]), screen: screen)
                == .restored(connector: "HDMI-A-1", mode: Sink.fullHD60))
        #expect(screen.calls == ["lost", "reconnect HDMI-A-1 1920x1080@60", "reconnect HDMI-A-1 1920x1080@60"])
    }

    @Test("the connector back under a new object id (a DisplayPort MST branch): a new output, no reconnect")
    func newObjectID() {
        let screen = RecordingScreen(width: 1920, height: 1080)
        let watch = ScreenHotplug(request: OutputRequest(), driving: "HDMI-A-1", mode: Sink.fullHD60)
        _ = watch.connectorsChanged(Sink.hdmi(.disconnected, []), screen: screen)
        let back = [Connector(id: 77, type: .hdmiA, typeIndex: 1, connection: .connected, modes: [Sink.fullHD60])]
        #expect(watch.connectorsChanged(back, screen: screen)
                == .restart(connector: "HDMI-A-1", mode: Sink.fullHD60, why: "it came back as connector 77, not 41"))
        #expect(screen.calls == ["lost"])
    }

    @Test("the screen wait: the configured connector, else any, must be connected with modes")
    func waitCondition() {
        let off = Sink.hdmi(.disconnected, [])
        let on = Sink.hdmi(.connected, [Sink.fullHD60])
        let noModes = Sink.hdmi(.connected, [])
        #expect(!ScreenWait.drivable(off, connectorName: nil))
        #expect(!ScreenWait.drivable(noModes, connectorName: nil))
        #expect(ScreenWait.drivable(on, connectorName: nil))
        #expect(ScreenWait.drivable(on, connectorName: "HDMI-A-1"))
        #expect(!ScreenWait.drivable(on, connectorName: "HDMI-A-2"))
        #expect(!ScreenWait.drivable(on, connectorName: "DP-1"))
    }
}

/// The headless output with a connector that can be unplugged: while `connection` is disconnected
/// it completes no flips at all (the worst case: a CRTC with no sink), so only the "no screen"
/// rule can feed the watchdog.
private final class UnpluggableOutput: VideoOutput {
    let inner: HeadlessOutput
    var screenConnection: ScreenConnection? = .connected(connector: "HDMI-A-1")
    private var frozenFlips: Int?

    init() { inner = HeadlessOutput(width: 64, height: 36, refreshRate: 30, realtime: false) }

    func unplug() { frozenFlips = inner.completedFlips; screenConnection = .disconnected(connector: "HDMI-A-1") }
    /// Connected again, but its flips stay where they were: a stalled display.
    func replugStalled() { screenConnection = .connected(connector: "HDMI-A-1") }

    var width: Int { inner.width }
    var height: Int { inner.height }
    var refreshRate: Double { inner.refreshRate }
    var summary: String { "unpluggable " + inner.summary }
    var isVirtual: Bool { true }
    var completedFlips: Int { frozenFlips ?? inner.completedFlips }
    var waitedSeconds: Double { 0 }
    func nextPresentationTime() -> Double { inner.nextPresentationTime() }
    func monotonicTime(ofPresentation t: Double) -> Double { inner.monotonicTime(ofPresentation: t) }
    func draw(_ body: (PixelTarget) throws -> Void) throws { try inner.draw(body) }
    func flip() throws { try inner.flip() }
    var isFlipPending: Bool { false }
    var eventDescriptor: Int32? { nil }
    var flipDeadline: Double? { nil }
    func handleFlipEvents() throws -> Bool { true }
    var nextVblankDeadline: Double? { nil }
    func vblankPassed() throws { try inner.vblankPassed() }
    func vblankTime(atOrAfter t: Double) -> Double { inner.vblankTime(atOrAfter: t) }
    func skipVblanks(before t: Double) { inner.skipVblanks(before: t) }
    /// The virtual vblank clock (the watchdog's times are the output's).
    func now() -> Double { inner.nextPresentationTime() }
    func withFrontBuffer(_ body: (PixelTarget) throws -> Void) rethrows { try inner.withFrontBuffer(body) }
    func close() {}
}

@Suite("Playing on with no screen connected")
struct ScreenLostPlaybackTests {
    fileprivate static func rig(_ name: String) throws -> (PlaybackEngine, UnpluggableOutput, String) {
        let dir = try Harness.newFolder(name)
        try FileManager.default.copyItem(atPath: try Harness.colorClip("red", seconds: 6, size: "64x36"), toPath: dir + "/media/red.mp4")
        let output = UnpluggableOutput()
        let engine = PlaybackEngine(output: output, audio: nil, format: AudioFormat(sampleRate: 48000, channels: 2),
                                    display: DisplaySettings(), catalogDirectory: dir, volume: 1,
                                    log: Logger(label: "test", sink: LogSink.memory().0))
        return (engine, output, dir)
    }

    @Test("the watchdog is fed while the screen is disconnected (no flips complete), and not when flips stall with it connected")
    func watchdogWhileLost() throws {
        let (engine, output, _) = try Self.rig("lost-watchdog")
        engine.play(PlaylistItem(id: "r", type: .video, src: "media/red.mp4"))
        func run(until t: Double) throws { while engine.catalogTime < t - 1e-9 { guard try engine.step() else { return } } }
        try run(until: 1)
        output.unplug()
        let before = engine.presenter.watchdog.pings
        let clock = engine.catalogTime
        try run(until: 4)
        // 3 s of vblanks with no flip completing: a ping every 0.5 s at most, so 6 (the first may fall on either side).
        let whileLost = engine.presenter.watchdog.pings - before
        #expect(whileLost >= 5 && whileLost <= 6, "pings \(whileLost), catalog \(clock) → \(engine.catalogTime), now \(output.now())")
        // The timeline went on meanwhile.
        #expect(engine.catalogTime - clock >= 3 - 1e-6)
        #expect(engine.nowPlaying?.id == "r")
        // Connected again but its flips stalled: that is a fault, and the pings stop.
        output.replugStalled()
        let stalled = engine.presenter.watchdog.pings
        try run(until: 5.5)
        #expect(engine.presenter.watchdog.pings == stalled)
    }

    @Test("vitrine ctl status says the screen is disconnected, with its connector")
    func statusWhileLost() throws {
        let (engine, output, dir) = try Self.rig("lost-status")
        let scheduled = ScheduledPlayback(director: ScheduleDirector(manifest: Manifest(), zone: .utc, madeAt: nil), engine: engine,
                                          virtualClockStart: nil, log: Logger(label: "test", sink: LogSink.memory().0))
        let control = RunControl(engine: engine, scheduled: scheduled, importer: nil, catalogDirectory: dir) { nil }
        func display() -> [(key: String, value: JSONValue)]? {
            guard case .object(let d)? = control.runStatus().first(where: { $0.key == "display" })?.value else { return nil }
            return d
        }
        func field(_ key: String) -> JSONValue? { display()?.first(where: { $0.key == key })?.value }
        #expect(field("connection") == .string("connected"))
        output.unplug()
        #expect(field("connection") == .string("disconnected"))
        #expect(field("connector") == .string("HDMI-A-1"))
        #expect(field("power") == .string("on"))
        #expect(ScreenConnection.disconnected(connector: "HDMI-A-1").serviceStatus == "no screen connected (HDMI-A-1); playing on")
    }
}

@Suite("A sound device that goes away with its screen")
struct SoundDeviceLossTests {
    @Test("a write that fails (ENODEV, as an HDMI PCM whose sink went) ends the ALSA thread with hasFailed, for the engine to reopen it")
    func writeFailure() throws {
        let log = Logger(label: "test", sink: LogSink.memory().0)
        let format = AudioFormat(sampleRate: 48000, channels: 2)
        let timeline = Timeline(catalogDirectory: "/", format: format, untimed: false, log: log) { nil }
        // The third period written fails, as snd_pcm_writei does once the device is gone.
        let plan = FaultPlan.sequence("snd_pcm_writei", [.result(1024), .result(1024), .fail(.noSuchDevice)])
        let audio = try ALSAAudio(device: "null", rate: 48000, channels: 2, periodFrames: 1024, bufferFrames: 4096,
                                  configText: nil, log: log)
        #expect(!audio.hasFailed)
        FaultInjection.withPlan(plan) {
            audio.setPaused(true)  // silence periods: no item needed
            audio.start(timeline: timeline)
        }
        let deadline = Date(timeIntervalSinceNow: 10)
        while !audio.hasFailed && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        #expect(audio.hasFailed)
        audio.stop()
    }
}
