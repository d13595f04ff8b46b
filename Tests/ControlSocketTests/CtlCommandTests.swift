import Foundation
import Testing
@testable import ControlSocket
import RunLoop
import VitrineCore
import VitrineTestSupport

/// `vitrine ctl`, the built binary, against a server in the test process: the loop runs on the
/// test's thread while the command runs.
@Suite("vitrine ctl", .enabled(if: VitrineBinary.available, VitrineBinary.absent))
struct CtlCommandTests {
    /// What the test server was asked, in order.
    final class Seen {
        var requests: [ControlRequest] = []
    }

    /// A PNG signature followed by 200 KB of bytes: large enough that the reply takes several writes.
    static let picture: Data = {
        var bytes: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        var random = SplitMix64(seed: 7)
        for _ in 0..<200_000 { bytes.append(UInt8(truncatingIfNeeded: random.next())) }
        return Data(bytes)
    }()

    static func server(_ path: String, _ loop: EventLoop, _ log: LogLines, _ seen: Seen) throws -> ControlServer {
        try ControlServer(path: path, loop: loop, log: log.sink) { request, reply in
            seen.requests.append(request)
            switch request.name {
            case "status":
                reply.succeed(.object([("state", .string("playing")), ("item", .string("promo")), ("volume", .literal("0.5"))]))
            case "set-volume":
                guard let volume = request.number(at: 0), (0...1).contains(volume) else {
                    reply.fail(.invalidParameter("set-volume: expected a number from 0 to 1"))
                    return
                }
                reply.succeed()
            case "tap", "jump":
                reply.succeed(.array(Array(request.arguments)))
            case "screenshot":
                if request.text(at: 0) == "to-file" {
                    reply.succeed(.object([("path", .string("/var/lib/vitrine/screenshot.png"))]))
                } else {
                    // After a vblank, as the player would.
                    loop.scheduleTimer(after: .milliseconds(20)) {
                        reply.succeed(.object([("png_base64", .string(Self.picture.base64EncodedString()))]))
                    }
                }
            default:
                reply.fail(.unknownCommand(request.name))
            }
        }
    }

    /// Runs `vitrine ARGS…` while the loop serves.
    static func ctl(_ arguments: [String], loop: EventLoop, environment: [String: String] = [:]) throws -> SubprocessResult {
        let process = try VitrineBinary.start(arguments, environment: environment)
        try loop.run(until: { !process.isRunning }, limit: .seconds(60))
        return process.wait(timeout: .seconds(10))
    }

    @Test("commands: the reply's data as indented JSON and exit 0; numbers stay numbers; an error reply exits 1")
    func commands() throws {
        let folder = try SocketFolder("ctl")
        defer { folder.remove() }
        let loop = try EventLoop()
        let log = LogLines()
        let seen = Seen()
        let server = try Self.server(folder.socket, loop, log, seen)
        let socket = ["--socket", folder.socket]

        let status = try Self.ctl(["ctl"] + socket + ["status"], loop: loop)
        #expect(status.code == 0, "\(status.err)")
        #expect(status.out == "{\n  \"state\": \"playing\",\n  \"item\": \"promo\",\n  \"volume\": 0.5\n}\n")
        #expect(seen.requests.last?.command == [.string("status")] && seen.requests.last?.requestID == .int(1))

        let volume = try Self.ctl(["ctl"] + socket + ["set-volume", "0.5"], loop: loop)
        #expect(volume.code == 0 && volume.out == "" && volume.err == "", "null data prints nothing")
        #expect(seen.requests.last?.command == [.string("set-volume"), .literal("0.5")])

        let tap = try Self.ctl(["ctl", "tap", "100", "-200"] + socket, loop: loop)
        #expect(tap.code == 0 && tap.out == "[\n  100,\n  -200\n]\n", "\(tap.err)")

        let jump = try Self.ctl(["ctl"] + socket + ["jump", "promo", "12.5", "true", "--", "--literal"], loop: loop)
        #expect(jump.code == 0 && jump.out == "[\n  \"promo\",\n  12.5,\n  true,\n  \"--literal\"\n]\n", "\(jump.err)")

        let bad = try Self.ctl(["ctl"] + socket + ["set-volume", "loud"], loop: loop)
        #expect(bad.code == 1 && bad.out == "")
        #expect(bad.err == "vitrine ctl: set-volume: invalid parameter: set-volume: expected a number from 0 to 1\n")

        let unknown = try Self.ctl(["ctl"] + socket + ["frobnicate"], loop: loop)
        #expect(unknown.code == 1 && unknown.err == "vitrine ctl: frobnicate: unknown command: frobnicate\n")

        let raw = try Self.ctl(["ctl", "--json"] + socket + ["status"], loop: loop)
        #expect(raw.code == 0)
        #expect(raw.out == #"{"request_id":1,"error":"success","data":{"state":"playing","item":"promo","volume":0.5}}"# + "\n")
        let rawError = try Self.ctl(["ctl", "--json"] + socket + ["frobnicate"], loop: loop)
        #expect(rawError.code == 1 && rawError.out == #"{"request_id":1,"error":"unknown command","message":"frobnicate"}"# + "\n")

        let fromEnvironment = try Self.ctl(["ctl", "set-volume", "1"], loop: loop, environment: ["VITRINE_CONTROL_SOCKET": folder.socket])
        #expect(fromEnvironment.code == 0 && seen.requests.last?.command == [.string("set-volume"), .literal("1")])
        #expect(server.statistics.requests == 9 && server.statistics.rejected == 0)
        try loop.run(until: { server.clientCount == 0 })
    }

