// The `.part` file of a download: appended to, hashed as it grows, checked, renamed into place.
#if canImport(Glibc)
internal import Glibc
#endif
import Crypto
import FileIO

/// A download's partial file `path + ".part"`. Bytes are gathered in a 1 MiB buffer, then written
/// and hashed together (one copy from libcurl's buffer, one `write`, one SHA-256 update).
final class PartFile {
    let path: String
    let partPath: String
    let url: String
    let size: Int
    let expected: SHA256.Digest
    /// Bytes of the file done: on disk plus buffered.
    private(set) var written: Int
    /// Body bytes received by this attempt.
    private(set) var received = 0
    /// Whether the server sent the whole file (200) although a Range was asked for.
    private(set) var restarted = false
    private var fd: FileDescriptor
    private var hasher = SHA256()
    private var buffer = [UInt8](repeating: 0, count: 1 << 20)
    private var buffered = 0
    private var onDisk: Int

    /// Whether `path` already holds `size` bytes hashing to `expected` (read and hashed once).
    static func isComplete(_ path: String, size: Int, expected: SHA256.Digest) throws(FetchError) -> Bool {
        guard let status = try wrap(path, { () throws(FileError) in try FileSystem.status(path, followLinks: false) }),
              status.isRegularFile, status.size == Int64(size) else { return false }
        let hasher = SHA256()
        _ = try wrap(path) { () throws(FileError) in try hashContents(of: FileDescriptor(opening: path, .readOnly), into: hasher) }
        return hasher.finalize() == expected
    }

    /// Opens (or creates) the part, drops it when it is longer than `size`, and hashes what it holds.
    init(path: String, url: String, size: Int, expected: SHA256.Digest) throws(FetchError) {
        self.path = path
        partPath = path + ".part"
        self.url = url
        self.size = size
        self.expected = expected
        let partPath = partPath
        if let status = try Self.wrap(partPath, { () throws(FileError) in try FileSystem.status(partPath, followLinks: false) }),
           !status.isRegularFile || status.size > Int64(size) {
            try Self.wrap(partPath) { () throws(FileError) in try FileSystem.removeTree(partPath) }
        }
        fd = try Self.openForAppend(partPath, truncate: false)
        let hasher = SHA256()
        onDisk = try Self.wrap(partPath) { () throws(FileError) in
            try Self.hashContents(of: FileDescriptor(opening: partPath, .readOnly), into: hasher)
        }
        self.hasher = hasher
        written = onDisk
    }

    /// The headers of the response arrived: a 206 must continue at `written`; a 200 starts over.
    /// A file whose announced length (Content-Range's total, or a 200's Content-Length) is not
    /// `size` is refused before any byte is written, and the part removed.
    func begin(status: Int, headers: [String: String]) throws(FetchError) {
        switch status {
        case 206:
            // "bytes 1000-4999/5000" (RFC 9110 §14.4)
            let range = headers["content-range"] ?? "missing"
            let fields = range.hasPrefix("bytes ") ? range.dropFirst(6).split(whereSeparator: { $0 == "-" || $0 == "/" }) : []
            guard fields.count == 3, Int(fields[0]) == written else {
                throw .other(code: 0, detail: "\(url): Content-Range \(range) does not start at \(written)")
            }
            if let total = Int(fields[2]), total != size {
                discard()
                throw .sizeMismatch(url: url, expected: size, got: total)
            }
        case 200:
            if let length = headers["content-length"].flatMap({ Int($0) }), length != size {
                discard()
                throw .sizeMismatch(url: url, expected: size, got: length)
            }
            if written > 0 {
                restarted = true
                fd = try Self.openForAppend(partPath, truncate: true)
                hasher = SHA256()
                onDisk = 0
                written = 0
            }
        default:
            break
        }
    }

    /// A piece of the body (only 200 and 206 bodies are written).
    func receive(status: Int, _ bytes: UnsafeRawBufferPointer) throws(FetchError) {
        guard status == 200 || status == 206 else { throw .http(status: status, url: url) }
        guard written + bytes.count <= size else {
            try? flush()
            discard()
            throw .sizeMismatch(url: url, expected: size, got: written + bytes.count)
        }
        var offset = 0
        while offset < bytes.count {
            let n = min(bytes.count - offset, buffer.count - buffered)
            buffer.withUnsafeMutableBytes { target in
                target.baseAddress!.advanced(by: buffered).copyMemory(from: bytes.baseAddress! + offset, byteCount: n)
            }
            buffered += n
            offset += n
            if buffered == buffer.count { try flush() }
        }
        written += bytes.count
        received += bytes.count
    }

    /// Writes and hashes the buffered bytes.
    func flush() throws(FetchError) {
        guard buffered > 0 else { return }
        let count = buffered
        try Self.wrap(partPath) { [fd, buffer] () throws(FileError) in try fd.write(buffer, count: count) }
        hasher.update(buffer, range: 0..<count)
        onDisk += count
        buffered = 0
    }

    /// Checks the size and hash, fsyncs, renames to `path` and fsyncs the folder. A wrong size or
    /// hash removes the part.
    func finish() throws(FetchError) {
        try flush()
        guard written == size else {
            discard()
            throw .sizeMismatch(url: url, expected: size, got: written)
        }
        let digest = hasher.finalize()
        guard digest == expected else {
            discard()
            throw .hashMismatch(url: url, expected: expected.hex, got: digest.hex)
        }
        let (partPath, path) = (self.partPath, self.path)
        try Self.wrap(partPath) { [fd] () throws(FileError) in
            try fd.sync()
            try fd.close()
            try FileSystem.rename(partPath, to: path)
            let folder = FileSystem.parentPath(path)
            try FileSystem.syncDirectory(folder.isEmpty ? "." : folder)
        }
    }

    /// Removes the part (its bytes are not the manifest's file).
    private func discard() {
        buffered = 0
        try? FileSystem.unlink(partPath)
    }

    private static func openForAppend(_ path: String, truncate: Bool) throws(FetchError) -> FileDescriptor {
        var options: FileDescriptor.Options = [.create, .noFollow, FileDescriptor.Options(rawValue: O_APPEND)]
        if truncate { options.insert(.truncate) }
        return try wrap(path) { () throws(FileError) in try FileDescriptor(opening: path, .writeOnly, options: options) }
    }

    /// Hashes the whole file behind `fd`; returns its length in bytes.
    private static func hashContents(of fd: FileDescriptor, into hasher: SHA256) throws(FileError) -> Int {
        fd.adviseSequential()
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        var total = 0
        while true {
            let n = try fd.read(into: &chunk, count: chunk.count)
            if n == 0 { return total }
            hasher.update(chunk, range: 0..<n)
            total += n
        }
    }

    /// Runs file calls, turning a `FileError` into `noSpace` (ENOSPC, EDQUOT, EFBIG) or `io`.
    private static func wrap<T>(_ path: String, _ body: () throws(FileError) -> T) throws(FetchError) -> T {
        do { return try body() } catch {
            throw error.errno.isOutOfSpace ? .noSpace(path: error.path) : .io(path: error.path, errno: error.errno)
        }
    }
}
