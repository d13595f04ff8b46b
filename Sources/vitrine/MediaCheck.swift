// Whether a media file can play, as the player would find out: opened with FFmpeg and its first
// pictures and sounds decoded.

import Foundation
import Media
import VitrineCore

/// What `MediaCheck.probe` found about one media file.
struct MediaProbe {
    /// The container's duration in seconds (nil when it states none, and for still pictures).
    var duration: Double?
    /// FFmpeg's name for the container.
    var container: String
}

/// Opens media files the way `ItemSource` does (the same streams for the item's type, the same
/// refusals) and decodes until the first frame of each stream it plays has come.
///
/// `probe` does it in a child process (`vitrine __probe-media KIND PATH`, which runs `probeHere`):
/// the files come from sticks nobody checked, and a decoder that crashes or hangs on one must not
/// take the validation with it; it is reported as that file's problem.
enum MediaCheck {
    /// At most this many frames are decoded looking for the first one of each stream.
    static let frameBudget = 500
    /// A probe that takes longer than this (seconds) is stopped, and the file reported as hanging.
    static let timeLimit = 30.0
    /// The hidden command the child runs.
    static let command = "__probe-media"

    /// The probe of `path` as an item of `kind`, run in a child process.
    static func probe(_ path: String, kind: PlaylistItem.Kind) -> Result<MediaProbe, MediaCheckFailure> {
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/proc/self/exe")
        child.arguments = [command, kind.rawValue, path]
        let out = Pipe()
        child.standardOutput = out
        child.standardError = FileHandle.nullDevice
        child.standardInput = FileHandle.nullDevice
        // A crash is an answer here: no backtrace (it takes time, and nobody reads it).
        child.environment = ProcessInfo.processInfo.environment.merging(["SWIFT_BACKTRACE": "enable=no"]) { $1 }
        do { try child.run() } catch {
            // No child (no /proc?): probe here.
            return probeHere(path, kind: kind)
        }
        try? out.fileHandleForWriting.close()
        let timer = DispatchWorkItem { if child.isRunning { kill(child.processIdentifier, SIGKILL) } }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeLimit, execute: timer)
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        child.waitUntilExit()
        timer.cancel()
        if child.terminationReason == .uncaughtSignal {
            if child.terminationStatus == SIGKILL { return .failure(.init("decoding hangs (stopped after \(Int(timeLimit)) s)")) }
            return .failure(.init("the decoder crashed on it (signal \(child.terminationStatus))"))
        }
        return decode(text)
    }

    /// The child's one line: `ok DURATION|- CONTAINER` or `fail REASON`.
    static func encode(_ r: Result<MediaProbe, MediaCheckFailure>) -> String {
        switch r {
        case .success(let p): return "ok \(p.duration.map { String($0) } ?? "-") \(p.container)\n"
        case .failure(let f): return "fail \(f.description)\n"
        }
    }

    static func decode(_ text: String) -> Result<MediaProbe, MediaCheckFailure> {
        let line = text.split(separator: "\n").first.map(String.init) ?? ""
        if line.hasPrefix("fail ") { return .failure(.init(String(line.dropFirst(5)))) }
        let parts = line.split(separator: " ", maxSplits: 2).map(String.init)
        guard parts.count == 3, parts[0] == "ok" else { return .failure(.init("the probe gave no answer")) }
        return .success(MediaProbe(duration: Double(parts[1]), container: parts[2]))
    }

    /// `vitrine __probe-media KIND PATH`: prints the probe's line; exit 0.
    static func runChild(_ argv: [String]) -> Exit {
        guard argv.count == 2, let kind = PlaylistItem.Kind(rawValue: argv[0]) else { return .usage }
        say(String(encode(probeHere(argv[1], kind: kind)).dropLast()))
        return .ok
    }

    /// - Returns: the probe, or why the file cannot play: `cannot open: avformat_open_input: …`,
    ///   `no video stream in …`, `no decodable frames`, `decoding fails: …`.
    static func probeHere(_ path: String, kind: PlaylistItem.Kind) -> Result<MediaProbe, MediaCheckFailure> {
        var st = stat()
        guard stat(path, &st) == 0 else { return .failure(.init("cannot open: \(String(cString: strerror(errno)))")) }
        guard (st.st_mode & S_IFMT) == S_IFREG else { return .failure(.init("not a regular file")) }
        let file: MediaFile
        do { file = try MediaFile(path: path, video: kind != .audio, audio: kind != .image, threads: 1) } catch {
            return .failure(.init("cannot open: \(error)"))
        }
        let hasVideo = file.video != nil, hasAudio = file.audio != nil
        if kind == .video && !hasVideo && !hasAudio || kind == .image && !hasVideo || kind == .audio && !hasAudio {
            return .failure(.init("no \(kind == .audio ? "audio" : "video") stream in \(file.containerName)"))
        }
        // Decoded frames, as `ItemSource` counts them: the player skips an item with none.
        var sawVideo = false, sawAudio = false
        do {
            for _ in 0..<frameBudget where !((sawVideo || !hasVideo) && (sawAudio || !hasAudio)) {
                guard let frame = try file.read() else { break }
                switch frame {
                case .video: sawVideo = true
                case .audio: sawAudio = true
                }
            }
        } catch {
            return .failure(.init("decoding fails: \(error)"))
        }
        if !sawVideo && !sawAudio {
            return .failure(.init("no decodable frames" + (file.readError.map { " (\($0))" } ?? "")))
        }
        let still = file.isStillImage || kind == .image
        return .success(MediaProbe(duration: still ? nil : file.duration, container: file.containerName))
    }
}

/// Why a media file cannot play.
struct MediaCheckFailure: Error, CustomStringConvertible {
    var description: String
    init(_ reason: String) { description = reason }
}
