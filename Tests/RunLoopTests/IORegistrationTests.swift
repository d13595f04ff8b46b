import Foundation
import Testing
import FileIO
import Inotify
import RunLoop

/// Descriptors registered on the loop: pipes, inotify, a file epoll refuses.
@Suite("descriptor registrations")
struct IORegistrationTests {
    @Test("a pipe registered for readable calls its handler on the loop's thread with the bytes another thread wrote")
    func pipeReadable() throws {
        let loop = try EventLoop()
        let pipe = try TestPipe()
        let loopThread = currentThread()
        var received = "", events: [IOEvents] = [], threads: [UInt] = []
        let registration = try loop.register(pipe.readEnd, for: .readable) { ready in
            events.append(ready)
            threads.append(currentThread())
            received += pipe.readAll()
        }
        let writeEnd = pipe.writeEnd
        onAnotherThread { writeText("page flip", to: writeEnd) }
        try loop.run(until: { received == "page flip" })
        #expect(events == [.readable])
        #expect(threads == [loopThread])
        registration.cancel()
    }

    @Test("a cancelled registration is out of epoll at once: unread bytes no longer call it, and the descriptor can close")
    func cancelBeforeClose() throws {
        let loop = try EventLoop()
        let pipe = try TestPipe()
        var calls = 0
        let registration = try loop.register(pipe.readEnd, for: .readable) { _ in calls += 1 }
        pipe.write("x")
        try loop.runOnce(timeout: .seconds(5))
        #expect(calls == 1)  // Level-triggered: the byte is still there...
        registration.cancel()
        #expect(!registration.isActive)
        // ...and epoll_wait(0) would report it at once if the pipe were still registered.
        try loop.runOnce(timeout: .zero)
        #expect(calls == 1)
        pipe.close(pipe.readEnd)
        // The same number may come back from the next open; registering it again is allowed.
        let again = try TestPipe()
        let second = try loop.register(again.readEnd, for: .readable) { _ in calls += 10 }
        again.write("y")
        try loop.runOnce(timeout: .seconds(5))
        #expect(calls == 11)
        second.cancel()
    }

    @Test("modify switches what the handler is called for: writable while asked for, then readable only")
    func modifyEvents() throws {
        let loop = try EventLoop()
        let pipe = try TestPipe()
        var seen: [IOEvents] = []
        let registration = try loop.register(pipe.writeEnd, for: .writable) { seen.append($0) }
        try loop.runOnce(timeout: .seconds(5))
        #expect(seen == [.writable])  // An empty pipe has room.
        try registration.modify(.readable)  // A write end never becomes readable.
        #expect(registration.events == .readable)
        try loop.runOnce(timeout: .zero)
        #expect(seen == [.writable])
        registration.cancel()
    }

    @Test("closing the writer reports hangup to the reader's handler")
    func hangup() throws {
        let loop = try EventLoop()
        let pipe = try TestPipe()
        var seen: IOEvents = []
        var registration: IORegistration?
        registration = try loop.register(pipe.readEnd, for: .readable) { ready in
            seen = ready
            if ready.contains(.hangup) { registration?.cancel() }
        }
        pipe.close(pipe.writeEnd)
        try loop.run(until: { !seen.isEmpty })
        #expect(seen.contains(.hangup))
        #expect(registration?.isActive == false)
    }

    @Test("a regular file cannot be registered: epoll_ctl refuses it with EPERM")
    func regularFileRefused() throws {
        let loop = try EventLoop()
        let path = NSTemporaryDirectory() + "vitrine-runloop-\(UUID().uuidString)"
        let file = try FileDescriptor(opening: path, .readWrite, options: [.create])
        defer { try? FileManager.default.removeItem(atPath: path) }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        defer { close(fd) }
        let error = try #require(throws: RunLoopError.self) { try loop.register(fd, for: .readable) { _ in } }
        #expect(error.errno == .notPermitted)
        #expect(error.operation == "epoll_ctl(ADD, fd \(fd))")
        try file.close()
    }

    @Test("an inotify watcher is one registration: a file written in the folder arrives through the loop")
    func inotifyOnTheLoop() throws {
        let loop = try EventLoop()
        let folder = NSTemporaryDirectory() + "vitrine-runloop-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let watcher = try DirectoryWatcher(path: folder)
        var changes: [DirectoryChange] = []
        let registration = try loop.register(watcher.fileDescriptor, for: .readable) { _ in changes += watcher.changes() }
        try Data("{}".utf8).write(to: URL(fileURLWithPath: folder + "/request.json"))
        try loop.run(until: { changes.contains(.written(name: "request.json")) })
        #expect(changes == [.added(name: "request.json"), .written(name: "request.json")])
        registration.cancel()  // Before the watcher (and its descriptor) goes.
    }
}
