import Foundation
import Testing
@testable import ControlSocket
import RunLoop
import VitrineCore

/// Requests and replies over a real socket in a temp folder, the server on a real `EventLoop` run
/// by the test's thread, the client the module's own (`ControlClient`).
@Suite("Control socket: requests and replies")
struct RequestReplyTests {
    /// Sends `line`, runs the loop until the server has read `count` more request lines, then reads
    /// one line (already there when the handler answers at once).
    static func exchange(_ line: String, _ client: ControlClient, _ server: ControlServer, _ loop: EventLoop,
                         countingAs count: Int = 1) throws -> String? {
        let before = server.statistics.requests
        try client.send(line: line)
        try loop.run(until: { server.statistics.requests >= before + count })
        return try client.readLine(timeout: .seconds(5))
    }

    @Test("request_id is echoed as sent (a number, a string, an object) and is 0 when absent")
    func requestIDEcho() throws {
        let folder = try SocketFolder("echo")
        defer { folder.remove() }
        let loop = try EventLoop()
        let log = LogLines()
        let server = try makeTestServer(path: folder.socket, loop: loop, log: log)
        let client = try ControlClient(path: folder.socket)
        #expect(try Self.exchange(#"{"command":["echo",1,"x"],"request_id":7}"#, client, server, loop)
                == #"{"request_id":7,"error":"success","data":["echo",1,"x"]}"#)
        #expect(try Self.exchange(#"{"request_id":"abc","command":["echo"]}"#, client, server, loop)
                == #"{"request_id":"abc","error":"success","data":["echo"]}"#)
        #expect(try Self.exchange(#"{"command":["echo",0.50,true,null]}"#, client, server, loop)
                == #"{"request_id":0,"error":"success","data":["echo",0.50,true,null]}"#)
        #expect(try Self.exchange(#"{"command":["echo"],"request_id":{"n":[1,2]}}"#, client, server, loop)
                == #"{"request_id":{"n":[1,2]},"error":"success","data":["echo"]}"#)
        // mpv's "async" member is accepted and changes nothing.
        #expect(try Self.exchange(#"{"command":["echo"],"request_id":-3,"async":true}"#, client, server, loop)
                == #"{"request_id":-3,"error":"success","data":["echo"]}"#)
        #expect(server.statistics.requests == 5 && server.statistics.rejected == 0)
        #expect(server.clients.map(\.pid) == [getpid()], "SO_PEERCRED names this process")
        #expect(server.clients.first?.uid == getuid() && server.clients.first?.gid == getgid())
    }

