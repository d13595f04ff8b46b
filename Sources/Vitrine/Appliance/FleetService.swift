import Foundation
import Synchronization
import SystemSupport
import VitrineCore
import RunLoop
import MQTT
import ControlSocket
import ClockSync

/// The box's faces to the outside, for every run of the appliance: the command vocabulary
/// (`ControlCommands`) on MQTT's `…/cmd` (allow-listed) and on the local control socket (all of
/// it), the retained status on `…/status`, and the event log's lines on `…/events`.
///
/// Made once per process; each `Player` run attaches it to its run loop (`attach`) and detaches
/// it when the run ends (a display restart reconnects within a second; the broker keeps the
/// retained status meanwhile, and no will is sent: the run ends with a DISCONNECT). Everything
/// runs on the loop's thread; lines logged on other threads hop onto it through a `LoopWaker`.
public final class FleetService: @unchecked Sendable {  // loop-confined state; `pendingLines` is behind its Mutex
    public let mqtt: MQTTConfig?
    /// The local control socket (`control`); nil or not `enabled`: none.
    public let control: ControlSettings?
    /// Where `screenshot path` writes (inside the library).
    public let screenshotFolder: String
    public let problems: RecentProblems?
    private let log: Logger
    /// `CLOCK_MONOTONIC` seconds when the process made this service (the status's `uptime`).
    private let startedAt = monotonicNow()

    /// The run attached, and its pieces.
    private var loop: EventLoop?
    private var client: MQTTClient?
    private var topics: FleetTopics?
    private var statusTimer: LoopTimer?
    private var waker: LoopWaker?
    private var lineObserver: UUID?
    private var hubObserver: UUID?
    private weak var eventLog: EventLog?
    private weak var hub: EventHub?
    private var server: ControlServer?
    private(set) var commands: ControlCommands?
    /// Event lines waiting for the loop (written on any thread), at most `maxPendingLines`.
    private let pendingLines = Mutex<[String]>([])
    static let maxPendingLines = 1000
    /// The last status published, to publish again only on change (between the periodic ones).
    private var lastPublished: String?
    /// Reads the kernel's clock discipline (`ClockSyncState.read`; a test's stand-in).
    private let readClock: () -> Result<ClockSyncState, Errno>
    /// Whether the clock read synchronized at the last check (nil: not checked yet, or the read
    /// failed), kept across runs: one warning when it is not, one line when that changes.
    private var clockWasSynchronized: Bool?
    /// Whether the last read failed (logged once until a read works again).
    private var clockReadFailed = false
    /// Whether `checkClock` ran in this process (the first run's start).
    private var clockChecked = false
    /// The once-a-minute clock check (`checkClock`).
    private var clockTimer: LoopTimer?
    static let clockCheckInterval: Duration = .seconds(60)

    /// - Parameters:
    ///   - mqtt: the config's `mqtt`; nil for no MQTT.
    ///   - library: the library folder; screenshots go to `<library>/screenshots`.
    ///   - problems: the recent warnings and errors the status reports.
    ///   - readClock: the clock's state (default: `adjtimex(2)` through `ClockSyncState.read`).
    public init(mqtt: MQTTConfig?, control: ControlSettings? = nil, library: String, problems: RecentProblems?, log: Logger,
                readClock: @escaping () -> Result<ClockSyncState, Errno> = { Result { () throws(Errno) in try ClockSyncState.read() } }) {
        self.readClock = readClock
        self.mqtt = mqtt
        self.control = control
        self.screenshotFolder = library + "/screenshots"
        self.problems = problems
        self.log = log
    }

    /// The status fields that are the process's, not the run's.
    private func processStatus() -> [(key: String, value: JSONValue)] {
        var f: [(key: String, value: JSONValue)] = []
        if let topics { f += [("site", .string(topics.site)), ("box", .string(topics.box))] }
        f.append(("uptime", .double(monotonicNow() - startedAt, digits: 1)))
        f.append(("wall", .string(EventLog.iso(Date().timeIntervalSince1970))))
        if let problems { f.append(("errors", problems.json)) }
        f.append(("clock", Self.clockStatus(readClock())))
        return f
    }

