// Copy and hash in one pass: each chunk is read from the stick once, then written and hashed at once.
import Foundation
import Crypto
import FileIO
import SystemSupport

/// Copies one file at a time from the stick into the staging folder, hashing every chunk it copies,
/// so the stick is read exactly once. The copying thread reads each chunk and writes it; a file
/// longer than one chunk is hashed by a second thread meanwhile (four 4 MiB buffers go round: a
/// buffer is read into again once it is written and hashed), so the thread that hashes does
/// nothing else, and one file's copy costs about its hashing time. Writeback of each chunk is
/// started as soon as it is written, so the fsync at the end of each file has little left to do.
/// Errors are never retried.
///
/// For a network update's downloads folder (`ImportOrigin.network`) a file already on the library's
/// file system is hard-linked into staging instead, and only read and hashed the same way.
///
/// Profile (`perf record -e cpu-clock` of `vitrine import` of one 256 MiB file): SHA-256 is 72 %
/// of the CPU, the kernel's copies into and out of the page cache most of the rest.
struct FileCopier {
    /// Bytes per read and write (4 MiB).
    static let chunkSize = 4 << 20
    /// Buffers per copy: the one being read, one being hashed, and two in flight between them.
    static let chunkCount = 4
    /// Start the kernel's writeback after this many new bytes (8 MiB).
    static let writebackInterval: Int64 = 8 << 20

    /// The buffers, reused from file to file.
    private var chunks = (0..<Self.chunkCount).map { _ in Chunk() }

    /// Why a copy stopped.
    enum Failure: Error {
        /// Opening or reading the stick failed.
        case source(FileError)
        /// Creating, writing or syncing the copy failed.
        case destination(FileError)
        /// The stick's file ended before, or went on past, its expected size.
        case sizeChanged(actual: Int64)
        /// `shouldStop` said so (another file failed).
        case cancelled
    }

    /// Copies `source` (a real path on the stick) to `destination` (a new file), hashing it.
    /// - Parameters:
    ///   - expectedSize: the manifest size; the copy reads at most one chunk past it.
    ///   - link: make `destination` a hard link to `source` (`link(2)`) and only read `source` to
    ///     hash it; when the two are on different file systems after all (`EXDEV`, a bind mount),
    ///     or the file system has no hard links (`EPERM`), the file is copied.
    ///   - shouldStop: asked before each chunk; true stops the copy with `.cancelled`.
    ///   - progress: called after each chunk is read (and written), with its size in bytes.
    /// - Returns: the SHA-256 of the bytes read, and whether `destination` is a link.
    mutating func copy(from source: String, to destination: String, expectedSize: Int64, link: Bool = false,
                       shouldStop: () -> Bool, progress: (Int64) -> Void) throws(Failure) -> (SHA256.Digest, linked: Bool) {
        var linked = false
        if link {
            do {
                try FileSystem.hardLink(at: destination, to: source)
                linked = true
            } catch where error.errno == .crossDevice || error.errno == .notPermitted {
                linked = false
            } catch { throw .destination(error) }
        }
        let input: FileDescriptor
        do {
            input = try FileDescriptor(opening: source, .readOnly, options: [.noFollow])
        } catch { throw .source(error) }
        input.adviseSequential()
        let output: FileDescriptor?
        if linked {
            output = nil
        } else {
            do {
                output = try FileDescriptor(opening: destination, .writeOnly, options: [.create, .exclusive, .noFollow],
                                            permissions: 0o644)
            } catch { throw .destination(error) }
        }
        let hasher = ChunkHasher(chunks: chunks)
        if expectedSize > Int64(Self.chunkSize) { hasher.start() }
        var copied: Int64 = 0, writebackFrom: Int64 = 0
        var failure: Failure?
        while true {
            if shouldStop() { failure = .cancelled; break }
            let chunk = hasher.freeChunk()
            do {
                chunk.count = try input.read(into: &chunk.bytes, count: chunk.bytes.count)
            } catch { failure = .source(error); hasher.giveBack(chunk); break }
            if chunk.count == 0 { hasher.giveBack(chunk); break }
            copied += Int64(chunk.count)
            if copied > expectedSize { failure = .sizeChanged(actual: copied); hasher.giveBack(chunk); break }
            // Hashed on the other thread while it is written here: both only read the buffer.
            hasher.hash(chunk)
            if let output {
                do {
                    try output.write(chunk.bytes, count: chunk.count)
                } catch { failure = .destination(error); break }
                if copied - writebackFrom >= Self.writebackInterval {
                    output.startWriteback(offset: writebackFrom, length: copied - writebackFrom)
                    writebackFrom = copied
                }
            }
            progress(Int64(chunk.count))
        }
        let digest = hasher.finish()
        if let failure { throw failure }
        if copied != expectedSize { throw .sizeChanged(actual: copied) }
        // A link's data is the source's, already on the device (the download fsynced it); the new
        // name is flushed with the staging folders.
        if let output {
            do {
                try output.sync()
                try output.close()
            } catch { throw .destination(error) }
        }
        try? input.close()
        return (digest, linked)
    }
}

