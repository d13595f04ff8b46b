// The control protocol's messages, apart from any socket: a request line parsed into a
// `ControlRequest`, a reply written as one line, the error strings, and a reply parsed back (the
// client's side). In the style of mpv's JSON IPC (mpv DOCS/man/ipc.rst, input/ipc.c).
import VitrineCore

/// The `error` string of a failed reply, with an optional human-readable `message`.
///
/// The codes are mpv's where one fits (`mpv_error_string`: "invalid parameter", "error running
/// command"), and the control socket's own otherwise ("unknown command", "invalid JSON",
/// "request too long"). The player may add codes of its own (`ControlError.Code(rawValue:)`).
/// A reply reads `{"request_id":3,"error":"invalid parameter","message":"set-volume: expected a
/// number from 0 to 1"}`; mpv clients read `error` and ignore `message`.
public struct ControlError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The text of the reply's `error` field.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// mpv's `MPV_ERROR_INVALID_PARAMETER`: the request is not `{"command": [NAME, …]}`, or
        /// the command's arguments are wrong (count, type, range, an item that does not exist).
        public static let invalidParameter = Code(rawValue: "invalid parameter")
        /// No command of that name (mpv itself says "invalid parameter" here).
        public static let unknownCommand = Code(rawValue: "unknown command")
        /// mpv's `MPV_ERROR_COMMAND`: the command was understood and failed while running.
        public static let commandFailed = Code(rawValue: "error running command")
        /// The line is not JSON (RFC 8259, UTF-8); mpv would run it as an input.conf command.
        public static let invalidJSON = Code(rawValue: "invalid JSON")
        /// The line is longer than the server's `maxRequestBytes`; the connection is then closed.
        public static let requestTooLong = Code(rawValue: "request too long")

        public var description: String { rawValue }
    }

    public var code: Code
    /// Says what was wrong, for people (`vitrine ctl` prints it); nil for none.
    public var message: String?

    public init(_ code: Code, _ message: String? = nil) {
        self.code = code
        self.message = message
    }

    public static func invalidParameter(_ message: String? = nil) -> ControlError { ControlError(.invalidParameter, message) }
    public static func unknownCommand(_ message: String? = nil) -> ControlError { ControlError(.unknownCommand, message) }
    public static func commandFailed(_ message: String? = nil) -> ControlError { ControlError(.commandFailed, message) }
    public static func invalidJSON(_ message: String? = nil) -> ControlError { ControlError(.invalidJSON, message) }
    public static func requestTooLong(_ message: String? = nil) -> ControlError { ControlError(.requestTooLong, message) }

    /// `invalid parameter: set-volume: expected a number`, or the code alone.
    public var description: String { message.map { "\(code): \($0)" } ?? code.rawValue }
}

/// The process at the other end of a control connection, for logs and for the handler.
public struct ControlPeer: Sendable, Hashable, CustomStringConvertible {
    /// The server's number for the connection: 1 for the first accepted, then 2, 3…
    public var connection: Int
    /// The connection's descriptor in the server.
    public var fileDescriptor: Int32
    /// The peer's process, user and group when it connected (`SO_PEERCRED`); nil when the kernel
    /// gave none.
    public var pid: Int32?
    public var uid: UInt32?
    public var gid: UInt32?

    public init(connection: Int, fileDescriptor: Int32, pid: Int32? = nil, uid: UInt32? = nil, gid: UInt32? = nil) {
        self.connection = connection
        self.fileDescriptor = fileDescriptor
        self.pid = pid
        self.uid = uid
        self.gid = gid
    }

    /// `client 3 (fd 12, pid 4711, uid 1000, gid 1001)`.
    public var description: String {
        var parts = ["fd \(fileDescriptor)"]
        if let pid { parts.append("pid \(pid)") }
        if let uid { parts.append("uid \(uid)") }
        if let gid { parts.append("gid \(gid)") }
        return "client \(connection) (\(parts.joined(separator: ", ")))"
    }
}

