import Foundation
import Testing
import Media
@testable import Vitrine
import VitrineCore

/// A playback engine on a deterministic headless output, stepped one vblank at a time.
struct EngineRig {
    let engine: PlaybackEngine
    let output: HeadlessOutput

    /// `picture`, when given, sees the screen at every vblank (before its audio is pulled).
    init(catalog: String, width: Int = 64, height: Int = 36, refresh: Double = 30, display: DisplaySettings = DisplaySettings(),
         picture: ((PixelTarget) -> Void)? = nil) {
        output = HeadlessOutput(width: width, height: height, refreshRate: refresh, realtime: false)
        engine = PlaybackEngine(output: output, audio: nil, format: AudioFormat(sampleRate: 48000, channels: 2),
                                display: display, catalogDirectory: catalog, volume: 1,
                                log: Logger(label: "test", sink: LogSink.memory().0))
        // Headless audio is pulled in step with virtual time, as `Player` does.
        let e = engine, rate = 48000.0, hz = refresh
        var due = 0.0
        output.onVblank = { target, _ in
            picture?(target)
            due += rate / hz
            let n = Int(due.rounded(.down)); due -= Double(n)
            if e.playbackState == .playing { _ = e.timeline.pullAudio(frames: n, timeout: 5) }
        }
    }

    /// Steps until catalog time reaches `t` (or the queue ends).
    func run(until t: Double) throws {
        while engine.catalogTime < t - 1e-9 { guard try engine.step() else { return } }
    }

    /// Steps `n` vblanks.
    func step(_ n: Int) throws { for _ in 0..<n { _ = try engine.step() } }
}

/// Collects events synchronously.
final class EventRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [PlayerEvent] = []
    var events: [PlayerEvent] { lock.lock(); defer { lock.unlock() }; return list }
    func add(_ e: TimedEvent) { lock.lock(); list.append(e.event); lock.unlock() }
}

@Suite("Playback engine", .serialized)
struct EngineTests {
    static func catalog(_ items: [(String, String)]) throws -> String {
        let dir = try Harness.newFolder("engine")
        for (name, source) in items { try FileManager.default.copyItem(atPath: source, toPath: dir + "/media/" + name) }
        return dir
    }

    @Test("pause freezes the playhead and the picture; resume continues from the same time")
    func pauseResume() throws {
        let dir = try Self.catalog([("red.mp4", try Harness.colorClip("red", seconds: 3, tone: 440))])
        let rig = EngineRig(catalog: dir)
        rig.engine.play(PlaylistItem(id: "r", type: .video, src: "media/red.mp4"))
        try rig.run(until: 1.0)
        #expect(rig.engine.pause())
        #expect(!rig.engine.pause(), "pausing twice has no effect")
        let frozen = rig.engine.currentTime!
        let presented = rig.engine.stats.framesPresented
        try rig.step(30)
        #expect(rig.engine.currentTime == frozen)
        #expect(rig.engine.stats.framesPresented == presented)
        #expect(rig.engine.playbackState == .paused)
        #expect(rig.engine.resume())
        try rig.step(15)
        #expect(abs(rig.engine.currentTime! - (frozen + 0.5)) < 0.04)
    }

    @Test("stop cancels the item and clears the queue; play() then has nothing to play")
    func stopClears() throws {
        let dir = try Self.catalog([("red.mp4", try Harness.colorClip("red", seconds: 1)), ("blue.mp4", try Harness.colorClip("blue", seconds: 1))])
        let rig = EngineRig(catalog: dir)
        let rec = EventRecorder()
        rig.engine.events.observe(rec.add)
        rig.engine.enqueue(PlaylistItem(id: "r", type: .video, src: "media/red.mp4"))
        rig.engine.enqueue(PlaylistItem(id: "b", type: .video, src: "media/blue.mp4"))
        #expect(rig.engine.play())
        try rig.run(until: 0.5)
        rig.engine.stop()
        #expect(rig.engine.playbackState == .stopped && rig.engine.queueIsEmpty && rig.engine.nowPlaying == nil)
        #expect(!rig.engine.play())
        #expect(rec.events.contains(.decoderCanceled(item: "r", framesRendered: 15)) || rec.events.contains { if case .decoderCanceled("r", let n) = $0 { return n >= 14 && n <= 16 } else { return false } })
        #expect(rec.events.last == .playbackStateChanged(.stopped))
    }

