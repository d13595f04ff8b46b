// An MQTT client on libmosquitto, driven by the event loop: libmosquitto's socket is one
// registration on the loop, its keep-alive one timer, its callbacks come on the loop's thread.
// The only module that touches libmosquitto's pointers.
internal import CMosquitto
import RunLoop
import SystemSupport
#if canImport(Glibc)
internal import Glibc
#endif

/// libmosquitto's global start-up (`mosquitto_lib_init`), once per process: it is not
/// thread-safe, and a global `let` is initialised once, under a lock. Never undone.
private let libraryStatus: Int32 = mosquitto_lib_init()

/// An MQTT 3.1.1 client on libmosquitto that lives on an `EventLoop`, for fleet status and commands.
///
/// libmosquitto runs no thread of its own (`mosquitto_loop_start` is not used). Its socket is
/// registered on the loop, readable always and writable only while libmosquitto has output
/// (`mosquitto_want_write`); a 1 s timer runs its keep-alive (`mosquitto_loop_misc`). Connecting
/// never blocks (`mosquitto_connect_async`, then `mosquitto_reconnect_async`).
///
/// **Host names.** libmosquitto's connect calls `getaddrinfo` on the calling thread, which waits
/// for the DNS server (5 s × 2 tries with glibc's defaults when it never answers). So when
/// `settings.host` is not a numeric IPv4 or IPv6 address (`inet_pton`), every attempt first looks
/// the name up on a thread of its own (`getaddrinfo`, `AF_UNSPEC`, `SOCK_STREAM`); the result
/// comes back to the loop through a `LoopWaker`, and only then does libmosquitto connect, with
/// the host *name* (TLS verifies the broker's certificate against it). libmosquitto's own lookup
/// is then answered from the resolver's cache: systemd-resolved's on the appliance (the
/// `nss-resolve` or stub-resolver path). glibc itself caches nothing, so without a caching
/// resolver that second lookup asks the DNS server again, and a server that answered the first
/// and not the second would still hold the loop up. A lookup that fails, or has not answered
/// within `settings.keepAlive` seconds, is a failed attempt (`lastError` is
/// `MQTTError.nameResolution`), retried after the backoff; a late answer is ignored, and its
/// thread ends when `getaddrinfo` returns.
///
/// **Reconnecting.** A lost or refused connection is retried after `settings.backoff`'s delays
/// (1 s doubling to 60 s, with jitter). On every CONNACK the subscriptions are made again (the
/// session is clean), the messages kept while disconnected are sent, oldest first, and then
/// `onConnect` runs (republish the retained status there).
///
/// **While disconnected** `publish` keeps up to `settings.queueLimit` messages; beyond that the
/// oldest are dropped and counted in `droppedWhileDown`. Messages already handed to libmosquitto
/// when a connection is lost unnoticed (up to 1.5 × keep-alive) are resent by libmosquitto at
/// QoS 1 and 2, and lost at QoS 0.
///
/// **Logs** go to the `log` closure, one line each, prefixed `mqtt:`; no line holds the
/// password or the user name.
///
/// Confined to the loop's thread, like the loop: create, use and drop it there.
///
/// The socket is watched through a duplicate of libmosquitto's descriptor (`dup`), which this
/// client owns: libmosquitto closes its own descriptor inside its calls, before telling anyone,
/// and the loop's registration must be cancelled before its descriptor is closed.
public final class MQTTClient {
    enum State: Equatable {
        case stopped
        /// `mosquitto_connect_async` or `reconnect_async` succeeded; waiting for the CONNACK.
        case connecting
        case connected
        /// Waiting for the lookup of the host name on its own thread (`HostLookup`).
        case resolving
        /// Waiting for the backoff timer.
        case waitingToRetry
        /// `stop()` sent DISCONNECT; waiting for libmosquitto to close the socket.
        case disconnecting
    }

    private struct Subscription {
        var filter: String
        var qos: Int
        var retained: RetainedPolicy
        var handler: (_ topic: String, _ payload: [UInt8]) -> Void
    }