/// One buffer of a copy and how many of its bytes are valid.
// @unchecked: filled only while free (handed out under `ChunkHasher`'s lock); while queued, both threads only read it.
final class Chunk: @unchecked Sendable {
    var bytes = [UInt8](repeating: 0, count: FileCopier.chunkSize)
    var count = 0
}

/// Hashes a file's chunks in order, on its own thread once started (else inline, on the caller's),
/// and makes each buffer free again once it is hashed.
/// Every member but `sha` is guarded by `condition`.
// @unchecked: queues and flags only under `condition`; `sha` only on the hashing thread, then in `finish()` after it.
final class ChunkHasher: @unchecked Sendable {
    private let sha = SHA256()
    private let condition = NSCondition()
    private var free: [Chunk]
    private var queued: [Chunk] = []
    private var threaded = false
    private var ending = false
    private var done = false

    init(chunks: [Chunk]) { free = chunks }

    /// Moves the hashing to a thread of its own.
    func start() {
        threaded = true
        let thread = Thread(block: FaultInjection.propagating { [self] in run() })
        thread.name = "vitrine.import.hash"
        thread.start()
    }

    /// A buffer to read into, waiting until one is hashed if all are queued.
    func freeChunk() -> Chunk {
        condition.lock(); defer { condition.unlock() }
        while free.isEmpty { condition.wait() }
        return free.removeLast()
    }

    /// Returns a buffer that was not queued.
    func giveBack(_ chunk: Chunk) {
        condition.lock(); free.append(chunk); condition.broadcast(); condition.unlock()
    }

    /// Queues `chunk` for hashing (or hashes it now when not threaded). The caller may go on
    /// reading the chunk (to write it) but must not change it until `freeChunk()` hands it out again.
    func hash(_ chunk: Chunk) {
        guard threaded else {
            sha.update(chunk.bytes, range: 0..<chunk.count)
            giveBack(chunk)
            return
        }
        condition.lock()
        queued.append(chunk)
        condition.broadcast()
        condition.unlock()
    }

    /// Waits until every queued chunk is hashed and the thread has ended.
    /// - Returns: the digest of every chunk queued, in order.
    func finish() -> SHA256.Digest {
        condition.lock()
        ending = true
        condition.broadcast()
        while threaded && !done { condition.wait() }
        condition.unlock()
        return sha.finalize()
    }

    private func run() {
        condition.lock()
        while true {
            while queued.isEmpty && !ending { condition.wait() }
            if queued.isEmpty { break }
            let chunk = queued.removeFirst()
            condition.unlock()
            sha.update(chunk.bytes, range: 0..<chunk.count)
            condition.lock()
            free.append(chunk)
            condition.broadcast()
        }
        done = true
        condition.broadcast()
        condition.unlock()
    }
}