/// One parsed request: `{"command": [NAME, ARGS…], "request_id": ID}`.
public struct ControlRequest: Sendable, Equatable {
    /// The command array as sent: the name (a string) first, then the arguments as JSON values
    /// (numbers stay numbers: `["tap", 100, 200]`). Never empty.
    public var command: [JSONValue]
    /// `request_id` as sent, any JSON value (mpv echoes whatever it gets); nil when absent, and the
    /// reply then carries `"request_id":0`, as mpv's do.
    public var requestID: JSONValue?
    /// Who sent it.
    public var peer: ControlPeer

    public init(command: [JSONValue], requestID: JSONValue?, peer: ControlPeer) {
        precondition(!command.isEmpty, "ControlRequest: the command array holds at least the name")
        self.command = command
        self.requestID = requestID
        self.peer = peer
    }

    /// The command's name, `command[0]` (`"status"`, `"jump"`).
    public var name: String {
        if case let .string(name) = command[0] { return name }
        return ""
    }

    /// The arguments, `command[1...]`.
    public var arguments: ArraySlice<JSONValue> { command.dropFirst() }

    /// Argument `index` (0 is the first after the name) as text: a string as it is, a number as
    /// its literal (`vitrine ctl jump 12` sends the item id 12 as a number); nil when absent or of
    /// another type.
    public func text(at index: Int) -> String? {
        guard index >= 0, index + 1 < command.count else { return nil }
        switch command[index + 1] {
        case .string(let text): return text
        case .number(let number): return number.literal
        default: return nil
        }
    }

    /// Argument `index` as a number; nil when absent or not a number.
    public func number(at index: Int) -> Double? {
        guard index >= 0, index + 1 < command.count, case let .number(number) = command[index + 1] else { return nil }
        return number.value
    }
}

/// The wire format, one JSON text per line in each direction (mpv's JSON IPC framing).
public enum ControlProtocol {
    /// What one request line holds.
    public enum Line: Equatable {
        /// Empty, only whitespace, or a `#` comment: skipped without a reply, as mpv does.
        case blank
        /// A request: the command array and the `request_id` (nil when absent).
        case request(command: [JSONValue], requestID: JSONValue?)
        /// Not a request: the error to reply with, and the `request_id` when one could be read.
        case rejected(ControlError, requestID: JSONValue?)
    }

    /// Deepest nesting a request may have (a top-level object is 1).
    public static let maxDepth = 32

    /// Members a request object may have besides `command` and `request_id`: mpv's `async`,
    /// accepted and ignored (every command here may answer later).
    static let ignoredMembers: Set<String> = ["async"]

    /// Parses one request line (without its `\n`; a `\r` before it is whitespace).
    ///
    /// Rejections, with the code and message of the reply: malformed JSON (`invalid JSON`,
    /// `line 1, column 12: …`); valid JSON that is not an object, no `command`, a `command` that
    /// is not an array, is empty or does not start with a string, a member other than `command`,
    /// `request_id` and `async` (`invalid parameter`, naming the member).
    public static func parse(_ line: ArraySlice<UInt8>) -> Line {
        guard let first = line.first(where: { !isWhitespace($0) }) else { return .blank }
        if first == UInt8(ascii: "#") { return .blank }
        let value: JSONValue
        do {
            value = try JSONValue(parsing: Array(line), options: .init(maxDepth: maxDepth, maxBytes: .max, rejectDuplicateKeys: true))
        } catch {
            return .rejected(.invalidJSON("\(error)"), requestID: nil)
        }
        guard case let .object(members) = value else {
            return .rejected(.invalidParameter("a request is an object {\"command\": [NAME, ARGS…]}, not \(value.typeDescription)"),
                             requestID: nil)
        }
        let requestID = value["request_id"]
        for member in members where member.key != "command" && member.key != "request_id" && !ignoredMembers.contains(member.key) {
            return .rejected(.invalidParameter("\(JSONPath.member("", echoed(member.key))): unknown field (a request has command and request_id)"),
                             requestID: requestID)
        }
        guard let command = value["command"] else {
            return .rejected(.invalidParameter("no command: a request is {\"command\": [NAME, ARGS…]}"), requestID: requestID)
        }
        guard case let .array(elements) = command else {
            return .rejected(.invalidParameter("command: expected an array [NAME, ARGS…], found \(command.typeDescription)"),
                             requestID: requestID)
        }
        guard let name = elements.first else { return .rejected(.invalidParameter("command: empty"), requestID: requestID) }
        guard case .string = name else {
            return .rejected(.invalidParameter("command[0]: expected the command's name, a string, found \(name.typeDescription)"),
                             requestID: requestID)
        }
        return .request(command: elements, requestID: requestID)
    }