    /// `struct mosquitto *`.
    private let handle: OpaquePointer
    private let settings: MQTTSettings
    private let loop: EventLoop
    private let log: (String) -> Void

    private(set) var state = State.stopped
    private var hasConnectedOnce = false
    private var attempt = 0
    private var random = SystemRandomNumberGenerator()
    private var retryTimer: LoopTimer?
    private var miscTimer: LoopTimer?
    private var stopTimer: LoopTimer?
    /// Gives up the running lookup of the host name after `settings.keepAlive` seconds.
    private var lookupTimer: LoopTimer?
    /// The running lookup; its answer is used only while it is this one (`stop()`, the timeout
    /// and the next attempt replace or clear it).
    private var lookup: LookupTicket?
    /// Brings the lookup threads' answers to the loop.
    private let waker: LoopWaker
    /// Whether `settings.host` needs a lookup (it is not a numeric address).
    private let hostIsName: Bool
    /// Topics on which a retained message was ignored (`RetainedPolicy.ignore`), logged once each.
    private var ignoredRetainedTopics: Set<String> = []
    /// The registration of `watchedFD`, a duplicate of libmosquitto's socket `mosquittoFD`.
    private var registration: IORegistration?
    private var watchedFD: Int32 = -1
    private var mosquittoFD: Int32 = -1
    private var subscriptions: [Subscription] = []
    private var queue: OutboundQueue
    /// The CONNACK refusal of the current attempt, reported by the disconnect that follows it.
    private var refusal: MQTTError?

    /// Called on the loop's thread after each successful CONNACK, after the subscriptions were
    /// sent again and the messages kept while disconnected were sent: republish the retained status here.
    public var onConnect: (() -> Void)?

    /// Whether the broker accepted the connection (CONNACK 0) and it has not been lost since.
    public var isConnected: Bool { state == .connected }

    /// Messages `publish` dropped because `settings.queueLimit` were already waiting for a
    /// connection, since the client was made.
    public private(set) var droppedWhileDown = 0

    /// Messages not delivered because they came with the retain flag to a subscription made with
    /// `retained: .ignore` (one per message, however many such subscriptions it matched), since
    /// the client was made.
    public private(set) var ignoredRetained = 0

    /// Messages waiting for a connection now.
    public var queuedWhileDown: Int { queue.count }

    /// Why the last connection attempt failed or the last connection was lost; nil once a
    /// connection is accepted. A refusal (`.connectionRefused("Connection Refused: not authorised.")`)
    /// is retried like any other failure.
    public private(set) var lastError: MQTTError?

    /// Makes a client; it does not connect before `start()`.
    ///
    /// - Parameters:
    ///   - settings: the broker, identity, credentials, TLS, will, queue and backoff.
    ///   - loop: the loop of the calling thread, which drives the connection.
    ///   - log: takes one line per event (connected, lost, next attempt in n s, dropped messages).
    /// - Throws: `MQTTError.invalidSetting` or `.tlsFile` for settings libmosquitto cannot use;
    ///   `.initFailed` when libmosquitto cannot start or allocate the client; `.tlsSetup` when it
    ///   refuses the TLS files; `.invalidTopic` for a will topic with wildcards.
    /// The corresponding C functions are `mosquitto_lib_init`, `mosquitto_new`,
    /// `mosquitto_username_pw_set`, `mosquitto_tls_set`, `mosquitto_will_set` and `mosquitto_int_option`.
    public init(settings: MQTTSettings, loop: EventLoop, log: @escaping (String) -> Void) throws(MQTTError) {
        loop.assertInLoop()
        try settings.validate { access($0, R_OK) == 0 }
        if let will = settings.will { try Self.checkTopicName(will.topic) }
        guard libraryStatus == MOSQ_ERR_SUCCESS.rawValue else {
            throw .initFailed("mosquitto_lib_init: \(Self.reason(libraryStatus))")
        }
        Errno.current = Errno(0)
        guard let handle = mosquitto_new(settings.clientID, true, nil) else {
            throw .initFailed("mosquitto_new: \(Errno.current.rawValue == 0 ? "failed" : Errno.current.description)")
        }
        self.handle = handle
        self.settings = settings
        self.loop = loop
        self.log = log
        waker = loop.makeWaker {}
        hostIsName = !HostLookup.isNumericAddress(settings.host)
        queue = OutboundQueue(limit: settings.queueLimit)
        // From here on `deinit` destroys the handle if a step fails.
        try configure()
        mosquitto_user_data_set(handle, Unmanaged.passUnretained(self).toOpaque())
        mosquitto_connect_callback_set(handle) { _, context, code in
            MQTTClient.from(context).connected(code: code)
        }
        mosquitto_disconnect_callback_set(handle) { _, context, code in
            MQTTClient.from(context).disconnected(code: code)
        }
        mosquitto_message_callback_set(handle) { _, context, message in
            guard let message else { return }
            let topic = String(cString: message.pointee.topic)
            let length = Int(message.pointee.payloadlen)
            let payload = message.pointee.payload.map { Array(UnsafeRawBufferPointer(start: $0, count: length)) } ?? []
            MQTTClient.from(context).received(topic: topic, payload: payload, retained: message.pointee.retain)
        }
    }

