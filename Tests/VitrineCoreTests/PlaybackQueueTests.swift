import Testing
@testable import VitrineCore

/// The SFBAudioPlayer / BCOVPlaybackFacade rules, one test each.
@Suite("Playback state rules")
struct PlaybackQueueTests {
    let a = PlaylistItem(id: "a", type: .video, src: "a.mp4")
    let b = PlaylistItem(id: "b", type: .video, src: "b.mp4")
    let c = PlaylistItem(id: "c", type: .image, src: "c.png", duration: 5)

    @Test("a new player is stopped with nothing loaded; play() then has no effect")
    func emptyPlay() {
        var q = PlaybackQueue()
        #expect(q.state == .stopped && q.current == nil && q.queueIsEmpty)
        let (effect, changes) = q.play()
        #expect(!effect && changes.isEmpty && q.state == .stopped)
    }

    @Test("play(item) cancels the current item, clears the queue, loads the item and plays")
    func playItem() {
        var q = PlaybackQueue()
        _ = q.play(a)
        _ = q.enqueue(b)
        let changes = q.play(c)
        #expect(changes == [.cancelCurrent, .load(c)])     // already playing: no state change
        #expect(q.current == c && q.queueIsEmpty && q.state == .playing)
    }

    @Test("enqueue appends; enqueue(immediate:) replaces the current item and the queue, keeping the state")
    func enqueue() {
        var q = PlaybackQueue()
        #expect(q.enqueue(a).isEmpty && q.queue == [a] && q.state == .stopped)
        _ = q.play()
        #expect(q.current == a && q.queueIsEmpty)
        _ = q.enqueue(b)
        let changes = q.enqueue(c, immediate: true)
        #expect(changes == [.cancelCurrent, .load(c)])
        #expect(q.current == c && q.queueIsEmpty && q.state == .playing)
    }

    @Test("clearQueue empties the queue and leaves the current item playing")
    func clearQueue() {
        var q = PlaybackQueue()
        _ = q.play(a); _ = q.enqueue(b); _ = q.enqueue(c)
        q.clearQueue()
        #expect(q.queueIsEmpty && q.current == a && q.state == .playing)
    }

    @Test("pause only from playing; resume only from paused; otherwise no effect")
    func pauseResume() {
        var q = PlaybackQueue()
        #expect(q.pause() == (false, []) && q.state == .stopped)
        #expect(q.resume() == (false, []) && q.state == .stopped)
        _ = q.play(a)
        #expect(q.resume() == (false, []) && q.state == .playing)
        #expect(q.pause() == (true, [.state(.paused)]))
        #expect(q.pause() == (false, []) && q.state == .paused)
        #expect(q.resume() == (true, [.state(.playing)]))
    }

    @Test("play() while playing has no effect; while paused it resumes")
    func playWhilePlayingOrPaused() {
        var q = PlaybackQueue()
        _ = q.play(a)
        #expect(q.play() == (false, []))
        _ = q.pause()
        #expect(q.play() == (true, [.state(.playing)]))
    }

    @Test("play() when stopped plays the next queued item")
    func playFromQueue() {
        var q = PlaybackQueue()
        _ = q.enqueue(a); _ = q.enqueue(b)
        #expect(q.play() == (true, [.load(a), .state(.playing)]))
        #expect(q.current == a && q.queue == [b])
    }

    @Test("stop cancels the current item and clears the queue; stopping when stopped has no effect")
    func stop() {
        var q = PlaybackQueue()
        #expect(q.stop() == (false, []))
        _ = q.play(a); _ = q.enqueue(b)
        #expect(q.stop() == (true, [.cancelCurrent, .state(.stopped)]))
        #expect(q.current == nil && q.queueIsEmpty && q.state == .stopped)
    }

    @Test("toggle goes stopped → playing → paused → playing")
    func toggle() {
        var q = PlaybackQueue()
        _ = q.enqueue(a)
        #expect(q.togglePlayPause().0 && q.state == .playing)
        #expect(q.togglePlayPause().0 && q.state == .paused)
        #expect(q.togglePlayPause().0 && q.state == .playing)
    }

    @Test("reset cancels and clears whatever the state and ends stopped")
    func reset() {
        var q = PlaybackQueue()
        _ = q.play(a); _ = q.enqueue(b); _ = q.pause()
        #expect(q.reset() == [.cancelCurrent, .state(.stopped)])
        #expect(q.current == nil && q.queueIsEmpty)
        #expect(q.reset().isEmpty)
    }

