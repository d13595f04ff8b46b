internal import CSystemd

/// Talks to systemd through `sd_notify(3)`: readiness, watchdog keep-alives and status text.
///
/// Outside systemd (`NOTIFY_SOCKET` unset) every call is a no-op that returns false.
/// The corresponding C function is `sd_notify`; the watchdog interval comes from `sd_watchdog_enabled`.
public struct ServiceNotifier: Sendable {
    /// The watchdog interval systemd expects pings within, in seconds; nil when no watchdog is set
    /// (`WatchdogSec=` absent, or not run by systemd).
    public let watchdogInterval: Double?

    public init() {
        var usec: UInt64 = 0
        watchdogInterval = sd_watchdog_enabled(0, &usec) > 0 ? Double(usec) / 1_000_000 : nil
    }

    /// Sends `READY=1`: the first frame is on screen. Returns whether systemd was told.
    @discardableResult
    public func ready(status: String? = nil) -> Bool { send("READY=1" + (status.map { "\nSTATUS=" + $0 } ?? "")) }

    /// Sends `WATCHDOG=1`. Call from the run loop after a completed page flip, never from a timer.
    @discardableResult
    public func watchdog() -> Bool { send("WATCHDOG=1") }

    /// Sends `STATUS=…` (shown by `systemctl status`).
    @discardableResult
    public func status(_ text: String) -> Bool { send("STATUS=" + text) }

    /// Sends `STOPPING=1`.
    @discardableResult
    public func stopping() -> Bool { send("STOPPING=1") }

    private func send(_ state: String) -> Bool { sd_notify(0, state) > 0 }
}
