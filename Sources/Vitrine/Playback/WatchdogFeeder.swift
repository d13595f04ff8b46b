import ServiceManager

/// Feeds systemd's watchdog (`WATCHDOG=1`) from completed page flips while playback makes progress,
/// and says `READY=1` with the first frame on screen.
///
/// Progress is a new video frame presented, or a screen that expects none (a still, an audio item,
/// the slate, a pause, an item whose decoder finished). A decoder that stalls mid-item, or a display
/// whose flips stop completing, stops the pings, and systemd restarts the player after `WatchdogSec`.
/// Pings go at most every 0.5 s, and stop once progress is `stallLimit` seconds old (half the
/// watchdog interval, at least 2 s).
///
/// Times are `CLOCK_MONOTONIC` seconds. Confined to the run loop's thread.
final class WatchdogFeeder {
    private let notifier: ServiceNotifier
    /// Seconds without progress after which pings stop.
    let stallLimit: Double
    private var lastProgress: Double
    private var lastPing = -Double.infinity
    private var flipsSeen = 0
    private var announced = false
    /// Pings sent so far.
    private(set) var pings = 0
    /// Sends nothing to systemd: the run of a second screen (`RunOptions.isSecondaryOutput`), so that
    /// only the first screen's flips feed the watchdog and set `STATUS=`.
    var isSilent = false

    init(notifier: ServiceNotifier = ServiceNotifier(), now: Double) {
        self.notifier = notifier
        stallLimit = max(2, (notifier.watchdogInterval ?? 10) / 2)
        lastProgress = now
    }

    /// The first frame is on screen: `READY=1` (once).
    func firstFrame() {
        guard !announced else { return }
        announced = true
        if !isSilent { notifier.ready(status: statusLine) }
    }

    /// Playback made progress at `now`.
    func progressed(at now: Double) { lastProgress = now }

    /// The display is off by schedule at `now`: no flips are expected, and none is a fault. Pings at
    /// most every 0.5 s (the presenter calls this once a second while off).
    func screenOff(at now: Double) {
        lastProgress = now
        if now - lastPing >= 0.5 { ping(at: now) }
    }

    /// The output has completed `completedFlips` page flips (or virtual vblanks) by `now`: pings when
    /// that grew and playback progressed lately.
    func flips(_ completedFlips: Int, at now: Double) {
        guard completedFlips != flipsSeen else { return }
        flipsSeen = completedFlips
        if now - lastProgress < stallLimit && now - lastPing >= 0.5 { ping(at: now) }
    }

    /// This run's part of the `STATUS=` line, and what the box's other outputs add to it.
    private var ownStatus = "playing"
    private var othersStatus: String?

    /// systemd's `STATUS=` line, e.g. "no screen connected (HDMI-A-1); playing on" (with what
    /// `otherOutputs` said after it).
    func status(_ text: String) {
        ownStatus = text
        if !isSilent { notifier.status(statusLine) }
    }

    /// The other outputs' trouble for the `STATUS=` line (a box with several screens), e.g.
    /// "HDMI-A-2: no screen connected"; nil when they all play. Sent when it changes.
    func otherOutputs(_ text: String?) {
        guard text != othersStatus else { return }
        othersStatus = text
        if announced && !isSilent { notifier.status(statusLine) }
    }

    /// `ownStatus`, then `othersStatus` after a semicolon.
    var statusLine: String { othersStatus.map { "\(ownStatus); \($0)" } ?? ownStatus }

    /// `WATCHDOG=1`.
    private func ping(at now: Double) {
        if !isSilent { notifier.watchdog() }
        lastPing = now
        pings += 1
    }
}
