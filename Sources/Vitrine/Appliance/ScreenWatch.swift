import Foundation
import SystemSupport
import KMS
import Hotplug
import RunLoop
import ServiceManager

/// One run's watch on its DRM screen: the udev monitor (`DRMHotplugMonitor`, a uevent makes it
/// read the connectors probed) and a slow poll (`pollSeconds`, the connectors as the kernel last
/// knew them, probed while the screen is lost; for a box without udevd, or a uevent missed), each
/// look handed to `ScreenHotplug`.
///
/// Lost and back are logged once each; `onChange` gets the connection (the status, systemd's
/// STATUS line, a redraw), `onRestart` a mode of another size (the run ends, the supervisor opens
/// the display again). Confined to the run loop's thread.
final class RunScreenWatch {
    /// Seconds between two looks without a uevent: `drmModeGetConnectorCurrent` is a few ioctls,
    /// no probe, while the screen is driven. (Some drivers send no uevent when the connector is
    /// forced through sysfs, virtio-gpu among them: the VM's `echo off > …/status` is seen here.)
    static let pollSeconds = 1
    let output: DRMOutput
    let reaction: ScreenHotplug
    private let log: Logger
    private let cardPath: String
    private var monitor: DRMHotplugMonitor?
    private var registration: IORegistration?
    private var poll: LoopTimer?
    /// The screen's connection changed (lost, back).
    var onChange: ((ScreenConnection) -> Void)?
    /// The screen needs a new output: why.
    var onRestart: ((String) -> Void)?
    /// When the screen went away (monotonic seconds), for the log line when it is back.
    private var lostSince: Double?
    /// The last refused modeset's reason (logged once).
    private var lastRefusal: String?
    /// A look asked for a new output (`onRestart`).
    private var restartAsked = false

    init(output: DRMOutput, connectorName: String?, log: Logger) {
        self.output = output
        self.log = log
        cardPath = output.cardPath
        reaction = ScreenHotplug(request: OutputRequest(connectorName: connectorName, mode: output.modeRequest),
                                 driving: output.connectorName, mode: output.mode)
    }

    /// Registers the monitor and the poll on `loop`. Without a monitor (no netlink socket) the poll
    /// alone watches, and that is logged.
    func attach(to loop: EventLoop) {
        do {
            let monitor = try DRMHotplugMonitor()
            registration = try monitor.register(on: loop) { [unowned self] event in
                if let node = event.devnode, node != cardPath { return }
                look(probe: true, why: "uevent \(event.sequenceNumber)")
            }
            self.monitor = monitor
            log.info("hot-plug: \(DRMHotplugMonitor.summary), and the connectors read every \(Self.pollSeconds) s")
        } catch {
            log.warning("hot-plug: no udev monitor (\(error)); the connectors are read every \(Self.pollSeconds) s")
        }
        poll = loop.scheduleRepeatingTimer(every: .seconds(Self.pollSeconds)) { [unowned self] _ in
            look(probe: false, why: "poll")
        }
    }

    func cancel() {
        registration?.cancel()
        registration = nil
        poll?.cancel()
        poll = nil
        monitor = nil
    }

    /// Reads the connectors and carries out the decision.
    func look(probe: Bool, why: String) {
        // The run ends at the next vblank for a new output: nothing more to decide here.
        if restartAsked { return }
        let connectors: [Connector]
        do {
            // While lost, the poll probes too: without udevd the kernel's list keeps the old modes
            // until a probe reads the EDID of the sink that came back.
            connectors = try output.readConnectors(probe: probe || reaction.isLost)
        } catch {
            log.error("hot-plug (\(why)): reading the connectors failed: \(error)")
            return
        }
        switch reaction.connectorsChanged(connectors, screen: output) {
        case .unchanged:
            break
        case .lost(let connector):
            lostSince = monotonicNow()
            log.warning("screen lost: \(connector) is disconnected (\(why)); page flips stopped, playback goes on")
            onChange?(.disconnected(connector: connector))
        case let .restored(connector, mode):
            let after = lostSince.map { String(format: " after %.1f s", monotonicNow() - $0) } ?? ""
            lostSince = nil
            lastRefusal = nil
            log.info("screen back: \(connector) at \(mode.name) @ \(mode.refreshRate.formatted2) Hz\(after) (\(why)); the next frame sets the mode")
            onChange?(.connected(connector: connector))
        case let .refused(connector, reason):
            if lostSince == nil {
                lostSince = monotonicNow()
                onChange?(.disconnected(connector: connector))
            }
            // Once per reason: the look every second tries again.
            if reason != lastRefusal {
                log.error("screen \(connector) is back but its modeset was refused (\(why)): \(reason); trying again at each look")
            }
            lastRefusal = reason
        case let .restart(connector, _, reason):
            restartAsked = true
            log.info("screen \(connector): \(reason) (\(why)): restarting the display with it")
            onRestart?(reason)
        }
    }
}

