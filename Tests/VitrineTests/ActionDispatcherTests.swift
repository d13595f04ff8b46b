import Foundation
import Synchronization
import Testing
@testable import Vitrine
import VitrineCore

/// What the engine would do with an action, recorded.
final class RecordingPerformer: ActionPerformer {
    var seeks: [Double] = []
    var pauses = 0, resumes = 0
    var volume = 1.0
    var overlays: OverlayLayer?
    var lastHostTime = 0.0
    func seek(time: Double) -> Bool { seeks.append(time); return true }
    func pause() -> Bool { pauses += 1; return true }
    func resume() -> Bool { resumes += 1; return true }
}

@Suite("Action dispatcher: cue points, buttons, taps and the idle rule through one way")
struct ActionDispatcherTests {
    @Test("each action becomes an action event and an action on the bus at once; the engine's share is done after the vblank, in order")
    func oneWay() {
        let events = EventHub(), bus = ActionBus()
        let (sink, records) = LogSink.memory()
        let dispatcher = ActionDispatcher(events: events, bus: bus, log: Logger(label: "t", sink: sink))
        let seen = EventRecorder()
        events.observe(seen.add)
        let busSeen = Mutex<[String]>([])
        bus.subscribe { action, source in busSeen.withLock { $0.append("\(source): \(action)") } }

        let cue = CuePointEvent(itemID: "intro", previousTime: 0.9, currentTime: 1.1,
                                cuePoints: [CuePoint(time: 1, id: "hello", action: .log(message: "hello")),
                                            CuePoint(time: 1.05, id: "skip", action: .seek(time: 4))],
                                bySeek: false)
        dispatcher.dispatch(cue)
        dispatcher.dispatch([(.pause, "overlay menu/button 0"), (.jump(item: "b", time: nil), "tap")])
        dispatcher.dispatch(.setVolume(0.5), source: "idle")
        dispatcher.dispatch(.showOverlay("menu"), source: "cue intro/menu")

        #expect(seen.events == [
            .cuePoints(cue),
            .action(.log(message: "hello"), source: "cue intro/hello"),
            .action(.seek(time: 4), source: "cue intro/skip"),
            .action(.pause, source: "overlay menu/button 0"),
            .action(.jump(item: "b", time: nil), source: "tap"),
            .action(.setVolume(0.5), source: "idle"),
            .action(.showOverlay("menu"), source: "cue intro/menu"),
        ])
        #expect(busSeen.withLock { $0 }.count == 6, "the bus's subscribers run at once")
        #expect(bus.history.map(\.source) == ["cue intro/hello", "cue intro/skip", "overlay menu/button 0", "tap", "idle", "cue intro/menu"])
        let engine = RecordingPerformer()
        #expect(engine.seeks.isEmpty && engine.pauses == 0 && engine.volume == 1, "nothing is done before the vblank ends")
        #expect(dispatcher.pendingCount == 6)

        dispatcher.performPending(on: engine)
        #expect(engine.seeks == [4])
        #expect(engine.pauses == 1 && engine.resumes == 0)
        #expect(engine.volume == 0.5)
        #expect(dispatcher.pendingCount == 0)
        let lines = records().map(\.message)
        #expect(lines.contains("cue intro/hello: hello"))
        #expect(lines.contains("cue intro/menu: showOverlay(\"menu\") (no overlays in this catalog)"))
        // A second pass does nothing again.
        dispatcher.performPending(on: engine)
        #expect(engine.seeks == [4] && engine.pauses == 1)
    }

    @Test("a popup action reaches the popups at the vblank's time")
    func popups() throws {
        let dir = try Harness.newFolder("dispatch")
        let log = Logger(label: "t", sink: LogSink.memory().0)
        let engine = RecordingPerformer()
        engine.overlays = OverlayLayer(overlays: ["menu": Overlay(title: "Menu", style: .fade, duration: 0.3)],
                                       catalogDirectory: dir, log: log)
        engine.lastHostTime = 42
        let dispatcher = ActionDispatcher(events: EventHub(), bus: ActionBus(), log: log)
        dispatcher.dispatch(.showOverlay("menu"), source: "tap")
        #expect(engine.overlays?.presenter.top == nil)
        dispatcher.performPending(on: engine)
        #expect(engine.overlays?.presenter.top?.id == "menu")
        #expect(engine.overlays?.presenter.top?.phase == .appearing)
    }
}