    /// The status's `clock` object: `{"synchronized": true, "offsetMs": 0.012, "maxErrorMs": 3.1,
    /// "estErrorMs": 0.5, "frequencyPpm": -12.3, "source": "adjtimex"}` (milliseconds, ppm, from
    /// `ClockSyncState`); when the read failed, `{"synchronized": null, "source": "adjtimex", "error": …}`.
    static func clockStatus(_ reading: Result<ClockSyncState, Errno>) -> JSONValue {
        switch reading {
        case .success(let c):
            return .object([("synchronized", .bool(c.synchronized)), ("offsetMs", .double(c.offsetMilliseconds, digits: 3)),
                            ("maxErrorMs", .double(c.maxErrorMilliseconds, digits: 3)),
                            ("estErrorMs", .double(c.estimatedErrorMilliseconds, digits: 3)),
                            ("frequencyPpm", .double(c.frequencyPPM, digits: 3)), ("source", .string("adjtimex"))])
        case .failure(let e):
            return .object([("synchronized", .null), ("source", .string("adjtimex")), ("error", .string("adjtimex: \(e)"))])
        }
    }

    /// Reads the clock's state and logs what changed since the last check: at the first check a
    /// warning when it is not synchronized (playback goes on, on the unsynchronized clock), later
    /// one info line when it became synchronized, one warning when it lost it. A failed read is
    /// logged once.
    func checkClock() {
        clockChecked = true
        switch readClock() {
        case .success(let c):
            defer { clockWasSynchronized = c.synchronized; clockReadFailed = false }
            if c.synchronized {
                if clockWasSynchronized == false {
                    log.info("the clock is synchronized (offset \(Self.ms(c.offsetMilliseconds)) ms, max error \(Self.ms(c.maxErrorMilliseconds)) ms)")
                }
            } else if clockWasSynchronized != false {
                log.warning("the clock is not synchronized (adjtimex: max error \(Self.ms(c.maxErrorMilliseconds)) ms): playing on; "
                            + "screens that show one timeline together drift apart until chronyd has a source (config clock, docs/sync.md)")
            }
        case .failure(let e):
            if !clockReadFailed { log.warning("the clock's state cannot be read: adjtimex: \(e)") }
            clockReadFailed = true
            clockWasSynchronized = nil
        }
    }

    private static func ms(_ value: Double) -> String { String(format: "%.3f", value) }

    /// Starts serving `target` (the run's engine and schedule) on `loop`, the calling thread's.
    /// Connects to the broker when `mqtt` is set; a broker that cannot be reached is retried with
    /// backoff and never holds playback up.
    /// The event lines come from `eventLog` when the run has one, else from `events` (the same
    /// JSON, not written anywhere).
    func attach(to loop: EventLoop, target: ControlTarget, eventLog: EventLog?, events: EventHub) -> ControlCommands {
        loop.assertInLoop()
        self.loop = loop
        let commands = ControlCommands(networkAllow: mqtt?.allow ?? ControlCommands.defaultNetworkAllow,
                                       screenshotFolder: screenshotFolder, log: log.child("control"))
        commands.target = target
        commands.extraStatus = { [unowned self] in processStatus() }
        self.commands = commands
        let waker = loop.makeWaker { [unowned self] in drainLines() }
        self.waker = waker
        commands.onLoop = { work in _ = waker.execute(work) }
        let take: @Sendable (String) -> Void = { [weak self] line in
            guard let self else { return }
            let first = pendingLines.withLock { l -> Bool in
                if l.count >= Self.maxPendingLines { l.removeFirst() }
                l.append(line)
                return l.count == 1
            }
            if first { _ = waker.wake() }
        }
        if let eventLog {
            self.eventLog = eventLog
            lineObserver = eventLog.observeLines(take)
        } else {
            hub = events
            hubObserver = events.observe { take(EventLog.json($0)) }
        }
        if let control, control.enabled { startServer(control, loop: loop, commands: commands) }
        if let mqtt { startMQTT(mqtt, loop: loop) }
        // One adjtimex call now and once a minute (not per vblank): the log lines of checkClock.
        if !clockChecked { checkClock() }
        clockTimer = loop.scheduleRepeatingTimer(every: Self.clockCheckInterval) { [unowned self] _ in checkClock() }
        return commands
    }

