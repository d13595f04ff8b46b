import Foundation
import Testing
import Media
@testable import Vitrine
import VitrineCore

/// The headless output with injected stalls: the next vblank comes `vblanks` periods late, either
/// while the run loop waits on the display (`waiting`, counted in `waitedSeconds`, as when an
/// emulator's host stops the guest) or with no wait (as when the run loop's own step overruns).
final class StallingOutput: VideoOutput {
    let inner: HeadlessOutput
    private var skipped = 0
    /// Vblanks that brought a new picture (`present`), and those that kept the last one (`idle`).
    private(set) var presents = 0, idles = 0
    private var pending: (vblanks: Int, waiting: Bool)?
    private(set) var waitedSeconds = 0.0

    init(width: Int, height: Int, refreshRate: Double) {
        inner = HeadlessOutput(width: width, height: height, refreshRate: refreshRate, realtime: false)
    }

    func stall(vblanks: Int, waiting: Bool) { pending = (vblanks, waiting) }

    var width: Int { inner.width }
    var height: Int { inner.height }
    var refreshRate: Double { inner.refreshRate }
    var summary: String { "stalling " + inner.summary }
    var isVirtual: Bool { true }
    var completedFlips: Int { inner.completedFlips }
    func nextPresentationTime() -> Double { inner.nextPresentationTime() + Double(skipped) / refreshRate }
    func monotonicTime(ofPresentation t: Double) -> Double { inner.monotonicTime(ofPresentation: t) }
    func draw(_ body: (PixelTarget) throws -> Void) throws { try inner.draw(body) }
    func flip() throws { presents += 1; try inner.flip(); applyStall() }
    var isFlipPending: Bool { false }
    var eventDescriptor: Int32? { nil }
    var flipDeadline: Double? { nil }
    func handleFlipEvents() throws -> Bool { true }
    var nextVblankDeadline: Double? { nil }
    func vblankPassed() throws { idles += 1; try inner.vblankPassed(); applyStall() }
    func vblankTime(atOrAfter t: Double) -> Double { inner.vblankTime(atOrAfter: t) }
    func skipVblanks(before t: Double) { inner.skipVblanks(before: t) }
    func now() -> Double { inner.now() }
    func withFrontBuffer(_ body: (PixelTarget) throws -> Void) rethrows { try inner.withFrontBuffer(body) }
    func close() {}

    private func applyStall() {
        guard let p = pending else { return }
        pending = nil
        skipped += p.vblanks
        if p.waiting { waitedSeconds += Double(p.vblanks) / refreshRate }
    }
}

@Suite("Frame drops by cause")
struct FrameDropTests {
    /// A playback engine on a `StallingOutput` (`width`×`height` at `refresh` Hz, no audio device)
    /// over a catalog folder holding a 4 s red 30 fps clip as media/red.mp4.
    static func rig(_ name: String, width: Int, height: Int, refresh: Double,
                    log: Logger) throws -> (engine: PlaybackEngine, output: StallingOutput, dir: String) {
        let dir = try Harness.newFolder(name)
        try FileManager.default.copyItem(atPath: try Harness.colorClip("red", seconds: 4, size: "\(width)x\(height)"),
                                         toPath: dir + "/media/red.mp4")
        let output = StallingOutput(width: width, height: height, refreshRate: refresh)
        let engine = PlaybackEngine(output: output, audio: nil, format: AudioFormat(sampleRate: 48000, channels: 2),
                                    display: DisplaySettings(), catalogDirectory: dir, volume: 1, log: log)
        return (engine, output, dir)
    }
    @Test("a late vblank drops the frames it passed over: put down to the display when the run loop was waiting on it, to the run loop otherwise")
    func dropCauses() throws {
        let (log, logged) = LogSink.memory()
        let (engine, output, _) = try Self.rig("drops", width: 64, height: 36, refresh: 30, log: Logger(label: "test", sink: log))
        engine.play(PlaylistItem(id: "r", type: .video, src: "media/red.mp4"))
        func run(until t: Double) throws { while engine.catalogTime < t - 1e-9 { guard try engine.step() else { return } } }

        // 30 fps on 30 Hz: one new frame per vblank, none dropped.
        try run(until: 1)
        #expect(engine.stats.framesDropped == 0)
        let presented = engine.stats.framesPresented

        // The display stalls for 4 periods while the run loop waits: the next vblank shows the frame
        // due then, and the 4 frames due at the vblanks it missed are dropped, each for a display stall.
        output.stall(vblanks: 4, waiting: true)
        try run(until: 1.5)
        var expected = DroppedFrames()
        expected.displayStall = 4
        #expect(engine.stats.dropped == expected)

        // The same late vblank with no wait: the run loop itself overran.
        output.stall(vblanks: 4, waiting: false)
        try run(until: 2)
        expected.runLoopLate = 4
        #expect(engine.stats.dropped == expected)
        // 1 s of catalog time at 30 fps less the 8 frames passed over: all the others presented.
        #expect(engine.stats.framesPresented - presented == 30 - 8)

        let lines = logged().map(\.message).filter { $0.contains("dropped frame at") }
        #expect(lines.count == 8)
        #expect(lines.filter { $0.contains("waited 133 ms on the display") }.count == 4)
        #expect(lines.filter { $0.contains("the run loop was late") }.count == 4)
    }

