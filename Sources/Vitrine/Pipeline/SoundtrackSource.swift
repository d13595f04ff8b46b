import Foundation
import SystemSupport
import Synchronization
import Media
import VitrineCore

/// The catalog's soundtrack being decoded on its own thread: a `SoundtrackReader` (looping at the
/// sample level) filling a bounded `SampleQueue` of interleaved S16 in the output format, so that
/// opening the file again at its loop point never runs on the audio thread.
///
/// A file that cannot be opened or decoded is logged once at error level, with its name and the
/// reason (`soundtrack media/music.mp3: …`); the queue then ends and the catalog plays without music.
/// Owns its thread: `stop()` (or the last reference going) closes the queue, which ends it.
final class SoundtrackSource: Sendable {
    let settings: Soundtrack
    /// The file's absolute path.
    let path: String
    /// Two seconds of the soundtrack, decoded ahead.
    let audio: SampleQueue
    private let format: AudioFormat
    private let log: Logger
    private let failure = Mutex<String?>(nil)

    /// - Parameters:
    ///   - settings: the manifest's `soundtrack`.
    ///   - path: its file, absolute (the catalog folder joined with `settings.src`).
    ///   - format: the output format the queue holds.
    init(settings: Soundtrack, path: String, format: AudioFormat, log: Logger) {
        self.settings = settings
        self.path = path
        self.format = format
        self.log = log
        audio = SampleQueue(channels: format.channels, capacityFrames: 2 * format.sampleRate)
    }

    deinit { audio.close() }

    /// Why the soundtrack stopped, once it failed.
    var failed: String? { failure.withLock { $0 } }

    func start() {
        let t = Thread { [self] in self.run() }
        t.name = "soundtrack"
        t.start()
    }

    /// Ends the decoder thread and frees the queue.
    func stop() { audio.close() }

    private func run() {
        do {
            let reader = try SoundtrackReader(path: path, format: format)
            log.info("soundtrack \(Timeline.displayName(settings.src)): playing under the catalog (volume \(settings.volume), \(settings.itemSound.rawValue) under items with sound)")
            // A tenth of a second at a time: small enough to stay ahead without holding the lock long.
            while try audio.push(reader.read(frames: max(1, format.sampleRate / 10))) {}
        } catch {
            let why = "soundtrack \(Timeline.displayName(settings.src)): \(error); the catalog plays without it"
            failure.withLock { $0 = why }
            if !audio.isClosed { log.error(why) }
            audio.finish()
        }
    }
}

/// The soundtrack as the catalog audio's producer mixes it (`Timeline.pullAudio`): the source, its
/// mixer, and a soundtrack waiting to take over after a catalog switch. Used by the one thread that
/// pulls the audio at a time, under `Timeline`'s lock for it.
struct SoundtrackBed {
    var source: SoundtrackSource?
    var mixer: SoundtrackMixer?
    /// The next catalog's soundtrack (`.some(nil)`: none), waiting for the old one to fade out.
    var pending: SoundtrackSource??
    /// Whether the soundtrack's decoder is waited for (`Timeline.soundtrackWaits`).
    var waits = false
    /// Whether the last block had an item with sound: kept while an item is still opening.
    var lastHadSound = false
    /// Whether the current source has given frames yet (it opens its file on its own thread).
    var flowing = false
    /// Soundtrack frames missing when mixed (its decoder was behind): silence instead.
    var underflowFrames = 0

    /// Moves to `next` at the start of a block. Settings that change only levels on the same file
    /// keep the music running, from the gain reached; another file (or none) fades the old one out
    /// first, then starts the new one, which fades in.
    mutating func adoptPending(format: AudioFormat) {
        guard let next = pending else { return }
        if let new = next, source?.path == new.path, source?.failed == nil {
            // The running source goes on (its thread and queue); the new one is never started.
            mixer = SoundtrackMixer(settings: new.settings, sampleRate: format.sampleRate, channels: format.channels,
                                    initialGain: mixer?.gain ?? .zero)
            pending = nil
            return
        }
        if var m = mixer, source != nil, m.gain.q16 > 0 {
            // Fade the old soundtrack out before the new one starts.
            m.enabled = false
            mixer = m
            return
        }
        source?.stop()
        source = next
        flowing = false
        mixer = next.map { SoundtrackMixer(settings: $0.settings, sampleRate: format.sampleRate, channels: format.channels) }
        next?.start()
        pending = nil
    }

    /// Mixes the soundtrack under `block` (interleaved S16 in the output format, the items' audio).
    /// - Parameters:
    ///   - itemHasSound: whether the block lies under an item with sound of its own, or in the
    ///     `fade` before one (so the music is down when the item's sound begins).
    ///   - wait: seconds to wait in all for soundtrack frames its decoder has not made yet (0 on a
    ///     real clock: what is missing is silence, counted in `underflowFrames`; a virtual clock
    ///     waits, so recordings are exact).
    /// - Returns: `block.count` samples.
    mutating func mix(_ block: [Int16], itemHasSound: Bool, wait: Double) -> [Int16] {
        guard var m = mixer, let source else { return block }
        var missing = 0
        var flowing = self.flowing
        let mixed = m.mix(item: block, itemHasSound: itemHasSound) { frames in
            var bed: [Int16] = []
            var got = 0
            let deadline = wait > 0 ? monotonicNow() + wait : 0
            repeat {
                let left = deadline - monotonicNow()
                got += source.audio.take(maxFrames: frames - got, into: &bed, timeout: got < frames && left > 0 ? min(left, 0.1) : 0)
            } while got < frames && monotonicNow() < deadline && source.failed == nil && !source.audio.isDrained
            if got > 0 { flowing = true }
            // Counted once the music has begun, and not after it failed.
            if flowing && source.failed == nil && !source.audio.isDrained { missing = frames - got }
            return bed
        }
        self.flowing = flowing
        underflowFrames += missing
        mixer = m
        return mixed
    }
}
