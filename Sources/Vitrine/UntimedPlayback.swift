import Foundation
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
        let probe = try MediaFile(path: path, video: true, audio: false)
        guard let v = probe.video else { throw AVError(operation: "av_find_best_stream", message: "no video stream") }
        let w = width ?? v.width, h = height ?? v.height
        let item = PlaylistItem(id: "bench", type: .video, src: path)
        let source = ItemSource(item: item, path: path, generation: 1, audioFormat: AudioFormat(sampleRate: 48000, channels: 2),
                                untimed: true, log: log)
        let output = HeadlessOutput(width: w, height: h, refreshRate: v.frameRate > 0 ? v.frameRate : 30, realtime: false)
        let compositor = Compositor(display: DisplaySettings(), log: log)
        // Audio is not part of this measurement: drain it so the decoder never blocks on it.
        let start = monotonicNow()
        source.start()
        var frames = 0
        while true {
            source.video.waitForItem(timeout: 1)
            var sink: [Int16] = []
            _ = source.audio.take(maxFrames: .max, into: &sink, timeout: 0)
            if let f = source.video.pop() {
                try output.present { try compositor.draw(.frame(f, generation: frames), into: $0) }
                frames += 1
            } else if source.video.isDrained {
                break
            }
        }
        let elapsed = monotonicNow() - start
        source.cancel()
        return Result(frames: frames, seconds: elapsed)
    }
}