    /// A 0.5 s slide-in over 30 fps video on a 60 Hz output; returns the animation's report and the
    /// vblanks with a new picture and without one while it ran.
    static func slideIn(drawSeconds: Double) throws -> (report: AnimationReport, presents: Int, idles: Int) {
        let log = Logger(label: "test", sink: LogSink.memory().0)
        let (engine, output, dir) = try rig("yield", width: 320, height: 180, refresh: 60, log: log)
        engine.overlays = OverlayLayer(overlays: ["menu": Overlay(title: "Menu", style: .slide, duration: 0.5)],
                                       catalogDirectory: dir, log: log)
        // As the player does before playback: the panel is laid out and drawn ahead.
        engine.prepareOverlays()
        engine.countedDrawSeconds = drawSeconds
        let recorder = EventRecorder()
        engine.events.observe { recorder.add($0) }
        engine.play(PlaylistItem(id: "r", type: .video, src: "media/red.mp4",
                                 cuePoints: [CuePoint(time: 0.5, id: "open", action: .showOverlay("menu"))]))
        while engine.catalogTime < 0.5 { _ = try engine.step() }
        let (p0, i0) = (output.presents, output.idles)
        while engine.catalogTime < 1.2 { _ = try engine.step() }
        let reports = recorder.events.compactMap { e -> AnimationReport? in if case let .overlayAnimation(r) = e { r } else { nil } }
        try #require(reports.count == 1)
        // After the animation (0.5 s) the popup stands still: only video frames redraw.
        return (reports[0], output.presents - p0, output.idles - i0)
    }

    @Test("popup steps give way to video frames when drawing takes over half a period; otherwise the popup moves at every vblank")
    func popupStepsYieldOnSlowCPU() throws {
        // Fast drawing: the slide moves at every one of its 60 Hz vblanks, video frames or not.
        let fast = try Self.slideIn(drawSeconds: 0.001)
        #expect(fast.report.stepsYielded == 0)
        #expect(fast.report.framesDropped == 0)
        #expect((29...31).contains(fast.report.vblanks), "vblanks \(fast.report.vblanks)")
        #expect(fast.report.framesPresented * 2 <= fast.report.vblanks + 1)

        // Drawing counted as 12 ms (over half the 16.7 ms period): every vblank between two video
        // frames is left to the next frame, so the popup moves only with the 30 fps video.
        let slow = try Self.slideIn(drawSeconds: 0.012)
        #expect(slow.report.framesDropped == 0)
        #expect(slow.report.framesPresented == fast.report.framesPresented)
        #expect(abs(slow.report.stepsYielded - slow.report.vblanks / 2) <= 1, "yielded \(slow.report.stepsYielded) of \(slow.report.vblanks)")
        // 0.7 s at 60 Hz: 42 vblanks, 21 of them with a video frame; fast also redraws the 15 slide steps between.
        #expect(slow.presents == 21 && slow.idles == 21, "slow: \(slow.presents) presents, \(slow.idles) idles")
        #expect(fast.presents == 36 && fast.idles == 6, "fast: \(fast.presents) presents, \(fast.idles) idles")
    }

    @Test("a 30 fps clip on a 25 Hz screen drops 1 frame in 6, all counted as skipped (the content's rate is above the display's)")
    func contentFasterThanDisplay() throws {
        let (engine, _, _) = try Self.rig("rate", width: 64, height: 36, refresh: 25, log: Logger(label: "test", sink: LogSink.memory().0))
        engine.play(PlaylistItem(id: "r", type: .video, src: "media/red.mp4"))
        while engine.catalogTime < 2 - 1e-9 { _ = try engine.step() }
        // Vblanks at 0, 0.04 … 2.0 s: 51 of them show 51 of the 61 frames due by then.
        #expect(engine.stats.framesPresented == 51)
        var expected = DroppedFrames()
        expected.skipped = engine.stats.framesDropped
        #expect(engine.stats.dropped == expected)
        #expect((9...10).contains(engine.stats.framesDropped), "\(engine.stats.dropped)")
    }

    @Test("when the run ends mid-item and mid-animation, the item's 'played' line and the animation's report still come")
    func reportsAtTheRunsEnd() throws {
        let (sink, logged) = LogSink.memory()
        let log = Logger(label: "test", sink: sink)
        let (engine, _, dir) = try Self.rig("cut", width: 320, height: 180, refresh: 30, log: log)
        engine.overlays = OverlayLayer(overlays: ["menu": Overlay(title: "Menu", style: .slide, duration: 2)],
                                       catalogDirectory: dir, log: log)
        let recorder = EventRecorder()
        engine.events.observe { recorder.add($0) }
        engine.play(PlaylistItem(id: "r", type: .video, src: "media/red.mp4",
                                 cuePoints: [CuePoint(time: 0.5, id: "open", action: .showOverlay("menu"))]))
        while engine.catalogTime < 1.5 { _ = try engine.step() }
        engine.finish()
        let reports = recorder.events.compactMap { e -> AnimationReport? in if case let .overlayAnimation(r) = e { r } else { nil } }
        try #require(reports.count == 1)
        #expect(reports[0].phases == ["menu:appearing"])
        // One frame a vblank; the window's first vblank's frame came before the window opened.
        #expect(reports[0].framesPresented == reports[0].vblanks - 1)
        #expect(reports[0].framesDropped == 0)
        let played = logged().map(\.message).filter { $0.hasPrefix("played r:") }
        #expect(played.count == 1)
        #expect(played.first?.hasSuffix("; the run ended") == true, "\(played)")
        // Vblanks at 0, 1/30 … 1.5 s: 46 frames, none dropped.
        #expect(played.first?.hasPrefix("played r: 46 video frames presented, 0 dropped") == true, "\(played)")
        #expect(recorder.events.contains { if case .decoderCanceled(item: "r", _) = $0 { true } else { false } })
    }
}