    private func configure() throws(MQTTError) {
        func check(_ code: Int32, _ call: String) throws(MQTTError) {
            if code != MOSQ_ERR_SUCCESS.rawValue { throw .initFailed("\(call): \(Self.reason(code))") }
        }
        try check(mosquitto_int_option(handle, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V311), "mosquitto_int_option(PROTOCOL_VERSION)")
        // Commands and their replies are small: send each at once (no Nagle delay).
        try check(mosquitto_int_option(handle, MOSQ_OPT_TCP_NODELAY, 1), "mosquitto_int_option(TCP_NODELAY)")
        if let username = settings.username {
            try check(mosquitto_username_pw_set(handle, username, settings.password), "mosquitto_username_pw_set")
        }
        if settings.tls {
            if settings.caFile == nil {
                try check(mosquitto_int_option(handle, MOSQ_OPT_TLS_USE_OS_CERTS, 1), "mosquitto_int_option(TLS_USE_OS_CERTS)")
            }
            let code = mosquitto_tls_set(handle, settings.caFile, settings.caFile == nil ? "/etc/ssl/certs" : nil,
                                         settings.certFile, settings.keyFile, nil)
            if code != MOSQ_ERR_SUCCESS.rawValue { throw .tlsSetup("mosquitto_tls_set: \(Self.reason(code))") }
        }
        if let will = settings.will {
            let code = will.payload.withUnsafeBytes {
                mosquitto_will_set(handle, will.topic, Int32($0.count), $0.baseAddress, Int32(will.qos), will.retain)
            }
            try check(code, "mosquitto_will_set")
        }
    }

    deinit {
        retryTimer?.cancel()
        miscTimer?.cancel()
        stopTimer?.cancel()
        lookupTimer?.cancel()
        unwatch()
        mosquitto_destroy(handle)
    }

    private static func from(_ context: UnsafeMutableRawPointer?) -> MQTTClient {
        Unmanaged<MQTTClient>.fromOpaque(context!).takeUnretainedValue()
    }

    // MARK: - Starting and stopping

    /// Starts connecting, without waiting, and keeps the connection up (reconnecting with backoff)
    /// until `stop()`. Calling it while started does nothing. A host name is looked up on a
    /// thread first, at every attempt (see the type's docs).
    /// The corresponding C functions are `getaddrinfo` (on a thread, for a host name),
    /// `mosquitto_connect_async` (first) and `mosquitto_reconnect_async`.
    public func start() {
        loop.assertInLoop()
        guard state == .stopped else { return }
        log("mqtt: starting, \(settings)")
        attempt = 0
        miscTimer = loop.scheduleRepeatingTimer(every: .seconds(1)) { [unowned self] _ in keepAlive() }
        connect()
    }