/// The supervisor's wait for a screen before a run on the DRM output: while no connector is
/// drivable (`OutputPlanner.isDrivable`: connected, with modes) — a box booted with the TV off —
/// it watches the udev monitor and reads the connectors every `pollSeconds`, tells systemd
/// `READY=1` with "no screen connected; waiting" and feeds its watchdog every second, and returns
/// when a screen is there (or a stop is asked for).
///
/// Times are the run loop's; confined to the calling thread.
enum ScreenWait {
    static let pollSeconds = 3

    /// Whether a card exists and one of its connectors (`connectorName`, else any) is drivable now.
    /// Probes the sinks (EDID). False without a card.
    static func screenAvailable(card: String?, connectorName: String?) -> Bool {
        guard let path = card ?? KMSDevice.cardPaths().first, let device = try? KMSDevice(path: path),
              let connectors = try? device.connectors(probe: true) else { return false }
        return drivable(connectors, connectorName: connectorName)
    }

    /// Whether the card (`card`, else the first) opens and has connectors at all: a render-only
    /// GPU, or a card that does not open, is not waited on (the run reports it, exit 69).
    static func cardHasConnectors(card: String?) -> Bool {
        guard let path = card ?? KMSDevice.cardPaths().first, let device = try? KMSDevice(path: path),
              let connectors = try? device.connectors(probe: false) else { return false }
        return !connectors.isEmpty
    }

    /// Whether `connectorName` (else any connector) of `connectors` can be driven.
    static func drivable(_ connectors: [Connector], connectorName: String?) -> Bool {
        if let connectorName { return Connector.named(connectorName, in: connectors).map(OutputPlanner.isDrivable) ?? false }
        return connectors.contains(where: OutputPlanner.isDrivable)
    }

    /// Waits until `available()` says a screen is there; checks after each DRM uevent and every
    /// `pollSeconds`. Returns false when a stop was asked for (SIGINT, SIGTERM, SIGHUP, or
    /// `Player.requestStop()`) first.
    /// - Parameter available: the check (`screenAvailable` with the run's card and connector).
    static func wait(log: Logger, notifier: ServiceNotifier = ServiceNotifier(), available: @escaping () -> Bool) -> Bool {
        if available() { return true }
        log.warning("no screen connected: waiting for one (udev hot-plug events, and a look every \(pollSeconds) s)")
        notifier.ready(status: "no screen connected; waiting for one")
        do {
            let loop = try EventLoop()
            defer { loop.close() }
            var found = false
            func check(_ why: String) {
                if Player.stopRequested { loop.stop(); return }
                guard available() else { return }
                log.info("a screen is connected (\(why)): starting playback")
                found = true
                loop.stop()
            }
            var handles: [LoopSubscription] = []
            defer { handles.forEach { $0.cancel() } }
            if Player.stopSignals.allSatisfy(SignalMask.isBlocked) {
                handles.append(try loop.handleSignals(Player.stopSignals) { signal in
                    log.info("\(signal) while waiting for a screen")
                    stopSignal.store(true, ordering: .relaxed)
                    loop.stop()
                })
            }
            let monitor = try? DRMHotplugMonitor()
            let watch = try monitor?.register(on: loop) { event in check("uevent \(event.sequenceNumber)") }
            defer { watch?.cancel() }
            var elapsed = 0
            let ticks = loop.scheduleRepeatingTimer(every: .seconds(1)) { _ in
                notifier.watchdog()
                elapsed += 1
                if elapsed % pollSeconds == 0 { check("look every \(pollSeconds) s") }
                if Player.stopRequested { loop.stop() }
            }
            defer { ticks.cancel() }
            try loop.run()
            return found
        } catch {
            // No loop: look every few seconds by sleeping, still feeding the watchdog.
            log.error("waiting for a screen without a run loop (\(error)): looking every \(pollSeconds) s")
            while !Player.stopRequested {
                for _ in 0..<pollSeconds { notifier.watchdog(); Thread.sleep(forTimeInterval: 1) }
                if available() { return true }
            }
            return false
        }
    }
}
