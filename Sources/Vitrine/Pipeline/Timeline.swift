import Foundation
import SystemSupport
import Synchronization
import Media
import VitrineCore

/// The running programme: items scheduled back to back on one catalog time line.
///
/// Catalog time is counted in output audio frames (`AudioFormat.sampleRate` per second) from the
/// start of the run, so item boundaries are exact sample positions and audio is continuous across
/// them. The current item ("entry") is followed by one prerolled entry as soon as the current one
/// has finished decoding — well before it finishes playing — whose start is where the current one
/// ends. Items come from `nextItem` (the player's queue).
///
/// Threads: entries are scheduled, started, retired and cancelled on the run loop's thread (checked in
/// debug builds); the audio consumer (the ALSA thread, or the run loop when headless) takes audio
/// through `pullAudio`. Everything they share is behind `state`; `nextItem` is called on the run
/// loop's thread with no lock held.
final class Timeline: @unchecked Sendable {  // nextItem, failureLimit, audioOnRunLoop: the run loop's alone (checked in debug builds); the rest is behind `state`
    /// One item on the time line, in three parts by the thread that owns each: what never changes,
    /// the audio consumer's `audioDebt`, and the presenter's `onScreen` bookkeeping.
    ///
    /// An entry that starts "now" (the first item, one after a failure or a skip, a `play`, a seek)
    /// *floats* until its decoder has something to show or play (`ItemSource.isReady`): its start is
    /// then pinned at the audio write head (`Timeline.maintain`), so the time its file took to open or
    /// seek is neither owed as dropped frames nor as skipped sound. A prerolled entry (it starts where
    /// the one before it ends, in the future) is pinned from the start.
    final class Entry: Sendable {
        let source: ItemSource
        private let firstFrame: Atomic<Int>
        private let pinned: Atomic<Bool>
        private let rate: Int
        /// First catalog audio frame of the item's time zero (may lie in the past after a seek). Set
        /// once, under the time line's lock on the run loop's thread, while the entry floats.
        var startFrame: Int { firstFrame.load(ordering: .acquiring) }
        /// Catalog seconds of the item's time zero.
        var start: Double { Double(startFrame) / Double(rate) }
        /// Whether its start waits for its decoder (see the type's description).
        var isFloating: Bool { !pinned.load(ordering: .acquiring) }
        /// The entry replaces the item's entry before a seek (same decoder, a new time zero).
        let isSeekRestart: Bool
        var item: PlaylistItem { source.item }
        /// Frames of silence that stood in for late audio; as many decoded frames are skipped when they
        /// arrive, so the item's sound stays in sync with its pictures. The audio consumer's alone.
        let audioDebt = Atomic<Int>(0)
        /// The presenter's bookkeeping, on the run loop's thread.
        let onScreen: OnScreen

        /// Catalog frames the entry lasts whatever its decoded length (a synchronised cycle's slot:
        /// shorter content holds its last picture and plays silence, longer is cut); nil: its length.
        let plannedFrames: Int?

        init(source: ItemSource, startFrame: Int, rate: Int, floating: Bool = false, isSeekRestart: Bool = false,
             plannedFrames: Int? = nil) {
            self.source = source
            self.plannedFrames = plannedFrames
            self.rate = rate
            firstFrame = Atomic(startFrame)
            pinned = Atomic(!floating)
            self.isSeekRestart = isSeekRestart
            onScreen = OnScreen(cues: CuePointScheduler(itemID: source.item.id, cuePoints: source.item.cuePoints))
        }
        /// Length in audio frames from time zero, once known.
        func lengthFrames(rate: Int) -> Int? {
            if let plannedFrames { return plannedFrames }
            return source.length.map { Int(($0 * Double(rate)).rounded()) }
        }
        /// Catalog frame of its first sample (`startFrame` plus the seek target).
        func audioStartFrame(rate: Int) -> Int { startFrame + Int(source.startAt * Double(rate)) }
        /// Pins a floating entry's sound to start at catalog frame `head` (with the time line's lock held).
        fileprivate func pin(at head: Int) {
            firstFrame.store(head - Int(source.startAt * Double(rate)), ordering: .releasing)
            pinned.store(true, ordering: .releasing)
        }
    }

