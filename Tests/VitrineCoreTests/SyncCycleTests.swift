// The synchronised cycle's arithmetic (`SyncCycle`), the manifest's `sync` key, and the stretch
// that keeps a drifting sound card on the wall clock (`DriftResampler`).
import Testing
import VitrineCore

struct SyncCycleTests {
    static let epoch: Int64 = 1_767_225_600  // 2026-01-01T00:00:00Z

    static func cycle() throws -> SyncCycle {
        try #require(SyncCycle(epoch: epoch, lengths: [("a", 3), ("b", 2.5), ("empty", 0), ("c", 4.5)]))
    }

    @Test func slotsAddUp() throws {
        let c = try Self.cycle()
        #expect(c.length == 10)
        #expect(c.slots.map(\.id) == ["a", "b", "c"])
        #expect(c.slots.map(\.start) == [0, 3, 5.5])
        #expect(SyncCycle(epoch: 0, lengths: [("x", 0), ("y", -1), ("z", .nan)]) == nil)
    }

    @Test func locateAcrossPasses() throws {
        let c = try Self.cycle()
        #expect(c.locate(sinceEpoch: 0) == (0, 0, 0))
        #expect(c.locate(sinceEpoch: 2.999) == (0, 0, 2.999))
        #expect(c.locate(sinceEpoch: 3) == (0, 1, 0))
        #expect(c.locate(sinceEpoch: 9.75) == (0, 2, 4.25))
        let l = c.locate(sinceEpoch: 1_000_003.25)  // pass 100000, 3.25 s in: b at 0.25 s
        #expect(l.pass == 100_000 && l.index == 1 && abs(l.offset - 0.25) < 1e-9)
        // Before the epoch: pass −1.
        let early = c.locate(sinceEpoch: -1)
        #expect(early.pass == -1 && early.index == 2 && abs(early.offset - 3.5) < 1e-9)
    }

    @Test func placementJoinsOrWaits() throws {
        let c = try Self.cycle()
        // b is playing at 24 s (pass 2, 4 s in: b at 1 s): joined 1 s in, its slot began at 23 s.
        let b = try #require(c.placement(of: "b", at: 24))
        #expect(b.start == 23 && abs(b.offset - 1) < 1e-9 && b.length == 2.5)
        // c is not: its next slot, at 25.5 s, from its start.
        let next = try #require(c.placement(of: "c", at: 24))
        #expect(next.start == 25.5 && next.offset == 0)
        // a comes round again in the next pass.
        let a = try #require(c.placement(of: "a", at: 24))
        #expect(a.start == 30 && a.offset == 0)
        #expect(c.placement(of: "nope", at: 24) == nil)
        #expect(c.end(of: "b", startingNear: 23.0001) == 25.5)
        #expect(c.end(of: "a", startingNear: 30) == 33)
    }

    @Test func epochText() {
        #expect(parseSyncEpoch("2026-01-01T00:00:00Z") == Self.epoch)
        #expect(parseSyncEpoch("2026-01-01T01:00:00+01:00") == Self.epoch)
        #expect(parseSyncEpoch("2025-12-31T19:00:00-05:00") == Self.epoch)
        // A local time (no offset) could differ from box to box: refused.
        #expect(parseSyncEpoch("2026-01-01T00:00:00") == nil)
        #expect(parseSyncEpoch("2026-01-01") == nil)
        #expect(parseSyncEpoch("yesterday") == nil)
    }

    @Test func manifestKey() {
        let good = ManifestParser.parse(Array("""
            {"schema": "vitrine.manifest/1", "version": 1, "sync": {"epoch": "2026-01-01T00:00:00Z"},
             "playlist": [{"id": "a", "type": "image", "src": "a.png", "duration": 5}]}
            """.utf8))
        #expect(good.errors.isEmpty)
        #expect(good.manifest?.sync == SyncSettings(epoch: Self.epoch))
        let bad = ManifestParser.parse(Array("""
            {"schema": "vitrine.manifest/1", "version": 1, "loop": false, "sync": {"epoch": "2026-01-01T00:00:00", "leader": 1},
             "playlist": [{"id": "a", "type": "image", "src": "a.png", "duration": 5}]}
            """.utf8))
        let messages = bad.errors.map(\.description)
        #expect(messages.contains { $0.hasPrefix("sync.epoch:") && $0.contains("Z or an offset") }, "\(messages)")
        #expect(messages.contains { $0.hasPrefix("sync.leader:") || $0.contains("\"leader\"") }, "\(messages)")
        let once = ManifestParser.parse(Array("""
            {"schema": "vitrine.manifest/1", "version": 1, "loop": false, "sync": {"epoch": "2026-01-01T00:00:00Z"},
             "playlist": [{"id": "a", "type": "image", "src": "a.png", "duration": 5}]}
            """.utf8))
        #expect(once.errors.map(\.description).contains { $0.hasPrefix("loop:") }, "\(once.errors)")
        let missing = ManifestParser.parse(Array("""
            {"schema": "vitrine.manifest/1", "version": 1, "sync": {},
             "playlist": [{"id": "a", "type": "image", "src": "a.png", "duration": 5}]}
            """.utf8))
        #expect(missing.errors.map(\.description).contains { $0.contains("epoch") }, "\(missing.errors)")
    }
}

struct DriftResamplerTests {
    /// A ramp stretched by one frame stays a ramp: every output sample lies on the line, the ends
    /// are kept, and nothing jumps (no click).
    @Test func stretchesARampSmoothly() {
        let m = 1024
        var ramp: [Int16] = []
        for i in 0..<m { ramp += [Int16(i * 8), Int16(-i * 8)] }
        for n in [1023, 1025, 1026] {
            let out = DriftResampler.stretch(ramp, channels: 2, to: n)
            #expect(out.count == n * 2)
            #expect(out[0] == 0 && out[1] == 0)
            let step = Double(m) / Double(n)
            for j in 0..<n {
                let x = min(Double(j) * step, Double(m - 1))
                #expect(abs(Double(out[2 * j]) - x * 8) <= 1, "frame \(j) of \(n)")
                #expect(out[2 * j + 1] == -out[2 * j] || abs(Int(out[2 * j + 1]) + Int(out[2 * j])) <= 1)
            }
            // Largest step between neighbours: the ramp's own (8) times the stretch, never a jump.
            let maxStep = (1..<n).map { abs(Int(out[2 * $0]) - Int(out[2 * ($0 - 1)])) }.max()!
            #expect(maxStep <= 9)
        }
        #expect(DriftResampler.stretch(ramp, channels: 2, to: m) == ramp)
    }
}