    @Test("a handler may answer later: replies come as they are answered, matched by request_id")
    func answerLater() throws {
        let folder = try SocketFolder("later")
        defer { folder.remove() }
        let loop = try EventLoop()
        let log = LogLines()
        let server = try makeTestServer(path: folder.socket, loop: loop, log: log)
        let client = try ControlClient(path: folder.socket)
        try client.send(line: #"{"command":["later",100],"request_id":1}"#)
        try client.send(line: #"{"command":["echo"],"request_id":2}"#)
        let started = ContinuousClock.now
        var lines: [String] = []
        try loop.run(until: {
            if let line = try? client.readLine(timeout: .zero) { lines.append(line) }
            return lines.count == 2
        })
        #expect(lines == [#"{"request_id":2,"error":"success","data":["echo"]}"#,
                          #"{"request_id":1,"error":"success","data":"late"}"#])
        #expect(ContinuousClock.now - started >= .milliseconds(100), "the late reply waited for its timer")
        #expect(server.statistics.requests == 2)
    }

    @Test("the client's request() returns its own reply while another one is still pending")
    func clientMatchesItsReply() throws {
        let folder = try SocketFolder("match")
        defer { folder.remove() }
        let loop = try EventLoop()
        let log = LogLines()
        let server = try makeTestServer(path: folder.socket, loop: loop, log: log)
        let path = folder.socket
        let work = Background<(String, JSONValue?)> {
            let client = try ControlClient(path: path)
            try client.send(line: #"{"command":["later",200],"request_id":9}"#)
            let reply = try client.request([.string("echo"), .int(5)], requestID: .string("mine"))
            return (reply.line, reply.requestID)
        }
        try loop.run(until: { work.isDone })
        let (line, id) = try work.value()
        #expect(line == #"{"request_id":"mine","error":"success","data":["echo",5]}"#)
        #expect(id == .string("mine"))
        #expect(server.statistics.requests == 2)
    }

    @Test("malformed JSON and malformed requests get an error reply and the connection stays")
    func badRequests() throws {
        let folder = try SocketFolder("bad")
        defer { folder.remove() }
        let loop = try EventLoop()
        let log = LogLines()
        let server = try makeTestServer(path: folder.socket, loop: loop, log: log)
        let client = try ControlClient(path: folder.socket)
        let cases: [(String, String)] = [
            (#"{"command": ["echo""#,
             #"{"request_id":0,"error":"invalid JSON","message":"line 1, column 20: unexpected end of text, expected ',' or ']'"}"#),
            ("show-text hello",
             #"{"request_id":0,"error":"invalid JSON","message":"line 1, column 1: expected a value, found 's'"}"#),
            (#"[1, 2]"#,
             #"{"request_id":0,"error":"invalid parameter","message":"a request is an object {\"command\": [NAME, ARGS…]}, not an array"}"#),
            (#"{"request_id": 4}"#,
             #"{"request_id":4,"error":"invalid parameter","message":"no command: a request is {\"command\": [NAME, ARGS…]}"}"#),
            (#"{"command": "status", "request_id": 5}"#,
             #"{"request_id":5,"error":"invalid parameter","message":"command: expected an array [NAME, ARGS…], found a string"}"#),
            (#"{"command": [], "request_id": 6}"#,
             #"{"request_id":6,"error":"invalid parameter","message":"command: empty"}"#),
            (#"{"command": [3], "request_id": 7}"#,
             #"{"request_id":7,"error":"invalid parameter","message":"command[0]: expected the command's name, a string, found a number"}"#),
            (#"{"command": ["echo"], "request_id": 8, "verbose": true}"#,
             #"{"request_id":8,"error":"invalid parameter","message":"verbose: unknown field (a request has command and request_id)"}"#),
            (#"{"command": ["echo"], "command": ["fail"]}"#,
             #"{"request_id":0,"error":"invalid JSON","message":"line 1, column 23: duplicate key \"command\""}"#),
            (#"{"command": ["nope"], "request_id": 9}"#,
             #"{"request_id":9,"error":"unknown command","message":"nope"}"#),
            (#"{"command": ["fail"], "request_id": 10}"#,
             #"{"request_id":10,"error":"invalid parameter","message":"fail: as asked"}"#),
            (#"{"command": ["drop"], "request_id": 11}"#,
             #"{"request_id":11,"error":"error running command","message":"the player did not answer"}"#),
            (#"{"command": ["observe", 1], "request_id": 12}"#,
             #"{"request_id":12,"error":"invalid parameter","message":"observe takes no arguments"}"#),
        ]
        for (request, expected) in cases {
            let got = try Self.exchange(request, client, server, loop)
            #expect(got == expected, "\(request) → \(got ?? "nothing")")
        }
        // Blank lines and `#` comments are skipped, as mpv does; the connection still works.
        try client.send(line: "\n   \r\n# a comment")
        #expect(try Self.exchange(#"{"command":["echo"],"request_id":99}"#, client, server, loop)
                == #"{"request_id":99,"error":"success","data":["echo"]}"#)
        #expect(server.statistics.rejected == 9 && server.statistics.requests == cases.count + 1)
        #expect(server.clientCount == 1)
        #expect(log.contains("drop was never answered"))
    }

    @Test("a client that stops sending still gets its late replies, an unterminated last line counts, then the server closes")
    func halfClose() throws {
        let folder = try SocketFolder("half")
        defer { folder.remove() }
        let loop = try EventLoop()
        let log = LogLines()
        let server = try makeTestServer(path: folder.socket, loop: loop, log: log)
        let client = try ControlClient(path: folder.socket)
        try client.send(line: #"{"command":["echo"],"request_id":1}"# + "\n" + #"{"command":["later",50],"request_id":2}"#
                        + "\n" + #"{"command":["echo","last"],"request_id":3}"#)
        try client.finishSending()
        var lines: [String] = []
        var ended = false
        try loop.run(until: {
            if !ended, let line = try? client.readLine(timeout: .zero) { lines.append(line) }
            if lines.count == 3, (try? client.readLine(timeout: .zero)) == .some(nil) { ended = true }
            return ended && server.clientCount == 0
        })
        #expect(lines == [#"{"request_id":1,"error":"success","data":["echo"]}"#,
                          #"{"request_id":3,"error":"success","data":["echo","last"]}"#,
                          #"{"request_id":2,"error":"success","data":"late"}"#])
        #expect(log.contains("client 1 (fd") && log.contains("closed the connection after 3 request(s)"))
    }

    @Test("a request without its newline at the end of the stream is still answered")
    func unterminatedLastRequest() throws {
        let folder = try SocketFolder("unterminated")
        defer { folder.remove() }
        let loop = try EventLoop()
        let log = LogLines()
        let server = try makeTestServer(path: folder.socket, loop: loop, log: log)
        let client = try ControlClient(path: folder.socket)
        try client.send(bytes: Array((#"{"command":["echo","x"],"request_id":4}"# + "\n"
                                      + #"{"command":["later",20],"request_id":5}"#).utf8))
        try client.finishSending()
        var lines: [String] = []
        try loop.run(until: {
            if let line = try? client.readLine(timeout: .zero) { lines.append(line) }
            return lines.count == 2 && server.clientCount == 0
        })
        #expect(lines == [#"{"request_id":4,"error":"success","data":["echo","x"]}"#,
                          #"{"request_id":5,"error":"success","data":"late"}"#])
        #expect(try client.readLine(timeout: .seconds(1)) == nil)
    }

    @Test("a reply longer than maxPendingOutputBytes becomes an error saying so; the connection stays")
    func replyTooLong() throws {
        let folder = try SocketFolder("bigreply")
        defer { folder.remove() }
        let loop = try EventLoop()
        let log = LogLines()
        let server = try makeTestServer(path: folder.socket, loop: loop, log: log, maxPendingOutputBytes: 1000)
        let client = try ControlClient(path: folder.socket)
        // A reply of 955 bytes of data is 1000 bytes with its framing and "\n": it fits; one byte more does not.
        let fits = try #require(try Self.exchange(#"{"command":["big",955],"request_id":1}"#, client, server, loop))
        #expect(fits.utf8.count == 999 && fits.hasSuffix(String(repeating: "b", count: 955) + "\"}"), "\(fits.utf8.count)")
        let tooLong = try Self.exchange(#"{"command":["big",956],"request_id":2}"#, client, server, loop)
        #expect(tooLong == #"{"request_id":2,"error":"error running command","message":"the reply is 1001 bytes, more than the control socket's limit of 1000"}"#, "\(tooLong ?? "nothing")")
        #expect(try Self.exchange(#"{"command":["echo"],"request_id":3}"#, client, server, loop)
                == #"{"request_id":3,"error":"success","data":["echo"]}"#)
        #expect(log.contains("the reply to big is 1001 bytes, over the limit of 1000"), "\(log.lines)")
        #expect(server.statistics.dropped == 0)
    }

    @Test("more than maxClients clients: the next one gets an error line and is closed")
    func tooManyClients() throws {
        let folder = try SocketFolder("clients")
        defer { folder.remove() }
        let loop = try EventLoop()
        let log = LogLines()
        let server = try makeTestServer(path: folder.socket, loop: loop, log: log, maxClients: 2)
        let clients = try (0..<3).map { _ in try ControlClient(path: folder.socket) }
        try loop.run(until: { server.statistics.accepted == 3 })
        #expect(server.clientCount == 2 && server.statistics.refused == 1)
        #expect(try clients[2].readLine(timeout: .seconds(5))
                == #"{"request_id":0,"error":"error running command","message":"2 clients are connected already"}"#)
        #expect(try clients[2].readLine(timeout: .seconds(5)) == nil)
        #expect(try Self.exchange(#"{"command":["echo"],"request_id":1}"#, clients[1], server, loop)
                == #"{"request_id":1,"error":"success","data":["echo"]}"#)
        #expect(log.contains("client 3 (fd") && log.contains("refused: 2 clients are connected already"))
    }

    @Test("close() ends every connection, removes the socket file, and later answers return false")
    func closeServer() throws {
        let folder = try SocketFolder("close")
        defer { folder.remove() }
        let loop = try EventLoop()
        let log = LogLines()
        let kept = KeptReplies()
        let server = try makeTestServer(path: folder.socket, loop: loop, log: log, kept: kept)
        let client = try ControlClient(path: folder.socket)
        try client.send(line: #"{"command":["keep"],"request_id":1}"#)
        try loop.run(until: { kept.replies.count == 1 })
        #expect(kept.replies[0].isConnected)
        server.close()
        #expect(!FileManager.default.fileExists(atPath: folder.socket))
        #expect(server.clientCount == 0)
        #expect(!kept.replies[0].isConnected)
        #expect(kept.replies[0].succeed() == false)
        #expect(try client.readLine(timeout: .seconds(5)) == nil, "the client reads the end of the stream")
        #expect(throws: ControlSocketError.noListener(path: folder.socket, errno: .noSuchFile)) {
            _ = try ControlClient(path: folder.socket)
        }
        server.close()  // twice: nothing
    }

    @Test("the protocol's own functions: parse, reply and request lines")
    func protocolFunctions() throws {
        #expect(ControlProtocol.parse(Array("  \t".utf8)[...]) == .blank)
        #expect(ControlProtocol.parse(Array(#"{"command":["jump","promo",12.5],"request_id":3}"#.utf8)[...])
                == .request(command: [.string("jump"), .string("promo"), .literal("12.5")], requestID: .int(3)))
        #expect(ControlProtocol.reply(requestID: nil, .success(nil)) == #"{"request_id":0,"error":"success","data":null}"# + "\n")
        #expect(ControlProtocol.reply(requestID: .string("a\nb"), .failure(.commandFailed("disk\u{2028}full")))
                == #"{"request_id":"a\nb","error":"error running command","message":"disk\u2028full"}"# + "\n")
        #expect(ControlProtocol.request([.string("tap"), .int(100), .int(200)], requestID: .int(1))
                == #"{"command":["tap",100,200],"request_id":1}"# + "\n")
        let request = ControlRequest(command: [.string("jump"), .int(12), .literal("12.5"), .bool(true)], requestID: nil,
                                     peer: ControlPeer(connection: 1, fileDescriptor: 5))
        #expect(request.name == "jump" && request.text(at: 0) == "12" && request.number(at: 1) == 12.5)
        #expect(request.text(at: 2) == nil && request.number(at: 3) == nil)
        #expect(JSONValue.object([("a", .array([.int(1), .array([])])), ("b", .object([]))]).prettyText
                == "{\n  \"a\": [\n    1,\n    []\n  ],\n  \"b\": {}\n}")
        let response = try ControlResponse(line: #"{"request_id":1,"error":"invalid parameter","message":"m"}"#)
        #expect(!response.isSuccess && response.message == "m" && response.data == nil)
        #expect(throws: ControlSocketError.self) { _ = try ControlResponse(line: #"{"event":"progress"}"#) }
    }
}