    /// What the presenter records about an entry, confined to the run loop's thread: every access is
    /// checked in debug builds.
    final class OnScreen: @unchecked Sendable {  // confined to the thread that made it (the run loop's), checked on every access in debug builds
        /// Its first picture or sample was presented (`renderingStarted` was posted).
        @Confined var renderingStarted = false
        /// Video frames presented.
        @Confined var framesRendered = 0
        /// `durationChanged` was posted.
        @Confined var announcedLength = false
        /// Its cue points and the playhead they were passed at.
        @Confined var cues: CuePointScheduler
        /// Seconds its pictures are shown after their PTS: the phase, under one period, between its
        /// start and the vblank its first frame came on (0 until then, and after a seek).
        @Confined var pictureLag = 0.0
        /// The frames its seek passed over were counted.
        @Confined var seekSkipCounted = false
        /// A frame of it was taken for the screen.
        @Confined var picked = false
        init(cues: CuePointScheduler) { self.cues = cues }
    }

    /// What `maintain` changed, for the player's events.
    struct Changes {
        var failed: [(Entry, String)] = []
        /// Entries both consumers passed (they played to their end).
        var retired: [Entry] = []
        /// Entries cancelled for the slate.
        var cancelled: [Entry] = []
        var scheduled: [Entry] = []
    }

    struct State {
        var entries: [Entry] = []
        var generation = 0
        var consecutiveFailures = 0
        var failures: [String] = []
        var slateUntil: Double? = nil
        var slateMessage: SlateMessage? = nil
        var exhausted = false       // nextItem returned nil and nothing is scheduled
        /// Whether the slate came up (every item of a pass failed) in this run.
        var showedSlate = false
        var audioFrame = 0          // next catalog frame the audio consumer will take
        var underflowFrames = 0
        /// When each (file, reason) failure was last logged at error level, in catalog seconds.
        var reported: [String: Double] = [:]
        /// The last entry whose decoded audio was taken, and the catalog frame after its last sample.
        var lastAudio: (entry: Entry, end: Int)?
        /// Boundaries between two items with sound: the silence between their audio, in frames.
        var gaps: [AudioGap] = []
        /// Entries `pullAudio` scheduled (headless), for the player's events.
        var scheduledByAudio: [Entry] = []
        /// An item opened and decoding ahead of its entry (`warm`): the next entry for it takes it.
        var warm: ItemSource?
        /// A synchronised catalog's placement of items on the time line; nil: items float and last
        /// their decoded length.
        var sync: SyncPlacement?
    }

    /// The audio between two consecutive items that both have sound.
    struct AudioGap {
        var from: String
        var to: String
        /// Frames of output audio between the first item's last sample and the second's first.
        var frames: Int
        /// Whether the two sources differ in sample rate or channel count.
        var formatsDiffer: Bool
    }

    /// Takes the boundaries measured since the last call.
    func takeAudioGaps() -> [AudioGap] { state.withLock { s in defer { s.gaps.removeAll() }; return s.gaps } }

    let catalogDirectory: String
    let format: AudioFormat
    let untimed: Bool
    /// After this many failed items in a row the slate shows (the playlist's length: a whole pass).
    var failureLimit = 1
    private let log: Logger
    private let state = Mutex(State())
    /// The soundtrack under the catalog's audio, mixed by `pullAudio` on the thread that pulls.
    private let bed = Mutex(SoundtrackBed())
    private let confinement = ThreadConfinement()
    /// Told by every decoder of the time line, and when an entry is scheduled: what a presenter (or
    /// the audio consumer) waiting for decoded frames, samples or a new item waits on.
    let progress = DecoderProgress()
    private let nextItem: () -> PlaylistItem?
    /// Whether the queue may still hand out items after the last scheduled one (set by the player
    /// each vblank). When false, audio past the last item's end is not invented: `pullAudio` returns short.
    private let more = Atomic<Bool>(true)
    var moreExpected: Bool {
        get { more.load(ordering: .relaxed) }
        set { more.store(newValue, ordering: .relaxed) }
    }

    init(catalogDirectory: String, format: AudioFormat, untimed: Bool, log: Logger, nextItem: @escaping () -> PlaylistItem?) {
        self.catalogDirectory = catalogDirectory
        self.format = format
        self.untimed = untimed
        self.log = log
        self.nextItem = nextItem
    }

    deinit { state.withLock { s in s.entries.forEach { $0.source.cancel() } } }

