import Foundation
import Synchronization
import Media
import VitrineCore

/// The running programme: playlist items scheduled back to back on one catalog time line.
///
/// Catalog time is counted in output audio frames (`AudioFormat.sampleRate` per second) from the
/// start of the run, so item boundaries are exact sample positions and audio is continuous across
/// them. Each scheduled item ("entry") starts where the previous one ended; the next item's decoder
/// is started (prerolled) as soon as the current one has finished decoding, which is well before
/// the current one finishes playing.
final class Timeline: @unchecked Sendable {
    final class Entry: @unchecked Sendable {
        let source: ItemSource
        let index: Int
        /// First catalog audio frame of the item.
        let startFrame: Int
        /// Wall seconds: catalog start time.
        let start: Double
        init(source: ItemSource, index: Int, startFrame: Int, rate: Int) {
            self.source = source; self.index = index; self.startFrame = startFrame
            self.start = Double(startFrame) / Double(rate)
        }
        /// Length in audio frames once known.
        func lengthFrames(rate: Int) -> Int? { source.length.map { Int(($0 * Double(rate)).rounded()) } }
    }

    struct State {
        var entries: [Entry] = []
        var nextIndex = 0
        var generation = 0
        var consecutiveFailures = 0
        var failures: [String] = []
        var slateUntil: Double? = nil
        var slateMessage: String? = nil
        var finished = false
        var audioFrame = 0          // next catalog frame the audio consumer will take
        var underflowFrames = 0
    }

    let playlist: [PlaylistItem]
    let catalogDirectory: String
    let loop: Bool
    let format: AudioFormat
    let untimed: Bool
    private let log: Logger
    private let state = Mutex(State())
    /// Called once per item when it starts playing (index, id).
    var onItemStart: (@Sendable (Int, String) -> Void)?

    init(playlist: [PlaylistItem], catalogDirectory: String, loop: Bool, format: AudioFormat, untimed: Bool, log: Logger) {
        self.playlist = playlist
        self.catalogDirectory = catalogDirectory
        self.loop = loop
        self.format = format
        self.untimed = untimed
        self.log = log
    }

    deinit { state.withLock { s in s.entries.forEach { $0.source.cancel() } } }

    var isFinished: Bool { state.withLock { $0.finished } }
    var slateMessage: String? { state.withLock { $0.slateMessage } }
    var underflowFrames: Int { state.withLock { $0.underflowFrames } }

    private func path(for item: PlaylistItem) -> String {
        item.src.hasPrefix("/") ? item.src : (catalogDirectory as NSString).appendingPathComponent(item.src)
    }

    /// Schedules and prerolls items so that catalog time `position` (seconds) is covered, retires
    /// entries that ended before both `position` and the audio consumer, and runs the slate when no item
    /// can play. Called by the presenter once per vblank.
    func maintain(position: Double) {
        let posFrame = Int(position * Double(format.sampleRate))
        var started: [(Int, String)] = []
        state.withLock { s in
            if s.finished { return }
            if let until = s.slateUntil {
                if position < until { return }
                s.slateUntil = nil
                s.slateMessage = nil
                s.consecutiveFailures = 0
                s.failures = []
                s.audioFrame = max(s.audioFrame, posFrame)
            }
            // Failed items: log once, drop, and count toward the slate.
            // (The state is read once per entry: a decoder thread may fail between two reads.)
            var failed: [(Entry, String)] = []
            for e in s.entries { if case .failed(let why) = e.source.state { failed.append((e, why)) } }
            for (e, why) in failed {
                s.failures.append("\(e.source.item.id): \(why)")
                log.error("skipping \(e.source.item.id) (\(e.source.item.src)): \(why)", ["file": e.source.path])
                s.consecutiveFailures += 1
                e.source.cancel()
            }
            s.entries.removeAll { e in failed.contains { $0.0 === e } }
            if s.consecutiveFailures >= max(1, playlist.count) {
                s.slateMessage = "Nothing in this catalog can play.\n" + s.failures.suffix(6).joined(separator: "\n")
                s.slateUntil = position + 10
                s.entries.forEach { $0.source.cancel() }
                s.entries.removeAll()
                log.error("no playable item; showing the slate and checking again in 10 s")
                return
            }
            // Retire entries that both consumers have passed.
            let consumed = min(posFrame, s.audioFrame)
            while let first = s.entries.first, let len = first.lengthFrames(rate: format.sampleRate),
                  first.startFrame + len <= consumed {
                s.entries.removeFirst().source.cancel()
            }
            if s.entries.isEmpty && !loop && s.nextIndex >= playlist.count { s.finished = true; return }
            // Schedule: the playing item plus one prerolled item once the playing one finished decoding.
            while s.entries.count < 2 || (s.entries.count < 3 && s.entries.last!.source.length == 0) {
                let startFrame: Int
                if let last = s.entries.last {
                    guard let len = last.lengthFrames(rate: format.sampleRate) else { break }
                    startFrame = last.startFrame + len
                } else {
                    startFrame = max(posFrame, s.audioFrame)
                }
                if s.nextIndex >= playlist.count {
                    if !loop || playlist.isEmpty { break }
                    s.nextIndex = 0
                }
                let item = playlist[s.nextIndex]
                s.generation += 1
                let src = ItemSource(item: item, path: path(for: item), generation: s.generation,
                                     audioFormat: format, untimed: untimed, log: log)
                src.start()
                s.entries.append(Entry(source: src, index: s.nextIndex, startFrame: startFrame, rate: format.sampleRate))
                started.append((s.nextIndex, item.id))
                s.nextIndex += 1
            }
            // A playable item resets the failure count.
            if let first = s.entries.first, first.source.state == .finished || first.source.state == .playing {
                if first.source.decodedVideoFrames > 0 || first.source.hasAudio { s.consecutiveFailures = 0 }
            }
        }
        _ = started
    }

