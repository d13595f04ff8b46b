// A full-screen output: connector, mode, CRTC, primary plane and a ring of dumb buffers,
// presented with atomic commits (or legacy SetCrtc/PageFlip), one flip in flight.
internal import CDRM
#if canImport(Glibc)
internal import Glibc
#endif
import SystemSupport

/// One display driven full screen from CPU-drawn XRGB8888 dumb buffers.
///
/// `Scanout` owns everything it creates. `deinit` restores the CRTC as it was found (or turns it
/// off) and then frees the buffers, framebuffers and mode blob.
///
/// Use it from one thread, the presenter thread, and create it there. All page-flip events on
/// the device's file descriptor must be read through `waitForPageFlip(timeout:)` or
/// `handlePageFlipEvents()`.
///
/// A frame goes like this:
/// ```swift
/// scanout.withBackBuffer { pixels, stride in draw(into: pixels, stride: stride) }
/// try scanout.present()
/// // with `scanout.fileDescriptor` registered for readable on the event loop, in its handler:
/// if let flip = try scanout.handlePageFlipEvents() { clock.vblank(at: flip.time) }
/// ```
public final class Scanout {
    /// The device this output belongs to; kept open for as long as the output lives.
    public let device: KMSDevice
    /// The connector being driven (read again by `reconnect(to:mode:)`).
    public private(set) var connector: Connector
    /// The mode it runs (chosen again by `reconnect(to:mode:)`, always at the buffers' size).
    public private(set) var mode: Mode
    /// Visible width in pixels.
    public var width: Int { mode.width }
    /// Visible height in pixels.
    public var height: Int { mode.height }
    /// Bytes per row of every buffer (at least `width * 4`, often padded).
    public let stride: Int
    /// Whether frames are presented with atomic commits (else legacy `drmModeSetCrtc`/`drmModePageFlip`).
    public let usesAtomic: Bool
    /// The buffers' pixel format: `.xrgb8888`, i.e. bytes B, G, R, X in memory (a native
    /// little-endian `UInt32` reads `0xXXRRGGBB`).
    public let pixelFormat: FourCC = .xrgb8888
    /// The CRTC driving the connector.
    public let crtcID: UInt32
    /// The primary plane used for atomic commits; `nil` on the legacy path without universal planes.
    public let primaryPlaneID: UInt32?
    /// How many buffers are in the ring (3 or more).
    public var bufferCount: Int { buffers.count }
    /// The device's file descriptor: readable when DRM events are waiting. Register it on the event
    /// loop for readable and call `handlePageFlipEvents()` when it is.
    public var fileDescriptor: Int32 { device.fileDescriptor }
    /// Whether a presented buffer has not reached the screen yet (its flip event is not read).
    public var isFlipPending: Bool { pending != nil }
    /// The last error `restore()` met, `nil` if it succeeded (or never ran).
    public private(set) var restoreError: DRMError?

    /// How long `restore()` waits for a pending flip before giving up, in seconds.
    static let flipTimeout = 1.0

    private struct SavedCRTC {
        var framebufferID: UInt32
        var x: UInt32
        var y: UInt32
        var timing: Mode.Timing?
    }

    private struct AtomicObjects {
        var planeID: UInt32
        var crtc: CRTCProperties
        var connector: ConnectorProperties
        var plane: PlaneProperties
    }

    private var fd: Int32 { device.fd }
    private var timing: Mode.Timing
    private let saved: SavedCRTC
    private var atomic: AtomicObjects?
    private let buffers: [DumbBuffer]
    private var modeBlobID: UInt32 = 0
    /// The next `present()` must set the mode (first frame, or after `restore()`).
    private var needsModeset = true
    /// We changed the CRTC, so `restore()` has something to undo.
    private var hasTakenOver = false
    /// The buffer `withBackBuffer` hands out; never `front` nor `pending`.
    private var back = 0
    /// The buffer on screen, `nil` before the first frame.
    private var front: Int?
    /// The flip queued and not yet completed.
    private var pending: PendingFlip?