    @Test("toggle: stopped → playing → paused → playing")
    func toggle() throws {
        let dir = try Self.catalog([("red.mp4", try Harness.colorClip("red", seconds: 1))])
        let rig = EngineRig(catalog: dir)
        rig.engine.enqueue(PlaylistItem(id: "r", type: .video, src: "media/red.mp4"))
        #expect(rig.engine.togglePlayPause() && rig.engine.playbackState == .playing)
        try rig.step(3)
        #expect(rig.engine.togglePlayPause() && rig.engine.playbackState == .paused)
        #expect(rig.engine.togglePlayPause() && rig.engine.playbackState == .playing)
    }

    @Test("a seek across three cue points fires one aggregated event; cue points fire within a frame of their time")
    func cuePoints() throws {
        let dir = try Self.catalog([("red.mp4", try Harness.colorClip("red", seconds: 4))])
        let cues = [CuePoint(time: 0.5, id: "half", action: .log(message: "half")),
                    CuePoint(time: 1.0, id: "one", action: .log(message: "one")),
                    CuePoint(time: 1.5, id: "one-half", action: .log(message: "1.5")),
                    CuePoint(time: 2.0, id: "two", action: .log(message: "2"))]
        let rig = EngineRig(catalog: dir)
        let rec = EventRecorder()
        rig.engine.events.observe(rec.add)
        rig.engine.play(PlaylistItem(id: "r", type: .video, src: "media/red.mp4", cuePoints: cues))
        try rig.run(until: 0.7)
        let first = rec.events.compactMap { if case .cuePoints(let c) = $0 { return c } else { return nil } }
        #expect(first.count == 1 && first[0].cuePoints.map(\.id) == ["half"])
        #expect(abs(first[0].currentTime - 0.5) <= 1.0 / 30 + 1e-9, "fired at \(first[0].currentTime)")
        #expect(rig.engine.supportsSeeking)
        #expect(rig.engine.seek(time: 2.5))
        let all = rec.events.compactMap { if case .cuePoints(let c) = $0 { return c } else { return nil } }
        #expect(all.count == 2)
        #expect(all[1].bySeek && all[1].cuePoints.map(\.id) == ["one", "one-half", "two"] && all[1].currentTime == 2.5)
        #expect(abs(all[1].previousTime - 0.7) < 0.05)
        // The item's clock continues from the seek target: 0.3 s of catalog time later it is at 2.8 s.
        let seekedAt = rig.engine.catalogTime
        try rig.run(until: seekedAt + 0.3)
        let t = try #require(rig.engine.currentTime)
        #expect(abs(t - 2.8) < 0.04)
        #expect(rec.events.filter { if case .cuePoints = $0 { return true } else { return false } }.count == 2)
    }

    @Test("an observer added mid-session gets the lifecycle history but only future cue events")
    func lateObserver() throws {
        let dir = try Self.catalog([("red.mp4", try Harness.colorClip("red", seconds: 2))])
        let rig = EngineRig(catalog: dir)
        rig.engine.play(PlaylistItem(id: "r", type: .video, src: "media/red.mp4",
                                     cuePoints: [CuePoint(time: 0.2, id: "early", action: .log(message: "e")),
                                                 CuePoint(time: 1.2, id: "late", action: .log(message: "l"))]))
        try rig.run(until: 0.6)
        let rec = EventRecorder()
        rig.engine.events.observe(rec.add)
        let replayed = rec.events
        #expect(replayed.contains(.didAdvanceToPlaybackSession(item: "r")))
        #expect(replayed.contains(.renderingStarted(item: "r")))
        #expect(replayed.contains(.playbackStateChanged(.playing)))
        #expect(!replayed.contains { if case .cuePoints = $0 { return true } else { return false } })
        try rig.run(until: 1.4)
        let cues = rec.events.compactMap { if case .cuePoints(let c) = $0 { return c.cuePoints.map(\.id) } else { return nil } }
        #expect(cues == [["late"]])
    }

