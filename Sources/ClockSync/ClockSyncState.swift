// The kernel's view of the wall clock's discipline: what chronyd (or any NTP daemon) last told it
// through adjtimex(2), read back with modes 0.
internal import CTimex
import SystemSupport

/// The state of `CLOCK_REALTIME`'s NTP discipline, as `adjtimex(2)` (modes 0: read only, no
/// privilege needed) reports it. chronyd updates it at each clock update (`rtcsync`'s 11-minute
/// mode needs it too); a box where no daemon disciplines the clock reads unsynchronized, with
/// `maxError` growing by 500 µs a second up to 16 s (the kernel's `NTP_PHASE_LIMIT`).
///
/// The values are the daemon's estimates, not a measurement by the player: `offset` is the
/// correction still being slewed in, `maxError` and `estimatedError` bound the distance to the
/// true time (the daemon's root distance and its estimate, plus the kernel's growth since).
public struct ClockSyncState: Sendable, Equatable {
    /// Whether the clock is synchronized: the kernel's clock state is not `TIME_ERROR` (the daemon
    /// cleared `STA_UNSYNC`; the kernel sets it again when `maxerror` reaches 16 s).
    public var synchronized: Bool
    /// The offset still being corrected, in milliseconds (`timex.offset`: µs, or ns with `STA_NANO`).
    public var offsetMilliseconds: Double
    /// The maximum error, in milliseconds (`timex.maxerror`, µs).
    public var maxErrorMilliseconds: Double
    /// The estimated error, in milliseconds (`timex.esterror`, µs).
    public var estimatedErrorMilliseconds: Double
    /// The frequency correction, in ppm (`timex.freq`: ppm with a 16-bit fraction, 65536 = 1 ppm);
    /// negative slows the clock down.
    public var frequencyPPM: Double
    /// The raw `timex.status` bits (`STA_UNSYNC` 0x40, `STA_NANO` 0x2000, `STA_PLL` 0x1, …).
    public var statusBits: Int32
    /// The raw clock state `adjtimex` returned: 0 `TIME_OK`, 1 `TIME_INS`, 2 `TIME_DEL`,
    /// 3 `TIME_OOP`, 4 `TIME_WAIT`, 5 `TIME_ERROR`.
    public var clockState: Int32

    public init(synchronized: Bool, offsetMilliseconds: Double, maxErrorMilliseconds: Double,
                estimatedErrorMilliseconds: Double, frequencyPPM: Double, statusBits: Int32 = 0, clockState: Int32 = 0) {
        self.synchronized = synchronized
        self.offsetMilliseconds = offsetMilliseconds
        self.maxErrorMilliseconds = maxErrorMilliseconds
        self.estimatedErrorMilliseconds = estimatedErrorMilliseconds
        self.frequencyPPM = frequencyPPM
        self.statusBits = statusBits
        self.clockState = clockState
    }

    /// `STA_UNSYNC`: the clock is not synchronized.
    public static let unsynchronizedBit = Int32(vt_sta_unsync)
    /// `STA_NANO`: `offset` is in nanoseconds rather than microseconds.
    public static let nanosecondBit = Int32(vt_sta_nano)
    /// `TIME_ERROR`: the clock state of an unsynchronized clock.
    public static let errorState = Int32(vt_time_error)

    /// The state from raw `timex` fields: `state` is `adjtimex`'s return value, `offset` in µs (ns
    /// with `STA_NANO` in `status`), `frequency` in ppm·65536, the errors in µs.
    public init(clockState state: Int32, status: Int32, offset: Int, frequency: Int, maxError: Int, estimatedError: Int) {
        let offsetScale = status & Self.nanosecondBit != 0 ? 1e-6 : 1e-3
        self.init(synchronized: state != Self.errorState && status & Self.unsynchronizedBit == 0,
                  offsetMilliseconds: Double(offset) * offsetScale,
                  maxErrorMilliseconds: Double(maxError) / 1000, estimatedErrorMilliseconds: Double(estimatedError) / 1000,
                  frequencyPPM: Double(frequency) / 65536, statusBits: status, clockState: state)
    }

    /// Reads the kernel's state now with `adjtimex(2)` (glibc: `clock_adjtime(CLOCK_REALTIME)`),
    /// modes 0. One system call, no allocation.
    /// - Throws: `Errno`: `EPERM` under a seccomp filter that denies the `@clock` calls (systemd's
    ///   `ProtectClock=yes` does, even for a read; vitrine.service allows `adjtimex` and
    ///   `clock_adjtime` again), `ENOSYS` where there is no such call.
    public static func read() throws(Errno) -> ClockSyncState {
        var r = vt_timex_reading()
        let state = valueOrErrno(SystemCall("adjtimex")) { vt_adjtimex_read(&r) }
        switch state {
        case .failure(let e): throw e
        case .success(let s):
            return ClockSyncState(clockState: s, status: r.status, offset: r.offset, frequency: r.freq,
                                  maxError: r.maxerror, estimatedError: r.esterror)
        }
    }
}
