import Foundation
import Synchronization
import CEC
import SystemSupport

/// The display's power over HDMI-CEC, when the config enables it (`cec.enabled`): the TV's standby
/// and power-on next to the CRTC's `ACTIVE` property, for TVs that only sleep when told over CEC.
///
/// The adapter (`cec.port`, or the first one libcec finds) is opened on first use and kept open.
/// Every libcec call runs on one serial background queue, never on the caller's thread (the run
/// loop): opening an adapter blocks for 1–3 s and a command for up to a second. `set(on:)` returns
/// at once; requests are sent in the order they were made.
///
/// When no adapter can be opened, a later `set(on:)` tries again, but at most once a minute
/// (`retryInterval`, on the monotonic clock): an adapter plugged in later is picked up on the next
/// schedule change. A missing adapter is logged once, at info (most screens have none); an adapter
/// that fails to open, or a TV that does not acknowledge a command, is a warning. Each distinct
/// failure is logged once, then at debug, until a success in between.
final class CECPower: Sendable {
    /// The least time between two attempts to open an adapter, in seconds.
    static let retryInterval = 60.0

    let enabled: Bool
    let port: String?
    private let log: Logger
    private let retryInterval: Double
    private let openTimeoutMilliseconds: UInt32
    private let queue = DispatchQueue(label: "vitrine.cec")
    /// Touched only on `queue`; the lock only satisfies the compiler.
    private let state = Mutex(State())

    private struct State {
        var adapter: CECAdapter?
        var lastAttempt: Double?
        var attempts = 0
        /// The failures already logged above debug, by their text.
        var reported: Set<String> = []
    }

    /// - Parameters:
    ///   - enabled: false makes `set(on:)` do nothing: libcec is never asked for an adapter.
    ///   - port: the adapter's com port (`/dev/ttyACM0`, `/dev/cec0`); nil takes the first one found.
    ///   - retryInterval: the least time between two attempts to open an adapter, in seconds.
    ///   - openTimeoutMilliseconds: how long one `libcec_open` may wait for the adapter, in milliseconds.
    init(enabled: Bool, port: String?, log: Logger, retryInterval: Double = CECPower.retryInterval,
         openTimeoutMilliseconds: UInt32 = 10_000) {
        self.enabled = enabled
        self.port = port
        self.log = log
        self.retryInterval = retryInterval
        self.openTimeoutMilliseconds = openTimeoutMilliseconds
    }

    /// From the run options (config `cec.enabled`, `cec.port`).
    convenience init(options: RunOptions, log: Logger) {
        self.init(enabled: options.cecEnabled, port: options.cecPort, log: log)
    }

    /// Sends the TV standby (`on == false`) or power-on, on the background queue; returns at once.
    /// Never throws: failures are logged (a missing adapter once, at info). Does nothing when not enabled.
    func set(on: Bool) {
        guard enabled else { return }
        queue.async { [self] in send(on: on) }
    }

    /// Waits until every request made so far has been sent or has failed (tests; shutdown).
    func waitUntilIdle() { queue.sync {} }

    /// How many times an adapter was opened or tried (tests).
    var openAttempts: Int { state.withLock { $0.attempts } }

    private func send(on: Bool) {
        state.withLock { s in
            if s.adapter == nil {
                let now = MonotonicClock.seconds()
                if let last = s.lastAttempt, now - last < retryInterval {
                    log.debug("no CEC adapter open; the next try is at most once every \(Int(retryInterval)) s", ["power": on ? "on" : "standby"])
                    return
                }
                s.lastAttempt = now
                s.attempts += 1
                do throws(CECError) {
                    let adapter = try CECAdapter(port: port, timeoutMilliseconds: openTimeoutMilliseconds)
                    log.info("CEC adapter opened", ["port": adapter.port])
                    s.adapter = adapter
                    s.reported = []
                } catch {
                    report(error, in: &s, level: error == .noAdapter ? .info : .warning,
                           error == .noAdapter ? "no CEC adapter: the display's power is switched through KMS only" : "\(error)")
                    return
                }
            }
            guard let adapter = s.adapter else { return }
            do throws(CECError) {
                if on { try adapter.powerOn() } else { try adapter.standby() }
                log.info(on ? "CEC: TV powered on" : "CEC: TV put in standby", ["port": adapter.port])
                s.reported = []
            } catch {
                report(error, in: &s, level: .warning, "\(error)")
            }
        }
    }

    /// Logs a failure at `level` the first time, at debug after that.
    private func report(_ error: CECError, in s: inout State, level: LogRecord.Level, _ message: String) {
        let first = s.reported.insert(error.description).inserted
        log.log(first ? level : .debug, message, port.map { ["port": $0] } ?? [:])
    }
}
