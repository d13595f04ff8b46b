import Foundation
import FileIO
import Synchronization
import Media
import VitrineCore

/// The decoded audio format every item is converted to: interleaved S16 at `sampleRate` Hz.
public struct AudioFormat: Sendable, Equatable, CustomStringConvertible {
    public var sampleRate: Int
    public var channels: Int
    public init(sampleRate: Int, channels: Int) { self.sampleRate = sampleRate; self.channels = channels }
    public var description: String { "\(sampleRate) Hz, \(channels) ch, s16" }
}

/// One playlist item being decoded on its own thread into bounded queues: video frames (native
/// pixel format, converted at presentation) and audio samples already resampled to the output format.
///
/// Times inside a source are seconds from the item's start. Audio is made contiguous from `startAt`:
/// a first audio frame stamped after it is preceded by silence, one stamped before it is trimmed.
///
/// A seek (`seek(to:)`) is carried out inside the running decoder, as ffplay's `seek_req` on its read
/// thread: both queues are flushed (a push of the stream before the seek is refused: each seek starts
/// a new queue epoch), the decoder calls `MediaFile.seek(to:)`, and decodes on from the frame on
/// screen at the target. A decoder that reached the end of its file waits for a seek until it is
/// cancelled, so an item can be seeked to the end of its life.
final class ItemSource: Sendable {
    enum State: Sendable, Equatable { case opening, playing, finished, failed(String) }

    let item: PlaylistItem
    let path: String
    let generation: Int
    /// The decoded pictures and sound, sharing one condition: a video push that waits for the audio to
    /// run short (`FrameQueue.Growth`) is woken by the audio consumer.
    let video: FrameQueue<VideoFrame>
    let audio: SampleQueue
    /// The queues' condition: a decoder at the end of its file waits on it for a seek.
    private let signal: NSCondition
    private let audioFormat: AudioFormat
    private let log: Logger
    private let shared = Mutex(Shared())
    private let untimed: Bool
    /// Told after every frame and samples queued and every change of state (a presenter waiting for them).
    private let progress: DecoderProgress?

    /// What the decoder thread publishes. Counters describe the stream since the last seek (`serial`).
    struct Shared {
        var state: State = .opening
        var videoInfo: VideoStreamInfo?
        var audioInfo: AudioStreamInfo?
        var videoEnd: Double = 0
        var audioFrames: Int = 0
        var videoFrames: Int = 0
        var hasVideo = false
        var hasAudio = false
        var isStill = false
        var containerDuration: Double?
        /// The container's duration when its header states it (not estimated from timestamps).
        var statedDuration: Double?
        /// Seconds of the last decoded audio frame: a codec's end padding lies within it.
        var lastAudioBlock = 0.0
        /// Whether the first audio frame came more than 1 ms after the item's start (silence was put
        /// before it): a decoder delay (WMA) moved the sound off the container's time line.
        var audioStartsLate = false
        var seekable = false
        /// Item seconds decoding started from: 0, or the last seek's target.
        var startAt: Double = 0
        /// Seeks asked for so far; the queues' epoch once each has flushed them.
        var serial = 0
        /// Video frames the last seek decoded and passed over (from its key frame); nil until it is done.
        var framesSkippedBySeek: Int?
        var cancelled = false
    }

    init(item: PlaylistItem, path: String, generation: Int, audioFormat: AudioFormat, untimed: Bool, log: Logger,
         startAt: Double = 0, progress: DecoderProgress? = nil) {
        self.progress = progress
        self.item = item
        self.path = path
        self.generation = generation
        self.audioFormat = audioFormat
        self.untimed = untimed
        self.log = log
        let queues = NSCondition()
        signal = queues
        video = FrameQueue<VideoFrame>(capacity: 6, condition: queues, cost: { $0.bufferBytes })
        audio = SampleQueue(channels: audioFormat.channels, capacityFrames: audioFormat.sampleRate * 2, condition: queues)
        shared.withLock { $0.startAt = max(0, startAt); $0.framesSkippedBySeek = startAt > 0 ? nil : 0 }
    }

