import Foundation
import Synchronization
import Testing
@testable import CatalogStore
import Crypto
import FileIO
import SystemSupport
import VitrineCore

/// Faults during an import: each ends with a clear message, exit code 1 (or 65 for the stick's own
/// fault), nothing retried, the staging folder gone and the playing catalog whole and unchanged.
@Suite("Import: faults")
struct ImportFaultTests {
    /// A library playing version 1, and a version-2 stick of four 3 MB files (a few chunks each).
    func setUp() throws -> (CatalogLibrary, LibraryCatalog, TestStick) {
        let (library, playing) = try libraryPlaying(try TestStick(files: 2, size: 500_000, seed: 11, version: 1).write())
        let stick = try TestStick(files: 4, size: 3_000_000, seed: 12, version: 2).write()
        return (library, playing, stick)
    }

    func expectFailed(_ result: ImportResult, _ kind: ImportProblem.Kind, _ description: String,
                      sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(result.outcome == .failed, sourceLocation: sourceLocation)
        #expect(result.exitCode == 1, sourceLocation: sourceLocation)
        #expect(result.problems.map(\.kind) == [kind], sourceLocation: sourceLocation)
        #expect(result.problems.first?.description == description, sourceLocation: sourceLocation)
        #expect(result.message == "Import failed: \(description); the playing catalog is unchanged", sourceLocation: sourceLocation)
    }

    @Test("stick pulled between files: the next file has vanished", arguments: [1, 2])
    func stickPulled(workers: Int) throws {
        let (library, playing, stick) = try setUp()
        let vanished = stick.vitrine + "/media/clip2.mp4"
        // Pulled just before the copy opens it.
        let faults = FaultPlan { call in
            if call.is("open", "vitrine/media/clip2.mp4") { try? FileManager.default.removeItem(atPath: vanished) }
            return nil
        }
        let result = library.run(stick, faults: faults, workers: workers)
        #expect(!FileManager.default.fileExists(atPath: vanished), "the file was pulled before the import reached it")
        #expect(result.outcome == .failed && result.problems.map(\.kind) == [.stickRemoved])
        expectFailed(result, .stickRemoved,
                     "playlist[2].src: media/clip2.mp4: vanished from the stick while copying (was it pulled out?): No such file or directory (ENOENT)")
        expectUntouched(library, playing: playing)
    }

    @Test("stick pulled mid-file: a read fails with EIO after the first chunk", arguments: [1, 2])
    func readError(workers: Int) throws {
        let (library, playing, stick) = try setUp()
        let reads = Counter()
        let faults = FaultPlan { call in
            call.is("read", "media/clip1.mp4") && reads.bump("media/clip1.mp4") == 2 ? .fail(.ioError) : nil
        }
        let result = library.run(stick, faults: faults, workers: workers)
        expectFailed(result, .readError,
                     "playlist[1].src: media/clip1.mp4: read error on the stick (was it pulled out?): Input/output error (EIO)")
        #expect(reads.value("media/clip1.mp4") == 2)
        expectUntouched(library, playing: playing)
    }

    @Test("disk full: ENOSPC on a write stops the import at once, never retried")
    func diskFull() throws {
        let (library, playing, _) = try setUp()
        // Three files of three 4 MiB chunks each (4 + 4 + 0.58 MiB).
        let stick = try TestStick(files: 3, size: 9_000_000, seed: 13, version: 2).write()
        let writes = Counter()
        // The 5th chunk written overall fails: the 2nd chunk of the 2nd file (one worker: files in
        // size order, all equal → manifest order).
        let faults = FaultPlan { call in call.function == "write" && writes.bump("all") == 5 ? .fail(.noSpace) : nil }
        let result = library.run(stick, faults: faults, workers: 1)
        expectFailed(result, .noSpace, "playlist[1].src: media/clip1.mp4: write failed: No space left on device (ENOSPC)")
        #expect(writes.value("all") == 5)  // nothing after the failing write: no retry, no further file
        #expect(result.files == 1)
        // Bytes read and hashed: the 2nd file's chunks may be read ahead of the failing write.
        #expect(result.bytes >= 9_000_000 + 4_194_304 && result.bytes <= 18_000_000)
        expectUntouched(library, playing: playing)
    }

    @Test("an fsync that fails (EIO) is a write failure; never retried", arguments: [1, 2])
    func syncError(workers: Int) throws {
        let (library, playing, stick) = try setUp()
        let syncs = Counter()
        let faults = FaultPlan { call in
            guard call.is("fsync", "media/clip3.mp4") else { return nil }
            return syncs.bump("media/clip3.mp4") == 1 ? .fail(.ioError) : nil
        }
        let result = library.run(stick, faults: faults, workers: workers)
        expectFailed(result, .writeError, "playlist[3].src: media/clip3.mp4: fsync failed: Input/output error (EIO)")
        #expect(syncs.value("media/clip3.mp4") == 1)
        expectUntouched(library, playing: playing)
    }

    @Test("catalog.json cannot be written (ENOSPC) or its folder not synced")
    func catalogWrite() throws {
        let (library, playing, stick) = try setUp()
        let full = library.run(stick, faults: FaultPlan { $0.is("write", "catalog.json") ? .fail(.noSpace) : nil })
        expectFailed(full, .noSpace, "catalog.json: write failed: No space left on device (ENOSPC)")
        expectUntouched(library, playing: playing)
        let folder = library.run(stick, faults: FaultPlan { $0.is("fsync", "media") ? .fail(.ioError) : nil })
        expectFailed(folder, .writeError, "catalog.json: fsync failed: Input/output error (EIO)")
        #expect([full, folder].map(\.outcome) == [.failed, .failed])
        #expect([full, folder].map(\.exitCode) == [1, 1])
        expectUntouched(library, playing: playing)
    }

