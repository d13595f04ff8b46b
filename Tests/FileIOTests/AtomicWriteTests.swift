import Foundation
import Synchronization
import Testing
import FileIO

/// A fresh folder under the temporary directory.
func scratchFolder(_ name: String) throws -> String {
    let folder = NSTemporaryDirectory() + "vitrine-fileio-\(name)-\(UUID().uuidString.prefix(8))"
    try FileSystem.makeDirectories(folder)
    return folder
}

/// The C calls a plan saw, in order (`"fsync /x/.a.tmp"`).
final class CallLog: Sendable {
    private let calls = Mutex<[String]>([])
    func record(_ call: SystemCall) { calls.withLock { $0.append(call.function + " " + (call.subject ?? "")) } }
    var all: [String] { calls.withLock { $0 } }
}

@Suite("FileSystem.writeAtomically: a temporary file, fsync, rename, fsync of the folder")
struct AtomicWriteTests {
    func read(_ path: String) -> String? { try? String(contentsOfFile: path, encoding: .utf8) }

    @Test("creates the file, or replaces it by a new inode, and leaves no temporary file; the steps in order")
    func writes() throws {
        let folder = try scratchFolder("atomic")
        defer { try? FileSystem.removeTree(folder) }
        let path = folder + "/state.json"
        let log = CallLog()
        try FaultInjection.withPlan(FaultPlan { log.record($0); return nil }) {
            try FileSystem.writeAtomically(Array("one\n".utf8), to: path)
        }
        #expect(read(path) == "one\n")
        let temporary = folder + "/.state.json.tmp"
        #expect(FileSystem.atomicWriteTemporary(for: path) == temporary)
        #expect(log.all.filter { !$0.hasPrefix("lstat") && !$0.hasPrefix("close") } == [
            "open \(temporary)", "write \(temporary)", "fsync \(temporary)", "rename \(temporary)",
            "open \(folder)", "fsync \(folder)",
        ])
        let before = try FileSystem.status(of: path)
        try FileSystem.writeAtomically(Array("two\n".utf8), to: path, permissions: 0o600)
        let after = try FileSystem.status(of: path)
        #expect(read(path) == "two\n")
        #expect(after.inode != before.inode)
        #expect(after.permissions & 0o077 == 0)
        #expect(try FileSystem.contentsOfDirectory(folder) == ["state.json"])
    }

    @Test("a write, fsync or rename that fails leaves the old file whole and removes the temporary file",
          arguments: ["write", "fsync", "rename"])
    func failureKeepsOld(function: String) throws {
        let folder = try scratchFolder("atomic-fail")
        defer { try? FileSystem.removeTree(folder) }
        let path = folder + "/answer.result"
        try FileSystem.writeAtomically(Array("old\n".utf8), to: path)
        let injected: Errno = function == "write" ? .noSpace : .ioError
        let error = #expect(throws: FileError.self) {
            try FaultInjection.withPlan(FaultPlan { $0.function == function ? .fail(injected) : nil }) {
                try FileSystem.writeAtomically(Array("new, longer text\n".utf8), to: path)
            }
        }
        #expect(error == FileError(operation: function, path: folder + "/.answer.result.tmp", errno: injected))
        #expect(read(path) == "old\n")
        #expect(try FileSystem.contentsOfDirectory(folder) == ["answer.result"])
    }

    @Test("a leftover temporary file from a crash is replaced")
    func leftover() throws {
        let folder = try scratchFolder("atomic-leftover")
        defer { try? FileSystem.removeTree(folder) }
        let path = folder + "/state.json"
        FileManager.default.createFile(atPath: folder + "/.state.json.tmp", contents: Data("half".utf8))
        try FileSystem.writeAtomically(Array("whole\n".utf8), to: path)
        #expect(read(path) == "whole\n")
        #expect(try FileSystem.contentsOfDirectory(folder) == ["state.json"])
    }
}

@Suite("FileSystem.status(of:) and what the player asks of a file")
struct FileStatusTests {
    @Test("a regular file: kind, size and owner; a folder and a FIFO are not regular files")
    func kinds() throws {
        let folder = try scratchFolder("status")
        defer { try? FileSystem.removeTree(folder) }
        try FileSystem.writeAtomically([UInt8](repeating: 7, count: 1234), to: folder + "/clip.mp4")
        let file = try FileSystem.status(of: folder + "/clip.mp4")
        #expect(file.isRegularFile && file.kind == .regular && file.size == 1234)
        #expect(file.owner == getuid() && file.group == getgid())
        #expect(try !FileSystem.status(of: folder).isRegularFile)
        #expect(mkfifo(folder + "/fifo", 0o644) == 0)
        let fifo = try FileSystem.status(of: folder + "/fifo")
        #expect(fifo.kind == .other && !fifo.isRegularFile)
    }

    @Test("nothing there throws ENOENT from stat; status(_:followLinks:) says nil instead")
    func missing() throws {
        let path = NSTemporaryDirectory() + "vitrine-fileio-missing-\(UUID().uuidString)"
        let error = #expect(throws: FileError.self) { try FileSystem.status(of: path) }
        #expect(error == FileError(operation: "stat", path: path, errno: .noSuchFile))
        #expect(error?.description == "stat \(path): No such file or directory (ENOENT)")
        #expect(try FileSystem.status(path, followLinks: true) == nil)
    }

    @Test("a test's plan replaces the free space statvfs reports")
    func space() throws {
        let real = try FileSystem.space(NSTemporaryDirectory())
        #expect(real.total > 0 && real.available <= real.total)
        let shown = try FaultInjection.withPlan(FaultPlan(availableSpace: 70 << 20)) { try FileSystem.space(NSTemporaryDirectory()) }
        #expect(shown.available == 70 << 20 && shown.total == real.total)
    }
}

@Suite("ProcessIdentity")
struct ProcessIdentityTests {
    @Test("userID is getuid()")
    func userID() { #expect(ProcessIdentity.userID == getuid()) }

    @Test("a refused setgroups stops before setgid and setuid, and says which call failed")
    func refused() {
        let log = CallLog()
        let error = #expect(throws: ProcessError.self) {
            try FaultInjection.withPlan(FaultPlan { call in
                log.record(call)
                return call.function == "setgroups" ? .fail(.notPermitted) : .fail(.ioError)
            }) {
                try ProcessIdentity.become(user: 1000, group: 1000)
            }
        }
        #expect(error == ProcessError(operation: "setgroups(0)", errno: .notPermitted))
        #expect(error?.description == "setgroups(0): Operation not permitted (EPERM)")
        #expect(log.all == ["setgroups 0"])
    }
}
