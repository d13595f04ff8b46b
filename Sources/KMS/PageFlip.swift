// Page-flip events: reading them from the DRM file descriptor.
internal import CDRM
#if canImport(Glibc)
internal import Glibc
#endif
import SystemSupport

/// A completed page flip: the new buffer went on screen at the start of a vblank.
public struct PageFlip: Sendable, Equatable {
    /// The CRTC's vblank counter at the flip.
    public var sequence: UInt32
    /// When the flip happened, in seconds on `CLOCK_MONOTONIC` (when the device reports
    /// `timestampMonotonic`), from the event's `tv_sec`/`tv_usec`.
    public var time: Double
    /// The CRTC that flipped, 0 if the kernel did not say (legacy `page_flip_handler`).
    public var crtcID: UInt32

    public init(sequence: UInt32, time: Double, crtcID: UInt32 = 0) {
        self.sequence = sequence
        self.time = time
        self.crtcID = crtcID
    }
}

/// One queued page flip. The handler fills in `completion` when the kernel reports it.
///
/// A reference is handed to the kernel as the commit's `user_data`: retained when the flip is
/// queued, released by the event handler (or by `cancel` if the commit failed). Each flip has
/// its own object, so a late event from an abandoned flip can never complete a newer one, and
/// never finds freed memory.
final class PendingFlip {
    /// The buffer (index into `Scanout`'s ring) that goes on screen with this flip.
    let bufferIndex: Int
    var completion: PageFlip?

    init(bufferIndex: Int) { self.bufferIndex = bufferIndex }

    /// The `user_data` for the commit; balanced by the event handler or by `cancel`.
    func retainAsUserData() -> UnsafeMutableRawPointer {
        Unmanaged.passRetained(self).toOpaque()
    }

    /// Releases the reference taken by `retainAsUserData` when the commit failed and no event will come.
    static func cancel(_ userData: UnsafeMutableRawPointer) {
        Unmanaged<PendingFlip>.fromOpaque(userData).release()
    }

    /// Delivers an event to the flip `userData` points at and releases the flip's reference.
    static func deliver(_ userData: UnsafeMutableRawPointer?, _ flip: PageFlip) {
        guard let userData else { return }
        let pending = Unmanaged<PendingFlip>.fromOpaque(userData).takeRetainedValue()
        pending.completion = flip
    }
}

/// Reading DRM events off a file descriptor.
enum DRMEvents {
    /// Reads and dispatches the events waiting on `fd` (blocks if there are none: poll first).
    /// Page-flip events are delivered to the `PendingFlip` in their `user_data`, so every page flip
    /// requested on this descriptor must carry one; other events are dropped.
    ///
    /// - Throws: `DRMError` from `drmHandleEvent` (a failed `read`).
    /// The corresponding C function is `drmHandleEvent`.
    static func handle(fd: Int32) throws(DRMError) {
        var context = drmEventContext()
        context.version = 3  // page_flip_handler2 exists from version 3 on.
        context.page_flip_handler = { _, sequence, seconds, microseconds, userData in
            PendingFlip.deliver(userData, PageFlip(sequence: sequence, time: DRMEvents.seconds(seconds, microseconds)))
        }
        context.page_flip_handler2 = { _, sequence, seconds, microseconds, crtcID, userData in
            PendingFlip.deliver(userData, PageFlip(sequence: sequence, time: DRMEvents.seconds(seconds, microseconds),
                                                   crtcID: crtcID))
        }
        try DRMCall.check("drmHandleEvent") { drmHandleEvent(fd, &context) }
    }

    static func seconds(_ seconds: UInt32, _ microseconds: UInt32) -> Double {
        Double(seconds) + Double(microseconds) / 1_000_000
    }

    /// Waits until `fd` is readable or `timeout` seconds have passed.
    ///
    /// - Returns: `true` if readable, `false` on timeout.
    /// - Throws: `DRMError` from `poll`, or `EIO` when the descriptor reports an error or hang-up.
    /// The corresponding C function is `poll`.
    static func waitReadable(fd: Int32, timeout: Double) throws(DRMError) -> Bool {
        let deadline = MonotonicClock.seconds() + max(timeout, 0)
        while true {
            let remaining = max(0, deadline - MonotonicClock.seconds())
            var pollFD = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready: Int32
            do {
                ready = try DRMCall.check("poll", retryOnInterrupt: false) {
                    poll(&pollFD, 1, Int32(min((remaining * 1000).rounded(.up), Double(Int32.max))))
                }
            } catch where error.errno == EINTR {
                continue  // Retry with the time that is left.
            }
            if ready == 0 { return false }
            if pollFD.revents & Int16(POLLIN) != 0 { return true }
            throw DRMError(operation: "poll", errno: EIO, detail: "the DRM device reported an error or hang-up")
        }
    }
}
