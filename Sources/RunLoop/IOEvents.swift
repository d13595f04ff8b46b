// What a registered descriptor is ready for: epoll(7) event bits.

/// Readiness of a descriptor, as epoll reports it. An open set: the raw value is epoll's
/// `events` mask, so a bit this module does not name still fits.
///
/// `hangup` and `error` are reported whether or not they were asked for (epoll always reports
/// them). Registrations are level-triggered: a descriptor stays ready until it is read (or
/// written) to the point of `EAGAIN`, so a handler must consume what made it ready, and must
/// cancel its registration on `hangup`, or the loop calls it again at once.
public struct IOEvents: OptionSet, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// `EPOLLIN`: there is data to read (or, for a listening socket, a connection to accept).
    public static let readable = IOEvents(rawValue: Epoll.readable)
    /// `EPOLLOUT`: a write would not block.
    public static let writable = IOEvents(rawValue: Epoll.writable)
    /// `EPOLLRDHUP`: the peer of a stream socket shut down its writing half.
    public static let readHangup = IOEvents(rawValue: Epoll.readHangup)
    /// `EPOLLHUP`: hang-up (the writer of a pipe closed it, a device went away). Always reported.
    public static let hangup = IOEvents(rawValue: Epoll.hangup)
    /// `EPOLLERR`: an error condition (the reader of a pipe closed it). Always reported.
    public static let error = IOEvents(rawValue: Epoll.error)

    /// `[readable, hangup]`.
    public var description: String {
        let names: [(IOEvents, String)] = [(.readable, "readable"), (.writable, "writable"), (.readHangup, "readHangup"),
                                           (.hangup, "hangup"), (.error, "error")]
        var parts = names.filter { contains($0.0) }.map(\.1)
        let rest = subtracting(IOEvents(names.map(\.0)))
        if !rest.isEmpty { parts.append("0x\(String(rest.rawValue, radix: 16))") }
        return "[\(parts.joined(separator: ", "))]"
    }
}