    /// True when nothing is scheduled and the queue had nothing more.
    var isExhausted: Bool { state.withLock { $0.exhausted && $0.entries.isEmpty } }
    var slateMessage: SlateMessage? { state.withLock { $0.slateMessage } }
    /// Whether no item could play in a whole pass of the queue: the slate came up in this run, or the
    /// queue ended (a catalog that does not loop) with every item it gave failing.
    var foundNothingPlayable: Bool { state.withLock { $0.showedSlate || $0.exhausted && $0.entries.isEmpty } }
    /// The catalog time the slate (nothing could play) tries the items again at; nil with no slate.
    var slateRetryTime: Double? { state.withLock { $0.slateUntil } }
    var underflowFrames: Int { state.withLock { $0.underflowFrames } }
    var entries: [Entry] { state.withLock { $0.entries } }

    /// The item's file; a relative `src` as spelled on disk (NFC or NFD: `FileNames`).
    private func path(for item: PlaylistItem) -> String {
        item.src.hasPrefix("/") ? item.src : FileNames.path(item.src, in: catalogDirectory)
    }

    private func makeEntry(_ s: inout State, _ item: PlaylistItem, startFrame: Int, floating: Bool) -> Entry {
        if let sync = s.sync, let placed = floating ? sync.place(item, at: startFrame) : sync.follow(item, at: startFrame).map({ ($0, 0.0) }) {
            // Its slot in the cycle: pinned there (joined `startAt` seconds in), lasting the slot.
            let (start, startAt) = placed
            s.generation += 1
            let src = ItemSource(item: item, path: path(for: item), generation: s.generation, audioFormat: format,
                                 untimed: untimed, log: log, startAt: startAt, progress: progress)
            if let why = MediaPreflight.problem(at: src.path) { src.failWithoutDecoding(why) } else { src.start() }
            return Entry(source: src, startFrame: start, rate: format.sampleRate, floating: false,
                         plannedFrames: sync.frames(of: item, startingAt: start))
        }
        if let w = s.warm, w.item == item {
            s.warm = nil
            if !w.isFailed { return Entry(source: w, startFrame: startFrame, rate: format.sampleRate, floating: floating) }
            w.cancel()  // made afresh below, so its failure is reported as any entry's
        }
        s.generation += 1
        let src = ItemSource(item: item, path: path(for: item), generation: s.generation, audioFormat: format,
                             untimed: untimed, log: log, progress: progress)
        // A file that is missing, empty or not a regular file fails here, with no decoder thread, so
        // the next item is scheduled in the same call.
        if let why = MediaPreflight.problem(at: src.path) { src.failWithoutDecoding(why) } else { src.start() }
        return Entry(source: src, startFrame: startFrame, rate: format.sampleRate, floating: floating)
    }

    /// Pins floating entries whose decoder is ready at the audio write head (`Entry`), with the lock held.
    private func pinReady(_ s: inout State, position: Double) {
        for e in s.entries where e.isFloating && e.source.isReady { e.pin(at: startFrameNow(s, position: position)) }
    }

    /// Pins the floating entries whose decoder is ready (the first item, before the clock starts).
    func pinReadyEntries(position: Double) {
        confinement.check()
        state.withLock { pinReady(&$0, position: position) }
    }

    /// Where a new item starts when it replaces what plays: at the audio write head (audio already
    /// handed to the device plays out first, so sound and picture stay together).
    private func startFrameNow(_ s: State, position: Double) -> Int {
        max(Int(position * Double(format.sampleRate)), s.audioFrame)
    }

    /// Cancels everything scheduled and starts `item` now (its start floats until its decoder is ready).
    /// Returns the cancelled entries and the new one.
    @discardableResult
    func start(_ item: PlaylistItem, position: Double) -> (cancelled: [Entry], started: Entry) {
        state.withLock { s in
            let cancelled = s.entries
            cancelled.forEach { $0.source.cancel() }
            let e = makeEntry(&s, item, startFrame: startFrameNow(s, position: position), floating: true)
            s.entries = [e]
            s.exhausted = false
            return (cancelled, e)
        }
    }