    /// The entry that covers catalog time `position` seconds, if any.
    func entry(at position: Double) -> Entry? {
        let f = Int(position * Double(format.sampleRate))
        return state.withLock { s in
            for e in s.entries {
                if f < e.startFrame { return nil }
                if let len = e.lengthFrames(rate: format.sampleRate), f >= e.startFrame + len { continue }
                return e
            }
            return nil
        }
    }

    /// The entry after `entry`, if scheduled.
    func entry(after entry: Entry) -> Entry? {
        state.withLock { s in
            guard let i = s.entries.firstIndex(where: { $0 === entry }), i + 1 < s.entries.count else { return nil }
            return s.entries[i + 1]
        }
    }

    /// Produces exactly `frames` frames of catalog audio (interleaved S16, `format.channels` channels)
    /// from the current position on: item audio, silence where an item has none, and silence while the
    /// slate shows. Waits up to `timeout` seconds for a decoder that is behind, then fills with silence
    /// and counts the gap in `underflowFrames`.
    func pullAudio(frames: Int, timeout: Double) -> [Int16] {
        var out: [Int16] = []
        out.reserveCapacity(frames * format.channels)
        var remaining = frames
        var waited = 0.0
        while remaining > 0 {
            let (pos, entry, end, atEnd) = state.withLock { s -> (Int, Entry?, Int?, Bool) in
                let p = s.audioFrame
                for e in s.entries {
                    if p < e.startFrame { return (p, nil, e.startFrame, false) }
                    let len = e.lengthFrames(rate: format.sampleRate)
                    if let len, p >= e.startFrame + len { continue }
                    return (p, e, len.map { e.startFrame + $0 }, false)
                }
                return (p, nil, nil, s.finished || (!loop && s.nextIndex >= playlist.count))
            }
            var n = 0
            if let entry {
                let limit = end.map { min(remaining, $0 - pos) } ?? remaining
                let wait = waited < timeout ? min(0.005, timeout - waited) : 0
                let mayHaveAudio = entry.source.hasAudio || entry.source.state == .opening
                n = entry.source.audio.take(maxFrames: limit, into: &out, timeout: mayHaveAudio ? wait : 0)
                if n == 0 && !mayHaveAudio {
                    // An item with no audio stream plays silence; never wait on its decoder, which may be
                    // blocked on a full video queue that only this clock drains.
                    n = limit
                    out.append(contentsOf: repeatElement(0, count: n * format.channels))
                }
                if n == 0 {
                    if let end, entry.source.audio.isDrained || !entry.source.hasAudio && entry.source.state != .opening {
                        // Item audio is over (or absent): silence up to the item's end.
                        n = min(remaining, end - pos)
                        out.append(contentsOf: repeatElement(0, count: n * format.channels))
                    } else if waited >= timeout {
                        n = min(remaining, format.sampleRate / 100)
                        out.append(contentsOf: repeatElement(0, count: n * format.channels))
                        state.withLock { $0.underflowFrames += n }
                    } else {
                        waited += wait
                        if wait == 0 { waited = timeout }
                        continue
                    }
                }
            } else {
                // The playlist ended (no loop): return what there is; the caller stops.
                if atEnd { break }
                // Nothing scheduled here (slate, start-up): silence.
                if waited < timeout && untimed && !isFinished && slateMessage == nil {
                    // Untimed runs wait for the scheduler instead of inventing silence.
                    Thread.sleep(forTimeInterval: 0.001); waited += 0.001
                    continue
                }
                n = min(remaining, end.map { max(1, $0 - pos) } ?? remaining)
                out.append(contentsOf: repeatElement(0, count: n * format.channels))
            }
            remaining -= n
            state.withLock { $0.audioFrame += n }
        }
        return out
    }

    /// Next catalog audio frame to be produced.
    var audioPosition: Int { state.withLock { $0.audioFrame } }

    /// Stops every decoder.
    func shutdown() {
        state.withLock { s in
            s.entries.forEach { $0.source.cancel() }
            s.entries.removeAll()
            s.finished = true
        }
    }
}
