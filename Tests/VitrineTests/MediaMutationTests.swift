import Foundation
import Synchronization
import Testing
import VitrineTestSupport
import VitrineCore

/// Corrupted copies of the real media corpus, made from a seed: each is a prefix of one real file
/// (2 to 96 KiB: the headers and first packets, where demuxers and decoder set-up live) changed by
/// one to three of: random bytes (mostly in the first 4 KiB), a zeroed or 0xFF-filled range, a cut,
/// or another file's header spliced over its own.
struct MediaMutation {
    var index: Int
    var source: String
    var type: PlaylistItem.Kind
    var bytes: [UInt8]
    /// What was done, for the failure message: `bikes.mp4[0..<23456], flip 3 bytes in 0..<4096, …`.
    var steps: [String]

    var fileName: String { "m\(index)." + (source as NSString).pathExtension }
    var description: String { "m\(index) (\(fileName)): " + steps.joined(separator: ", ") }

    static let sources: [(name: String, type: PlaylistItem.Kind)] = [
        ("bigbuckbunny.mp4", .video), ("bikes.mp4", .video), ("carphone_pristine.mp4", .video),
        ("video-demo.mp4", .video), ("video-demo.mkv", .video), ("video-demo.webm", .video), ("video-demo.ogv", .video),
        ("video-demo.avi", .video), ("video-demo.mpeg", .video),
        ("audio-demo.mp3", .audio), ("audio-demo.opus", .audio), ("audio-short.wav", .audio),
        ("image-demo.jpg", .image), ("image-demo.png", .image),
    ]

    /// `count` mutations, round-robin over `sources`, from `seed`.
    static func make(count: Int, seed: UInt64, corpus: String) throws -> [MediaMutation] {
        let originals = try sources.map { [UInt8](try Data(contentsOf: URL(fileURLWithPath: corpus + "/" + $0.name)).prefix(256 << 10)) }
        var random = SplitMix64(seed: seed)
        return (0..<count).map { i in
            let s = i % sources.count
            let original = originals[s]
            // A log-uniform prefix length in 2…96 KiB.
            let length = min(original.count, Int(exp(Double.random(in: log(2048)...log(98304), using: &random))))
            var m = MediaMutation(index: i, source: sources[s].name, type: sources[s].type, bytes: Array(original.prefix(length)),
                                  steps: ["\(sources[s].name)[0..<\(length)]"])
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                m.mutate(&random, donor: originals[(s + Int.random(in: 1..<sources.count, using: &random)) % sources.count])
            }
            return m
        }
    }

    mutating func mutate(_ random: inout SplitMix64, donor: [UInt8]) {
        guard bytes.count > 16 else { return }
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<35:
            let area = Bool.random(using: &random) ? min(bytes.count, 4096) : bytes.count
            let n = Int.random(in: 1...16, using: &random)
            for _ in 0..<n { bytes[Int.random(in: 0..<area, using: &random)] = UInt8.random(in: 0...255, using: &random) }
            steps.append("set \(n) bytes in 0..<\(area)")
        case 35..<60:
            let start = Int.random(in: 0..<bytes.count, using: &random)
            let end = min(bytes.count, start + Int.random(in: 1...512, using: &random))
            let fill: UInt8 = Bool.random(using: &random) ? 0 : 0xFF
            for k in start..<end { bytes[k] = fill }
            steps.append("fill \(start)..<\(end) with \(fill)")
        case 60..<80:
            let cut = Int.random(in: 16..<bytes.count, using: &random)
            bytes.removeLast(bytes.count - cut)
            steps.append("cut at \(cut)")
        default:
            let header = min(donor.count, Int.random(in: 64...8192, using: &random))
            let from = Int.random(in: 0...min(bytes.count, 8192), using: &random)
            bytes = Array(donor.prefix(header)) + bytes[from...]
            steps.append("another file's first \(header) bytes over 0..<\(from)")
        }
    }
}

/// Every mutation plays as the middle item between two good ones, in batches: the catalog of one
/// `vitrine run` is good0, m1, good1, m2, good2, … mN, goodN, looping, so every bad item has a good
/// item on each side. Each run is a subprocess (a crash kills it, not the tests), with stdout and
/// stderr written to files. Set VITRINE_MUTATION_SEED to repeat a run, VITRINE_MUTATIONS for the
/// count (default 300).
@Suite("Hostile media: seeded mutations of the real corpus between good items", .serialized,
       .enabled(if: RealMedia.available, RealMedia.absent),
       .enabled(if: VitrineBinary.available, VitrineBinary.absent))