    /// Seeks `entry`'s decoder to item time `time` seconds (`ItemSource.seek(to:)`: no new decoder, no
    /// reopen) and replaces the entry with one whose time zero puts `time` at the audio write head,
    /// floating until the decoder has the frame at `time`. Every other entry (a prerolled next item)
    /// is cancelled. Nil when `entry` is no longer on the time line.
    func seek(_ entry: Entry, to time: Double, position: Double) -> (cancelled: [Entry], started: Entry)? {
        confinement.check()
        return state.withLock { s in
            guard s.entries.contains(where: { $0 === entry }) else { return nil }
            let cancelled = s.entries.filter { $0 !== entry }
            cancelled.forEach { $0.source.cancel() }
            entry.source.seek(to: time)
            let head = startFrameNow(s, position: position)
            let e = Entry(source: entry.source, startFrame: head - Int(max(0, time) * Double(format.sampleRate)),
                          rate: format.sampleRate, floating: true, isSeekRestart: true)
            s.entries = [e]
            s.exhausted = false
            if s.lastAudio?.entry === entry { s.lastAudio = nil }
            return (cancelled, e)
        }
    }

    /// Opens `item` and starts decoding it before it is scheduled (a schedule edge a second away),
    /// so that the entry made for it next (`start`, or a scheduled one) begins with its first
    /// pictures and sound already decoded. Replaces (cancels) an item warmed before and not used.
    func warm(_ item: PlaylistItem) {
        confinement.check()
        state.withLock { s in
            if let w = s.warm, w.item == item { return }
            s.warm?.cancel()
            s.generation += 1
            let src = ItemSource(item: item, path: path(for: item), generation: s.generation, audioFormat: format,
                                 untimed: untimed, log: log, progress: progress)
            if let why = MediaPreflight.problem(at: src.path) { src.failWithoutDecoding(why) } else { src.start() }
            s.warm = src
        }
    }

    /// Cancels everything scheduled. - Returns: the entries cancelled.
    @discardableResult
    func cancelAll() -> [Entry] {
        state.withLock { s in
            let c = s.entries
            c.forEach { $0.source.cancel() }
            s.entries = []
            return c
        }
    }

    /// Drops the prerolled entry (the queue changed under it) and returns its item.
    func dropPrerolled() -> PlaylistItem? {
        state.withLock { s in
            guard s.entries.count > 1 else { return nil }
            let e = s.entries.removeLast()
            e.source.cancel()
            return e.item
        }
    }

    /// Re-anchors the prerolled entry to start now (a skip), cancelling the current one.
    func promotePrerolled(position: Double) -> (cancelled: Entry, started: Entry)? {
        state.withLock { s in
            guard s.entries.count > 1 else { return nil }
            let old = s.entries.removeFirst()
            old.source.cancel()
            let next = s.entries.removeFirst()
            let e = Entry(source: next.source, startFrame: startFrameNow(s, position: position), rate: format.sampleRate, floating: true)
            s.entries = [e]
            pinReady(&s, position: position)
            return (old, e)
        }
    }

    /// Schedules and prerolls items so that catalog time `position` (seconds) is covered, retires
    /// entries that ended before both `position` and the audio consumer, and runs the slate when no
    /// item can play. Called by the presenter once per vblank.
    func maintain(position: Double) -> Changes {
        confinement.check()
        let posFrame = Int(position * Double(format.sampleRate))
        var changes = Changes()
        var lines: [(LogRecord.Level, String, [String: String])] = []
        let scheduling = state.withLock { s -> Bool in
            if let until = s.slateUntil {
                if position < until { return false }
                s.slateUntil = nil
                s.slateMessage = nil
                s.consecutiveFailures = 0
                s.failures = []
                s.exhausted = false
                s.audioFrame = max(s.audioFrame, posFrame)
            }
            // Failed items: report, drop, and count toward the slate. The state is read once per
            // entry: a decoder thread may fail between two reads.
            for e in s.entries { if case .failed(let why) = e.source.state { changes.failed.append((e, why)) } }
            for (e, why) in changes.failed {
                s.failures.append("\(Self.displayName(e.item.src)): \(why)")
                // A file that stays broken is reported at error level once every 10 minutes, not on
                // every pass of the loop.
                let key = e.source.path + "\u{0}" + why
                if let last = s.reported[key], position - last < 600 {
                    lines.append((.debug, "skipping \(e.item.id) (\(e.item.src)): \(why)", ["file": e.source.path]))
                } else {
                    s.reported[key] = position
                    lines.append((.error, "skipping \(e.item.id) (\(e.item.src)): \(why)", ["file": e.source.path]))
                }
                s.consecutiveFailures += 1
                e.source.cancel()
            }
            s.entries.removeAll { e in changes.failed.contains { $0.0 === e } }
            if s.consecutiveFailures >= max(1, failureLimit) {
                s.showedSlate = true
                s.slateMessage = .nothingPlayable(s.failures)
                s.slateUntil = position + 10
                s.entries.forEach { $0.source.cancel() }
                changes.cancelled += s.entries
                s.entries.removeAll()
                lines.append((.error, "no playable item; showing the slate and checking again in 10 s", [:]))
                return false
            }
            // Entries whose decoder became ready start now (they floated while it opened or seeked).
            pinReady(&s, position: position)
            // Retire entries that both consumers have passed. One whose decoder failed since the scan
            // above (its length reads 0) is left for the next call to report: retired, its failure
            // would be lost (neither played nor skipped).
            let consumed = min(posFrame, s.audioFrame)
            while let first = s.entries.first, !first.isFloating, !first.source.isFailed,
                  let len = first.lengthFrames(rate: format.sampleRate), first.startFrame + len <= consumed {
                let e = s.entries.removeFirst()
                e.source.cancel()
                changes.retired.append(e)
            }
            // A playable item resets the failure count.
            if let first = s.entries.first, first.source.decodedVideoFrames > 0 || first.source.hasAudio {
                s.consecutiveFailures = 0
            }
            return true
        }
        for (level, message, metadata) in lines { log.log(level, message, metadata) }
        // Schedule: the playing item plus one prerolled item once the playing one finished decoding.
        if scheduling { changes.scheduled += schedule(position: position) }
        return changes
    }

