// The answer to one request: the handler keeps it and answers once, now or later.
import VitrineCore

/// The way back to the client of one `ControlRequest`.
///
/// The handler answers once, with `succeed(_:)` or `fail(_:)`, at once or later on the loop's
/// thread (after a vblank, when a screenshot is encoded): the reply carries the request's
/// `request_id`, so replies to one client may come in any order. Answering again does nothing
/// (and returns false). A reply released unanswered answers `error running command` itself
/// (every request gets exactly one reply), with a log line.
///
/// The reply does not keep the connection open: when the client has gone, answering does nothing
/// and returns false. Confined to the loop's thread, like the server.
public final class ControlReply {
    /// The request's `request_id`, echoed in the reply (nil: the reply carries 0).
    public let requestID: JSONValue?
    /// The command's name, for the log line of an unanswered reply.
    let commandName: String
    private weak var connection: ControlConnection?
    /// Whether `succeed` or `fail` was called (or the reply was answered for the handler).
    public private(set) var isAnswered = false

    init(requestID: JSONValue?, commandName: String, connection: ControlConnection) {
        self.requestID = requestID
        self.commandName = commandName
        self.connection = connection
    }

    deinit {
        guard !isAnswered, let connection, connection.isOpen else { return }
        connection.server?.log("control: \(connection.peer): \(JSONPath.printable(ControlProtocol.echoed(commandName))) was never answered; "
                               + "replying \"error running command\"")
        connection.sendReply(ControlProtocol.reply(requestID: requestID, .failure(.commandFailed("the player did not answer"))))
    }

    /// Whether the client is still connected (an answer can still reach it).
    public var isConnected: Bool { connection?.isOpen ?? false }

    /// Answers `{"request_id":…,"error":"success","data":DATA}` (`data` null when nil).
    ///
    /// A reply longer than the server's `maxPendingOutputBytes` is not sent: the client gets
    /// `error running command` with the length instead (see `ControlServer`).
    /// - Returns: whether the reply was queued for the client (false: answered before, or the
    ///   client has gone).
    @discardableResult
    public func succeed(_ data: JSONValue? = nil) -> Bool {
        answer(.success(data))
    }

    /// Answers `{"request_id":…,"error":CODE,"message":TEXT}`.
    /// - Returns: whether the reply was queued (false: answered before, or the client has gone).
    @discardableResult
    public func fail(_ error: ControlError) -> Bool {
        answer(.failure(error))
    }

    /// Answers with `result`: `succeed` for `.success`, `fail` for `.failure`.
    @discardableResult
    public func answer(_ result: Result<JSONValue?, ControlError>) -> Bool {
        guard !isAnswered else { return false }
        isAnswered = true
        guard let connection, connection.isOpen, let server = connection.server else { return false }
        return connection.sendReply(server.replyLine(requestID: requestID, commandName: commandName, result, to: connection))
    }
}

@available(*, unavailable)
extension ControlReply: Sendable {}