    @Test("advanceToNext loads the next item keeping the state; with an empty queue it has no effect")
    func advance() {
        var q = PlaybackQueue()
        #expect(q.advanceToNext() == (false, []))
        _ = q.enqueue(a); _ = q.enqueue(b)
        #expect(q.advanceToNext() == (true, [.load(a)]) && q.state == .stopped && q.current == a)
        #expect(q.advanceToNextAndPlay() == (true, [.cancelCurrent, .load(b), .state(.playing)]))
        #expect(q.advanceToNextAndPlay() == (false, []) && q.current == b)
    }

    @Test("when the current item ends the next one loads; with none left the player stops")
    func itemEnded() {
        var q = PlaybackQueue()
        _ = q.play(a); _ = q.enqueue(b)
        #expect(q.currentItemEnded() == [.load(b)] && q.state == .playing)
        #expect(q.currentItemEnded() == [.state(.stopped)] && q.current == nil)
    }
}

@Suite("Cue points (BCOV semantics)")
struct CuePointSchedulerTests {
    static func cue(_ t: Double, _ id: String) -> CuePoint { CuePoint(time: t, id: id, action: .log(message: id)) }
    let cues = [cue(0, "start"), cue(2, "two"), cue(5, "five-a"), cue(5, "five-b"), cue(8, "eight"), cue(9, "nine")]

    @Test("each cue point fires once as playback passes it; ties aggregate")
    func playback() {
        var s = CuePointScheduler(itemID: "x", cuePoints: cues)
        var fired: [[String]] = []
        for step in 0...60 {   // 0.0 … 6.0 s in 0.1 s steps
            if let e = s.advance(to: Double(step) / 10) { fired.append(e.cuePoints.map(\.id)); #expect(!e.bySeek) }
        }
        #expect(fired == [["start"], ["two"], ["five-a", "five-b"]])
    }

    @Test("a seek across three cue points gives one aggregated event with previous and current time")
    func seekAggregates() {
        var s = CuePointScheduler(itemID: "x", cuePoints: cues)
        _ = s.advance(to: 1)
        let e = s.seek(to: 8.5)
        #expect(e == CuePointEvent(itemID: "x", previousTime: 1, currentTime: 8.5,
                                    cuePoints: [Self.cue(2, "two"), Self.cue(5, "five-a"), Self.cue(5, "five-b"), Self.cue(8, "eight")], bySeek: true))
        #expect(s.advance(to: 8.6) == nil)
        #expect(s.advance(to: 9.0)?.cuePoints.map(\.id) == ["nine"])
    }

    @Test("a backward seek fires nothing, and the passed cue points fire again on the next pass")
    func backward() {
        var s = CuePointScheduler(itemID: "x", cuePoints: cues)
        _ = s.advance(to: 6)
        #expect(s.seek(to: 1.5) == nil)
        #expect(s.advance(to: 2.0)?.cuePoints.map(\.id) == ["two"])
    }

    @Test("a cue point at the item's last instant fires when the item ends: the last frame of a 4 s clip at 30 fps is at 3.967 s")
    func lastInstant() {
        var s = CuePointScheduler(itemID: "x", cuePoints: [Self.cue(3.9, "late"), Self.cue(4.0, "end"), Self.cue(4.5, "after")])
        var fired: [[String]] = []
        for frame in 0..<120 {   // the presented frames' PTS: 0, 1/30 … 119/30
            if let e = s.advance(to: Double(frame) / 30) { fired.append(e.cuePoints.map(\.id)) }
        }
        #expect(fired == [["late"]], "playback alone never reaches 4.0")
        let end = s.finish(length: 4.0)
        #expect(end == CuePointEvent(itemID: "x", previousTime: 119.0 / 30, currentTime: 4.0, cuePoints: [Self.cue(4.0, "end")], bySeek: false))
        #expect(s.finish(length: 4.0) == nil, "once")
        // A length a rounding error short of the time written still counts (4.0 s measured in audio frames).
        var t = CuePointScheduler(itemID: "x", cuePoints: [Self.cue(4.0, "end")])
        #expect(t.finish(length: 3.99995)?.cuePoints.map(\.id) == ["end"])
        var u = CuePointScheduler(itemID: "x", cuePoints: [Self.cue(4.0, "end")])
        #expect(u.finish(length: 3.9) == nil, "past the end: never")
    }

    @Test("the boundary is (previous, current]: a cue point at exactly the current time fires, at the previous does not")
    func boundaries() {
        var s = CuePointScheduler(itemID: "x", cuePoints: [Self.cue(2, "two")])
        #expect(s.advance(to: 2)?.cuePoints.count == 1)
        #expect(s.advance(to: 2) == nil)
        #expect(s.advance(to: 3) == nil)
    }
}
