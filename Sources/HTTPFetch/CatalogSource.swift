// Polling a catalog folder over HTTPS (the config's `update.url`): a conditional GET of
// manifest.json, its minisign signature, and the media it names. Independent of the player.
import Foundation
import FileIO

/// What a poll found.
public enum PollOutcome: Sendable, Equatable {
    /// The server answered 304: the manifest is the one last committed.
    case unchanged
    /// A new (or first) manifest, and its `manifest.json.minisig` (nil when the server has none: 404).
    /// Verify and import it, then call `CatalogPoller.commit()`.
    case changed(manifestBytes: [UInt8], signature: [UInt8]?)
}

/// One media file of a manifest, as `fetchMedia` downloads it.
public struct MediaFile: Sendable, Equatable {
    /// The path relative to the folder `fetchMedia` is given as `under` (by default the catalog's
    /// `media/` folder: `"spring/a.mp4"`; with `under: ""`, the catalog folder itself, as a
    /// manifest's `src`: `"media/spring/a.mp4"`), `/`-separated.
    public var path: String
    /// The size in bytes.
    public var size: Int
    /// The SHA-256, 64 hex digits.
    public var sha256: String
    public init(path: String, size: Int, sha256: String) { self.path = path; self.size = size; self.sha256 = sha256 }
}

/// What `fetchMedia` did.
public struct MediaFetchSummary: Sendable, Equatable {
    /// Files downloaded (fully or by resuming a part).
    public var downloaded = 0
    /// Files already in the folder with the right size and SHA-256: not requested.
    public var alreadyPresent = 0
    /// Body bytes received, over all files and attempts.
    public var bytesTransferred = 0
    /// Attempts that failed with a retryable error and were retried.
    public var retries = 0
    public init(downloaded: Int = 0, alreadyPresent: Int = 0, bytesTransferred: Int = 0, retries: Int = 0) {
        self.downloaded = downloaded; self.alreadyPresent = alreadyPresent
        self.bytesTransferred = bytesTransferred; self.retries = retries
    }
}

/// Polls `<base>/manifest.json` with conditional GETs and downloads `<base>/media/…` (or any path
/// of the folder: `fetchMedia(files:into:under:…)`).
///
/// The validators (`ETag`, `Last-Modified`) of the last committed manifest are kept in a small
/// JSON state file, so after a reboot an unchanged catalog still costs one 304. They are written
/// by `commit()`, not by `poll()`: a manifest fetched but not yet imported when the power goes is
/// fetched again (one GET), while its media already downloaded are not (`HTTPClient.download`
/// skips verified files and resumes parts).
///
/// Not thread-safe (it drives one `HTTPClient`). An unreachable server only makes `poll()` and
/// `fetchMedia` throw; nothing here touches playback or the catalog on disk.
public final class CatalogPoller {
    /// The state file's content.
    struct State: Codable, Equatable {
        var url: String
        var etag: String?
        var lastModified: String?
    }

    /// The folder URL, ending in `/`.
    public let baseURL: String
    public let client: HTTPClient
    /// The state file (its folder must exist).
    public let statePath: String
    /// The largest `manifest.json` or signature accepted, in bytes.
    public let maxManifestBytes: Int
    /// Why the state file was ignored at `init` (unreadable or malformed: the file and the JSON
    /// path), or nil. An ignored state costs one full manifest GET, nothing else.
    public private(set) var stateProblem: String?
    /// Bytes received by the last `poll()` (headers and bodies of its requests).
    public private(set) var lastPollBytes = 0

    private var committed: State
    private var pending: State?

    /// - Parameters:
    ///   - baseURL: the catalog folder (`update.url`); a missing final `/` is added.
    ///   - statePath: where the validators are kept, e.g. `/var/lib/vitrine/update-state.json`.
    ///     A state file written for another URL is ignored.
    ///   - maxManifestBytes: the largest manifest or signature accepted (default 4 MiB).
    public init(baseURL: String, client: HTTPClient, statePath: String, maxManifestBytes: Int = 4 << 20) {
        self.baseURL = baseURL.hasSuffix("/") ? baseURL : baseURL + "/"
        self.client = client
        self.statePath = statePath
        self.maxManifestBytes = maxManifestBytes
        committed = State(url: self.baseURL)
        do {
            guard let bytes = FileManager.default.contents(atPath: statePath) else { return }
            let state = try JSONDecoder().decode(State.self, from: bytes)
            if state.url == self.baseURL { committed = state }
        } catch let DecodingError.typeMismatch(_, context), let DecodingError.keyNotFound(_, context),
                let DecodingError.valueNotFound(_, context), let DecodingError.dataCorrupted(context) {
            let path = context.codingPath.map(\.stringValue).joined(separator: ".")
            stateProblem = "\(statePath): \(path.isEmpty ? "$" : "$." + path): \(context.debugDescription)"
        } catch {
            stateProblem = "\(statePath): \(error)"
        }
    }

    /// The URL of `manifest.json`.
    public var manifestURL: String { baseURL + "manifest.json" }

