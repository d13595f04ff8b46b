// The copy phase shared by its worker threads: which file comes next, bytes done, the first failure.
import Foundation
import Crypto
import FileIO
import SystemSupport
import VitrineCore

/// Hands files to the copy workers (largest first), adds up their progress and keeps the first failure.
/// Every member is guarded by `condition`; workers signal it after each chunk and when they end, and
/// the importing thread, once out of files itself, sleeps on it until then (it never polls).
// @unchecked: the `let`s are immutable and every `var` is read and written only under `condition`.
final class CopyBoard: @unchecked Sendable {
    let files: [StickFile]
    let sources: [String: String]
    /// Paths to hard-link from their source instead of copying (a network update's downloads).
    let linked: Set<String>
    let staging: String
    private let condition = NSCondition()
    /// File indices, largest first: two workers finish close together.
    private var queue: [Int]
    private var folders: Set<String> = []
    private(set) var bytesDone: Int64 = 0
    private(set) var filesDone = 0
    /// Files hard-linked (and hashed) rather than copied.
    private(set) var filesLinked = 0
    private(set) var failure: StickImport.Stop?
    private var mismatches: [(index: Int, problem: ImportProblem)] = []
    private var running = 0
    /// Bytes were added, or a worker ended, since the importing thread last looked.
    private var changed = false

    init(files: [StickFile], sources: [String: String], linked: Set<String> = [], staging: String) {
        self.files = files; self.sources = sources; self.linked = linked; self.staging = staging
        queue = files.indices.sorted { files[$0].size != files[$1].size ? files[$0].size > files[$1].size : $0 < $1 }
    }

    private func locked<T>(_ body: () -> T) -> T {
        condition.lock(); defer { condition.unlock() }
        return body()
    }

    /// A snapshot for progress reports.
    var totals: (bytes: Int64, files: Int) { locked { (bytesDone, filesDone) } }

    /// Files hard-linked so far.
    var linkedCount: Int { locked { filesLinked } }

    /// Hash mismatches, in manifest order.
    var hashProblems: [ImportProblem] { locked { mismatches.sorted { $0.index < $1.index }.map(\.problem) } }

    var stopped: Bool { locked { failure != nil } }

    /// Runs the copy with `workers` threads: the calling thread is one of them; `report` is called on
    /// it after each of its chunks and, once it has no more files, after each chunk another worker
    /// copies, until the others finish.
    func run(workers: Int, report: () -> Void) {
        locked { running = workers }
        for _ in 1..<max(1, workers) {
            let thread = Thread(block: FaultInjection.propagating { [self] in work(report: {}) })
            thread.name = "vitrine.import.copy"
            thread.start()
        }
        work(report: report)
        condition.lock()
        while running > 0 {
            while !changed { condition.wait() }
            changed = false
            condition.unlock()
            report()  // Outside the lock: it reads `totals`.
            condition.lock()
        }
        condition.unlock()
    }

    /// Marks a change for the importing thread and wakes it. Under `condition`.
    private func signalChange() {
        changed = true
        condition.broadcast()
    }

    /// One worker: takes files until none is left or something failed.
    private func work(report: () -> Void) {
        var copier = FileCopier()
        while let index = take() {
            let file = files[index]
            do {
                try makeFolders(for: file.path)
            } catch {
                fail(StickImport.writeFailure(error, file: file.path, field: file.pathField))
                break
            }
            do {
                let (digest, wasLinked) = try copier.copy(from: sources[file.path]!, to: staging + "/" + file.path,
                                                          expectedSize: file.size, link: linked.contains(file.path),
                                                          shouldStop: { stopped }) { added in
                    locked { bytesDone += added; signalChange() }
                    report()
                }
                locked {
                    filesDone += 1
                    if wasLinked { filesLinked += 1 }
                    if digest.hex != file.sha256 {
                        mismatches.append((index, ImportProblem(.hashMismatch, field: file.hashField, file: file.path,
                                                                "hash mismatch (expected \(file.sha256), got \(digest.hex))")))
                    }
                }
            } catch {
                if case .cancelled = error { break }
                fail(StickImport.stop(for: error, file: file))
                break
            }
        }
        locked { running -= 1; signalChange() }
    }

    private func take() -> Int? {
        locked { failure == nil && !queue.isEmpty ? queue.removeFirst() : nil }
    }

    private func fail(_ stop: StickImport.Stop) {
        locked { if failure == nil { failure = stop } }
    }

    /// Creates the folders on the way to `path` in staging, once each (workers may share them).
    private func makeFolders(for path: String) throws(FileError) {
        condition.lock(); defer { condition.unlock() }
        var prefix = ""
        for component in path.split(separator: "/").dropLast() {
            prefix += (prefix.isEmpty ? "" : "/") + component
            if folders.contains(prefix) { continue }
            try FileSystem.makeDirectory(staging + "/" + prefix)
            folders.insert(prefix)
        }
    }

    /// Folders created, deepest first (for fsync).
    var createdFolders: [String] {
        locked { folders.sorted { $0.split(separator: "/").count != $1.split(separator: "/").count
            ? $0.split(separator: "/").count > $1.split(separator: "/").count : $0 < $1 } }
    }
}
