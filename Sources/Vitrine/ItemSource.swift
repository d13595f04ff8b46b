import Foundation
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
/// Times inside a source are seconds from the item's start. Audio is made contiguous from 0: a first
/// audio frame stamped after 0 is preceded by silence, one stamped before 0 is trimmed.
final class ItemSource: @unchecked Sendable {
    enum State: Sendable, Equatable { case opening, playing, finished, failed(String) }

    let item: PlaylistItem
    let path: String
    let generation: Int
    let video = FrameQueue<VideoFrame>(capacity: 6, cost: { $0.bufferBytes })
    let audio: SampleQueue
    private let audioFormat: AudioFormat
    private let log: Logger
    private let shared = Mutex(Shared())
    private let untimed: Bool

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
    }

    /// Item time (seconds) decoding starts from: 0, or a seek target.
    let startAt: Double

    init(item: PlaylistItem, path: String, generation: Int, audioFormat: AudioFormat, untimed: Bool, log: Logger, startAt: Double = 0) {
        self.item = item
        self.startAt = max(0, startAt)
        self.path = path
        self.generation = generation
        self.audioFormat = audioFormat
        self.untimed = untimed
        self.log = log
        audio = SampleQueue(channels: audioFormat.channels, capacityFrames: audioFormat.sampleRate * 2)
    }

    var state: State { shared.withLock { $0.state } }
    var hasVideo: Bool { shared.withLock { $0.hasVideo } }
    var hasAudio: Bool { shared.withLock { $0.hasAudio } }
    var isStill: Bool { shared.withLock { $0.isStill } }
    var videoInfo: VideoStreamInfo? { shared.withLock { $0.videoInfo } }
    var audioInfo: AudioStreamInfo? { shared.withLock { $0.audioInfo } }
    var decodedVideoFrames: Int { shared.withLock { $0.videoFrames } }
    var containerDuration: Double? { shared.withLock { $0.containerDuration } }
    var seekable: Bool { shared.withLock { $0.seekable } }

    /// True when the decoder has produced video beyond item time `t` + 0.5 s while its audio stops
    /// before `t`: the file's sound ended early (or has a hole) and no audio for `t` is coming, so
    /// the player fills silence instead of waiting.
    func audioEndedBefore(_ t: Double) -> Bool {
        shared.withLock { s in
            let audioEnd = startAt + Double(s.audioFrames) / Double(audioFormat.sampleRate)
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
                var audioEnd = startAt + Double(s.audioFrames) / Double(audioFormat.sampleRate)
                if let stated = s.statedDuration, !s.audioStartsLate, audioEnd > stated, audioEnd - stated <= s.lastAudioBlock + 0.001 {
                    audioEnd = stated
                }
                var natural = max(s.videoEnd, audioEnd)
                if !s.hasAudio && s.videoFrames == 0 { natural = startAt }
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

    /// Stops the decoder thread and frees the queues.
    func cancel() {
        video.close()
        audio.close()
    }

    private func run() {
        let wantVideo = item.type != .audio
        let wantAudio = item.type != .image
        // Only regular files: a FIFO or a device node would block the open forever.
        var st = stat()
        guard stat(path, &st) == 0 else {
            fail("cannot open: \(String(cString: strerror(errno)))")
            return
        }
        guard (st.st_mode & S_IFMT) == S_IFREG else {
            fail("not a regular file")
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
        shared.withLock {
            $0.state = .playing; $0.videoInfo = file.video; $0.audioInfo = file.audio
            $0.hasVideo = hasVideo; $0.hasAudio = hasAudio
            $0.isStill = file.isStillImage || item.type == .image
            $0.containerDuration = file.duration
            $0.statedDuration = file.durationIsStated ? file.duration : nil
            $0.seekable = file.supportsSeeking
        }
        if item.type == .audio {
            // An audio item shows its cover art (an attached picture), drawn as a still with fit and background.
            do { if let cover = try file.coverArt() { video.push(cover) } } catch { log.warning("\(item.id): cover art: \(error)", ["file": path]) }
        }
        let still = file.isStillImage || item.type == .image
        let cap = still ? nil : item.duration
        let origin = still ? 0 : startAt
        if origin > 0 {
            do { try file.seek(to: origin) } catch { log.warning("\(item.id): seek to \(origin) s failed: \(error); playing from the start") }
        }
        let resampler = Resampler(outputRate: audioFormat.sampleRate, outputChannels: audioFormat.channels)
        var audioStarted = false
        var trimFrames = 0
        var audioFrames = 0
        var videoFrames = 0
        var videoEnd = 0.0
        var lastError: String?
        var warnedUndecodable = false   // once the file gives a frame
        decoding: while true {
            if video.closed { return }
            let next: DecodedFrame?
            do { next = try file.read() } catch { lastError = "\(error)"; break }
            guard let next else { break }
            if !warnedUndecodable {
                warnedUndecodable = true
                for s in undecodable { log.warning("\(item.id): playing without its \(s)", ["file": path]) }
            }
            switch next {
            case .video(let f):
                if let cap, f.pts >= cap { if !hasAudio || audioFrames >= Int((cap - origin) * Double(audioFormat.sampleRate)) { break decoding }; continue }
                // After a seek, decoding restarts at the key frame before the target: skip to the target.
                if origin > 0 && f.pts + f.duration <= origin + 1e-6 { continue }
                videoFrames += 1
                videoEnd = max(videoEnd, f.pts + f.duration)
                shared.withLock { $0.videoFrames = videoFrames; $0.videoEnd = videoEnd }
                // Let the video queue grow while audio is short, so interleaving skew never starves audio:
                // MPEG-PS stores video up to a second ahead of its audio. Bounded to 180 pictures and to
                // 128 MiB of their decoder buffers (`bufferBytes`): 10 frames of 4K, 41 of 1080p.
                let lowAudio = audioFormat.sampleRate / 4
                if !video.push(f, limit: { [audio, video] in
                    (!hasAudio || audio.frames >= lowAudio || self.untimed) ? video.capacity : 180
                }, maxBytes: 128 << 20) { return }
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
                    if lead > audioFormat.sampleRate / 1000 { shared.withLock { $0.audioStartsLate = true } }
                    if lead > 0 && lead < audioFormat.sampleRate * 5 {
                        audio.push([Int16](repeating: 0, count: lead * audioFormat.channels)); audioFrames += lead
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
                shared.withLock { $0.audioFrames = audioFrames; $0.lastAudioBlock = a.duration }
                if !audio.push(samples) { return }
            }
        }
        if hasAudio && !video.closed {
            let tail = resampler.flush()
            audioFrames += tail.count / audioFormat.channels
            audio.push(tail)
        }
        if let e = file.readError ?? lastError.map({ AVError(operation: "decode", message: $0) }) {
            log.warning("\(item.id): stopped early: \(e)", ["file": path])
        }
        if file.corruptPackets > 0 {
            log.warning("\(item.id): skipped \(file.corruptPackets) corrupt packets", ["file": path])
        }
        if videoFrames == 0 && audioFrames == 0 {
            fail("no decodable frames" + undecodable.map { "; cannot decode its \($0)" }.joined())
            return
        }
        shared.withLock { $0.audioFrames = audioFrames; $0.videoEnd = videoEnd; $0.state = .finished }
        video.finish()
        audio.finish()
    }

    private func fail(_ reason: String) {
        shared.withLock { $0.state = .failed(reason) }
        video.finish()
        audio.finish()
    }
}