    /// Sets up full-screen output on one connector.
    ///
    /// Picks the connector (`connectorName`, else the first connected one), the mode
    /// (`Mode.select`), a CRTC the connector's encoders allow (the one already driving it if
    /// any, else one no other connector uses), and that CRTC's primary plane. Saves the CRTC's
    /// current state for `restore()`. Creates `bufferCount` XRGB8888 dumb buffers, cleared to
    /// black. Nothing on screen changes until the first `present()`.
    ///
    /// - Parameters:
    ///   - device: an open card.
    ///   - mode: which mode to use.
    ///   - connectorName: e.g. `"HDMI-A-1"` or `"Virtual-1"`; `nil` for the first connected connector.
    ///   - bufferCount: size of the buffer ring; values below 3 are raised to 3.
    ///   - useAtomic: `false` forces the legacy path even when the device supports atomic.
    ///   - reservedCRTCs: CRTCs other outputs of this process drive on the same card (their
    ///     `crtcID`s): never chosen (groundwork for two screens; `chooseCRTC`).
    /// - Throws: `DRMError` with `ENODEV` when no connector is connected (or the named one is
    ///   not), `ENOENT` for an unknown connector name, `ENOTSUP` without dumb buffers,
    ///   `ENOSPC` when no CRTC or primary plane fits; or the failing call's error
    ///   (`drmModeGetResources`, `drmModeGetCrtc`, property look-ups, dumb buffer creation).
    /// The corresponding C functions are `drmModeGetConnector`, `drmModeGetEncoder`,
    /// `drmModeGetCrtc`, `drmModeGetPlane`, `drmModeObjectGetProperties` and
    /// `drmIoctl(DRM_IOCTL_MODE_CREATE_DUMB)`.
    public init(device: KMSDevice, mode request: ModeRequest, connectorName: String? = nil,
                bufferCount: Int = 3, useAtomic: Bool = true, reservedCRTCs: Set<UInt32> = []) throws(DRMError) {
        guard device.capabilities.dumbBuffer else {
            throw DRMError(operation: "Scanout(\(device.path))", errno: ENOTSUP,
                           detail: "driver \(device.driverName) has no dumb buffers")
        }
        let connectors = try device.connectors()
        let connector = try Self.chooseConnector(connectorName, from: connectors)
        guard let mode = Mode.select(request, from: connector.modes), let timing = mode.timing else {
            throw DRMError(operation: "select mode on \(connector.name)", errno: ENODEV,
                           detail: "the connector reports no modes")
        }
        let crtcIDs = try device.resources().crtcs
        let (crtcID, crtcIndex) = try Self.chooseCRTC(for: connector, among: crtcIDs, others: connectors, reserved: reservedCRTCs) {
            id throws(DRMError) in try device.encoder(id)
        }

        let fd = device.fd
        let crtc = try DRMCall.pointer("drmModeGetCrtc(\(crtcID))") { drmModeGetCrtc(fd, crtcID) }
        let saved = SavedCRTC(framebufferID: crtc.pointee.buffer_id, x: crtc.pointee.x, y: crtc.pointee.y,
                              timing: crtc.pointee.mode_valid != 0 ? Mode.Timing(crtc.pointee.mode) : nil)
        drmModeFreeCrtc(crtc)

        var plane: Plane?
        if device.capabilities.universalPlanes {
            plane = try Self.choosePrimaryPlane(crtcID: crtcID, crtcIndex: crtcIndex, planes: device.planes())
        }
        var atomic: AtomicObjects?
        if useAtomic && device.capabilities.atomic {
            guard let plane else {
                throw DRMError(operation: "find primary plane for CRTC \(crtcID)", errno: ENOSPC,
                               detail: "no primary plane can be used with this CRTC")
            }
            atomic = AtomicObjects(
                planeID: plane.id,
                crtc: try CRTCProperties(device.properties(of: crtcID, type: .crtc)),
                connector: try ConnectorProperties(device.properties(of: connector.id, type: .connector)),
                plane: try PlaneProperties(device.properties(of: plane.id, type: .plane)))
        }

        var buffers: [DumbBuffer] = []
        for _ in 0..<max(3, bufferCount) {
            buffers.append(try DumbBuffer(device: device, width: mode.width, height: mode.height))
        }

        self.device = device
        self.connector = connector
        self.mode = mode
        self.timing = timing
        self.crtcID = crtcID
        self.primaryPlaneID = plane?.id
        self.saved = saved
        self.atomic = atomic
        self.usesAtomic = atomic != nil
        self.buffers = buffers
        self.stride = buffers[0].stride
    }

