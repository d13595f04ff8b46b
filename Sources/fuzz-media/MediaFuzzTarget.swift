import Foundation
import FuzzSupport
import Media
import VitrineCore

/// The fuzz target for the demux and decode path: the input bytes are one media file.
///
/// It is written to a file in `/dev/shm` (else the temporary folder) and opened by path, as the player
/// opens a catalog item (`avformat_open_input` on a local file, probed by content: the name has no
/// extension). Then, as `ItemSource` and the compositor do, up to 48 frames are decoded; the first
/// video frames are scaled to XRGB8888 into a 64×36 canvas with `contain` and `cover` placement, and
/// audio is resampled to 48 kHz stereo S16. When the container can seek, one seek to its middle and a
/// few more frames follow. The input's length picks which streams are opened, as the item types do:
/// length % 4 == 2 opens video only (an `image` item), 3 audio only (an `audio` item), else both.
enum MediaFuzzTarget {
    /// The input's file, removed as soon as the demuxer has it open (only a crash leaves it behind).
    static let path: String = {
        let base = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
        return base + "/vitrine-fuzz-media-\(getpid())"
    }()

    /// One scaler and canvas for the whole run, as the compositor keeps them across items.
    static let scaler = Scaler()
    static let canvas = ImageBuffer(width: 64, height: 36)
    /// Decoder threads, as `MediaFile` is opened by the player (0: FFmpeg picks); `VITRINE_FUZZ_THREADS` overrides.
    static let threads = Int(ProcessInfo.processInfo.environment["VITRINE_FUZZ_THREADS"] ?? "") ?? 0

    static func run(_ bytes: [UInt8]) {
        guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else {
            fatalError("cannot write the fuzz input to \(path)")
        }
        let file: MediaFile
        do {
            file = try MediaFile(path: path, video: bytes.count % 4 != 3, audio: bytes.count % 4 != 2, threads: threads)
        } catch {
            unlink(path)
            return
        }
        unlink(path)   // the demuxer keeps its descriptor
        _ = (file.video, file.audio, file.duration, file.containerName, file.isStillImage)
        let resampler = Resampler(outputRate: 48000, outputChannels: 2)
        var pictures = 0
        func decode(_ limit: Int) {
            for _ in 0..<limit {
                let next: DecodedFrame?
                do { next = try file.read() } catch { return }
                guard let next else { return }
                switch next {
                case .video(let v):
                    _ = (v.pixelFormatName, v.pts, v.duration)
                    guard pictures < 4 else { continue }
                    pictures += 1
                    for fit in [Fit.contain, .cover] {
                        let p = Layout.place(sourceWidth: v.width, sourceHeight: v.height, sampleAspect: v.sampleAspectRatio,
                                             canvasWidth: canvas.width, canvasHeight: canvas.height, fit: fit)
                        let crop = PixelRect(x: p.crop.x, y: p.crop.y, width: p.crop.width, height: p.crop.height)
                        let dest = PixelRect(x: p.destination.x, y: p.destination.y, width: p.destination.width, height: p.destination.height)
                        canvas.withTarget { t in _ = try? scaler.scale(v, crop: crop, into: t, rect: dest) }
                    }
                case .audio(let a):
                    if let samples = try? resampler.convert(a), samples.count % 2 != 0 {
                        fatalError("resampler returned \(samples.count) samples for 2 channels")
                    }
                }
            }
        }
        decode(48)
        if file.supportsSeeking, let d = file.duration, d.isFinite, d > 0 {
            if (try? file.seek(to: d / 2)) != nil { decode(8) }
        }
        _ = resampler.flush()
        _ = file.corruptPackets
    }
}

@main
enum MediaFuzzMain {
    static func main() {
        FFmpegLog.silent()
        FuzzInput.main(name: "fuzz-media", MediaFuzzTarget.run)
    }
}
