import Foundation
import Testing
import VitrineTestSupport
import Media
import RunLoop
@testable import Vitrine
import VitrineCore

/// The page-flip loop on an event loop with a manual clock: a real-time headless output whose
/// vblanks follow the loop's clock, so time passes only when the test says so.
struct LoopRig {
    let loop: EventLoop
    let output: HeadlessOutput
    let engine: PlaybackEngine
    let records: @Sendable () -> [LogRecord]

    init(width: Int = 320, height: Int = 180, refresh: Double = 30,
         wallClock: WallClockTime = WallClockTime(nanosecondsSinceEpoch: 1_767_225_600_000_000_000)) throws {
        let loop = try EventLoop(clock: .manual(wallClock: wallClock))
        self.loop = loop
        output = HeadlessOutput(width: width, height: height, refreshRate: refresh, realtime: true, clock: { loop.now.seconds })
        let (sink, records) = LogSink.memory()
        self.records = records
        engine = PlaybackEngine(output: output, audio: nil, format: AudioFormat(sampleRate: 48000, channels: 2),
                                display: DisplaySettings(), catalogDirectory: "/", volume: 1,
                                log: Logger(label: "test", sink: sink))
    }

    /// Starts the page-flip loop (it runs as the clock moves).
    func start() throws {
        try engine.presenter.start(on: loop, shouldStop: { false }, afterVblank: { true })
        loop.advanceTime(by: .zero)
    }

    /// Waits (on the wall clock, where decoders run) until the first item has `frames` pictures
    /// decoded or its decoding ended: this loop's clock moves at once, a decoder does not.
    func waitForDecoded(frames: Int = 1) throws {
        let source = try #require(engine.timeline.entries.first?.source)
        let progress = engine.timeline.progress
        while true {
            let g = progress.generation
            if source.video.buffered >= frames || source.video.isFinished { return }
            progress.wait(after: g, timeout: 5)
        }
    }

    /// Moves the clock to `t` seconds from the start.
    func advance(to t: Double) { loop.advanceTime(to: Deadline(seconds: t)) }

    /// The pixel at (x, y) on screen.
    func pixel(_ x: Int, _ y: Int) -> (r: UInt8, g: UInt8, b: UInt8) {
        var p: (r: UInt8, g: UInt8, b: UInt8) = (0, 0, 0)
        output.withFrontBuffer { t in
            let v = t.base.advanced(by: y * t.stride + x * 4).assumingMemoryBound(to: UInt32.self).pointee
            p = (UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF))
        }
        return p
    }
}

@Suite("Run loop: the page-flip loop on timers, wake-ups and signals")
struct RunLoopIntegrationTests {
    @Test("a still slate is prepared once a second and at its banner's hide time, which takes the banner away on that vblank")
    func bannerHideTimer() throws {
        let rig = try LoopRig()
        rig.engine.fixedSlate = .noCatalog(library: "/var/lib/vitrine")
        rig.engine.showBanner(Banner(title: "Catalog is up to date", detail: "Version 3 is already playing",
                                     progress: nil, style: .success, hideAfter: 2.5))
        try rig.start()
        let g = try #require(rig.engine.bannerLayer.geometry(canvasWidth: 320, canvasHeight: 180))
        let inPanel = (x: g.panel.x + 4, y: g.panel.y + g.panel.height / 2)
        let slate = SlateRenderer.slateColor
        func isSlate() -> Bool {
            let p = rig.pixel(inPanel.x, inPanel.y)
            return Int(p.r) == Int((slate >> 16) & 0xFF) && Int(p.g) == Int((slate >> 8) & 0xFF) && Int(p.b) == Int(slate & 0xFF)
        }
        #expect(!isSlate(), "the banner's panel is on screen")
        rig.advance(to: 2.49)
        #expect(rig.engine.bannerLayer.isShowing)
        #expect(!isSlate())
        // 75 vblanks at 30 Hz so far; a still screen prepared only a few of them.
        let prepared = rig.engine.stats.vblanks
        #expect(prepared <= 8, "\(prepared) vblanks prepared in 2.49 s")
        rig.advance(to: 2.55)
        #expect(!rig.engine.bannerLayer.isShowing)
        #expect(rig.engine.statusBanner.current == nil)
        #expect(isSlate(), "the banner went at the first vblank after 2.5 s")
        #expect(abs(rig.engine.stats.catalogSeconds - 76.0 / 30) < 1e-9, "the hiding vblank: \(rig.engine.stats.catalogSeconds)")
        #expect(rig.records().contains { $0.message == "banner hidden after 2.5 s" })
        try rig.engine.presenter.end()
    }