    deinit {
        restore()
        if modeBlobID != 0 {
            let fd = fd, blob = modeBlobID
            _ = try? DRMCall.check("drmModeDestroyPropertyBlob(\(blob))") { drmModeDestroyPropertyBlob(fd, blob) }
        }
        // `buffers` are released after this body: munmap, drmModeRmFB, DRM_IOCTL_MODE_DESTROY_DUMB.
    }

    // MARK: - Drawing

    /// Gives the pixels of the buffer that the next `present()` will show: never the one on
    /// screen, nor one with a flip pending, so drawing never tears.
    ///
    /// The memory may be write-combined: write rows sequentially and do not read it back
    /// (compose in RAM and copy once, as mpv does).
    ///
    /// - Parameter body: receives `stride * height` bytes of XRGB8888 pixels and the stride in bytes.
    /// - Returns: what `body` returns.
    /// - Throws: only what `body` throws.
    public func withBackBuffer<R, E: Error>(
        _ body: (UnsafeMutableRawBufferPointer, _ stride: Int) throws(E) -> R
    ) throws(E) -> R {
        try body(buffers[back].bytes, stride)
    }

    /// Reads the buffer on screen: the one the last completed flip (or modeset) scanned out.
    ///
    /// The memory may be write-combined, so reading it is slow (about as slow as a copy through
    /// uncached memory): copy it once, as a screenshot does, and never per frame.
    ///
    /// - Parameter body: receives `stride * height` bytes of XRGB8888 pixels (bytes B, G, R, X)
    ///   and the stride in bytes; nil before the first frame is on screen.
    /// - Returns: what `body` returns.
    /// - Throws: only what `body` throws.
    public func withFrontBuffer<R, E: Error>(
        _ body: (UnsafeRawBufferPointer?, _ stride: Int) throws(E) -> R
    ) throws(E) -> R {
        guard let front else { return try body(nil, stride) }
        return try body(UnsafeRawBufferPointer(buffers[front].bytes), stride)
    }

    /// Fills the back buffer with one colour, e.g. `0x00FF0000` for red.
    ///
    /// - Parameter color: an XRGB8888 pixel as a native `UInt32`: `0xXXRRGGBB`.
    public func fill(color: UInt32) {
        buffers[back].fill(color)
    }

    // MARK: - Presenting

    /// Queues the back buffer for scanout at the next vblank.
    ///
    /// One flip is in flight at most: with a flip still pending this throws `EBUSY` and queues
    /// nothing. Wait for the pending flip first (`waitForPageFlip(timeout:)`), under the caller's
    /// timeout policy.
    /// Atomic path, first frame (or after `restore()`): creates the `MODE_ID` blob, checks the
    /// full configuration with a `TEST_ONLY | ALLOW_MODESET` commit, then applies it with a
    /// blocking `ALLOW_MODESET` commit that requests a page-flip event (connector `CRTC_ID`;
    /// CRTC `MODE_ID`, `ACTIVE`; plane `FB_ID`, `CRTC_ID`, `SRC_*`, `CRTC_*`). Later frames: a
    /// non-blocking commit of the plane's `FB_ID` with `DRM_MODE_PAGE_FLIP_EVENT`.
    /// Legacy path: `drmModeSetCrtc` for the first frame (synchronous: no flip is pending
    /// afterwards), then `drmModePageFlip` with `DRM_MODE_PAGE_FLIP_EVENT`.
    ///
    /// - Throws: `DRMError` with `EBUSY` while the previous flip is pending, `ENODEV` after
    ///   `connectorLost()` (until `reconnect(to:mode:)`); from
    ///   `drmModeAtomicCommit` (`EINVAL`: the driver rejects the configuration, `EACCES`: not
    ///   DRM master), `drmModeCreatePropertyBlob`, `drmModeSetCrtc` or `drmModePageFlip`.
    ///   After an error nothing is queued and the back buffer is unchanged.
    /// The corresponding C functions are `drmModeAtomicCommit`, `drmModeSetCrtc` and `drmModePageFlip`.
    public func present() throws(DRMError) {
        if pending != nil {
            throw DRMError(operation: "present", errno: EBUSY, detail: "the previous page flip is still pending")
        }
        if isConnectorLost {
            throw DRMError(operation: "present", errno: ENODEV, detail: "\(connector.name) is disconnected (reconnect(to:mode:) first)")
        }
        if isPoweredOff { try setDisplayPower(true) }
        let index = back
        let flip = PendingFlip(bufferIndex: index)
        if let atomic {
            if needsModeset {
                try createModeBlobIfNeeded()
                try commit(atomic, buffer: index, .testOnly, modeset: true, flip: nil)
                try commit(atomic, buffer: index, .blocking, modeset: true, flip: flip)
                needsModeset = false
                hasTakenOver = true
            } else {
                try commit(atomic, buffer: index, .nonBlocking, modeset: false, flip: flip)
            }
            pending = flip
        } else if needsModeset {
            var connectorID = connector.id
            var info = timing.modeInfo
            let fd = fd, crtcID = crtcID, framebufferID = buffers[index].framebufferID
            try DRMCall.check("drmModeSetCrtc(\(crtcID), \(mode))") {
                drmModeSetCrtc(fd, crtcID, framebufferID, 0, 0, &connectorID, 1, &info)
            }
            needsModeset = false
            hasTakenOver = true
            front = index
        } else {
            let fd = fd, crtcID = crtcID, framebufferID = buffers[index].framebufferID
            let userData = flip.retainAsUserData()
            do {
                try DRMCall.check("drmModePageFlip(\(crtcID))") {
                    drmModePageFlip(fd, crtcID, framebufferID, UInt32(DRM_MODE_PAGE_FLIP_EVENT), userData)
                }
            } catch {
                PendingFlip.cancel(userData)
                throw error
            }
            pending = flip
        }
        back = nextBack(after: index)
    }