    /// Adds entries until the playing one has a prerolled successor (once its length is known). The
    /// queue (`nextItem`) is asked with no lock held.
    ///
    /// A failed entry takes no time: the item after it starts where it would have, in the same call
    /// (a missing file costs no vblank). Failed entries stay in `entries` until `maintain` reports
    /// them, and scheduling stops once `failureLimit` items in a row have failed (reported or not), so
    /// a catalog of missing files reaches the slate instead of scheduling them forever. An entry whose
    /// start is not in the future floats (see `Entry`).
    private func schedule(position: Double) -> [Entry] {
        confinement.check()
        var scheduled: [Entry] = []
        while true {
            // Whether an entry is wanted now: fewer than two that can play, fewer than `failureLimit`
            // failures in a row, and the last one's end known.
            let wanted = state.withLock { s -> Int? in
                guard s.entries.filter({ !$0.source.isFailed }).count < 2 else { return nil }
                let failedInARow = s.consecutiveFailures + s.entries.reversed().prefix { $0.source.isFailed }.count
                guard failedInARow < max(1, failureLimit) else { return nil }
                guard let last = s.entries.last else { return 0 }
                if last.source.isFailed { return s.entries.count }
                return last.isFloating || last.lengthFrames(rate: format.sampleRate) == nil ? nil : s.entries.count
            }
            guard let count = wanted else { break }
            let item = nextItem()
            let added = state.withLock { s -> Entry? in
                // Entries change on this thread only, so they are as they were.
                precondition(s.entries.count == count, "the time line changed while its queue was asked")
                guard let item else {
                    s.exhausted = true
                    return nil
                }
                s.exhausted = false
                let now = startFrameNow(s, position: position)
                var startFrame = now
                if let last = s.entries.last {
                    startFrame = last.source.isFailed && last.plannedFrames == nil ? last.startFrame
                        : last.startFrame + last.lengthFrames(rate: format.sampleRate)!
                }
                // Prerolled: it starts where the one before ends, in the future. Otherwise it floats
                // (a synchronised catalog places it in its slot instead).
                let e = s.sync != nil
                    ? makeEntry(&s, item, startFrame: startFrame, floating: startFrame <= now)
                    : makeEntry(&s, item, startFrame: max(startFrame, now), floating: startFrame <= now)
                s.entries.append(e)
                return e
            }
            guard let added else { break }
            scheduled.append(added)
        }
        if !scheduled.isEmpty { progress.notify() }
        return scheduled
    }

    /// Whether the audio consumer runs on the run loop's thread (headless), so `pullAudio` may itself
    /// schedule the next item when it reaches the end of the last one before the presenter did.
    var audioOnRunLoop = false

    /// Entries `pullAudio` scheduled, for the player's events.
    func takeScheduledByAudio() -> [Entry] { state.withLock { s in defer { s.scheduledByAudio.removeAll() }; return s.scheduledByAudio } }

