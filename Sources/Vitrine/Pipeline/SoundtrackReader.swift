import Media

/// Reads the catalog's soundtrack as an endless stream in the output format (interleaved S16 at
/// `format`), looping at the sample level: the first sample of the file follows its last, with no
/// gap and no step.
///
/// At the end of the file it opens the file again (a fresh demuxer applies the container's start
/// trimming exactly as the first time: MP3 encoder delay from the LAME header, AAC priming from the
/// edit list, Opus pre-skip) and goes on feeding the same `Resampler`, which is never flushed, so its
/// filter runs across the loop point as through any other sample. The end padding is cut: MP3's and
/// Opus's by their decoders, and where the container states its duration (an MP4's edit list: FFmpeg
/// 5.1 decodes the last AAC frame whole, up to 1023 samples of padding) at that duration, as an
/// item's sound ends at its length. Used from one thread at a time.
final class SoundtrackReader {
    let path: String
    let format: AudioFormat
    private var file: MediaFile
    /// Seconds of the file's sound: its stated duration (`MediaFile.durationIsStated`), else its end.
    private var end: Double?
    /// Whether the current pass reached `end` (the rest of the file is padding).
    private var passEnded = false
    private let resampler: Resampler
    /// Decoded output not yet handed out.
    private var buffered: [Int16] = []
    private var bufferedStart = 0
    /// Output frames made by the current pass so far.
    private var passFrames = 0
    /// Output frames produced in all, and at which of them each new pass began.
    private(set) var framesProduced = 0
    /// The output frame index at which each pass after the first began (the decoder's end of file;
    /// the resampler's delay, a few frames, puts the source's first sample just after it).
    private(set) var loopPoints: [Int] = []

    /// Opens `path` for its audio.
    /// - Throws: `AVError` when the file cannot be opened or has no audio stream.
    init(path: String, format: AudioFormat) throws(AVError) {
        self.path = path
        self.format = format
        file = try Self.open(path)
        end = file.durationIsStated ? file.duration : nil
        resampler = Resampler(outputRate: format.sampleRate, outputChannels: format.channels)
    }

    private static func open(_ path: String) throws(AVError) -> MediaFile {
        let file = try MediaFile(path: path, video: false, audio: true)
        guard file.audio != nil else { throw AVError(operation: "av_find_best_stream", message: "no audio stream in \(path)") }
        return file
    }

    /// Completed passes through the file.
    var loops: Int { loopPoints.count }

    /// The next `frames` frames (`frames × format.channels` samples), looping as often as needed.
    /// - Throws: `AVError` when the file gives no audio in a whole pass (it changed on disk, or it
    ///   decodes to nothing), or cannot be opened again at its end; what was read before is lost.
    func read(frames: Int) throws(AVError) -> [Int16] {
        let want = frames * format.channels
        while buffered.count - bufferedStart < want {
            guard !passEnded, let next = try file.read() else {
                // The end of the file: the next sample is its first.
                if passFrames == 0 { throw AVError(operation: "decode", message: "no audio decoded from \(path)") }
                file = try Self.open(path)
                end = file.durationIsStated ? file.duration : nil
                passEnded = false
                loopPoints.append(framesProduced + (buffered.count - bufferedStart) / format.channels)
                passFrames = 0
                continue
            }
            guard case .audio(let block) = next else { continue }
            // The samples before the stated end; the first one at or past it ends the pass.
            var keep: Int?
            if let end {
                let left = Int(((end - block.pts) * Double(block.sampleRate)).rounded())
                if left < block.sampleCount { keep = max(0, left); passEnded = true }
            }
            let samples = keep == 0 ? [] : try resampler.convert(block, samples: keep)
            passFrames += samples.count / format.channels
            if bufferedStart > 0 && bufferedStart >= buffered.count / 2 {
                buffered.removeFirst(bufferedStart)
                bufferedStart = 0
            }
            buffered += samples
        }
        let out = Array(buffered[bufferedStart..<(bufferedStart + want)])
        bufferedStart += want
        framesProduced += frames
        return out
    }
}