    /// Waits up to `timeout` seconds for the pending page flip to complete and returns it.
    ///
    /// With `timeout: 0` it only reads events already waiting: call it so when the run loop's
    /// `poll` reports `fileDescriptor` readable. When the flip completes, its buffer becomes
    /// the front buffer and the previous front buffer is free for drawing again.
    ///
    /// - Parameter timeout: the longest wait, in seconds.
    /// - Returns: the flip's vblank sequence and `CLOCK_MONOTONIC` time; `nil` on timeout or
    ///   when no flip is pending.
    /// - Throws: `DRMError` from `poll` or `drmHandleEvent`.
    /// The corresponding C functions are `poll` and `drmHandleEvent` (with `page_flip_handler2`).
    public func waitForPageFlip(timeout: Double) throws(DRMError) -> PageFlip? {
        guard let flip = pending else { return nil }
        let deadline = MonotonicClock.seconds() + max(timeout, 0)
        while true {
            if let completion = flip.completion {
                front = flip.bufferIndex
                pending = nil
                return completion
            }
            let remaining = deadline - MonotonicClock.seconds()
            guard try DRMEvents.waitReadable(fd: fd, timeout: max(remaining, 0)) else { return nil }
            try DRMEvents.handle(fd: fd)
            if flip.completion == nil && remaining <= 0 { return nil }
        }
    }

    /// Reads the DRM events waiting on `fileDescriptor`, without waiting, and returns the pending
    /// page flip if one of them completed it (its buffer is then the front buffer).
    ///
    /// For an event loop that watches `fileDescriptor` for readable: call it from the handler.
    /// Unlike `waitForPageFlip(timeout: 0)` it reads the events even when no flip is pending (a
    /// late event of an abandoned flip), so a level-triggered watch never finds the device still
    /// readable and spins. A spurious wake-up (nothing to read) reads nothing and returns nil.
    ///
    /// - Returns: the flip's vblank sequence and `CLOCK_MONOTONIC` time; nil when no pending flip
    ///   completed.
    /// - Throws: `DRMError` from `poll` or `drmHandleEvent`.
    /// The corresponding C functions are `poll` (with a zero timeout) and `drmHandleEvent`.
    public func handlePageFlipEvents() throws(DRMError) -> PageFlip? {
        if try DRMEvents.waitReadable(fd: fd, timeout: 0) { try DRMEvents.handle(fd: fd) }
        guard let flip = pending, let completion = flip.completion else { return nil }
        front = flip.bufferIndex
        pending = nil
        return completion
    }

    /// Tells the driver the front buffer changed, for devices such as virtio-gpu that show a
    /// dumb buffer only after a flip or an explicit dirty call. Does nothing before the first frame.
    ///
    /// - Throws: `DRMError` from `drmModeDirtyFB`; `ENOSYS` (driver needs no dirty calls) is ignored.
    /// The corresponding C function is `drmModeDirtyFB`.
    public func markFrontBufferDirty() throws(DRMError) {
        guard let index = front ?? pending?.bufferIndex else { return }
        let fd = fd, framebufferID = buffers[index].framebufferID
        do {
            try DRMCall.check("drmModeDirtyFB(\(framebufferID))") { drmModeDirtyFB(fd, framebufferID, nil, 0) }
        } catch where error.errno == ENOSYS {
            return
        }
    }