    /// The entry that covers catalog time `position` seconds, if any.
    func entry(at position: Double) -> Entry? {
        let f = Int(position * Double(format.sampleRate))
        return state.withLock { s in
            for e in s.entries {
                // A failed entry takes no time; a floating one covers "now" until it is pinned.
                if e.source.isFailed { continue }
                if e.isFloating { return e }
                if f < e.audioStartFrame(rate: format.sampleRate) { return nil }
                if let len = e.lengthFrames(rate: format.sampleRate), f >= e.startFrame + len { continue }
                return e
            }
            return nil
        }
    }

    /// Plays `soundtrack` (nil: none) under the catalog's audio from the next pull on: the same file
    /// with other levels goes on from where it is; another file (or none) follows once the one
    /// playing has faded out, and fades in. Any thread.
    /// - Parameter directory: the folder a relative `soundtrack.src` is in (the catalog's).
    func setSoundtrack(_ soundtrack: Soundtrack?, directory: String) {
        let source = soundtrack.map { t in
            SoundtrackSource(settings: t, path: t.src.hasPrefix("/") ? t.src : (directory as NSString).appendingPathComponent(t.src),
                             format: format, log: log)
        }
        bed.withLock { $0.pending = .some(source) }
    }

    /// Soundtrack frames its decoder had not ready when mixed (silence instead).
    var soundtrackUnderflowFrames: Int { bed.withLock { $0.underflowFrames } }

    /// Stops the soundtrack's decoder (the run ends).
    func stopSoundtrack() {
        bed.withLock { b in b.source?.stop(); b.source = nil; b.mixer = nil; b.pending = nil }
    }

    /// Produces exactly `frames` frames of catalog audio (interleaved S16, `format.channels` channels)
    /// from the current position on: item audio, silence where an item has none, and silence while the
    /// slate shows. Waits up to `timeout` seconds for a decoder that is behind, then fills with silence
    /// and counts the gap in `underflowFrames`. Returns fewer frames only when the queue is exhausted.
    /// The soundtrack, if any, is mixed under it (`SoundtrackMixer`): ducked (or paused) from `fade`
    /// before an item with sound of its own until its end.
    func pullAudio(frames: Int, timeout: Double) -> [Int16] {
        let out = pullItemAudio(frames: frames, timeout: timeout)
        return bed.withLock { b -> [Int16] in
            b.adoptPending(format: format)
            guard b.mixer != nil else { return out.samples }
            var mixed: [Int16] = []
            mixed.reserveCapacity(out.samples.count)
            var at = 0
            for segment in out.segments {
                // The music goes down `fade` before an item with sound: from `duckFrom` on.
                let lead = segment.sound == false ? segment.duckFrom.map { max(0, min(segment.frames, $0 - segment.start)) } ?? segment.frames : segment.frames
                for (n, sound) in [(lead, segment.sound), (segment.frames - lead, true)] where n > 0 {
                    let has = sound ?? b.lastHadSound
                    b.lastHadSound = has
                    let count = n * format.channels
                    mixed += b.mix(Array(out.samples[at..<(at + count)]), itemHasSound: has, wait: b.waits ? timeout : 0)
                    at += count
                }
            }
            return mixed
        }
    }

    /// Whether the soundtrack's decoder is waited for (a virtual clock, which must be exact) rather
    /// than its missing frames played as silence (a real clock). Set by the presenter.
    var soundtrackWaits: Bool {
        get { bed.withLock { $0.waits } }
        set { bed.withLock { $0.waits = newValue } }
    }

    /// A block of `pullItemAudio`: its first catalog frame and its frames; whether an item with
    /// sound covers it (nil: not known yet, an item opening); and the catalog frame from which the
    /// soundtrack goes down for the next item with sound (its start minus the fade), if one is scheduled.
    private struct Segment {
        var start: Int
        var frames: Int
        var sound: Bool?
        var duckFrom: Int?
    }