    /// The reply line, with its `\n`: `{"request_id":ID,"error":"success","data":DATA}` (`data`
    /// null when nil), or `{"request_id":ID,"error":CODE,"message":TEXT}` (no `message` when
    /// nil). An absent `request_id` is written as 0, as mpv does.
    public static func reply(requestID: JSONValue?, _ result: Result<JSONValue?, ControlError>) -> String {
        let id = (requestID ?? .int(0)).text
        switch result {
        case .success(let data):
            return "{\"request_id\":\(id),\"error\":\"success\",\"data\":\((data ?? .null).text)}\n"
        case .failure(let error):
            let message = error.message.map { ",\"message\":" + JSONPath.quoted($0) } ?? ""
            return "{\"request_id\":\(id),\"error\":\(JSONPath.quoted(error.code.rawValue))\(message)}\n"
        }
    }

    /// The request line a client sends, with its `\n`: `{"command":[…],"request_id":ID}`.
    public static func request(_ command: [JSONValue], requestID: JSONValue?) -> String {
        let id = requestID.map { ",\"request_id\":" + $0.text } ?? ""
        return "{\"command\":\(JSONValue.array(command).text)\(id)}\n"
    }

    /// The most characters of a command name or field name from a request that an error reply
    /// or a log line echoes (`echoed(_:)`).
    public static let echoedNameLimit = 64

    /// `text` as an error message echoes it: its first 64 characters and "…" when it is longer,
    /// so that a 60 KB command name does not make a 60 KB reply.
    public static func echoed(_ text: String) -> String {
        var end = text.startIndex
        guard text.formIndex(&end, offsetBy: echoedNameLimit, limitedBy: text.endIndex), end < text.endIndex else { return text }
        return text[..<end] + "…"
    }

    /// The JSON whitespace bytes (RFC 8259 §2): space, tab, line feed, carriage return.
    static func isWhitespace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
}

/// A reply as a client reads it back.
public struct ControlResponse: Sendable, Equatable {
    /// `request_id` as the server wrote it (0 for a request without one).
    public var requestID: JSONValue?
    /// `"success"`, or the error code.
    public var error: String
    /// `data` (success); nil when absent.
    public var data: JSONValue?
    /// `message` (failures); nil when absent.
    public var message: String?
    /// The line as received, without its `\n`.
    public var line: String

    /// Whether `error` is `"success"`.
    public var isSuccess: Bool { error == "success" }

    /// Parses a reply line.
    /// - Throws: `ControlSocketError.invalidReply` when it is not JSON, not an object, or has no
    ///   string `error` (an event line of `observe` has none).
    public init(line: String) throws(ControlSocketError) {
        let value: JSONValue
        do { value = try JSONValue(parsing: Array(line.utf8), options: .rfc8259) } catch {
            throw .invalidReply(reason: "not JSON (\(error)): \(JSONPath.quoted(String(line.prefix(200))))")
        }
        guard case .object = value else { throw .invalidReply(reason: "expected an object, found \(value.typeDescription)") }
        guard case let .string(error)? = value["error"] else { throw .invalidReply(reason: "no \"error\" string") }
        self.error = error
        self.requestID = value["request_id"]
        self.data = value["data"]
        if case let .string(message)? = value["message"] { self.message = message }
        self.line = line
    }
}