    // MARK: - Display power

    /// Whether the display is powered off by `setDisplayPower(false)`.
    public private(set) var isPoweredOff = false

    /// Powers the display off or on again, as a screen schedule does at night.
    ///
    /// Off: waits for a pending flip (up to `flipTimeout`), then deactivates the CRTC: on the atomic
    /// path a blocking `ALLOW_MODESET` commit of the CRTC's `ACTIVE` = 0 (the mode, plane and
    /// connector routing are kept, as the kernel's DPMS-off helper does), on the legacy path the
    /// connector's `DPMS` property set to Off (`DRM_MODE_DPMS_OFF`). The panel then sees no signal
    /// and sleeps (QEMU's virtio-gpu shows "Display output is not active"). Nothing may be
    /// presented while off: `present()` powers the display on first.
    ///
    /// On: the next `present()` sets the mode again (atomic: `TEST_ONLY` then the full modeset with
    /// `ACTIVE` = 1; legacy: `DPMS` On, then `drmModeSetCrtc`). Does nothing when the state is
    /// already the one asked for, or before the first frame.
    ///
    /// - Throws: `DRMError` from `drmModeAtomicCommit` or `drmModeConnectorSetProperty` (`ENOENT`:
    ///   the connector has no `DPMS` property). After an error the state is unchanged.
    /// The corresponding C functions are `drmModeAtomicCommit` and `drmModeConnectorSetProperty`;
    /// the property semantics are the kernel's "KMS properties" (`ACTIVE`, `DPMS`) documentation.
    public func setDisplayPower(_ on: Bool) throws(DRMError) {
        guard hasTakenOver || isPoweredOff, on == isPoweredOff else { return }
        if on {
            if atomic == nil {
                try setLegacyDPMS(0)
            }
            isPoweredOff = false
            needsModeset = true
            return
        }
        if pending != nil { _ = try waitForPageFlip(timeout: Self.flipTimeout) }
        try switchCRTCOff()
        pending = nil
        isPoweredOff = true
    }

    /// The CRTC off: atomic `ACTIVE` = 0 (a blocking modeset commit), or the connector's legacy `DPMS` off.
    private func switchCRTCOff() throws(DRMError) {
        if let atomic {
            let request = try AtomicRequest()
            try request.add(object: crtcID, property: atomic.crtc.active, value: 0)
            try request.commit(fd: fd, mode: .blocking, allowModeset: true, pageFlipEvent: false, userData: nil)
        } else {
            try setLegacyDPMS(3)
        }
    }

    /// Sets the connector's legacy `DPMS` enum property (0 On … 3 Off).
    private func setLegacyDPMS(_ value: UInt64) throws(DRMError) {
        let fd = fd, connectorID = connector.id
        let property = try device.properties(of: connectorID, type: .connector).id(.dpms)
        try DRMCall.check("drmModeConnectorSetProperty(\(connector.name), DPMS \(value))") {
            drmModeConnectorSetProperty(fd, connectorID, property, value)
        }
    }

    // MARK: - Hot-plug

    /// Whether the sink went away (`connectorLost()`) and no `reconnect(to:mode:)` followed.
    public private(set) var isConnectorLost = false

    /// The connector's sink went away (a hot-plug uevent, the connector reads disconnected): stop
    /// scanning out to it. Waits at most `lostFlipWait` seconds for a pending flip (a CRTC with no
    /// sink may never complete one), then forgets it (a late event finds its `PendingFlip` still
    /// valid), and deactivates the CRTC as `setDisplayPower(false)` does (atomic: `ACTIVE` = 0;
    /// legacy: `DPMS` Off). Nothing may be presented until `reconnect(to:mode:)`.
    ///
    /// Never throws: a driver that refuses to switch off a CRTC whose connector is gone leaves it
    /// as it is (the next modeset replaces it); the error is returned for the log.
    /// The corresponding C functions are `drmModeAtomicCommit` and `drmModeConnectorSetProperty`.
    @discardableResult
    public func connectorLost() -> DRMError? {
        guard !isConnectorLost else { return nil }
        isConnectorLost = true
        if pending != nil { _ = try? waitForPageFlip(timeout: Self.lostFlipWait) }
        pending = nil
        var failure: DRMError?
        if hasTakenOver && !isPoweredOff {
            do {
                try switchCRTCOff()
            } catch {
                failure = error
            }
        }
        needsModeset = true
        return failure
    }