struct MediaMutationTests {
    static let batchSize = 25
    static let goodSeconds = 0.2
    /// Every bad item is capped at this `duration` (a mutation may still play well).
    static let badCap = 0.5
    /// Wall time after which a run counts as hung (generous: the build machine is shared).
    static let hangSeconds = 180.0

    struct Outcome: Sendable {
        var exit: Int32, signaled: Bool, hung: Bool
        /// The items of the `renderingStarted` events, in order.
        var started: [String]
        /// Each item's length in seconds, from its last `durationChanged` event.
        var durations: [String: Double]
        var log: String
    }

    /// Plays `batch` in one catalog; the run lasts one full pass plus the first good item again.
    static func play(_ batch: [MediaMutation], in dir: String, good: String) throws -> Outcome {
        try FileManager.default.createDirectory(atPath: dir + "/media", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: good, toPath: dir + "/media/good.mp4")
        var items = [#"{ "id": "good0", "type": "video", "src": "media/good.mp4" }"#]
        for (k, m) in batch.enumerated() {
            try Data(m.bytes).write(to: URL(fileURLWithPath: dir + "/media/" + m.fileName))
            items.append(#"{ "id": "m\#(m.index)", "type": "\#(m.type.rawValue)", "src": "media/\#(m.fileName)", "duration": \#(badCap) }"#)
            items.append(#"{ "id": "good\#(k + 1)", "type": "video", "src": "media/good.mp4" }"#)
        }
        try Harness.writeManifest("""
            { "schema": "vitrine.manifest/1", "version": 1, "display": { "mode": "320x180@30" }, "loop": true,
              "playlist": [ \(items.joined(separator: ",\n")) ] }
            """, in: dir)
        let pass = Double(batch.count) * (goodSeconds + badCap) + goodSeconds
        let p = try VitrineBinary.start(["run", "--catalog", dir, "--output", "headless", "--audio-device", "none",
                                         "--duration", String(format: "%.2f", pass + goodSeconds / 2), "--events", dir + "/events.jsonl",
                                         "--snapshot-at", "0.1", "--snapshot-dir", dir],
                                        standardOutput: .file(dir + "/stdout.txt"), standardError: .file(dir + "/stderr.txt"))
        let result = p.wait(timeout: .seconds(hangSeconds))
        let hung = result.overstayed
        let events = (String(data: FileManager.default.contents(atPath: dir + "/events.jsonl") ?? Data(), encoding: .utf8) ?? "")
            .split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let started = events.filter { $0["event"] as? String == "renderingStarted" }.compactMap { $0["item"] as? String }
        var durations: [String: Double] = [:]
        for e in events where e["event"] as? String == "durationChanged" {
            if let item = e["item"] as? String, let d = e["duration"] as? Double { durations[item] = d }
        }
        let log = (String(data: FileManager.default.contents(atPath: dir + "/stdout.txt") ?? Data(), encoding: .utf8) ?? "")
            + (String(data: FileManager.default.contents(atPath: dir + "/stderr.txt") ?? Data(), encoding: .utf8) ?? "")
        return Outcome(exit: result.status, signaled: result.signaled, hung: hung, started: started, durations: durations, log: log)
    }

    /// What is wrong with one run of `batch`, or an empty list: it exited 0 by itself; the good items
    /// started in catalog order, good0 … goodN then good0 again, and each one that ended presented at
    /// least half of its 6 frames (frame timing is FrameDropTests' business: here a bad item that ends
    /// between two vblanks shifts the next item's frames by part of a period, and a shared machine
    /// delays decoders); each bad item played (or lasted less than a vblank) or was skipped with a
    /// logged reason naming its file.
    static func problems(_ o: Outcome, _ batch: [MediaMutation]) -> [String] {
        if o.hung { return ["hung: still running after \(Int(hangSeconds)) s"] }
        if o.signaled { return ["crashed with signal \(o.exit)"] }
        var found: [String] = []
        if o.exit != 0 { found.append("exited \(o.exit)") }
        let started = o.started
        let goods = (0...batch.count).map { "good\($0)" }
        // Bad items that are skipped or short make the pass shorter: the catalog may go round again.
        let goodStarts = started.filter { $0.hasPrefix("good") }
        if goodStarts.count <= goods.count || goodStarts.enumerated().contains(where: { $0.element != goods[$0.offset % goods.count] }) {
            found.append("good items started \(goodStarts), expected \(goods) then good0 again")
        }
        for g in goods {
            let played = o.log.split(separator: "\n").filter { $0.contains("played \(g): ") && !$0.contains("the run ended") }
            for line in played {
                let presented = line.split(separator: "played \(g): ").last.flatMap { Int($0.prefix { $0.isNumber }) } ?? 0
                if presented < 3 { found.append(String(line)) }
            }
            if played.isEmpty { found.append("no 'played \(g)' line") }
        }
        for m in batch {
            let id = "m\(m.index)"
            let skipped = o.log.contains("skipping \(id) (media/\(m.fileName)): ")
            // A few milliseconds of sound play between two vblanks: no vblank starts rendering them.
            let shorterThanAVblank = (o.durations[id] ?? 1) < 1.0 / 30
            if !started.contains(id) && !skipped && !shorterThanAVblank { found.append("\(id) neither played nor was logged as skipped") }
        }
        return found
    }

    @Test("0 crashes, 0 hangs, and the item after each bad one plays every time")
    func mutationsBetweenGoodItems() throws {
        let environment = ProcessInfo.processInfo.environment
        let seed = environment["VITRINE_MUTATION_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 1...999_999)
        let count = environment["VITRINE_MUTATIONS"].flatMap { Int($0) } ?? 300
        print("media mutations: seed \(seed) (VITRINE_MUTATION_SEED=\(seed) repeats it), \(count) mutations")
        let mutations = try MediaMutation.make(count: count, seed: seed, corpus: RealMedia.folder)
        let good = try Harness.colorClip("red", seconds: Self.goodSeconds)
        let root = try Harness.newFolder("mutations-\(seed)")
        let batches = stride(from: 0, to: mutations.count, by: Self.batchSize).map {
            Array(mutations[$0..<min($0 + Self.batchSize, mutations.count)])
        }
        // Two runs at a time: a run mostly waits (decoder set-up, the virtual clock's audio waits).
        let outcomes = Mutex([Int: Result<Outcome, Error>]())
        DispatchQueue.concurrentPerform(iterations: batches.count) { b in
            let r = Result { try Self.play(batches[b], in: root + "/batch\(b)", good: good) }
            outcomes.withLock { $0[b] = r }
        }
        var failures = 0, played = 0, skipped = 0
        for (b, batch) in batches.enumerated() {
            let dir = root + "/batch\(b)"
            let outcome = try outcomes.withLock { $0[b]! }.get()
            let found = Self.problems(outcome, batch)
            let started = Set(outcome.started)
            // A bad item can be "now playing" for an instant before its decoder fails: skipped wins.
            let skippedHere = batch.filter { outcome.log.contains("skipping m\($0.index) (media/\($0.fileName)): ") }
            skipped += skippedHere.count
            played += batch.filter { m in started.contains("m\(m.index)") && !skippedHere.contains { $0.index == m.index } }.count
            if found.isEmpty {
                try? FileManager.default.removeItem(atPath: dir)
                continue
            }
            failures += 1
            // Replays each mutation of the failed batch alone (good, bad, good) to name the culprits.
            var culprits: [String] = []
            for m in batch {
                let alone = try Self.play([m], in: dir + "-m\(m.index)", good: good)
                let why = Self.problems(alone, [m])
                if !why.isEmpty { culprits.append("\(m.description) [\(dir)-m\(m.index)]: \(why.joined(separator: "; "))") }
            }
            Issue.record("""
                batch \(b) (seed \(seed), mutations \(batch.first!.index)…\(batch.last!.index), files in \(dir)): \(found.joined(separator: "; "))
                alone: \(culprits.isEmpty ? "each plays cleanly between two good items" : culprits.joined(separator: "\n"))
                """)
        }
        print("media mutations: \(mutations.count) between good items: \(played) played, \(skipped) skipped with a reason, "
              + "\(mutations.count - played - skipped) under a vblank long; \(failures) of \(batches.count) runs failed")
    }
}
