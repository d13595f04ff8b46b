import Foundation
import Testing
import Inotify

@Suite("inotify folder watch")
struct DirectoryWatcherTests {
    static func folder() throws -> String {
        let dir = NSTemporaryDirectory() + "vitrine-inotify-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    @Test("created folders, written files, renames and deletions arrive in order; nothing when idle")
    func changesInOrder() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let w = try DirectoryWatcher(path: dir)
        #expect(w.changes() == [])
        try FileManager.default.createDirectory(atPath: dir + "/sda1", withIntermediateDirectories: false)
        try Data("x".utf8).write(to: URL(fileURLWithPath: dir + "/req.tmp"))
        try FileManager.default.moveItem(atPath: dir + "/req.tmp", toPath: dir + "/req.json")
        try FileManager.default.removeItem(atPath: dir + "/sda1")
        #expect(w.changes() == [.added(name: "sda1"), .added(name: "req.tmp"), .written(name: "req.tmp"),
                                .removed(name: "req.tmp"), .added(name: "req.json"), .removed(name: "sda1")])
        #expect(w.changes() == [])
    }

    @Test("the folder going away ends the watch; a missing folder is ENOENT")
    func folderGone() throws {
        let dir = try Self.folder()
        let w = try DirectoryWatcher(path: dir)
        try FileManager.default.removeItem(atPath: dir)
        #expect(w.changes().contains(.folderGone))
        let e = try #require(throws: DirectoryWatchError.self) { try DirectoryWatcher(path: dir) }
        #expect(e.errno == ENOENT)
        #expect(e.function == "inotify_add_watch")
    }
}
