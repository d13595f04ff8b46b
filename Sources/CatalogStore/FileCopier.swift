// Copy and hash in one pass: each chunk is read from the stick once, hashed, then written.
import Crypto
import FileIO

/// Copies one file at a time from the stick into the staging folder, hashing every chunk between the
/// read and the write, so the stick is read exactly once. Each file is fsync'ed before the next begins;
/// writeback of each chunk is started as soon as it is written, so the fsync has little left to do.
/// Errors are never retried.
struct FileCopier {
    /// Bytes per read and write (4 MiB).
    static let chunkSize = 4 << 20
    /// Start the kernel's writeback after this many new bytes (8 MiB).
    static let writebackInterval: Int64 = 8 << 20

    let faults: ImportFaults
    private var buffer = [UInt8](repeating: 0, count: FileCopier.chunkSize)

    init(faults: ImportFaults) { self.faults = faults }

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
    ///   - relative: the path relative to `vitrine/`, for fault injection.
    ///   - expectedSize: the manifest size; the copy reads at most one chunk past it.
    ///   - shouldStop: asked before each chunk; true stops the copy with `.cancelled`.
    ///   - progress: called after each chunk with the bytes it added.
    /// - Returns: the SHA-256 of the bytes copied.
    mutating func copy(from source: String, to destination: String, relative: String, expectedSize: Int64,
                       shouldStop: () -> Bool, progress: (Int64) -> Void) throws(Failure) -> SHA256.Digest {
        let input: FileDescriptor
        do {
            try faults.check(.open, relative, source)
            input = try FileDescriptor(opening: source, .readOnly, options: [.noFollow])
        } catch { throw .source(error) }
        input.adviseSequential()
        let output: FileDescriptor
        do {
            output = try FileDescriptor(opening: destination, .writeOnly, options: [.create, .exclusive, .noFollow],
                                        permissions: 0o644)
        } catch { throw .destination(error) }
        let hasher = SHA256()
        var copied: Int64 = 0, writebackFrom: Int64 = 0
        while true {
            if shouldStop() { throw .cancelled }
            let n: Int
            do {
                try faults.check(.read, relative, source)
                n = try input.read(into: &buffer, count: buffer.count)
            } catch { throw .source(error) }
            if n == 0 { break }
            hasher.update(buffer, range: 0..<n)
            do {
                try faults.check(.write, relative, destination)
                try output.write(buffer, count: n)
            } catch { throw .destination(error) }
            copied += Int64(n)
            if copied > expectedSize { throw .sizeChanged(actual: copied) }
            if copied - writebackFrom >= Self.writebackInterval {
                output.startWriteback(offset: writebackFrom, length: copied - writebackFrom)
                writebackFrom = copied
            }
            progress(Int64(n))
        }
        if copied != expectedSize { throw .sizeChanged(actual: copied) }
        do {
            try faults.check(.sync, relative, destination)
            try output.sync()
            try output.close()
        } catch { throw .destination(error) }
        try? input.close()
        return hasher.finalize()
    }
}