    @Test("screenshot --out FILE writes the decoded PNG; a path in the reply is printed; without --out a PNG is a usage error")
    func screenshot() throws {
        let folder = try SocketFolder("shot")
        defer { folder.remove() }
        let loop = try EventLoop()
        let log = LogLines()
        let seen = Seen()
        let server = try Self.server(folder.socket, loop, log, seen)
        let socket = ["--socket", server.path]
        let out = folder.path + "/shot.png"
        let written = try Self.ctl(["ctl"] + socket + ["screenshot", "--out", out], loop: loop)
        #expect(written.code == 0, "\(written.err)")
        #expect(written.out == "\(out): \(Self.picture.count) bytes\n")
        #expect(try Data(contentsOf: URL(fileURLWithPath: out)) == Self.picture)

        let named = try Self.ctl(["ctl"] + socket + ["screenshot", "to-file"], loop: loop)
        #expect(named.code == 0 && named.out == "/var/lib/vitrine/screenshot.png\n")

        let noOut = try Self.ctl(["ctl"] + socket + ["screenshot"], loop: loop)
        #expect(noOut.code == 64 && noOut.out == "")
        #expect(noOut.err.contains("screenshot: the player sent a PNG") && noOut.err.contains("give --out FILE"))
    }

    @Test("observe prints every event line as it comes, and ends when the player closes")
    func observe() throws {
        let folder = try SocketFolder("ctlobserve")
        defer { folder.remove() }
        let loop = try EventLoop()
        let log = LogLines()
        let seen = Seen()
        let server = try Self.server(folder.socket, loop, log, seen)
        let process = try VitrineBinary.start(["ctl", "observe", "--socket", folder.socket])
        try loop.run(until: { server.observerCount == 1 || !process.isRunning })
        let lines = [#"{"event":"nowPlayingChanged","item":"promo"}"#, #"{"event":"progress","time":1.500000}"#,
                     #"{"event":"playbackStateChanged","state":"paused"}"#]
        for line in lines { server.broadcast(eventLine: line) }
        try loop.runOnce(timeout: .zero)
        server.close()
        try loop.run(until: { !process.isRunning })
        let result = process.wait(timeout: .seconds(10))
        #expect(result.code == 0, "\(result.err)")
        #expect(result.out == lines.joined(separator: "\n") + "\n")
        #expect(result.err == "vitrine ctl: observe: the player closed the connection\n")
        #expect(seen.requests.isEmpty, "observe is the server's own")
    }

    @Test("nothing listening exits 69 with one line; usage mistakes exit 64")
    func unavailableAndUsage() throws {
        let folder = try SocketFolder("ctl69")
        defer { folder.remove() }
        let missing = try VitrineBinary.run(["ctl", "--socket", folder.socket, "status"])
        #expect(missing.code == 69)
        #expect(missing.err == "vitrine ctl: nothing listens on \(folder.socket): no such socket (is the player running?)\n")
        // The file a killed player leaves: a socket nobody listens on.
        let fd = try UnixSocket.stream().get()
        try UnixSocket.bind(fd, path: folder.socket).get()
        UnixSocket.close(fd)
        let stale = try VitrineBinary.run(["ctl", "--socket", folder.socket, "status"])
        #expect(stale.code == 69 && stale.err.contains("Connection refused"), "\(stale.err)")

        let noCommand = try VitrineBinary.run(["ctl", "--socket", folder.socket])
        #expect(noCommand.code == 64 && noCommand.err.contains("ctl needs a COMMAND"))
        let typo = try VitrineBinary.run(["ctl", "--sockett", folder.socket, "status"])
        #expect(typo.code == 64 && typo.err.contains("unknown option --sockett (did you mean --socket?)"))
        let outElsewhere = try VitrineBinary.run(["ctl", "status", "--out", "x.png"])
        #expect(outElsewhere.code == 64 && outElsewhere.err.contains("--out is for screenshot"))
        let help = try VitrineBinary.run(["ctl", "--help"])
        #expect(help.code == 0 && help.out.hasPrefix("usage: vitrine ctl"))
        let top = try VitrineBinary.run(["--help"])
        #expect(top.out.contains("  ctl        send a command to the running player"))
    }
}