    /// One poll: a conditional GET of `manifest.json` (with the committed `ETag` and
    /// `Last-Modified`, RFC 9110 §13.1); after a 200, a GET of `manifest.json.minisig`.
    /// - Parameter conditional: false sends no validators, so the manifest comes whole whatever was
    ///   committed (a one-off import from the command line).
    /// - Returns: `.unchanged` after a 304, else the manifest and its signature.
    /// - Throws: `FetchError` from `HTTPClient.get` (`unreachable`, `timedOut`, `tls`, `http`…); a
    ///   signature GET that fails other than with a 404 is thrown too.
    public func poll(conditional: Bool = true) throws(FetchError) -> PollOutcome {
        lastPollBytes = 0
        let response = try client.get(manifestURL, ifNoneMatch: conditional ? committed.etag : nil,
                                      ifModifiedSince: conditional ? committed.lastModified : nil, maxBytes: maxManifestBytes)
        lastPollBytes = response.bytesReceived
        if response.status == 304 { return .unchanged }
        pending = State(url: baseURL, etag: response.etag, lastModified: response.lastModified)
        var signature: [UInt8]? = nil
        do {
            let signed = try client.get(manifestURL + ".minisig", maxBytes: maxManifestBytes)
            lastPollBytes += signed.bytesReceived
            signature = signed.body
        } catch .http(status: 404, _) {
            signature = nil
        }
        return .changed(manifestBytes: response.body, signature: signature)
    }

    /// Records the validators of the manifest the last `poll()` returned, in the state file
    /// (atomically), so the next polls, after a reboot too, send them. Call it once that manifest
    /// is imported, or refused for good (a bad signature, which refetching would not mend).
    /// - Throws: `FetchError.noSpace` or `.io` from writing the state file.
    /// The corresponding C functions are those of `FileSystem.writeAtomically` (`write`, `fsync`, `rename`).
    public func commit() throws(FetchError) {
        guard let pending else { return }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let bytes = (try? encoder.encode(pending)).map { Array($0) } ?? []
        do {
            try FileSystem.writeAtomically(bytes, to: statePath)
        } catch {
            throw error.errno.isOutOfSpace ? .noSpace(path: error.path) : .io(path: error.path, errno: error.errno)
        }
        committed = pending
        self.pending = nil
    }

    /// The delay before the next poll: `interval` seconds ± `jitter` × `interval`, uniformly, so
    /// that a fleet started together does not poll together. Never negative.
    /// - Parameters:
    ///   - interval: the poll interval in seconds (`update.interval`).
    ///   - jitter: the fraction of `interval` to spread over, 0…1 (0.1: ± 10 %).
    public static func nextDelay(interval: Double, jitter: Double, random: inout some RandomNumberGenerator) -> Double {
        let spread = interval * min(max(jitter, 0), 1)
        guard spread > 0 else { return max(0, interval) }
        return max(0, interval + Double.random(in: -spread...spread, using: &random))
    }

    /// Downloads every file of `files` from `<base>/<under><path>` (by default `<base>/media/<path>`)
    /// into `folder/<path>`, making
    /// subfolders as needed. A file already there with the right size and SHA-256 is not requested;
    /// a `.part` left by an earlier attempt is resumed. A retryable failure (`FetchError.isRetryable`:
    /// timeout, lost connection, 5xx) is retried up to `attempts` times per file, `retryDelay`
    /// seconds apart, resuming each time.
    ///
    /// Every path is checked before anything is requested: one that is absolute, has a `.` or `..`
    /// or empty segment, a backslash or a control character is refused (`FetchError.unsafePath`),
    /// so nothing is written outside `folder`.
    /// - Parameters:
    ///   - folder: the target folder; it must exist.
    ///   - under: the folder of `baseURL` the paths are relative to, ending in `/`: `"media/"` (the
    ///     default), or `""` for paths relative to the catalog, as a manifest's `src` (`media/a.mp4`),
    ///     so that `folder` gets the stick's layout.
    ///   - progress: called with (bytes done, bytes in all files).
    /// - Throws: `unsafePath`, or the first non-retryable (or last) `FetchError` of a file; files
    ///   finished before it stay in place.
    public func fetchMedia(files: [MediaFile], into folder: String, under: String = "media/", attempts: Int = 3,
                           retryDelay: Double = 1, progress: ((Int, Int) -> Void)? = nil) throws(FetchError) -> MediaFetchSummary {
        for file in files where !Self.isSafe(file.path) { throw .unsafePath(file.path) }
        let total = files.reduce(0) { $0 + $1.size }
        var summary = MediaFetchSummary()
        var before = 0
        for file in files {
            let target = folder + "/" + file.path
            let parent = FileSystem.parentPath(target)
            do { try FileSystem.makeDirectories(parent) } catch {
                throw error.errno.isOutOfSpace ? .noSpace(path: error.path) : .io(path: error.path, errno: error.errno)
            }
            let url = baseURL + Self.percentEncoded(under) + Self.percentEncoded(file.path)
            var attempt = 1
            while true {
                do {
                    let result = try client.download(url, to: target, size: file.size, sha256: file.sha256) { done, _ in
                        progress?(before + done, total)
                    }
                    summary.bytesTransferred += result.bytesTransferred
                    if result.wasPresent { summary.alreadyPresent += 1 } else { summary.downloaded += 1 }
                    break
                } catch where error.isRetryable && error != .cancelled && attempt < attempts {
                    attempt += 1
                    summary.retries += 1
                    if retryDelay > 0 { usleep(UInt32(retryDelay * 1_000_000)) }
                }
            }
            before += file.size
        }
        return summary
    }

    /// Whether `path` stays inside the folder it is joined to: relative, no `.`/`..`/empty
    /// segments, no backslash, no control characters (C0, DEL, C1).
    public static func isSafe(_ path: String) -> Bool {
        guard !path.isEmpty, !path.hasPrefix("/"), !path.contains("\\") else { return false }
        for scalar in path.unicodeScalars where scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) {
            return false
        }
        return path.split(separator: "/", omittingEmptySubsequences: false).allSatisfy { $0 != "" && $0 != "." && $0 != ".." }
    }

    /// `path` with every byte outside RFC 3986's unreserved set and `/` percent-encoded.
    static func percentEncoded(_ path: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        for byte in path.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "/"):
                out.append(byte)
            default:
                out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
