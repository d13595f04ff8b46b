// A real chronyd for the tests: Debian's /usr/sbin/chronyd serving NTP on a loopback UDP port, with
// `-x` (it never adjusts this machine's clock), its config and pidfile in a temporary folder, no
// command port, no drift file; and `chronyd -Q`, which asks a server for the time and prints the
// offset without setting anything.
import Foundation
import Testing
internal import SystemSupport

public enum Chrony {
    public static let daemon = "/usr/sbin/chronyd"

    /// Whether chronyd is installed (tools/setup).
    public static var installed: Bool { FileManager.default.isExecutableFile(atPath: daemon) }
    public static let absent: Comment = "chronyd is not installed: run tools/setup"

    /// `-u root` when the tests run as root: chronyd would otherwise drop to _chrony, which cannot
    /// reach the test's folder.
    static var userOption: [String] { geteuid() == 0 ? ["-u", "root"] : [] }

    /// What `chronyd -Q` said about a server: the offset it measured (seconds, the local clock
    /// minus the server's), or nil when it got no usable answer within its timeout.
    public struct Query: Sendable {
        public var offset: Double?
        public var result: SubprocessResult
    }

    /// Asks `127.0.0.1:port` for the time with `chronyd -Q -x -t timeout` (iburst): the offset of its
    /// "System clock wrong by X seconds (ignored)" line. Nothing is set (-Q, and -x as well).
    public static func query(port: Int, timeout: Int, folder: String) throws -> Query {
        let r = try Subprocess.run(daemon, ["-Q", "-x", "-t", String(timeout)] + userOption
                                   + ["pidfile \(folder)/query.pid", "cmdport 0", "server 127.0.0.1 port \(port) iburst"])
        let text = r.out + r.err
        let offset = text.firstMatch(of: #/System clock wrong by (-?[0-9.]+) seconds/#).flatMap { Double($0.output.1) }
        return Query(offset: offset, result: r)
    }

    /// Whether a UDP socket is bound to 127.0.0.1:`port` (a line of /proc/net/udp).
    public static func udpBound(_ port: Int) -> Bool {
        guard let table = try? String(contentsOfFile: "/proc/net/udp", encoding: .utf8) else { return false }
        let local = "0100007F:" + String(format: "%04X", port)
        return table.split(separator: "\n").dropFirst().contains { $0.split(separator: " ").dropFirst().first == Substring(local) }
    }
}

/// One chronyd serving NTP on `127.0.0.1:port`, from directives (the generated fragment) plus the
/// test's own: `port`, `bindaddress 127.0.0.1`, `cmdport 0`, `pidfile` in its folder.
public final class ChronyServer {
    public let folder: String
    public private(set) var port = 0
    public private(set) var process: RunningProcess?
    public let directives: String

    /// Whether the directives open the NTP port: chronyd binds it only when an `allow` line (or a
    /// peer, or broadcast) asks for it.
    public let serves: Bool

    /// Starts chronyd with `directives` and waits (5 s at most) until its NTP socket is bound, or,
    /// when it is not to `serve`, until it logged how it runs ("Running with root privileges", after
    /// its sockets are set up); a port taken meanwhile is retried with another one.
    /// - Throws: `BrokerError` when it exits or binds nothing.
    public init(directives: String, serves: Bool = true) throws {
        self.directives = directives
        self.serves = serves
        folder = NSTemporaryDirectory() + "chronyd-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var lastError: Error?
        for _ in 0..<5 {
            port = try LoopbackPort.free()
            if Chrony.udpBound(port) { continue }
            do { try start(); return } catch { lastError = error }
        }
        throw lastError ?? BrokerError("no free loopback port for chronyd")
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: folder)
    }

    public var configuration: String {
        directives + "port \(port)\nbindaddress 127.0.0.1\ncmdport 0\npidfile \(folder)/chronyd.pid\n"
    }

    private func start() throws {
        let conf = folder + "/chrony.conf"
        try Data(configuration.utf8).write(to: URL(fileURLWithPath: conf))
        // -x: never touch the clock; -d: in the foreground, logging to stderr; -f: this config only.
        let child = try Subprocess.start(Chrony.daemon, ["-x", "-d"] + Chrony.userOption + ["-f", conf])
        let port = self.port
        let serves = self.serves
        let ready = { serves ? Chrony.udpBound(port) : child.outputSoFar.err.contains(" privileges") }
        switch child.waitUntilReady(seconds: 5, ready) {
        case .ready: process = child
        case .exited(let result): throw BrokerError("chronyd on port \(port) exited \(result.status): \(result.err)")
        case .timedOut:
            child.send(SIGKILL)
            child.wait(timeout: .seconds(5))
            throw BrokerError("chronyd bound no socket on 127.0.0.1:\(port) within 5 s: \(child.outputSoFar.err)")
        }
    }

    /// Stops chronyd by its PID with SIGTERM and waits for it.
    public func stop() {
        guard let process else { return }
        process.terminate()
        process.wait(timeout: .seconds(5))
        self.process = nil
    }

    /// `chronyd -Q` against this server.
    public func query(timeout: Int) throws -> Chrony.Query {
        try Chrony.query(port: port, timeout: timeout, folder: folder)
    }
}