    @Test("time spent starting playback (a slow first item) is not owed as vblanks: the first frames are shown, none dropped")
    func slowStartOwesNoVblanks() throws {
        let rig = try LoopRig()
        let clip = try Harness.colorClip("red", seconds: 2)
        rig.engine.enqueue(PlaylistItem(id: "red", type: .video, src: clip))
        rig.engine.play()
        // Opening the first item took 0.3 s (a 4K file on a slow CPU): 9 vblanks' worth.
        rig.advance(to: 0.3)
        var started = false
        rig.engine.startPlayback(on: rig.loop) { started = true }
        let deadline = Date(timeIntervalSinceNow: 10)
        while !started && Date() < deadline { try rig.loop.runOnce(timeout: .milliseconds(10)) }
        try #require(started, "playback did not start")
        // Then one second of vblanks, each once the decoder has the next frame.
        try rig.waitForDecoded(frames: 2)
        try rig.start()
        for k in 1...30 {
            try rig.waitForDecoded(frames: 2)
            rig.advance(to: 0.3 + Double(k) / 30)
        }
        let s = rig.engine.stats
        #expect(s.framesDropped == 0, "\(s.dropped.summary)")
        #expect(s.framesPresented >= 30, "\(s.framesPresented) frames presented in the first second")
        #expect(s.catalogSeconds <= 1 + 1e-9, "catalog time \(s.catalogSeconds) s after 1 s of vblanks: the start was owed as vblanks")
        try rig.engine.presenter.end()
    }

    @Test("a still slate stopped between its redraws (SIGINT) counts its catalog time to the stop, not to its last redraw")
    func stillSlateStopCountsTime() throws {
        let rig = try LoopRig()
        rig.engine.fixedSlate = .noCatalog(library: "/var/lib/vitrine")
        try rig.start()
        // Redrawn once a second: at 2.7 s the last vblank prepared was the one at 2.0 s, and the
        // statistics count to the end of its period.
        rig.advance(to: 2.7)
        #expect(abs(rig.engine.stats.catalogSeconds - 62.0 / 30) < 1e-9, "catalog time \(rig.engine.stats.catalogSeconds) s before the stop")
        rig.engine.presenter.stopSoon()
        #expect(rig.engine.presenter.hasStopped)
        // The run ends at the next vblank, 2.7 s rounded up to a period.
        let seconds = rig.engine.stats.catalogSeconds
        #expect(abs(seconds - 81.0 / 30) < 1e-9, "catalog time \(seconds) s for a stop at 2.7 s")
        try rig.engine.presenter.end()
    }

    @Test("a banner shown from another thread wakes a still screen: it is on screen at the next vblank")
    func bannerWakesTheLoop() throws {
        let rig = try LoopRig()
        rig.engine.fixedSlate = .noCatalog(library: "/var/lib/vitrine")
        try rig.start()
        rig.advance(to: 3.2)
        let before = rig.engine.stats.vblanks
        let board = rig.engine.statusBanner
        let shown = DispatchSemaphore(value: 0)
        Thread { board.show(Banner(title: "Updating catalog…", detail: "Checking the stick", progress: nil, style: .progress)); shown.signal() }.start()
        shown.wait()
        // The wake-up came through the loop's eventfd; the vblank it asks for is 33 ms away at most.
        try rig.loop.runOnce(timeout: .seconds(5))
        rig.advance(to: 3.2 + 2.0 / 30)
        #expect(rig.engine.bannerLayer.isShowing)
        #expect(rig.engine.stats.vblanks > before)
        try rig.engine.presenter.end()
    }