    @Test("the rename of staging into gen.N, or of the new current link, fails: current stays")
    func switchFails() throws {
        let (library, playing, stick) = try setUp()
        let rename = library.run(stick, faults: FaultPlan { call in
            call.function == "rename" && call.target?.split(separator: "/").last?.hasPrefix("gen.") == true ? .fail(.ioError) : nil
        })
        #expect(rename.outcome == .failed && rename.problems.map(\.kind) == [.writeError])
        #expect(rename.problems[0].description.hasSuffix("Input/output error (EIO)"))
        expectUntouched(library, playing: playing)
        let link = library.run(stick, faults: FaultPlan { call in
            call.function == "rename" && call.target == library.path + "/current" ? .fail(.noSpace) : nil
        })
        expectFailed(link, .noSpace, "current: rename \(library.path)/.current.tmp: No space left on device (ENOSPC)")
        expectUntouched(library, playing: playing)
        // Nothing is left behind for the next import, which succeeds.
        #expect(library.run(stick).outcome == .switched)
    }

    @Test("state.json not written after the switch: switched with a note; the version is still known and repaired")
    func stateWriteFails() throws {
        let (library, _, stick) = try setUp()
        let result = library.run(stick, faults: FaultPlan { $0.is("write", ".state.json.tmp") ? .fail(.noSpace) : nil })
        #expect(result.outcome == .switched)
        #expect(result.notes.first?.hasPrefix("state.json not written (write ") == true)
        #expect(LibraryState.read(library.path + "/state.json")?.version == 1)
        #expect(library.lastAcceptedVersion() == 2)   // current (gen.2) is newer than the record
        #expect(try library.cleanUp() != nil)
        #expect(LibraryState.read(library.path + "/state.json") == LibraryState(version: 2, generation: 2))
        #expect(library.run(stick).problems.map(\.kind) == [.notNewer])
    }

    @Test("not enough free space: refused before copying, with the sizes")
    func noSpace() throws {
        let (library, playing, stick) = try setUp()
        let result = library.run(stick, faults: FaultPlan(availableSpace: 70 << 20))
        expectFailed(result, .noSpace, "not enough free space in \(library.path): 11.4 MiB to copy plus a 64.0 MiB margin, 70.0 MiB free")
        #expect(result.bytes == 0)
        expectUntouched(library, playing: playing)
    }

    @Test("a second import while one holds the lock fails at once")
    func busy() throws {
        let (library, playing, stick) = try setUp()
        let lock = try #require(try CatalogLibrary.Lock(library.path + "/.lock"))
        let result = library.run(stick)
        lock.release()
        expectFailed(result, .busy, "another import is running (\(library.path)/.lock is locked)")
        // Cleanup does nothing while an import runs.
        let again = try #require(try CatalogLibrary.Lock(library.path + "/.lock"))
        try FileManager.default.createDirectory(atPath: library.path + "/staging.9", withIntermediateDirectories: false)
        #expect(try library.cleanUp() == nil)
        #expect(library.entries.contains("staging.9"))
        again.release()
        #expect(try library.cleanUp()?.removed == ["staging.9"])
        expectUntouched(library, playing: playing)
    }

    @Test("two imports on two threads: one switches, the other fails busy or finds the version already taken")
    func concurrent() throws {
        let (library, _, stick) = try setUp()
        let results = ResultBox()
        let group = DispatchGroup()
        for _ in 0..<2 {
            DispatchQueue.global().async(group: group) { results.add(library.importStick(at: stick.mount)) }
        }
        group.wait()
        let outcomes = results.all.map(\.outcome)
        #expect(outcomes.filter { $0 == .switched }.count == 1)
        let other = try #require(results.all.first { $0.outcome != .switched })
        #expect(other.problems.map(\.kind) == [.busy] || other.problems.map(\.kind) == [.notNewer])
        #expect(library.resolve(verifyHashes: true).catalog?.manifest.version == 2)
    }
}

final class ResultBox: Sendable {
    private let results = Mutex<[ImportResult]>([])
    func add(_ r: ImportResult) { results.withLock { $0.append(r) } }
    var all: [ImportResult] { results.withLock { $0 } }
}

@Suite("Import: the library lock")
struct LibraryLockTests {
    @Test("a released lock lets the next import in even while a copy of its descriptor lives on (a child between fork and exec)")
    func releasedWhileShared() throws {
        let library = newLibrary()
        try FileManager.default.createDirectory(atPath: library.path, withIntermediateDirectories: true)
        let lock = try #require(try CatalogLibrary.Lock(library.lockPath))
        // The descriptor that holds the lock, found in /proc/self/fd, and a copy of it: what a
        // process spawned by another thread holds until it execs.
        let fds = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").compactMap { Int32($0) }
        let held = try #require(fds.first { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")) == library.lockPath })
        let copy = dup(held)
        #expect(copy >= 0)
        defer { close(copy) }
        #expect(try CatalogLibrary.Lock(library.lockPath) == nil, "held: a second lock is refused")
        lock.release()
        let next = try CatalogLibrary.Lock(library.lockPath)
        #expect(next != nil, "released although the copy is still open")
        next?.release()
    }
}
