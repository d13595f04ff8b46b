import Foundation
import SystemSupport
import KMS
import Media
import VitrineCore

/// The DRM/KMS output: a `Scanout` (connector, CRTC, primary plane, mode, three dumb buffers) driven
/// by page flips. The presenter draws into the back buffer while the previous flip is pending, then
/// waits for that flip's event before queuing the next (one flip in flight), as mpv's vo_drm and
/// kmscube do; the wait's timeout is the presenter's.
///
/// Hot-plug (`HotplugScreen`, driven by `ScreenHotplug`): while the connector's sink is gone
/// (`screenLost()`), nothing is flipped; `flip()` completes on the vblank clock instead
/// (`flipDeadline`), so the presenter, the timeline and the watchdog go on as if the pictures were
/// shown, and no flip waits on a CRTC that may never complete one. `reconnect(to:mode:)` sets the
/// mode again (TEST_ONLY first) and the next picture goes on screen.
final class DRMOutput: VideoOutput, HotplugScreen {
    private let device: KMSDevice
    private let scanout: Scanout
    private let log: Logger
    let isVirtual = false
    private(set) var lastFlip: Double
    /// Completed page flips (the first modeset counts as one: it is on screen when it returns).
    private(set) var flips = 0
    var completedFlips: Int { flips }
    /// The presenter measures its own waits for flips and vblanks.
    let waitedSeconds = 0.0
    /// Called after every completed page flip with its kernel timestamp (monotonic seconds).
    var onPageFlip: ((Double) -> Void)?
    /// The card, e.g. `/dev/dri/card0`.
    let cardPath: String
    /// The mode asked for (`display.mode`), for choosing it again when the screen comes back.
    let modeRequest: ModeRequest
    /// The connector's sink is gone (`screenLost()`): flips complete on the vblank clock.
    private(set) var isScreenLost = false
    /// When `reconnect` passed its TEST_ONLY commit; the next `flip()` (the modeset) logs it.
    private var reconnectedAt: Double?
    /// While lost: when the picture "flipped" last reaches its vblank (monotonic seconds).
    private var virtualFlipDue: Double?

    /// True when a `/dev/dri/card*` node exists.
    static var isAvailable: Bool { !KMSDevice.cardPaths().isEmpty }

    /// - Parameter lessor: with several outputs, the card's lessor: the output drives a lease of
    ///   `connector`, its CRTC and primary plane (`DRMLessor.lease`), and sees nothing else.
    init(card: String?, mode: DisplayModeRequest, connector: String?, lessor: DRMLessor? = nil, log: Logger) throws {
        if let lessor, let connector {
            device = try lessor.lease(connector: connector, log: log)
            cardPath = lessor.card.path
        } else {
            guard let path = card ?? KMSDevice.cardPaths().first else {
                throw DRMOutputError.noDevice
            }
            device = try KMSDevice(path: path)
            cardPath = path
        }
        let path = cardPath
        let request: ModeRequest
        switch mode {
        case .preferred: request = .preferred
        case .highest: request = .highest
        case let .exact(w, h, r): request = .exact(width: w, height: h, refresh: r)
        }
        modeRequest = request
        scanout = try Scanout(device: device, mode: request, connectorName: connector, bufferCount: 3)
        self.log = log
        lastFlip = monotonicNow()
        log.info("\(path) (\(device.driverName)): \(scanout.connector.name) \(scanout.mode.name) @ \(scanout.mode.refreshRate.formatted2) Hz, \(scanout.usesAtomic ? "atomic" : "legacy") modesetting")
    }

    var width: Int { scanout.width }
    var height: Int { scanout.height }
    var refreshRate: Double { scanout.mode.refreshRate > 0 ? scanout.mode.refreshRate : 60 }
    var summary: String {
        "drm \(scanout.connector.name) \(width)x\(height)@\(refreshRate.formatted2) (\(device.driverName), \(scanout.usesAtomic ? "atomic" : "legacy"))"
    }

    func nextPresentationTime() -> Double {
        let period = 1 / refreshRate
        let base = max(lastFlip, monotonicNow() - period)
        return base + (scanout.isFlipPending ? 2 : 1) * period
    }

    func monotonicTime(ofPresentation t: Double) -> Double { t }

    func draw(_ body: (PixelTarget) throws -> Void) throws {
        try scanout.withBackBuffer { (raw: UnsafeMutableRawBufferPointer, stride: Int) throws -> Void in
            try body(PixelTarget(raw, width: scanout.width, height: scanout.height, stride: stride))
        }
    }

    func flip() throws {
        if isScreenLost {
            // Nothing to show it on: the picture "reaches the screen" at the next vblank.
            virtualFlipDue = vblankTime(atOrAfter: monotonicNow())
            return
        }
        try scanout.present()
        if !scanout.isFlipPending { flips += 1 }   // a synchronous modeset (first frame, legacy)
        if let since = reconnectedAt {
            reconnectedAt = nil
            log.info("\(connectorName): modeset done, the picture is on screen again (\(String(format: "%.3f", monotonicNow() - since)) s after the TEST_ONLY commit)")
        }
    }

