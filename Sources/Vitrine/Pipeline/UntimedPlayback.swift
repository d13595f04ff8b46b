import Foundation
import SystemSupport
import Media
import VitrineCore

/// Plays one file with no clock: every decoded frame is converted and presented on the headless
/// output as soon as it is ready. Measures the decode → convert → present pipeline (`make bench`).
public enum UntimedPlayback {
    public struct Result: Sendable {
        public var frames: Int
        public var seconds: Double
        public var framesPerSecond: Double { seconds > 0 ? Double(frames) / seconds : 0 }
    }

    /// - Parameters: `width`×`height`: the headless screen; nil uses the video's own size, so the
    ///   conversion matches `ffmpeg -pix_fmt bgra` (format conversion, no scaling).
    /// - Throws: `AVError` when the file cannot be opened or has no video.
    public static func run(path: String, width: Int?, height: Int?, log: Logger) throws -> Result {
        let item = PlaylistItem(id: "bench", type: .video, src: path)
        let source = ItemSource(item: item, path: path, generation: 1, audioFormat: AudioFormat(sampleRate: 48000, channels: 2),
                                untimed: true, log: log)
        defer { source.cancel() }
        // Audio is not part of this measurement: drain it so the decoder never blocks on it.
        var sink: [Int16] = []
        func drainAudio() {
            sink.removeAll(keepingCapacity: true)
            _ = source.audio.take(maxFrames: .max, into: &sink, timeout: 0)
        }
        let start = monotonicNow()
        source.start()
        // The decoder thread opens the file once; take the stream info from it (no separate probe open).
        while source.video.isEmpty && !source.video.isFinished {
            source.video.waitForItem(timeout: 0.05)
            drainAudio()
        }
        if case .failed(let reason) = source.state { throw AVError(operation: path, message: reason) }
        guard let v = source.videoInfo, source.hasVideo else {
            throw AVError(operation: "av_find_best_stream", message: "no video stream")
        }
        let w = width ?? v.width, h = height ?? v.height
        let output = HeadlessOutput(width: w, height: h, refreshRate: v.frameRate > 0 ? v.frameRate : 30, realtime: false)
        let compositor = Compositor(display: DisplaySettings(), log: log)
        var frames = 0
        while true {
            // A short timeout: audio arriving while no picture is queued is drained promptly.
            source.video.waitForItem(timeout: 0.05)
            drainAudio()
            if let f = source.video.pop() {
                try output.draw { try compositor.draw(.frame(f, generation: frames), into: $0) }
                try output.flip()
                frames += 1
            } else if source.video.isDrained {
                break
            }
        }
        let elapsed = monotonicNow() - start
        return Result(frames: frames, seconds: elapsed)
    }
}
