import Foundation
import Testing
@testable import ControlSocket
import RunLoop
import VitrineCore

/// The socket file: its mode and group, a stale file replaced, a live one refused, other files
/// left alone.
@Suite("Control socket: the socket file")
struct SocketFileTests {
    static func attributes(_ path: String) throws -> [FileAttributeKey: Any] {
        try FileManager.default.attributesOfItem(atPath: path)
    }

    /// A group other than the process's that exists here, when the process may give it (root).
    static var otherGroup: (name: String, gid: UInt32)? {
        guard getuid() == 0 else { return nil }
        for name in ["daemon", "nogroup", "users", "adm"] {
            if case .success(let gid?) = UnixSocket.groupID(named: name), gid != getgid() { return (name, gid) }
        }
        return nil
    }

    @Test("the socket file is a socket with mode 0660 (or the mode given), and the process's group without `group`")
    func mode() throws {
        let folder = try SocketFolder("mode")
        defer { folder.remove() }
        let loop = try EventLoop()
        let log = LogLines()
        let server = try makeTestServer(path: folder.socket, loop: loop, log: log)
        let a = try Self.attributes(folder.socket)
        #expect(a[.type] as? FileAttributeType == .typeSocket)
        #expect((a[.posixPermissions] as? NSNumber)?.intValue == 0o660)
        #expect((a[.groupOwnerAccountID] as? NSNumber)?.uint32Value == getegid())
        server.close()
        let other = try makeTestServer(path: folder.socket, loop: loop, log: log, mode: 0o600)
        #expect((try Self.attributes(folder.socket)[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        other.close()
    }

    @Test("group names the socket file's group (looked up with getgrnam_r)",
          .enabled(if: SocketFileTests.otherGroup != nil, "needs root and a second group (daemon, nogroup, users or adm)"))
    func group() throws {
        let group = try #require(Self.otherGroup)
        let folder = try SocketFolder("group")
        defer { folder.remove() }
        let loop = try EventLoop()
        let log = LogLines()
        let server = try makeTestServer(path: folder.socket, loop: loop, log: log, group: group.name)
        let a = try Self.attributes(folder.socket)
        #expect((a[.groupOwnerAccountID] as? NSNumber)?.uint32Value == group.gid)
        #expect((a[.posixPermissions] as? NSNumber)?.intValue == 0o660)
        server.close()
    }

    @Test("an unknown group is an error, and no socket file is made")
    func unknownGroup() throws {
        let folder = try SocketFolder("nogroup")
        defer { folder.remove() }
        let loop = try EventLoop()
        let log = LogLines()
        #expect(throws: ControlSocketError.unknownGroup("no-such-group-vitrine-test")) {
            _ = try makeTestServer(path: folder.socket, loop: loop, log: log, group: "no-such-group-vitrine-test")
        }
        #expect(!FileManager.default.fileExists(atPath: folder.socket))
        #expect("\(ControlSocketError.unknownGroup("x"))" == "no group named x (getgrnam_r)")
    }

    @Test("a stale socket file (nothing listens: ECONNREFUSED) is removed and replaced, with a log line")
    func staleSocket() throws {
        let folder = try SocketFolder("stale")
        defer { folder.remove() }
        // What a player killed with SIGKILL leaves: a bound socket file, nobody listening.
        let fd = try UnixSocket.stream().get()
        try UnixSocket.bind(fd, path: folder.socket).get()
        UnixSocket.close(fd)
        #expect(try Self.attributes(folder.socket)[.type] as? FileAttributeType == .typeSocket)
        #expect(throws: ControlSocketError.noListener(path: folder.socket, errno: .connectionRefused)) {
            _ = try ControlClient(path: folder.socket)
        }
        let loop = try EventLoop()
        let log = LogLines()
        let server = try makeTestServer(path: folder.socket, loop: loop, log: log)
        #expect(log.lines == ["control: removed the stale socket \(folder.socket) (nothing listened on it)"])
        let client = try ControlClient(path: folder.socket)
        try client.send(line: #"{"command":["echo"],"request_id":1}"#)
        try loop.run(until: { server.statistics.requests == 1 })
        #expect(try client.readLine(timeout: .seconds(5)) == #"{"request_id":1,"error":"success","data":["echo"]}"#)
    }

    @Test("a live socket (a connect succeeds) is refused: another player is listening; the first one goes on")
    func liveSocket() throws {
        let folder = try SocketFolder("live")
        defer { folder.remove() }
        let loop = try EventLoop()
        let log = LogLines()
        let first = try makeTestServer(path: folder.socket, loop: loop, log: log)
        let secondLog = LogLines()
        #expect(throws: ControlSocketError.anotherListener(path: folder.socket)) {
            _ = try makeTestServer(path: folder.socket, loop: loop, log: secondLog)
        }
        #expect("\(ControlSocketError.anotherListener(path: folder.socket))" == "another player is listening on \(folder.socket)")
        #expect(secondLog.lines.isEmpty)
        #expect(FileManager.default.fileExists(atPath: folder.socket))
        let client = try ControlClient(path: folder.socket)
        try client.send(line: #"{"command":["echo"],"request_id":1}"#)
        try loop.run(until: { first.statistics.requests == 1 })
        #expect(try client.readLine(timeout: .seconds(5)) == #"{"request_id":1,"error":"success","data":["echo"]}"#)
        // The probe's connection was the first one: it came and went without a request.
        try loop.run(until: { log.contains("client 1 (fd") })
        #expect(log.contains("closed the connection after 0 request(s)"))
    }

    @Test("a file that is not a socket is left alone: an error, and its bytes stay")
    func notASocket() throws {
        let folder = try SocketFolder("file")
        defer { folder.remove() }
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: folder.socket))
        let loop = try EventLoop()
        let log = LogLines()
        #expect(throws: ControlSocketError.notASocket(path: folder.socket)) {
            _ = try makeTestServer(path: folder.socket, loop: loop, log: log)
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder.socket)) == Data("keep me".utf8))
    }

    @Test("a path longer than sun_path holds, or a folder that does not exist, is an error naming the path")
    func badPaths() throws {
        let loop = try EventLoop()
        let log = LogLines()
        let long = "/tmp/" + String(repeating: "s", count: 103)
        #expect(long.utf8.count == 108 && ControlSettings.maximumPathBytes == 107)
        #expect(throws: ControlSocketError.pathTooLong(path: long, limit: 107)) {
            _ = try makeTestServer(path: long, loop: loop, log: log)
        }
        #expect(throws: ControlSocketError.system(operation: "bind /nonexistent-vitrine/control.sock", errno: .noSuchFile)) {
            _ = try makeTestServer(path: "/nonexistent-vitrine/control.sock", loop: loop, log: log)
        }
        #expect(throws: ControlSocketError.pathTooLong(path: long, limit: 107)) { _ = try ControlClient(path: long) }
    }

    @Test("close() leaves a socket file alone that is no longer the one this server made")
    func closeKeepsAnotherFile() throws {
        let folder = try SocketFolder("replaced")
        defer { folder.remove() }
        let loop = try EventLoop()
        let log = LogLines()
        let server = try makeTestServer(path: folder.socket, loop: loop, log: log)
        try FileManager.default.removeItem(atPath: folder.socket)
        try Data("someone else's".utf8).write(to: URL(fileURLWithPath: folder.socket))
        server.close()
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder.socket)) == Data("someone else's".utf8))
    }
}