    /// How long `connectorLost()` waits for a pending flip, in seconds.
    static let lostFlipWait = 0.1

    /// Scans out to `connector` again (the sink came back, or another one of the same size is on
    /// the same port) at `mode`: reads the connector's, CRTC's and plane's property ids again
    /// (they may change with the connector), makes a new `MODE_ID` blob (so the kernel does a full
    /// modeset even for the same timings) and checks the configuration with a `TEST_ONLY |
    /// ALLOW_MODESET` commit. The next `present()` sets the mode (`TEST_ONLY`, then the blocking
    /// modeset) and shows its buffer.
    ///
    /// - Parameters:
    ///   - connector: as read now (`KMSDevice.connectors()`); the one this output drives, by id.
    ///   - mode: the mode chosen again (`Mode.select`); its size must be the buffers' size.
    /// - Throws: `DRMError` with `EINVAL` for another connector or a mode of another size (both need
    ///   a new `Scanout`), `ENODEV` for a connector that is not connected; from the property
    ///   look-ups, `drmModeCreatePropertyBlob` or the `TEST_ONLY` commit (`EINVAL`: the driver
    ///   rejects it). After an error the output stays lost.
    /// The corresponding C functions are `drmModeObjectGetProperties`, `drmModeCreatePropertyBlob`
    /// and `drmModeAtomicCommit` (`DRM_MODE_ATOMIC_TEST_ONLY`).
    public func reconnect(to connector: Connector, mode: Mode) throws(DRMError) {
        guard connector.id == self.connector.id else {
            throw DRMError(operation: "reconnect \(connector.name)", errno: EINVAL,
                           detail: "this output drives \(self.connector.name) (id \(self.connector.id))")
        }
        guard mode.width == width, mode.height == height, let timing = mode.timing else {
            throw DRMError(operation: "reconnect \(connector.name) at \(mode)", errno: EINVAL,
                           detail: "the buffers are \(width)x\(height)")
        }
        guard connector.isConnected else {
            throw DRMError(operation: "reconnect \(connector.name)", errno: ENODEV, detail: "nothing is connected to it")
        }
        if pending != nil { _ = try? waitForPageFlip(timeout: Self.lostFlipWait) }
        pending = nil
        var objects = atomic
        if let old = atomic {
            objects = AtomicObjects(
                planeID: old.planeID,
                crtc: try CRTCProperties(device.properties(of: crtcID, type: .crtc)),
                connector: try ConnectorProperties(device.properties(of: connector.id, type: .connector)),
                plane: try PlaneProperties(device.properties(of: old.planeID, type: .plane)))
        }
        let previous = (connector: self.connector, mode: self.mode, timing: self.timing, blob: modeBlobID)
        self.connector = connector
        self.mode = mode
        self.timing = timing
        atomic = objects
        modeBlobID = 0
        do {
            if let objects {
                try createModeBlobIfNeeded()
                try commit(objects, buffer: back, .testOnly, modeset: true, flip: nil)
            }
        } catch {
            if modeBlobID != 0 {
                let fd = fd, blob = modeBlobID
                _ = try? DRMCall.check("drmModeDestroyPropertyBlob(\(blob))") { drmModeDestroyPropertyBlob(fd, blob) }
            }
            (self.connector, self.mode, self.timing, modeBlobID) = previous
            throw error
        }
        if previous.blob != 0 {
            let fd = fd, blob = previous.blob
            _ = try? DRMCall.check("drmModeDestroyPropertyBlob(\(blob))") { drmModeDestroyPropertyBlob(fd, blob) }
        }
        if objects == nil { try? setLegacyDPMS(0) }
        isConnectorLost = false
        isPoweredOff = false
        needsModeset = true
        front = nil
    }

    // MARK: - Restoring