    /// Ends the connection with a DISCONNECT, so the broker does *not* publish the will (publish
    /// an offline status first if it should say so), stops reconnecting and takes the socket off
    /// the loop. Messages still queued stay queued for a later `start()`. The DISCONNECT is
    /// written at once when the socket has room, otherwise by the loop within 2 s. A lookup of
    /// the host name still running is abandoned: its answer connects nothing.
    /// The corresponding C function is `mosquitto_disconnect`.
    public func stop() {
        loop.assertInLoop()
        retryTimer?.cancel()
        retryTimer = nil
        miscTimer?.cancel()
        miscTimer = nil
        switch state {
        case .connecting, .connected:
            state = .disconnecting
            let code = mosquitto_disconnect(handle)
            if state == .disconnecting && code == MOSQ_ERR_SUCCESS.rawValue {
                _ = mosquitto_loop_write(handle, 1)
            }
            if state == .disconnecting {
                if mosquitto_socket(handle) < 0 {
                    finishStop()
                } else {
                    syncSocket()
                    stopTimer = loop.scheduleTimer(after: .seconds(2)) { [unowned self] in finishStop() }
                }
            }
        case .resolving, .waitingToRetry, .stopped, .disconnecting:
            finishStop()
        }
    }

    private func finishStop() {
        stopTimer?.cancel()
        stopTimer = nil
        abandonLookup()
        unwatch()
        if state != .stopped { log("mqtt: stopped") }
        state = .stopped
    }

    /// One attempt: the lookup of a host name first, then libmosquitto's connect.
    private func connect() {
        if hostIsName {
            resolve()
        } else {
            connectNow()
        }
    }

    private func resolve() {
        abandonLookup()
        let ticket = LookupTicket(client: self)
        let host = settings.host
        let waker = waker
        let failure = HostLookup.start(host) { failure in
            // On the lookup thread: only the ticket (which holds the client weakly) and the waker.
            waker.execute { ticket.client?.resolved(ticket, failure: failure) }
        }
        if let failure {
            failed(.nameResolution(host: host, reason: failure))
            return
        }
        lookup = ticket
        state = .resolving
        let seconds = settings.keepAlive
        lookupTimer = loop.scheduleTimer(after: .seconds(seconds)) { [unowned self] in
            lookupTimer = nil
            abandonLookup()
            failed(.nameResolution(host: host, reason: "no answer within \(seconds) s"))
        }
    }

    /// A lookup's answer, on the loop's thread: connects if it is the running lookup.
    private func resolved(_ ticket: LookupTicket, failure: String?) {
        guard ticket === lookup, state == .resolving else { return }
        abandonLookup()
        if let failure {
            failed(.nameResolution(host: settings.host, reason: failure))
        } else {
            connectNow()
        }
    }

    private func abandonLookup() {
        lookupTimer?.cancel()
        lookupTimer = nil
        lookup?.client = nil
        lookup = nil
    }

    private func connectNow() {
        let code: Int32
        if hasConnectedOnce {
            code = mosquitto_reconnect_async(handle)
        } else {
            code = mosquitto_connect_async(handle, settings.host, Int32(settings.port), Int32(settings.keepAlive))
        }
        guard code == MOSQ_ERR_SUCCESS.rawValue else {
            failed(.connectionFailed(Self.reason(code)))
            return
        }
        hasConnectedOnce = true
        refusal = nil
        state = .connecting
        syncSocket()
    }

    /// A connection attempt failed or a connection was lost: try again after the next delay.
    private func failed(_ error: MQTTError) {
        unwatch()
        lastError = error
        state = .waitingToRetry
        let delay = settings.backoff.delay(attempt: attempt, using: &random)
        attempt += 1
        log("mqtt: \(error); next attempt in \(Self.seconds(delay)) s")
        retryTimer = loop.scheduleTimer(after: delay) { [unowned self] in
            retryTimer = nil
            connect()
        }
    }