    /// The control socket: every command (no allow-list: the socket's mode and group are its
    /// guard), `observe` streaming the event lines. A socket that cannot be opened (its folder
    /// missing, another player on it) is logged; playback goes on without it.
    private func startServer(_ settings: ControlSettings, loop: EventLoop, commands: ControlCommands) {
        let log = self.log
        // 16 MiB of reply: a 1080p screenshot of a noisy picture in base64 is about 7 MB (`screenshot
        // path` for bigger screens); a client that stops reading is still dropped there.
        var settings = settings
        let outputLimit = 16 << 20
        let handler: (ControlRequest, ControlSocket.ControlReply) -> Void = { [weak commands] request, reply in
            guard let commands else { reply.fail(ControlError(.unavailable, "nothing is playing")); return }
            commands.execute(request.command, origin: .local) { reply.answer($0) }
        }
        func open(_ settings: ControlSettings) throws(ControlSocketError) -> ControlServer {
            try ControlServer(path: settings.path, group: settings.group, loop: loop, log: { log.info($0) },
                              maxPendingOutputBytes: outputLimit, handler: handler)
        }
        do {
            do {
                server = try open(settings)
            } catch .unknownGroup(let group) where group == ControlSettings.defaultGroup {
                // A machine without the image's group (development): the player's own group.
                log.warning("control socket: no group \(group) on this machine; the socket keeps the player's own group")
                settings.group = nil
                server = try open(settings)
            } catch .system(let operation, .notPermitted) where operation.hasPrefix("lchown") {
                // Not allowed to give it the group (not a member, or a sandbox without chown): a
                // socket only root and the player's group reach is better than none.
                log.warning("control socket: \(operation): not permitted; the socket keeps the player's own group")
                settings.group = nil
                server = try open(settings)
            }
            log.info("control socket \(settings.path)" + (settings.group.map { " (group \($0))" } ?? ""))
        } catch {
            log.warning("control socket \(settings.path) not opened: \(error); vitrine ctl cannot reach this player")
        }
    }

    private func startMQTT(_ config: MQTTConfig, loop: EventLoop) {
        do {
            let topics = try FleetTopics(site: config.site, box: config.boxName)
            self.topics = topics
            let client = try MQTTClient(settings: try config.settings(topics: topics), loop: loop) { [log] line in log.info(line) }
            client.onConnect = { [unowned self] in publishStatus(force: true) }
            // A command published with the retain flag would run again on every connect: dropped
            // (and logged once per topic) instead.
            for filter in [topics.cmd, topics.broadcastCmd] {
                try client.subscribe(filter, retained: .ignore) { [unowned self] _, payload in command(payload) }
            }
            self.client = client
            client.start()
            statusTimer = loop.scheduleRepeatingTimer(every: .milliseconds(Int64(config.statusInterval * 1000))) { [unowned self] _ in
                publishStatus(force: true)
            }
        } catch {
            log.error("mqtt: not connecting: \(error)")
        }
    }