    var state: State { shared.withLock { $0.state } }
    var isFailed: Bool { if case .failed = state { return true } else { return false } }
    var hasVideo: Bool { shared.withLock { $0.hasVideo } }
    var hasAudio: Bool { shared.withLock { $0.hasAudio } }
    var isStill: Bool { shared.withLock { $0.isStill } }
    var videoInfo: VideoStreamInfo? { shared.withLock { $0.videoInfo } }
    var audioInfo: AudioStreamInfo? { shared.withLock { $0.audioInfo } }
    /// Video frames decoded since the start (or the last seek).
    var decodedVideoFrames: Int { shared.withLock { $0.videoFrames } }
    /// Sound frames decoded so far (at the output rate), silence before a late first block included.
    var decodedAudioFrames: Int { shared.withLock { $0.audioFrames } }
    var containerDuration: Double? { shared.withLock { $0.containerDuration } }
    var seekable: Bool { shared.withLock { $0.seekable } }
    /// Item seconds decoding started from: 0, or the last seek's target.
    var startAt: Double { shared.withLock { $0.startAt } }
    /// Video frames the last seek decoded and passed over to reach its target, once it is done (0 with
    /// no seek); nil while it runs.
    var framesSkippedBySeek: Int? { shared.withLock { $0.framesSkippedBySeek } }

    /// Whether the item has something to show or play: a video frame or audio decoded from its
    /// streams (an audio item's cover does not count), or its decoding ended. Until then it is not put
    /// on screen, so a file that opens but decodes nothing never becomes "now playing".
    var isReady: Bool {
        shared.withLock { s in
            switch s.state {
            case .opening, .failed: return false
            case .finished: return true
            case .playing: return s.videoFrames > 0 || s.audioFrames > 0
            }
        }
    }

    /// True when the decoder has produced video beyond item time `t` + 0.5 s while its audio stops
    /// before `t`: the file's sound ended early (or has a hole) and no audio for `t` is coming, so
    /// the player fills silence instead of waiting.
    func audioEndedBefore(_ t: Double) -> Bool {
        shared.withLock { s in
            let audioEnd = s.startAt + Double(s.audioFrames) / Double(audioFormat.sampleRate)
            return s.hasVideo && s.videoEnd > t + 0.5 && audioEnd <= t + 0.001
        }
    }

    /// The item's length in seconds once decoding finished: the later of the video and audio ends,
    /// capped by the manifest `duration`; an image lasts its `duration`. Nil while still decoding.
    var length: Double? {
        shared.withLock { s in
            switch s.state {
            case .failed: return 0
            case .opening, .playing: return nil
            case .finished:
                if s.isStill || item.type == .image { return item.duration ?? 10 }
                // The later of the picture's and the sound's end: sound that outlasts the video plays to
                // its last sample. Audio decoded past the container's stated end by no more than its last
                // codec frame is the codec's end padding (AAC pads its last frame to 1024 samples, 0.128 s
                // at 8 kHz) and is not played, so the next item starts on the last picture's end; unless
                // the sound starts late (a decoder delay, as WMA's), which leaves the stated end short.
                var audioEnd = s.startAt + Double(s.audioFrames) / Double(audioFormat.sampleRate)
                if let stated = s.statedDuration, !s.audioStartsLate, audioEnd > stated, audioEnd - stated <= s.lastAudioBlock + 0.001 {
                    audioEnd = stated
                }
                var natural = max(s.videoEnd, audioEnd)
                if !s.hasAudio && s.videoFrames == 0 { natural = s.startAt }
                if let d = item.duration { natural = min(natural, d) }
                return natural
            }
        }
    }

    func start() {
        let t = Thread { [self] in self.run() }
        t.name = "decode \(item.id)"
        t.start()
    }

    /// Marks the source failed without starting a decoder (`MediaPreflight` found why).
    func failWithoutDecoding(_ reason: String) { fail(reason) }

    /// Stops the decoder thread and frees the queues.
    func cancel() {
        shared.withLock { $0.cancelled = true }
        video.close()
        audio.close()
    }