    /// The items' audio for `pullAudio`, with the blocks it is made of.
    private func pullItemAudio(frames: Int, timeout: Double) -> (samples: [Int16], segments: [Segment]) {
        var segments: [Segment] = []
        // The fade of the soundtrack playing, in output frames (0: none), and whether to wait for it.
        let (lead, waits) = bed.withLock { ($0.mixer?.fadeFrames ?? 0, $0.waits) }
        let exact = lead > 0 && waits
        var out: [Int16] = []
        out.reserveCapacity(frames * format.channels)
        var remaining = frames
        var waited = 0.0
        while remaining > 0 {
            let generation = progress.generation
            let (pos, entry, end, atEnd, floating, duckFrom, opening) = state.withLock { s -> (Int, Entry?, Int?, Bool, Bool, Int?, Bool) in
                let p = s.audioFrame
                // An item still opening whose fade before it may begin in this block: whether it has
                // sound is not known yet.
                let opening = exact && s.entries.contains { e in
                    !e.source.isFailed && !e.isFloating && e.source.state == .opening
                        && e.audioStartFrame(rate: self.format.sampleRate) - lead < p + remaining
                }
                // The next item with sound: the soundtrack goes down `fade` before it starts.
                let duckFrom = lead == 0 ? nil : s.entries.lazy.filter { e in !e.source.isFailed && !e.isFloating && e.source.hasAudio }
                    .map { $0.audioStartFrame(rate: self.format.sampleRate) - lead }.first { $0 + lead > p }
                let (pos, entry, end, atEnd, floating) = { () -> (Int, Entry?, Int?, Bool, Bool) in
                    for e in s.entries {
                        // A failed entry takes no time; a floating one is silent until it is pinned.
                        if e.source.isFailed { continue }
                        if e.isFloating { return (p, nil, nil, false, true) }
                        let audioStart = e.audioStartFrame(rate: format.sampleRate)
                        if p < audioStart { return (p, nil, audioStart, false, false) }
                        let len = e.lengthFrames(rate: format.sampleRate)
                        if let len, p >= e.startFrame + len { continue }
                        return (p, e, len.map { e.startFrame + $0 }, false, false)
                    }
                    return (p, nil, nil, s.exhausted || !moreExpected, false)
                }()
                return (pos, entry, end, atEnd, floating, duckFrom, opening)
            }
            if opening && waited < timeout {
                // A virtual clock is exact: the music goes down before the item's sound whatever the
                // decoder's speed. (A real clock prerolls the next item seconds ahead.)
                // The decoder tells `progress` when it has opened its file.
                let start = monotonicNow()
                progress.wait(after: generation, timeout: min(0.1, timeout - waited))
                waited += max(monotonicNow() - start, 0.001)
                continue
            }
            var n = 0
            let sound: Bool? = floating ? nil : entry?.source.hasAudio ?? false
            if floating {
                // An item opening or seeking: silence (not an underflow) until the run loop pins its
                // start here, at the write head, once its decoder is ready.
                n = remaining
                out.append(contentsOf: repeatElement(0, count: n * format.channels))
            } else if let entry {
                let limit = end.map { min(remaining, $0 - pos) } ?? remaining
                let wait = waited < timeout ? min(0.005, timeout - waited) : 0
                let mayHaveAudio = entry.source.hasAudio || entry.source.state == .opening
                let debt = entry.audioDebt.load(ordering: .relaxed)
                if debt > 0 {
                    let before = entry.source.audio.frames
                    entry.source.audio.discard(frames: debt)
                    entry.audioDebt.subtract(before - entry.source.audio.frames, ordering: .relaxed)
                }
                n = entry.source.audio.take(maxFrames: limit, into: &out, timeout: mayHaveAudio ? wait : 0)
                if n > 0 { noteAudio(entry, at: pos, frames: n) }
                if n == 0 && !mayHaveAudio {
                    // An item with no audio stream plays silence; never wait on its decoder, which may be
                    // blocked on a full video queue that only this clock drains.
                    n = limit
                    out.append(contentsOf: repeatElement(0, count: n * format.channels))
                }
                if n == 0 && entry.source.audioEndedBefore(Double(pos - entry.startFrame) / Double(format.sampleRate)) {
                    // The item's sound ended before its pictures: silence, not an underflow.
                    n = min(limit, format.sampleRate / 100)
                    out.append(contentsOf: repeatElement(0, count: n * format.channels))
                }
                if n == 0 {
                    if let end, entry.source.audio.isDrained {
                        // Item audio is over: silence up to the item's end.
                        n = min(remaining, end - pos)
                        out.append(contentsOf: repeatElement(0, count: n * format.channels))
                    } else if waited >= timeout {
                        n = min(remaining, format.sampleRate / 100)
                        if let end { n = min(n, end - pos) }
                        out.append(contentsOf: repeatElement(0, count: n * format.channels))
                        entry.audioDebt.add(n, ordering: .relaxed)
                        state.withLock { $0.underflowFrames += n }
                    } else {
                        waited += wait
                        if wait == 0 { waited = timeout }
                        continue
                    }
                }
            } else {
                // The queue is exhausted: return what there is; the caller stops.
                if atEnd && end == nil { break }
                // Past the last scheduled item while more may come: on the run loop, schedule it now;
                // otherwise give the presenter a moment before filling with silence (a gap).
                if end == nil && audioOnRunLoop && slateMessage == nil {
                    let added = schedule(position: Double(pos) / Double(format.sampleRate))
                    if !added.isEmpty {
                        state.withLock { $0.scheduledByAudio += added }
                        continue
                    }
                }
                if end == nil && waited < timeout && slateMessage == nil {
                    // On the run loop nobody else schedules: waiting cannot help. Elsewhere, wait for the
                    // presenter to schedule the next item (it tells `progress`).
                    if audioOnRunLoop { waited = timeout; continue }
                    let start = monotonicNow()
                    progress.wait(after: generation, timeout: timeout - waited)
                    waited += max(monotonicNow() - start, 0.001)
                    continue
                }
                if end == nil && slateMessage == nil && !isExhausted {
                    let n = min(remaining, format.sampleRate / 100)
                    out.append(contentsOf: repeatElement(0, count: n * format.channels))
                    state.withLock { $0.underflowFrames += n; $0.audioFrame += n }
                    remaining -= n
                    segments.append(Segment(start: pos, frames: n, sound: sound, duckFrom: duckFrom))
                    continue
                }
                n = min(remaining, end.map { max(1, $0 - pos) } ?? remaining)
                out.append(contentsOf: repeatElement(0, count: n * format.channels))
            }
            remaining -= n
            if n > 0 { segments.append(Segment(start: pos, frames: n, sound: sound, duckFrom: duckFrom)) }
            state.withLock { $0.audioFrame += n }
        }
        return (out, segments)
    }

