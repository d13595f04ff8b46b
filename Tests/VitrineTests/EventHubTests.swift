import Foundation
import Testing
@testable import Vitrine
import VitrineCore

/// The event hub on a box that plays for months: what it keeps for late observers stays bounded.
@Suite("Event hub: bounded lifecycle replay")
struct EventHubTests {
    /// The events one item's pass posts, as the engine posts them (9 lifecycle events).
    static func pass(_ hub: EventHub, _ id: String) {
        hub.post(.renderingWillStart(item: id, at: 0))
        hub.post(.decodingStarted(item: id))
        hub.post(.durationChanged(item: id, duration: 2))
        hub.post(.renderingWillComplete(item: id, at: 2))
        hub.post(.decodingComplete(item: id))
        hub.post(.renderingStarted(item: id))
        hub.post(.nowPlayingChanged(item: id))
        hub.post(.progress(item: id, time: 1, duration: 2))
        hub.post(.renderingComplete(item: id))
    }

    @Test("5,000 items (45,000 events): a late observer gets a handful, the state and what is in flight, not the history")
    func bounded() {
        let hub = EventHub()
        hub.post(.playbackStateChanged(.playing))
        for i in 0..<5000 {
            Self.pass(hub, "item\(i % 7)")
            if i % 500 == 0 { hub.post(.encounteredError("audio device gone \(i)")) }
        }
        // The next item is scheduled and decoding while nothing else is in flight.
        hub.post(.renderingWillStart(item: "next", at: 9))
        hub.post(.decodingStarted(item: "next"))
        let kept = hub.replayed.map(\.event)
        #expect(kept.count <= 16, "\(kept.count) events kept")
        #expect(kept.contains(.playbackStateChanged(.playing)))
        #expect(kept.filter { $0.name == "nowPlayingChanged" } == [.nowPlayingChanged(item: "item\(4999 % 7)")])
        #expect(kept.suffix(2) == [.renderingWillStart(item: "next", at: 9), .decodingStarted(item: "next")])
        #expect(kept.filter { $0.name == "encounteredError" }.count == LifecycleReplay.errorLimit)
        #expect(!kept.contains { LifecycleReplay.item(of: $0)?.hasPrefix("item") == true }, "items that ended are gone")
        // And observe() replays exactly that.
        let rec = EventRecorder()
        hub.observe(rec.add)
        #expect(rec.events == kept)
    }

    @Test("a one-item loop: the item prerolled again before its pass ends keeps its own events")
    func sameIdPrerolled() {
        let hub = EventHub()
        hub.post(.didAdvanceToPlaybackSession(item: "a"))
        hub.post(.decodingStarted(item: "a"))
        hub.post(.renderingStarted(item: "a"))
        hub.post(.decodingComplete(item: "a"))
        hub.post(.renderingWillStart(item: "a", at: 2))   // the next pass, prerolled
        hub.post(.decodingStarted(item: "a"))
        hub.post(.renderingComplete(item: "a"))            // the first pass ends
        #expect(hub.replayed.map(\.event) == [.renderingWillStart(item: "a", at: 2), .decodingStarted(item: "a")])
    }

    @Test("an engine looping a short clip for 300 passes keeps the replay under its limit")
    func engineLoop() throws {
        let dir = try Harness.newFolder("hub-loop")
        try FileManager.default.copyItem(atPath: try Harness.colorClip("red", seconds: 0.2, size: "32x18"), toPath: dir + "/media/r.mp4")
        let rig = EngineRig(catalog: dir)
        let item = PlaylistItem(id: "r", type: .video, src: "media/r.mp4")
        rig.engine.refill = { [item] }
        rig.engine.play(item)
        // 300 passes of 0.2 s, stopped inside the 301st: at a boundary the pass ending and the one
        // starting are both in flight for a vblank, whichever event the engine posts first.
        try rig.run(until: 60.1)
        // In flight: the pass on screen, its prerolled successor, and (until the audio consumer has
        // passed its end, which on a loaded machine can lag the picture) the pass before it: at most
        // two passes' 7 events and the 2 state events, where an unbounded history would hold 2,700.
        let kept = rig.engine.events.replayed.map(\.event)
        #expect(kept.count <= 16, "\(kept.count) events kept after 300 passes: \(kept.map(\.name))")
        #expect(kept.filter { $0.name == "renderingStarted" }.count <= 2, "\(kept.map(\.name))")
        #expect(kept.contains(.nowPlayingChanged(item: "r")) && kept.contains(.playbackStateChanged(.playing)))
    }
}