    /// Seeks the running decoder to item time `time` seconds: the queues are emptied at once, and the
    /// decoder (at the end of its file, or anywhere in it) goes on from the frame on screen at `time`.
    /// Counters, `length` and `isReady` start again. Call on the run loop's thread.
    func seek(to time: Double) {
        let target = max(0, time)
        // The queues first: a push of the stream before the seek is refused from now on. The decoder
        // then waits for the new serial, published next (under the queues' condition, so a decoder
        // waiting at the end of its file sees it).
        video.flush()
        audio.flush()
        signal.lock()
        shared.withLock { s in
            s.serial += 1
            s.startAt = target
            s.framesSkippedBySeek = nil
            s.videoFrames = 0; s.audioFrames = 0; s.videoEnd = 0; s.lastAudioBlock = 0; s.audioStartsLate = false
            if s.state == .finished { s.state = .playing }
        }
        signal.broadcast()
        signal.unlock()
        progress?.notify()
    }

    /// Applies `body` to the shared state when no seek came after `serial` (what the decoder of an
    /// earlier stream would publish is dropped). Returns whether it did.
    @discardableResult
    private func publish(_ serial: Int, _ body: (inout Shared) -> Void) -> Bool {
        shared.withLock { s in
            guard s.serial == serial else { return false }
            body(&s)
            return true
        }
    }

    /// Waits for a seek after `serial`: its serial and target; nil once cancelled.
    private func waitForSeek(after serial: Int) -> (serial: Int, target: Double)? {
        signal.lock(); defer { signal.unlock() }
        while true {
            let (now, target, cancelled) = shared.withLock { ($0.serial, $0.startAt, $0.cancelled) }
            if cancelled { return nil }
            if now != serial { return (now, target) }
            signal.wait()
        }
    }

    private func run() {
        let wantVideo = item.type != .audio
        let wantAudio = item.type != .image
        // Only regular files: a FIFO or a device node would block the open forever.
        if let why = MediaPreflight.problem(at: path) {
            fail(why)
            return
        }
        let file: MediaFile
        do {
            file = try MediaFile(path: path, video: wantVideo, audio: wantAudio)
        } catch {
            fail("cannot open: \(error)")
            return
        }
        let hasVideo = file.video != nil
        let hasAudio = file.audio != nil
        // A picture that cannot be decoded skips a video or image item (its sound alone would show the
        // background); a sound that cannot be decoded leaves a video silent.
        let undecodable = file.undecodableStreams
        if item.type != .audio, !hasVideo, let s = undecodable.first(where: { $0.kind == .video }) {
            fail("cannot decode its \(s)")
            return
        }
        if item.type == .video && !hasVideo && !hasAudio || item.type == .image && !hasVideo || item.type == .audio && !hasAudio {
            fail("no \(item.type == .audio ? "audio" : "video") stream in \(file.containerName)"
                 + undecodable.map { "; cannot decode its \($0)" }.joined())
            return
        }
        let still = file.isStillImage || item.type == .image
        shared.withLock {
            $0.state = .playing; $0.videoInfo = file.video; $0.audioInfo = file.audio
            $0.hasVideo = hasVideo; $0.hasAudio = hasAudio
            $0.isStill = still
            $0.containerDuration = file.duration
            $0.statedDuration = file.durationIsStated ? file.duration : nil
            $0.seekable = file.supportsSeeking
            if still { $0.startAt = 0; $0.framesSkippedBySeek = 0 }
        }
        progress?.notify()
        // An audio item shows its cover art (an attached picture), drawn as a still with fit and
        // background; pushed again after each seek.
        var cover: VideoFrame?
        if item.type == .audio {
            do { cover = try file.coverArt() } catch { log.warning("\(item.id): cover art: \(error)", ["file": path]) }
            if let cover { video.push(cover, epoch: 0); progress?.notify() }
        }
        var stream = Stream(file: file, hasVideo: hasVideo, hasAudio: hasAudio, still: still, undecodable: undecodable)
        var (serial, origin) = shared.withLock { ($0.serial, $0.startAt) }
        var seeking = origin > 0
        while true {
            var pastLastPicture = false
            if seeking {
                do {
                    let result = try file.seek(to: origin)
                    pastLastPicture = result.pastLastPicture
                    publish(serial) { $0.framesSkippedBySeek = result.framesSkipped }
                } catch {
                    log.warning("\(item.id): seek to \(origin) s failed: \(error); playing from the start")
                    publish(serial) { $0.framesSkippedBySeek = 0 }
                }
                if serial > 0, let cover { video.push(cover, epoch: serial); progress?.notify() }
            }
            switch decode(&stream, serial: serial, origin: origin, pastLastPicture: pastLastPicture) {
            case .cancelled:
                return
            case .superseded:
                break
            case .ended(let frames):
                if frames == 0 && serial == 0 {
                    fail("no decodable frames" + undecodable.map { "; cannot decode its \($0)" }.joined())
                    return
                }
                if publish(serial, { $0.state = .finished }) {
                    video.finish(epoch: serial)
                    audio.finish(epoch: serial)
                }
                progress?.notify()
            }
            // The end of the stream (or a seek that replaced it): the next seek, or cancel.
            guard let next = waitForSeek(after: serial) else { return }
            (serial, origin) = next
            seeking = true
        }
    }