    // MARK: - libmosquitto's callbacks (on the loop's thread, inside its read, write and misc calls)

    private func connected(code: Int32) {
        guard code == 0 else {
            // libmosquitto closes the socket and reports the disconnect right after.
            refusal = .connectionRefused(String(cString: mosquitto_connack_string(code)))
            lastError = refusal
            return
        }
        state = .connected
        attempt = 0
        lastError = nil
        log("mqtt: connected to \(settings.host):\(settings.port)")
        for subscription in subscriptions { sendSubscribe(subscription) }
        let (messages, dropped) = queue.drain()
        if dropped > 0 { log("mqtt: \(dropped) messages were dropped while disconnected (queue limit \(settings.queueLimit))") }
        for message in messages { send(message) }
        onConnect?()
    }

    private func disconnected(code: Int32) {
        switch state {
        case .disconnecting, .stopped:
            finishStop()
        case .connecting, .connected:
            failed(refusal ?? .connectionFailed(Self.reason(code)))
        case .resolving, .waitingToRetry:
            unwatch()
        }
    }

    private func received(topic: String, payload: [UInt8], retained: Bool) {
        var ignored = false
        for subscription in subscriptions {
            var matches = false
            mosquitto_topic_matches_sub(subscription.filter, topic, &matches)
            guard matches else { continue }
            if retained && subscription.retained == .ignore {
                ignored = true
            } else {
                subscription.handler(topic, payload)
            }
        }
        if ignored {
            ignoredRetained += 1
            if ignoredRetainedTopics.insert(topic).inserted {
                log("mqtt: ignored a retained message on \(topic): commands are never retained")
            }
        }
    }

    // MARK: - Publishing and subscribing

    /// Publishes `payload` on `topic`, now when connected, else when the connection is back.
    ///
    /// While disconnected up to `settings.queueLimit` messages wait, oldest dropped beyond that
    /// (counted in `droppedWhileDown`); they are sent, in order, on the next CONNACK, before `onConnect`.
    ///
    /// - Parameters:
    ///   - topic: a topic name, without wildcards (`FleetTopics.status`).
    ///   - payload: the bytes (UTF-8 JSON for the fleet topics); empty with `retain` deletes the
    ///     topic's retained message.
    ///   - qos: 0 (at most once), 1 (at least once) or 2 (exactly once).
    ///   - retain: whether the broker keeps it for later subscribers (the status).
    /// - Throws: `MQTTError.invalidTopic` for a topic MQTT does not allow; `.payloadTooLarge`.
    /// The corresponding C function is `mosquitto_publish`.
    public func publish(_ topic: String, _ payload: [UInt8], qos: Int = 1, retain: Bool = false) throws(MQTTError) {
        loop.assertInLoop()
        precondition((0...2).contains(qos), "MQTTClient.publish: qos \(qos) is not 0, 1 or 2")
        try Self.checkTopicName(topic)
        if payload.count > 268_435_455 { throw .payloadTooLarge(payload.count) }
        let message = PendingMessage(topic: topic, payload: payload, qos: qos, retain: retain)
        if state == .connected {
            send(message)
        } else {
            keep(message)
        }
    }

    private func keep(_ message: PendingMessage) {
        if !queue.append(message) { droppedWhileDown += 1 }
    }

    private func send(_ message: PendingMessage) {
        let code = message.payload.withUnsafeBytes {
            mosquitto_publish(handle, nil, message.topic, Int32($0.count), $0.baseAddress, Int32(message.qos), message.retain)
        }
        switch code {
        case MOSQ_ERR_SUCCESS.rawValue:
            break
        case MOSQ_ERR_NO_CONN.rawValue, MOSQ_ERR_CONN_LOST.rawValue, MOSQ_ERR_ERRNO.rawValue:
            keep(message)
        default:
            log("mqtt: publish on \(message.topic) failed: \(Self.reason(code))")
        }
        syncSocket()
    }

