import Foundation
import Testing
import Media
@testable import Vitrine
import VitrineCore
import VitrineTestSupport

/// Clips made with the ffmpeg CLI, catalogs, and headless runs whose snapshots are read back as pixels.
enum Harness {
    static let scratch: String = {
        let dir = NSTemporaryDirectory() + "vitrine-engine-tests-\(getpid())"
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }()

    static func newFolder(_ name: String) throws -> String {
        let dir = scratch + "/" + name + "-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: dir + "/media", withIntermediateDirectories: true)
        return dir
    }

    /// Makes `name` (cached per test process) with `ffmpeg -y <args> path`.
    static let clipLock = NSLock()

    static func clip(_ name: String, _ args: [String]) throws -> String {
        clipLock.lock(); defer { clipLock.unlock() }
        let path = scratch + "/" + name
        if FileManager.default.fileExists(atPath: path) { return path }
        let r = try Subprocess.run("/usr/bin/ffmpeg", ["-hide_banner", "-loglevel", "error", "-y"] + args
                                   + [path + ".part.\(name.split(separator: ".").last!)"], standardError: .discard)
        guard r.code == 0 else { throw HarnessError(description: "ffmpeg failed making \(name)") }
        try FileManager.default.moveItem(atPath: path + ".part.\(name.split(separator: ".").last!)", toPath: path)
        return path
    }

    /// A solid-colour clip, `seconds` long, 30 fps, optional 48 kHz sine.
    static func colorClip(_ color: String, seconds: Double, size: String = "320x180", tone: Int? = nil) throws -> String {
        var args = ["-f", "lavfi", "-i", "color=c=\(color):s=\(size):r=30:d=\(seconds)"]
        if let tone { args += ["-f", "lavfi", "-i", "sine=frequency=\(tone):sample_rate=48000:duration=\(seconds)"] }
        args += ["-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p"]
        if tone != nil { args += ["-c:a", "aac", "-shortest"] }
        return try clip("\(color)-\(seconds)-\(size)-\(tone ?? 0).mp4", args)
    }

    static func writeManifest(_ json: String, in dir: String) throws {
        try json.write(toFile: dir + "/manifest.json", atomically: true, encoding: .utf8)
    }

    /// Loads and validates `dir/manifest.json`, failing the test on any error.
    static func manifest(in dir: String) throws -> Manifest {
        let r = ManifestParser.load(path: dir + "/manifest.json")
        if !r.errors.isEmpty { throw HarnessError(description: r.errors.map(\.description).joined(separator: "\n")) }
        return try #require(r.manifest)
    }

    /// Runs the player headless, as fast as possible, for `duration` catalog seconds, with snapshots at
    /// `times`; returns the statistics, the snapshots as images (by time), and the log records.
    static func play(_ manifest: Manifest, catalog: String, duration: Double, snapshots times: [Double],
                     configure: (inout RunOptions) -> Void = { _ in },
                     engine: ((PlaybackEngine) -> Void)? = nil) throws -> (RunStatistics, [Double: ImageBuffer], [LogRecord]) {
        let shots = try newFolder("shots")
        var o = RunOptions()
        o.output = .headless
        o.duration = duration
        o.snapshotTimes = times
        o.snapshotDirectory = shots
        o.realtime = false
        configure(&o)
        let (sink, records) = LogSink.memory()
        let player = Player(manifest: manifest, catalogDirectory: catalog, options: o, log: Logger(label: "test", sink: sink))
        player.configureEngine = engine
        let stats = try player.run()
        var images: [Double: ImageBuffer] = [:]
        for t in times {
            let file = shots + "/" + String(format: "snapshot-%07.3f.png", t)
            images[t] = try readPNG(file)
        }
        return (stats, images, records())
    }

    /// Decodes a PNG into an XRGB8888 image of its own size.
    static func readPNG(_ path: String) throws -> ImageBuffer {
        let file = try MediaFile(path: path)
        guard case .video(let f)? = try file.read() else { throw HarnessError(description: "no picture in \(path)") }
        let img = ImageBuffer(width: f.width, height: f.height)
        try img.withTarget { try Scaler().scale(f, into: $0, rect: PixelRect(x: 0, y: 0, width: f.width, height: f.height)) }
        return img
    }
}

struct HarnessError: Error, CustomStringConvertible { var description: String }

extension ImageBuffer {
    /// True when the pixel is within `tolerance` of `rgb` (0xRRGGBB) on every channel.
    func isColor(x: Int, y: Int, _ want: UInt32, tolerance: Int = 24) -> Bool {
        let p = self.rgb(x: x, y: y)
        return abs(Int(p.r) - Int((want >> 16) & 0xFF)) <= tolerance && abs(Int(p.g) - Int((want >> 8) & 0xFF)) <= tolerance
            && abs(Int(p.b) - Int(want & 0xFF)) <= tolerance
    }
}