    @Test("seek(position:), seek(frame:), forward and backward by 3 s")
    func seekVariants() throws {
        let dir = try Self.catalog([("red.mp4", try Harness.colorClip("red", seconds: 8))])
        let rig = EngineRig(catalog: dir)
        rig.engine.play(PlaylistItem(id: "r", type: .video, src: "media/red.mp4"))
        try rig.step(2)
        try rig.run(until: rig.engine.catalogTime + 0.1)
        #expect(!rig.engine.seek(position: 1.0), "position must be in [0, 1)")
        #expect(rig.engine.seek(position: 0.5))
        try rig.step(1)
        #expect(abs(rig.engine.currentTime! - 4.0) < 0.05)
        #expect(rig.engine.seek(forward: 3) && abs(rig.engine.currentTime! - 7.0) < 0.05)
        #expect(rig.engine.seek(backward: 3) && abs(rig.engine.currentTime! - 4.0) < 0.05)
        #expect(rig.engine.seek(frame: 48000) && abs(rig.engine.currentTime! - 1.0) < 0.05)
        #expect(rig.engine.framePosition.map { abs($0 - 48000) < 2400 } == true)
        #expect(!rig.engine.seek(time: 20), "past the end")
    }

    @Test("a still picture does not support seeking")
    func stillNoSeek() throws {
        let png = try Harness.clip("still-grey.png", ["-f", "lavfi", "-i", "color=c=gray:s=32x18", "-frames:v", "1"])
        let dir = try Self.catalog([("g.png", png)])
        let rig = EngineRig(catalog: dir)
        rig.engine.play(PlaylistItem(id: "g", type: .image, src: "media/g.png", duration: 2))
        try rig.step(3)
        #expect(!rig.engine.supportsSeeking && !rig.engine.seek(time: 1))
    }

    @Test("a 5 ms sound between two vblanks still starts and ends: renderingStarted, now playing, renderingComplete, in order")
    func itemShorterThanAVblank() throws {
        let blip = try Harness.clip("blip-5ms.wav", ["-f", "lavfi", "-i", "sine=frequency=1000:sample_rate=48000:duration=0.005", "-ac", "2"])
        let dir = try Self.catalog([("red.mp4", try Harness.colorClip("red", seconds: 2)), ("blip.wav", blip)])
        let rig = EngineRig(catalog: dir)
        let rec = EventRecorder()
        rig.engine.events.observe(rec.add)
        // `red` ends at 1.01 s, so the 5 ms blip lies between the vblanks at 1.0 s and 1.033 s.
        rig.engine.enqueue(PlaylistItem(id: "red", type: .video, src: "media/red.mp4", duration: 1.01))
        rig.engine.enqueue(PlaylistItem(id: "blip", type: .audio, src: "media/blip.wav"))
        rig.engine.enqueue(PlaylistItem(id: "after", type: .video, src: "media/red.mp4", duration: 0.5))
        rig.engine.play()
        try rig.run(until: 1.6)
        let lifecycle = rec.events.compactMap { e -> String? in
            switch e {
            case .renderingStarted(let id): return "start \(id)"
            case .renderingComplete(let id): return "end \(id)"
            case .nowPlayingChanged(let id?) where id == "blip": return "now playing blip"
            default: return nil
            }
        }
        #expect(lifecycle == ["start red", "end red", "start blip", "now playing blip", "end blip", "start after", "end after"], "\(lifecycle)")
        #expect(rig.engine.stats.itemsStarted == 3)
    }
}