    /// Delivers messages matching `topicFilter` to `handler`, on the loop's thread, from now on:
    /// the subscription is sent now when connected, and again after every reconnection.
    ///
    /// - Parameters:
    ///   - topicFilter: a topic filter; `+` matches one level, a final `#` the rest.
    ///   - qos: the most QoS the broker should deliver with, 0...2.
    ///   - retained: what to do with a message that comes with the retain flag
    ///     (`struct mosquitto_message.retain`): the broker's stored message for a topic, sent
    ///     on every (re)subscription. `.ignore` drops it, counts it in `ignoredRetained` and logs
    ///     one line the first time per topic; for commands, which must run once.
    ///   - handler: takes the message's topic and payload bytes.
    /// - Throws: `MQTTError.invalidTopic` for a filter MQTT does not allow.
    /// The corresponding C function is `mosquitto_subscribe`.
    public func subscribe(_ topicFilter: String, qos: Int = 1, retained: RetainedPolicy = .deliver,
                          handler: @escaping (_ topic: String, _ payload: [UInt8]) -> Void) throws(MQTTError) {
        loop.assertInLoop()
        precondition((0...2).contains(qos), "MQTTClient.subscribe: qos \(qos) is not 0, 1 or 2")
        let check = mosquitto_sub_topic_check(topicFilter)
        if topicFilter.isEmpty || check != MOSQ_ERR_SUCCESS.rawValue || topicFilter.utf8.count > 65535 {
            throw .invalidTopic(topic: topicFilter, reason: "not a topic filter ('+' and '#' must fill a whole level, '#' comes last)")
        }
        let subscription = Subscription(filter: topicFilter, qos: qos, retained: retained, handler: handler)
        subscriptions.append(subscription)
        if state == .connected { sendSubscribe(subscription) }
    }

    private func sendSubscribe(_ subscription: Subscription) {
        let code = mosquitto_subscribe(handle, nil, subscription.filter, Int32(subscription.qos))
        if code != MOSQ_ERR_SUCCESS.rawValue { log("mqtt: subscribe to \(subscription.filter) failed: \(Self.reason(code))") }
        syncSocket()
    }

    private static func checkTopicName(_ topic: String) throws(MQTTError) {
        if topic.isEmpty { throw .invalidTopic(topic: topic, reason: "empty") }
        if topic.utf8.count > 65535 { throw .invalidTopic(topic: topic, reason: "over 65535 bytes") }
        if topic.contains("\u{0}") { throw .invalidTopic(topic: topic, reason: "contains NUL") }
        if mosquitto_pub_topic_check(topic) != MOSQ_ERR_SUCCESS.rawValue {
            throw .invalidTopic(topic: topic, reason: "a published topic has no '+' or '#'")
        }
    }

    // MARK: - The socket on the loop

    /// Makes the loop's watch match libmosquitto's socket: none without one (or when not
    /// connecting), readable, and writable while libmosquitto has output. Runs after every call
    /// into libmosquitto.
    private func syncSocket() {
        let socket = mosquitto_socket(handle)
        guard socket >= 0, state == .connecting || state == .connected || state == .disconnecting else {
            unwatch()
            return
        }
        let wanted: IOEvents = mosquitto_want_write(handle) ? [.readable, .writable] : .readable
        if let registration, socket == mosquittoFD {
            if registration.events != wanted {
                do { try registration.modify(wanted) } catch { log("mqtt: \(error)") }
            }
            return
        }
        unwatch()
        let copy: Int32
        switch valueOrErrno(SystemCall("fcntl", "F_DUPFD_CLOEXEC, fd \(socket)"), { fcntl(socket, F_DUPFD_CLOEXEC, 0) }) {
        case .success(let fd): copy = fd
        case .failure(let errno):
            failed(.connectionFailed("fcntl(F_DUPFD_CLOEXEC) of the socket: \(errno)"))
            return
        }
        do {
            registration = try loop.register(copy, for: wanted) { [unowned self] events in socketReady(events) }
            watchedFD = copy
            mosquittoFD = socket
        } catch {
            Self.close(copy)
            failed(.connectionFailed("\(error)"))
        }
    }