    @Test("the idle rule fires at its deadline after the last touch, not a vblank before, with the screen still")
    func idleTimeout() throws {
        let rig = try LoopRig()
        rig.engine.fixedSlate = .noCatalog(library: "/var/lib/vitrine")
        rig.engine.input = InputRouter(transform: TouchTransform(screenWidth: 320, screenHeight: 180),
                                       idle: IdleRule(after: 5, item: "welcome"), log: Logger(label: "t", sink: LogSink.memory().0))
        try rig.start()
        rig.advance(to: 0.5)
        let t = rig.engine.lastHostTime
        rig.engine.handleInput(.touchDown(slot: 0, x: 0.5, y: 0.5, time: t))
        rig.engine.handleInput(.touchUp(slot: 0, time: t + 0.05))
        let deadline = try #require(rig.engine.input?.idle?.deadline)
        #expect(deadline == t + 5)
        rig.advance(to: deadline - 0.01)
        #expect(!rig.engine.actions.history.contains { $0.source == "idle" }, "not before its deadline")
        rig.advance(to: deadline + 0.1)
        #expect(rig.engine.actions.history.map(\.source) == ["idle"])
        #expect(rig.engine.actions.history.first?.action == .jump(item: "welcome", time: nil))
        #expect(rig.engine.stats.vblanks < 30, "\(rig.engine.stats.vblanks) vblanks prepared in \(deadline) s")
        try rig.engine.presenter.end()
    }

    @Test("showing a picture, every vblank is prepared: the loop's virtual vblanks follow its clock")
    func everyVblankWhilePlaying() throws {
        let rig = try LoopRig(width: 64, height: 36)
        let png = try Harness.clip("loop-still.png", ["-f", "lavfi", "-i", "color=c=green:s=64x36", "-frames:v", "1"])
        rig.engine.play(PlaylistItem(id: "g", type: .image, src: png, duration: 5))
        // The decoder opens on its own thread: wait for it through the engine's prefill, on the loop
        // (woken through its eventfd by the decoder).
        var started = false
        rig.engine.startPlayback(on: rig.loop) { started = true }
        while !started { try rig.loop.runOnce(timeout: .seconds(5)) }
        // A real clock would show the picture when it is decoded; this one moves at once: wait for it.
        try rig.waitForDecoded()
        try rig.start()
        rig.advance(to: 1.0)
        #expect(rig.engine.stats.vblanks == 31, "vblanks 0 … 30: \(rig.engine.stats.vblanks)")
        #expect(rig.engine.nowPlaying?.id == "g")
        let p = rig.pixel(32, 18)
        #expect(p.g > 100 && p.r < 30, "\(p)")
        try rig.engine.presenter.end()
    }
}

/// `vitrine play` in a process of its own, stopped by signals through its run loop's signalfd.
@Suite("Run loop: signals", .serialized)
struct RunLoopSignalTests {
    @Test("SIGTERM ends a real-time run within two vblanks, and exits 0", .enabled(if: VitrineBinary.available, VitrineBinary.absent),
          arguments: ["SIGTERM", "SIGINT", "SIGHUP"])
    func signalEndsTheRun(name: String) throws {
        let signals = ["SIGTERM": SIGTERM, "SIGINT": SIGINT, "SIGHUP": SIGHUP]
        let clip = try Harness.colorClip("blue", seconds: 20)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: VitrineBinary.path)
        // 4 Hz: two vblanks are half a second.
        p.arguments = ["play", clip, "--output", "headless", "--mode", "64x36@4", "--duration", "60"]
        let err = Pipe(), out = Pipe()
        p.standardError = err
        p.standardOutput = out
        try p.run()
        // Wait for the first frame (read stderr as it comes).
        var text = ""
        while !text.contains("first frame on screen") {
            let chunk = err.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        #expect(text.contains("first frame on screen"), "\(text)")
        kill(p.processIdentifier, signals[name]!)
        let rest = err.fileHandleForReading.readDataToEndOfFile()
        let summary = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        text += String(decoding: rest, as: UTF8.self)
        #expect(p.terminationReason == .exit && p.terminationStatus == 0, "\(p.terminationReason) \(p.terminationStatus)")
        // The catalog time when the signal was read, and at the end of the run.
        let line = try #require(text.split(separator: "\n").first { $0.contains("\(name): stopping at the next vblank") }, "\(text)")
        let atSignal = try #require(line.split(separator: "=").last.flatMap { Double($0) })
        let last = try #require(summary.split(separator: "\n").first { $0.hasPrefix("catalog time: ") })
        let atEnd = try #require(Double(last.dropFirst("catalog time: ".count).split(separator: " ")[0]))
        #expect(atEnd - atSignal <= 2 * 0.25 + 1e-6, "stopped at \(atEnd) s, signalled at \(atSignal) s")
    }
}