    /// Puts the CRTC back as it was found: the saved framebuffer, position and mode on this
    /// connector. If nothing was shown before (no framebuffer), or that fails, clears the buffer
    /// on screen to black and turns the CRTC off, so the screen goes black rather than keeping a
    /// frozen frame. Used by atomic clients
    /// too. Does nothing if this output never presented; calling it twice is harmless. The next
    /// `present()` sets the mode again. Errors are kept in `restoreError`.
    ///
    /// The corresponding C function is `drmModeSetCrtc`.
    public func restore() {
        guard hasTakenOver else { return }
        if pending != nil {
            _ = try? waitForPageFlip(timeout: Self.flipTimeout)
        }
        let visible = [front, pending?.bufferIndex].compactMap { $0 }
        pending = nil  // If its event never came, forget it: its PendingFlip stays valid for a late event.
        let fd = fd, crtcID = crtcID
        restoreError = nil
        if saved.framebufferID != 0, let timing = saved.timing {
            var connectorID = connector.id
            var info = timing.modeInfo
            let saved = saved
            do {
                try DRMCall.check("drmModeSetCrtc(restore \(crtcID))") {
                    drmModeSetCrtc(fd, crtcID, saved.framebufferID, saved.x, saved.y, &connectorID, 1, &info)
                }
                finishRestore()
                return
            } catch {
                restoreError = error
            }
        }
        // Blank our visible buffers first: some devices (QEMU's bochs-display) keep showing the
        // last frame after the CRTC is off. The back buffer is left as it is.
        for index in visible { buffers[index].fill(0) }
        do {
            try DRMCall.check("drmModeSetCrtc(off \(crtcID))") { drmModeSetCrtc(fd, crtcID, 0, 0, 0, nil, 0, nil) }
        } catch {
            restoreError = error
        }
        finishRestore()
    }

    private func finishRestore() {
        hasTakenOver = false
        isPoweredOff = false
        needsModeset = true
        front = nil
    }

    // MARK: - Internals

    /// The atomic apply function: one request, committed test-only, blocking or non-blocking.
    ///
    /// With `modeset`, the request carries the whole configuration (connector → CRTC, mode,
    /// active, plane position); without, only the plane's new framebuffer.
    private func commit(_ objects: AtomicObjects, buffer index: Int, _ commitMode: CommitMode,
                        modeset: Bool, flip: PendingFlip?) throws(DRMError) {
        let planeID = objects.planeID
        let request = try AtomicRequest()
        let framebufferID = UInt64(buffers[index].framebufferID)
        if modeset {
            let w = UInt64(width), h = UInt64(height)
            try request.add(object: connector.id, property: objects.connector.crtcID, value: UInt64(crtcID))
            try request.add(object: crtcID, property: objects.crtc.modeID, value: UInt64(modeBlobID))
            try request.add(object: crtcID, property: objects.crtc.active, value: 1)
            try request.add(object: planeID, property: objects.plane.fbID, value: framebufferID)
            try request.add(object: planeID, property: objects.plane.crtcID, value: UInt64(crtcID))
            try request.add(object: planeID, property: objects.plane.srcX, value: 0)
            try request.add(object: planeID, property: objects.plane.srcY, value: 0)
            try request.add(object: planeID, property: objects.plane.srcW, value: w << 16)
            try request.add(object: planeID, property: objects.plane.srcH, value: h << 16)
            try request.add(object: planeID, property: objects.plane.crtcX, value: 0)
            try request.add(object: planeID, property: objects.plane.crtcY, value: 0)
            try request.add(object: planeID, property: objects.plane.crtcW, value: w)
            try request.add(object: planeID, property: objects.plane.crtcH, value: h)
        } else {
            try request.add(object: planeID, property: objects.plane.fbID, value: framebufferID)
        }
        let userData = flip?.retainAsUserData()
        do {
            try request.commit(fd: fd, mode: commitMode, allowModeset: modeset, pageFlipEvent: flip != nil,
                               userData: userData)
        } catch {
            if let userData { PendingFlip.cancel(userData) }
            throw error
        }
    }

    /// Creates the `MODE_ID` property blob for the chosen mode, once.
    ///
    /// The corresponding C function is `drmModeCreatePropertyBlob`.
    private func createModeBlobIfNeeded() throws(DRMError) {
        guard modeBlobID == 0 else { return }
        let blob = timing.modeInfoBytes
        var blobID: UInt32 = 0
        let fd = fd
        try DRMCall.check("drmModeCreatePropertyBlob(MODE_ID \(mode))") {
            blob.withUnsafeBytes { drmModeCreatePropertyBlob(fd, $0.baseAddress, $0.count, &blobID) }
        }
        modeBlobID = blobID
    }