    private func unwatch() {
        registration?.cancel()
        registration = nil
        if watchedFD >= 0 { Self.close(watchedFD) }
        watchedFD = -1
        mosquittoFD = -1
    }

    private func socketReady(_ events: IOEvents) {
        var code = MOSQ_ERR_SUCCESS.rawValue
        // libmosquitto drives a TLS handshake only from mosquitto_loop_read (and from its own
        // select loop), also when the handshake waits for room to write.
        if events.contains(.readable) || events.contains(.hangup) || events.contains(.error) || settings.tls {
            code = mosquitto_loop_read(handle, 1)
        }
        if code == MOSQ_ERR_SUCCESS.rawValue, events.contains(.writable), mosquitto_socket(handle) >= 0 {
            code = mosquitto_loop_write(handle, 1)
        }
        afterLoopCall(code, hangup: events.contains(.hangup) || events.contains(.error))
    }

    /// 1 s timer: keep-alive pings, and giving up an attempt that had no CONNACK within keep-alive.
    private func keepAlive() {
        guard state == .connecting || state == .connected, mosquitto_socket(handle) >= 0 else { return }
        afterLoopCall(mosquitto_loop_misc(handle), hangup: false)
    }

    /// After a read, write or misc call: a failure libmosquitto did not report through its
    /// disconnect callback (a failed TLS handshake) is a lost connection too.
    private func afterLoopCall(_ code: Int32, hangup: Bool) {
        if state == .connecting || state == .connected {
            if code != MOSQ_ERR_SUCCESS.rawValue {
                failed(.connectionFailed(Self.reason(code)))
                return
            }
            if hangup && mosquitto_socket(handle) == mosquittoFD && mosquitto_socket(handle) >= 0 {
                failed(.connectionFailed("the socket hung up"))
                return
            }
        }
        syncSocket()
    }

    /// Closes this client's duplicate of the socket (EBADF, a bug, stops the program in the gateway).
    private static func close(_ fd: Int32) {
        _ = valueOrErrno(SystemCall("close", "fd \(fd)"), retryOnInterrupt: false) { Glibc.close(fd) }
    }

    // MARK: - Text

    /// libmosquitto's text for `code`, with `errno`'s for `MOSQ_ERR_ERRNO`.
    static func reason(_ code: Int32) -> String {
        if code == MOSQ_ERR_ERRNO.rawValue { return Errno.current.description }
        return String(cString: mosquitto_strerror(code))
    }

    private static func seconds(_ duration: Duration) -> String {
        let milliseconds = duration.wholeNanoseconds / 1_000_000
        return "\(milliseconds / 1000).\(String(milliseconds % 1000 + 1000).dropFirst())"
    }
}

@available(*, unavailable)
extension MQTTClient: Sendable {}

/// What `MQTTClient.subscribe` does with a message that has the retain flag set
/// (`struct mosquitto_message.retain`). In MQTT 3.1.1 the broker sets it only on the retained
/// message it sends because of a new subscription (so again after every reconnection, the
/// session being clean); a message published with retain to a subscription that already exists
/// arrives without it, and is delivered under either policy.
public enum RetainedPolicy: Sendable, Equatable {
    /// Hand it to the handler like any other message (status, configuration).
    case deliver
    /// Drop it, count it in `MQTTClient.ignoredRetained` and log the first one per topic
    /// (commands: one that a controller published with `-r` would otherwise run on every connect).
    case ignore
}

/// One lookup of the host name, carried by the lookup thread and back to the loop. The thread
/// only holds the reference; `client` is read and written on the loop's thread alone, and is
/// weak so that a lookup keeps no client alive (the client's `deinit` never waits for one).
private final class LookupTicket: @unchecked Sendable {
    weak var client: MQTTClient?

    init(client: MQTTClient) { self.client = client }
}
