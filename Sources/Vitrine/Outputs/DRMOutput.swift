import Foundation
import KMS
import Media
import VitrineCore

/// The DRM/KMS output: a `Scanout` (connector, CRTC, primary plane, mode, three dumb buffers) driven
/// by page flips. The presenter draws into the back buffer while the previous flip is pending, then
/// waits for that flip's event before queuing the next (one flip in flight), as mpv's vo_drm and
/// kmscube do; the wait's timeout is the presenter's.
final class DRMOutput: VideoOutput {
    private let device: KMSDevice
    private let scanout: Scanout
    private let log: Logger
    let isVirtual = false
    private(set) var lastFlip: Double
    /// Completed page flips (the first modeset counts as one: it is on screen when it returns).
    private(set) var flips = 0
    var completedFlips: Int { flips }
    /// Seconds spent blocked waiting for page flips and vblanks since the output opened.
    private(set) var waitedSeconds = 0.0
    /// Called after every completed page flip with its kernel timestamp (monotonic seconds).
    var onPageFlip: ((Double) -> Void)?

    /// True when a `/dev/dri/card*` node exists.
    static var isAvailable: Bool { !KMSDevice.cardPaths().isEmpty }

    init(card: String?, mode: DisplayModeRequest, connector: String?, log: Logger) throws {
        guard let path = card ?? KMSDevice.cardPaths().first else {
            throw DRMOutputError.noDevice
        }
        device = try KMSDevice(path: path)
        let request: ModeRequest
        switch mode {
        case .preferred: request = .preferred
        case .highest: request = .highest
        case let .exact(w, h, r): request = .exact(width: w, height: h, refresh: r)
        }
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
        try scanout.present()
        if !scanout.isFlipPending { flips += 1 }   // a synchronous modeset (first frame, legacy)
    }

    var isFlipPending: Bool { scanout.isFlipPending }

    func idle() throws {
        let next = lastFlip + 1 / refreshRate
        let start = monotonicNow(), wait = next - start
        if wait > 0 { Thread.sleep(forTimeInterval: min(wait, 0.1)) }
        waitedSeconds += monotonicNow() - start
        lastFlip = max(next, monotonicNow() - 1 / refreshRate)
    }

    /// Reads the page-flip event when it comes (within `timeout` seconds); its kernel timestamp
    /// becomes the last vblank.
    func waitForFlip(timeout: Double) throws -> Bool {
        guard scanout.isFlipPending else { return true }
        let start = monotonicNow()
        defer { waitedSeconds += monotonicNow() - start }
        guard let flip = try scanout.waitForPageFlip(timeout: timeout) else { return false }
        lastFlip = flip.time > 0 ? flip.time : monotonicNow()
        flips += 1
        onPageFlip?(lastFlip)
        return true
    }

    func withFrontBuffer(_ body: (PixelTarget) throws -> Void) rethrows {}

    func close() {
        scanout.restore()
        log.info("restored the previous CRTC state")
    }
}

enum DRMOutputError: Error, CustomStringConvertible {
    case noDevice
    var description: String { "no /dev/dri/card* device" }
}