    /// The next buffer in ring order after `index` that is neither on screen nor pending.
    private func nextBack(after index: Int) -> Int {
        for step in 1...buffers.count {
            let candidate = (index + step) % buffers.count
            if candidate != front && candidate != pending?.bufferIndex { return candidate }
        }
        preconditionFailure("a ring of \(buffers.count) buffers always has a free one")
    }

    // MARK: - Choosing connector, CRTC and plane

    static func chooseConnector(_ name: String?, from connectors: [Connector]) throws(DRMError) -> Connector {
        let summary = connectors.map { "\($0.name) \($0.isConnected ? "connected" : "disconnected")" }
            .joined(separator: ", ")
        if let name {
            guard let match = Connector.named(name, in: connectors) else {
                throw DRMError(operation: "find connector \(name)", errno: ENOENT,
                               detail: "no such connector (have: \(summary.isEmpty ? "none" : summary))")
            }
            guard match.isConnected, !match.modes.isEmpty else {
                throw DRMError(operation: "use connector \(name)", errno: ENODEV,
                               detail: "nothing is connected to it")
            }
            return match
        }
        guard let match = connectors.first(where: { $0.isConnected && !$0.modes.isEmpty }) else {
            throw DRMError(operation: "find a connected connector", errno: ENODEV,
                           detail: "no display is connected (connectors: \(summary.isEmpty ? "none" : summary))")
        }
        return match
    }

    /// The CRTC already driving the connector, else the first one its encoders allow that no other
    /// connected connector is using, else the first one its encoders allow (as kmscube does).
    ///
    /// - Parameter encoder: an encoder's current CRTC (0 if none) and `possible_crtcs` mask
    ///   (`KMSDevice.encoder(_:)`; a table in tests).
    ///
    /// - Parameter reserved: CRTCs another output of this process drives (a second `Scanout` on the
    ///   same card): never chosen, not even as the fallback. `ENOSPC` when they are all that is left.
    static func chooseCRTC(for connector: Connector, among crtcIDs: [UInt32], others: [Connector],
                           reserved: Set<UInt32> = [],
                           encoder: (UInt32) throws(DRMError) -> (crtcID: UInt32, possibleCRTCs: UInt32))
        throws(DRMError) -> (id: UInt32, index: Int) {
        if connector.currentEncoderID != 0, let current = try? encoder(connector.currentEncoderID),
           current.crtcID != 0, !reserved.contains(current.crtcID), let index = crtcIDs.firstIndex(of: current.crtcID) {
            return (current.crtcID, index)
        }
        var busy: Set<UInt32> = []
        for other in others where other.id != connector.id && other.isConnected && other.currentEncoderID != 0 {
            if let used = try? encoder(other.currentEncoderID), used.crtcID != 0 { busy.insert(used.crtcID) }
        }
        var candidates: [(id: UInt32, index: Int)] = []
        for encoderID in connector.encoderIDs {
            let allowed = try encoder(encoderID).possibleCRTCs
            for (index, id) in crtcIDs.enumerated() where index < 32 && allowed & (1 << UInt32(index)) != 0 && !reserved.contains(id) {
                candidates.append((id, index))
            }
        }
        guard let choice = candidates.first(where: { !busy.contains($0.id) }) ?? candidates.first else {
            throw DRMError(operation: "find a CRTC for \(connector.name)", errno: ENOSPC,
                           detail: reserved.isEmpty ? "none of its encoders can use any CRTC"
                               : "none of its encoders can use a CRTC that another output does not drive")
        }
        return choice
    }

    /// The primary plane for the CRTC: the one attached to it now, else a free one, else any
    /// that can use it; it must accept XRGB8888.
    static func choosePrimaryPlane(crtcID: UInt32, crtcIndex: Int, planes: [Plane]) throws(DRMError) -> Plane? {
        let usable = planes.filter { $0.type == .primary && $0.canUse(crtcIndex: crtcIndex) }
        guard let plane = usable.first(where: { $0.crtcID == crtcID })
            ?? usable.first(where: { $0.crtcID == 0 }) ?? usable.first else { return nil }
        guard plane.formats.contains(.xrgb8888) else {
            throw DRMError(operation: "use primary plane \(plane.id)", errno: EINVAL,
                           detail: "it cannot show XRGB8888 (formats: \(plane.formats.map(\.description).joined(separator: " ")))")
        }
        return plane
    }
}