    /// What stays the same from one seek to the next while an item decodes.
    private struct Stream {
        let file: MediaFile
        let hasVideo: Bool
        let hasAudio: Bool
        let still: Bool
        let undecodable: [UndecodableStream]
        var warnedUndecodable = false   // once the file gives a frame
        var reportedCorrupt = 0
        var reportedReadError = false
    }

    /// How decoding from one origin ended.
    private enum Ending {
        /// The source was cancelled.
        case cancelled
        /// A seek came: the stream decoded is no longer wanted.
        case superseded
        /// The file (or the item's `duration`) ended; `frames` video and audio frames were decoded.
        case ended(frames: Int)
    }

    /// Decodes from item time `origin` (the file is positioned there) into the queues, under epoch `serial`.
    /// - Parameter pastLastPicture: the seek to `origin` passed the video's end, and its first video
    ///   frame is the last picture, on screen at `origin` (`SeekResult.pastLastPicture`).
    private func decode(_ stream: inout Stream, serial: Int, origin: Double, pastLastPicture: Bool = false) -> Ending {
        let file = stream.file, hasVideo = stream.hasVideo, hasAudio = stream.hasAudio, still = stream.still
        let cap = still ? nil : item.duration
        let resampler = Resampler(outputRate: audioFormat.sampleRate, outputChannels: audioFormat.channels)
        var audioStarted = false
        var trimFrames = 0
        var audioFrames = 0
        var videoFrames = 0
        var videoEnd = 0.0
        var lastError: String?
        /// A refused push: the source was cancelled, or a seek flushed the queues.
        func refused() -> Ending { video.closed ? .cancelled : .superseded }
        func superseded() -> Bool { shared.withLock { $0.serial != serial || $0.cancelled } }
        decoding: while true {
            if superseded() { return refused() }
            let next: DecodedFrame?
            do { next = try file.read() } catch { lastError = "\(error)"; break }
            guard let next else { break }
            if !stream.warnedUndecodable {
                stream.warnedUndecodable = true
                for s in stream.undecodable { log.warning("\(item.id): playing without its \(s)", ["file": path]) }
            }
            switch next {
            case .video(let f):
                if let cap, f.pts >= cap { if !hasAudio || audioFrames >= Int((cap - origin) * Double(audioFormat.sampleRate)) { break decoding }; continue }
                // After a seek, decoding restarts at the key frame before the target: skip to the target.
                // (`MediaFile.seek` already passed over those frames; this is a guard.)
                if origin > 0 && f.pts + f.duration <= origin + 1e-6 && !(pastLastPicture && videoFrames == 0) { continue }
                #if DEBUG
                DecoderStallForTests.hold(item.id, pts: f.pts, until: superseded)
                #endif
                videoFrames += 1
                videoEnd = max(videoEnd, f.pts + f.duration)
                publish(serial) { $0.videoFrames = videoFrames; $0.videoEnd = videoEnd }
                // Let the video queue grow while audio is short, so interleaving skew never starves audio:
                // MPEG-PS stores video up to a second ahead of its audio. Bounded to 180 pictures and to
                // 128 MiB of their decoder buffers (`bufferBytes`): 10 frames of 4K, 41 of 1080p.
                let lowAudio = audioFormat.sampleRate / 4
                if !video.push(f, growth: hasAudio && !untimed ? .init(audio: audio, lowFrames: lowAudio, limit: 180) : nil,
                               maxBytes: 128 << 20, epoch: serial) { return refused() }
                progress?.notify()
                // Past the last picture: it is the only one, so the pictures end here (a start waits for
                // no more of them; the sound decodes on).
                if pastLastPicture && videoFrames == 1 { video.finish(epoch: serial) }
                if still { break decoding }
            case .audio(let a):
                if let cap, a.pts >= cap { if !hasVideo || videoEnd >= cap { break decoding }; continue }
                var samples: [Int16]
                do { samples = try resampler.convert(a) } catch { lastError = "\(error)"; continue }
                if trimFrames > 0 {
                    let drop = min(samples.count / audioFormat.channels, trimFrames)
                    samples.removeFirst(drop * audioFormat.channels)
                    trimFrames -= drop
                    if samples.isEmpty { continue }
                }
                if !audioStarted {
                    audioStarted = true
                    let lead = Int(((a.pts - origin) * Double(audioFormat.sampleRate)).rounded())
                    if lead > audioFormat.sampleRate / 1000 { publish(serial) { $0.audioStartsLate = true } }
                    if lead > 0 && lead < audioFormat.sampleRate * 5 {
                        if !audio.push([Int16](repeating: 0, count: lead * audioFormat.channels), epoch: serial) { return refused() }
                        audioFrames += lead
                    } else if lead < 0 {
                        // Audio before the item's time zero (codec priming, or a seek's key frame): trim it.
                        let drop = min(samples.count / audioFormat.channels, -lead)
                        samples.removeFirst(drop * audioFormat.channels)
                        trimFrames = -lead - drop
                    }
                }
                if let cap { // trim the last block at the cap
                    let maxFrames = Int((cap - origin) * Double(audioFormat.sampleRate)) - audioFrames
                    if samples.count / audioFormat.channels > maxFrames { samples.removeLast(samples.count - max(0, maxFrames) * audioFormat.channels) }
                }
                audioFrames += samples.count / audioFormat.channels
                publish(serial) { $0.audioFrames = audioFrames; $0.lastAudioBlock = a.duration }
                if !audio.push(samples, epoch: serial) { return refused() }
                progress?.notify()
            }
        }
        if hasAudio {
            let tail = resampler.flush()
            audioFrames += tail.count / audioFormat.channels
            if !audio.push(tail, epoch: serial) { return refused() }
        }
        if !stream.reportedReadError, let e = file.readError ?? lastError.map({ AVError(operation: "decode", message: $0) }) {
            stream.reportedReadError = true
            log.warning("\(item.id): stopped early: \(e)", ["file": path])
        }
        if file.corruptPackets > stream.reportedCorrupt {
            log.warning("\(item.id): skipped \(file.corruptPackets - stream.reportedCorrupt) corrupt packets", ["file": path])
            stream.reportedCorrupt = file.corruptPackets
        }
        guard publish(serial, { $0.audioFrames = audioFrames; $0.videoEnd = videoEnd }) else { return refused() }
        return .ended(frames: videoFrames + audioFrames)
    }

