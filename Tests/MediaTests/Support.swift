import Foundation
import Testing
import VitrineTestSupport
@testable import Media

/// Paths and helpers shared by the media tests.
enum Fixtures {
    /// A file of the real corpus (`RealMedia`).
    static func real(_ name: String) -> String { RealMedia.path(name) }

    static let scratch: String = {
        let dir = NSTemporaryDirectory() + "vitrine-media-tests-\(getpid())"
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }()

    /// Runs a program and returns its standard output; throws if it exits non-zero.
    @discardableResult
    static func run(_ program: String, _ args: [String]) throws -> String {
        String(decoding: try runData(program, args), as: UTF8.self)
    }

    /// Runs a program and returns its standard output as bytes; throws if it exits non-zero.
    static func runData(_ program: String, _ args: [String]) throws -> Data {
        let r = try Subprocess.run(program.hasPrefix("/") ? program : "/usr/bin/" + program, args, standardError: .discard)
        guard r.code == 0 else {
            throw FixtureError(description: "\(program) \(args.joined(separator: " ")) exited \(r.status)")
        }
        return r.standardOutput
    }

    /// The first picture of `path` as ffmpeg converts it to BGRA (`ffmpeg -i path [-vf filter] -frames:v 1
    /// -pix_fmt bgra -f rawvideo -`): `width × height × 4` bytes, B, G, R, A, rows packed. ffmpeg turns
    /// a picture by its display matrix (autorotate) unless `autorotate` is false.
    static func ffmpegBGRA(_ path: String, filter: String? = nil, autorotate: Bool = true) throws -> Data {
        var args = ["-v", "error"] + (autorotate ? [] : ["-noautorotate"]) + ["-i", path]
        if let filter { args += ["-vf", filter] }
        return try runData("ffmpeg", args + ["-frames:v", "1", "-pix_fmt", "bgra", "-f", "rawvideo", "-"])
    }

    /// Decodes the first video frame of `path`.
    static func firstVideoFrame(_ path: String) throws -> VideoFrame {
        let file = try MediaFile(path: path, audio: false)
        while let f = try file.read() { if case .video(let v) = f { return v } }
        throw FixtureError(description: "no video frame in \(path)")
    }

    /// Makes `name` in the scratch folder with `ffmpeg -y <args> name` unless it exists. Tests run in
    /// parallel: one at a time makes a file, into a part file renamed when complete.
    static func generate(_ name: String, _ args: [String]) throws -> String {
        generateLock.lock(); defer { generateLock.unlock() }
        let path = scratch + "/" + name
        if !FileManager.default.fileExists(atPath: path) {
            let part = scratch + "/part-" + name    // same extension: ffmpeg picks the muxer from it
            try run("ffmpeg", ["-hide_banner", "-loglevel", "error", "-y"] + args + [part])
            try FileManager.default.moveItem(atPath: part, toPath: path)
        }
        return path
    }
    static let generateLock = NSLock()

    /// When the last decoded frame of `stream` ends, in seconds from the container's start time, as
    /// ffprobe decodes it (`-show_frames`: best-effort timestamp plus duration).
    static func ffprobeDecodedEnd(_ path: String, stream: String) throws -> Double? {
        let start = try run("ffprobe", ["-v", "error", "-show_entries", "format=start_time", "-of", "default=nw=1:nk=1", path])
        let origin = Double(start.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        let out = try run("ffprobe", ["-v", "error", "-select_streams", stream, "-show_entries",
                                      "frame=best_effort_timestamp_time,pkt_duration_time,nb_samples,sample_rate",
                                      "-of", "csv=p=0:nk=0", path])
        var end: Double? = nil
        for line in out.split(separator: "\n") {
            var f: [String: String] = [:]
            for kv in line.split(separator: ",") {
                let parts = kv.split(separator: "=", maxSplits: 1)
                if parts.count == 2 { f[String(parts[0])] = String(parts[1]) }
            }
            guard let t = f["best_effort_timestamp_time"].flatMap(Double.init) else { continue }
            var d = f["pkt_duration_time"].flatMap(Double.init) ?? 0
            if let n = f["nb_samples"].flatMap(Double.init), let r = f["sample_rate"].flatMap(Double.init), r > 0 { d = n / r }
            end = max(end ?? 0, t + d - origin)
        }
        return end
    }

    /// A stream's duration in seconds according to ffprobe.
    static func ffprobeDuration(_ path: String, stream: String) throws -> Double? {
        let out = try run("ffprobe", ["-v", "error", "-select_streams", stream, "-show_entries", "stream=duration",
                                      "-of", "default=nw=1:nk=1", path])
        return Double(out.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "\n").first ?? "")
    }
}

struct FixtureError: Error, CustomStringConvertible { var description: String }
