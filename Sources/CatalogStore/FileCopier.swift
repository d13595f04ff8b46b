// Copy and hash in one pass: each chunk is read from the stick once, hashed, then written.
import Foundation
import Crypto
import FileIO
import SystemSupport

/// Copies one file at a time from the stick into the staging folder, hashing every chunk between the
/// read and the write, so the stick is read exactly once. A file longer than one chunk is written by
/// a second thread while the next chunk is read and hashed (three 4 MiB buffers go round), so one
/// file's copy costs about its hashing time. Writeback of each chunk is started as soon as it is
/// written, so the fsync at the end of each file has little left to do. Errors are never retried.
struct FileCopier {
    /// Bytes per read and write (4 MiB).
    static let chunkSize = 4 << 20
    /// Start the kernel's writeback after this many new bytes (8 MiB).
    static let writebackInterval: Int64 = 8 << 20

    /// The buffers, reused from file to file.
    private var chunks = (0..<3).map { _ in Chunk() }

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
    ///   - shouldStop: asked before each chunk; true stops the copy with `.cancelled`.
    ///   - progress: called after each chunk is read and hashed, with its size in bytes.
    /// - Returns: the SHA-256 of the bytes copied.
    mutating func copy(from source: String, to destination: String, expectedSize: Int64,
                       shouldStop: () -> Bool, progress: (Int64) -> Void) throws(Failure) -> SHA256.Digest {
        let input: FileDescriptor
        do {
            input = try FileDescriptor(opening: source, .readOnly, options: [.noFollow])
        } catch { throw .source(error) }
        input.adviseSequential()
        let output: FileDescriptor
        do {
            output = try FileDescriptor(opening: destination, .writeOnly, options: [.create, .exclusive, .noFollow],
                                        permissions: 0o644)
        } catch { throw .destination(error) }
        let writer = ChunkWriter(output: output, chunks: chunks)
        if expectedSize > Int64(Self.chunkSize) { writer.start() }
        let hasher = SHA256()
        var copied: Int64 = 0
        var failure: Failure?
        while true {
            if shouldStop() { failure = .cancelled; break }
            guard let chunk = writer.freeChunk() else { break }  // the writer failed
            do {
                chunk.count = try input.read(into: &chunk.bytes, count: chunk.bytes.count)
            } catch { failure = .source(error); writer.giveBack(chunk); break }
            if chunk.count == 0 { writer.giveBack(chunk); break }
            hasher.update(chunk.bytes, range: 0..<chunk.count)
            copied += Int64(chunk.count)
            let n = Int64(chunk.count)
            writer.write(chunk)
            if copied > expectedSize { failure = .sizeChanged(actual: copied); break }
            progress(n)
        }
        if let error = writer.finish() { throw .destination(error) }
        if let failure { throw failure }
        if copied != expectedSize { throw .sizeChanged(actual: copied) }
        do {
            try output.sync()
            try output.close()
        } catch { throw .destination(error) }
        try? input.close()
        return hasher.finalize()
    }
}

/// One buffer of a copy and how many of its bytes are valid.
// @unchecked: a chunk has one owner at a time (the reader, or the writer once queued), handed over
// under `ChunkWriter.condition`, whose lock orders the accesses.
final class Chunk: @unchecked Sendable {
    var bytes = [UInt8](repeating: 0, count: FileCopier.chunkSize)
    var count = 0
}

/// Writes a file's chunks in order, on its own thread once started (else inline, on the caller's),
/// and hands each buffer back when it is written. Stops at the first error, which `finish()` returns.
/// Every member is guarded by `condition`.
// @unchecked: the queues and flags are used only under `condition`; `output`, `written` and
// `writebackFrom` only by the one writing thread (the writer's, or the caller's when not threaded).
final class ChunkWriter: @unchecked Sendable {
    private let output: FileDescriptor
    private let condition = NSCondition()
    private var free: [Chunk]
    private var filled: [Chunk] = []
    private var threaded = false
    private var ending = false
    private var done = false
    private var error: FileError?
    private var written: Int64 = 0
    private var writebackFrom: Int64 = 0

    init(output: FileDescriptor, chunks: [Chunk]) {
        self.output = output; free = chunks
    }

    /// Moves the writes to a thread of their own.
    func start() {
        threaded = true
        let thread = Thread(block: FaultInjection.propagating { [self] in run() })
        thread.name = "vitrine.import.write"
        thread.start()
    }

    /// A buffer to read into, waiting for one if all are queued; nil once a write has failed.
    func freeChunk() -> Chunk? {
        condition.lock(); defer { condition.unlock() }
        while free.isEmpty && error == nil { condition.wait() }
        return error == nil ? free.removeLast() : nil
    }

    /// Returns an unused buffer.
    func giveBack(_ chunk: Chunk) {
        condition.lock(); free.append(chunk); condition.unlock()
    }

    /// Queues `chunk` for writing (or writes it now when not threaded).
    func write(_ chunk: Chunk) {
        guard threaded else {
            if failed == nil { writeOut(chunk) }
            giveBack(chunk)
            return
        }
        condition.lock()
        filled.append(chunk)
        condition.broadcast()
        condition.unlock()
    }

    /// The first write error so far.
    private var failed: FileError? { condition.lock(); defer { condition.unlock() }; return error }

    /// Waits until every queued chunk is written (or a write failed) and the thread has ended.
    /// - Returns: the first write error, if any.
    func finish() -> FileError? {
        condition.lock(); defer { condition.unlock() }
        ending = true
        condition.broadcast()
        while threaded && !done { condition.wait() }
        return error
    }

    private func run() {
        condition.lock()
        while true {
            while filled.isEmpty && !ending { condition.wait() }
            if filled.isEmpty || error != nil { break }
            let chunk = filled.removeFirst()
            condition.unlock()
            writeOut(chunk)
            condition.lock()
            free.append(chunk)
            condition.broadcast()
            if error != nil { break }
        }
        done = true
        condition.broadcast()
        condition.unlock()
    }

    /// Writes one chunk and starts its writeback; records the error instead of throwing.
    private func writeOut(_ chunk: Chunk) {
        do {
            try output.write(chunk.bytes, count: chunk.count)
        } catch {
            condition.lock(); if self.error == nil { self.error = error }; condition.broadcast(); condition.unlock()
            return
        }
        written += Int64(chunk.count)
        if written - writebackFrom >= FileCopier.writebackInterval {
            output.startWriteback(offset: writebackFrom, length: written - writebackFrom)
            writebackFrom = written
        }
    }
}