    private func fail(_ reason: String) {
        shared.withLock { $0.state = .failed(reason) }
        video.finish()
        audio.finish()
        progress?.notify()
    }
}

#if DEBUG
/// Tests only (debug builds): `VITRINE_TEST_DECODER_STALL=ID@PTS:SECONDS` makes the first decoder of
/// item ID that reaches a video frame at PTS seconds or later stop there for SECONDS (or until its
/// source is cancelled), as a decoder stuck on a read that does not return: what the engine's
/// `StallWatch` is for (`SyncPlaybackTests`). Once per process.
enum DecoderStallForTests {
    private static let plan: (id: Substring, pts: Double, seconds: Double)? = {
        guard let text = ProcessInfo.processInfo.environment["VITRINE_TEST_DECODER_STALL"],
              let at = text.lastIndex(of: "@"), let colon = text.lastIndex(of: ":"), at < colon,
              let pts = Double(text[text.index(after: at)..<colon]), let seconds = Double(text[text.index(after: colon)...])
        else { return nil }
        return (text[..<at], pts, seconds)
    }()
    private static let used = Atomic<Bool>(false)

    static func hold(_ id: String, pts: Double, until cancelled: () -> Bool) {
        guard let plan, plan.id == id, pts >= plan.pts, !used.exchange(true, ordering: .relaxed) else { return }
        let end = Date(timeIntervalSinceNow: plan.seconds)
        while Date() < end && !cancelled() { Thread.sleep(forTimeInterval: 0.02) }
    }
}
#endif