    /// Records where an item's decoded audio was taken, measuring the gap when a new item's sound begins.
    private func noteAudio(_ entry: Entry, at pos: Int, frames: Int) {
        state.withLock { s in
            if let last = s.lastAudio, last.entry !== entry, last.entry.source.generation < entry.source.generation {
                let a = last.entry.source.audioInfo, b = entry.source.audioInfo
                s.gaps.append(AudioGap(from: last.entry.item.id, to: entry.item.id, frames: max(0, pos - last.end),
                                       formatsDiffer: a?.sampleRate != b?.sampleRate || a?.channels != b?.channels))
                if s.gaps.count > 64 { s.gaps.removeFirst() }
            }
            s.lastAudio = (entry, pos + frames)
        }
    }

    /// A file as the slate names it: `src` as the manifest wrote it; for an imported catalog's
    /// absolute path, the part after its `gen.<N>/` folder.
    static func displayName(_ src: String) -> String {
        guard src.hasPrefix("/") else { return src }
        let parts = src.split(separator: "/", omittingEmptySubsequences: false)
        if let gen = parts.lastIndex(where: { $0.hasPrefix("gen.") && $0.dropFirst(4).allSatisfy(\.isNumber) && $0.count > 4 }),
           gen + 1 < parts.count {
            return parts[(gen + 1)...].joined(separator: "/")
        }
        return src
    }

    /// Next catalog audio frame to be produced.
    var audioPosition: Int { state.withLock { $0.audioFrame } }

    /// A synchronised catalog's placement (`SyncPlacement`): every entry made from now on is pinned
    /// in its slot of the cycle. Set before the first item, on the run loop's thread.
    func setSync(_ placement: SyncPlacement?) {
        confinement.check()
        state.withLock { $0.sync = placement }
    }

    /// Moves the audio consumer on to catalog frame `frame` without taking audio (catalog time
    /// started on the wall clock, not at 0); no effect when it is there already.
    func advanceAudio(to frame: Int) {
        state.withLock { $0.audioFrame = max($0.audioFrame, frame) }
    }

    /// Skips `frames` catalog frames of audio (the sound device fell behind the wall clock): the
    /// items' decoded samples for them are discarded. Called by the audio consumer.
    func skipAudio(frames: Int) {
        guard frames > 0 else { return }
        _ = pullAudio(frames: frames, timeout: 0)
    }

    /// Stops every decoder.
    func shutdown() {
        state.withLock { s in
            s.entries.forEach { $0.source.cancel() }
            s.entries.removeAll()
            s.warm?.cancel()
            s.warm = nil
            s.exhausted = true
        }
    }
}