    var isFlipPending: Bool { virtualFlipDue != nil || scanout.isFlipPending }

    /// The DRM device: readable when page-flip events are waiting.
    var eventDescriptor: Int32? { scanout.fileDescriptor }
    /// Flips complete on the kernel's event, not at a time; while the screen is lost, at the vblank.
    var flipDeadline: Double? { virtualFlipDue }

    /// Reads the DRM events waiting (`drmHandleEvent`), without waiting; when the pending flip
    /// completed, its kernel timestamp becomes the last vblank. While the screen is lost: the
    /// picture "flipped" completes at its vblank time (late events are read and dropped).
    func handleFlipEvents() throws -> Bool {
        if let due = virtualFlipDue {
            _ = try? scanout.handlePageFlipEvents()
            let now = monotonicNow()
            guard now >= due - 0.0005 else { return false }
            virtualFlipDue = nil
            lastFlip = max(due, now - 1 / refreshRate)
            flips += 1
            return true
        }
        guard let flip = try scanout.handlePageFlipEvents() else { return false }
        lastFlip = flip.time > 0 ? flip.time : monotonicNow()
        flips += 1
        onPageFlip?(lastFlip)
        return true
    }

    /// One period after the last flip.
    var nextVblankDeadline: Double? { lastFlip + 1 / refreshRate }

    /// No flip this vblank: the vblank clock moves on by a period (or to now, after a long pause).
    func vblankPassed() throws {
        lastFlip = max(lastFlip + 1 / refreshRate, monotonicNow() - 1 / refreshRate)
    }

    func vblankTime(atOrAfter t: Double) -> Double {
        let period = 1 / refreshRate
        return lastFlip + max(1, ((t - lastFlip) / period - 1e-6).rounded(.up)) * period
    }

    func skipVblanks(before t: Double) { lastFlip = max(lastFlip, t - 1 / refreshRate) }

    func now() -> Double { monotonicNow() }

    /// The scanout buffer on screen, copied once into memory first (the dumb buffer may be
    /// write-combined: slow to read pixel by pixel). Nothing before the first frame.
    func withFrontBuffer(_ body: (PixelTarget) throws -> Void) rethrows {
        try frontBufferCopy()?.withTarget(body)
    }

    /// The one copy out of the scanout buffer.
    func frontBufferCopy() -> ImageBuffer? {
        let (w, h) = (width, height)
        return scanout.withFrontBuffer { bytes, stride -> ImageBuffer? in
            guard let base = bytes?.baseAddress else { return nil }
            let image = ImageBuffer(width: w, height: h)
            let source = PixelTarget(base: UnsafeMutableRawPointer(mutating: base), width: w, height: h, stride: stride)
            image.withTarget { $0.copy(from: source) }
            return image
        }
    }

    func setDisplayPower(_ on: Bool) throws {
        // No sink: nothing to power; the modeset when it comes back powers it on.
        if isScreenLost { return }
        try scanout.setDisplayPower(on)
        // No page flips while off: the vblank clock runs on from now (`vblankPassed`).
        if !on { lastFlip = monotonicNow() }
        log.info(on ? "display power on: the next frame sets the mode" : "display power off: CRTC \(scanout.crtcID) \(scanout.usesAtomic ? "ACTIVE=0" : "DPMS Off")")
    }

    // MARK: - Hot-plug

    var connectorName: String { scanout.connector.name }
    var connectorID: UInt32 { scanout.connector.id }
    var mode: Mode { scanout.mode }
    var screenConnection: ScreenConnection? { isScreenLost ? .disconnected(connector: connectorName) : .connected(connector: connectorName) }

    /// The connectors of the card: probed (`probe`: EDID read, after a uevent) or as the kernel
    /// last knew them (the slow poll).
    func readConnectors(probe: Bool) throws -> [Connector] { try device.connectors(probe: probe) }

    /// Stops flipping to the connector (`Scanout.connectorLost`: a pending flip waited for 0.1 s at
    /// most, the CRTC deactivated). A flip that was pending completes at the next vblank instead.
    func screenLost() {
        guard !isScreenLost else { return }
        let hadFlip = scanout.isFlipPending
        if let error = scanout.connectorLost() {
            log.warning("\(connectorName): the CRTC could not be switched off after the sink went away: \(error)")
        }
        isScreenLost = true
        if hadFlip && !scanout.isFlipPending { virtualFlipDue = vblankTime(atOrAfter: monotonicNow()) }
    }

    /// Sets the mode again on the connector (`Scanout.reconnect`: properties read again, a new mode
    /// blob, TEST_ONLY); the next `flip()` is the modeset. A driven connector (a mode change) is
    /// taken off first. On an error the screen stays lost.
    func reconnect(to connector: Connector, mode: Mode) throws {
        screenLost()
        try scanout.reconnect(to: connector, mode: mode)
        isScreenLost = false
        reconnectedAt = monotonicNow()
    }

    func close() {
        scanout.restore()
        log.info("restored the previous CRTC state")
    }
}

enum DRMOutputError: Error, CustomStringConvertible {
    case noDevice
    var description: String { "no /dev/dri/card* device" }
}