    /// A command from `…/cmd` or `…/all/cmd`: `{"command": [...], "request_id": N}`; the reply
    /// goes to `…/reply` with the same `request_id`.
    /// The same wire format as the socket's (`ControlProtocol`), one request per message.
    private func command(_ payload: [UInt8]) {
        guard let commands, let topics else { return }
        guard payload.count <= 64 << 10 else {
            reply(topics, nil, .failure(.requestTooLong("\(payload.count) bytes, more than 65536")))
            return
        }
        switch ControlProtocol.parse(payload[...]) {
        case .blank: return
        case let .rejected(error, id): reply(topics, id, .failure(error))
        case let .request(command, id):
            let name = command.first?.stringValue ?? "?"
            log.info("mqtt command \(ControlProtocol.echoed(name))" + (id.map { " (request_id \(ControlProtocol.echoed($0.text)))" } ?? ""))
            commands.execute(command, origin: .network) { [weak self] result in
                self?.reply(topics, id, result)
                if case .success = result, name != "status", name != "screenshot" { self?.publishStatus(force: false) }
            }
        }
    }

    private func reply(_ topics: FleetTopics, _ id: JSONValue?, _ result: CommandResult) {
        var line = ControlProtocol.reply(requestID: id, result)
        if line.hasSuffix("\n") { line.removeLast() }
        publish(topics.reply, line)
    }

    private func publish(_ topic: String, _ text: String, retain: Bool = false) {
        do { try client?.publish(topic, Array(text.utf8), qos: 1, retain: retain) } catch { log.error("mqtt: publish on \(topic): \(error)") }
    }

    /// Publishes the retained status; unless `force`, only when it differs from the last one in
    /// more than its times and the clock's figures (its `synchronized` counts).
    func publishStatus(force: Bool) {
        guard client != nil, let topics, let commands else { return }
        let status = commands.status()
        var comparable = status
        // The clock's figures move at every read (maxerror grows between chronyd's updates): only
        // whether it is synchronized counts as a change.
        if case let .object(m) = status {
            comparable = .object(m.filter { $0.key != "uptime" && $0.key != "wall" }.map {
                $0.key == "clock" ? ($0.key, $0.value["synchronized"] ?? .null) : $0
            })
        }
        let key = comparable.text
        if !force && key == lastPublished { return }
        lastPublished = key
        publish(topics.status, status.text, retain: true)
    }

    /// The event lines logged since the last wake: to `…/events` and to the socket's observers.
    private func drainLines() {
        let lines = pendingLines.withLock { l -> [String] in defer { l.removeAll() }; return l }
        guard !lines.isEmpty else { return }
        var changed = false
        for line in lines {
            server?.broadcast(eventLine: line)
            // Proof of play, not the position every quarter second (`progress` stays on the socket).
            if let topics, mqtt?.events == true, !line.hasPrefix("{\"event\":\"progress\"") { publish(topics.events, line) }
            if line.contains("\"event\":\"scheduleChanged\"") || line.contains("\"event\":\"displayPower\"")
                || line.contains("\"event\":\"import") || line.contains("\"event\":\"nowPlayingChanged\"") {
                changed = true
            }
        }
        if changed { publishStatus(force: false) }
    }

    /// Ends the run's part: the broker connection with a DISCONNECT (after `{"online":false}` when
    /// `final`, the process stopping), the timers, the observer.
    func detach(final: Bool) {
        if let id = lineObserver { eventLog?.removeLineObserver(id) }
        lineObserver = nil
        if let id = hubObserver { hub?.removeObserver(id) }
        hubObserver = nil
        server?.close()
        server = nil
        statusTimer?.cancel()
        statusTimer = nil
        clockTimer?.cancel()
        clockTimer = nil
        if let client {
            if final, let topics { publish(topics.status, #"{"online":false}"#, retain: true) }
            client.stop()
            // The DISCONNECT (and the offline status) are written within the loop's next turns.
            if let loop { for _ in 0..<20 where client.isConnected { try? loop.runOnce(timeout: .milliseconds(10)) } }
        }
        client = nil
        commands?.target = nil
        commands = nil
        waker = nil
        loop = nil
    }
}
