// The one wall clock: CLOCK_REALTIME, the clock of schedule edges.
#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#endif

/// `CLOCK_REALTIME`: the time of day, which an administrator, NTP or the RTC at boot can step
/// forwards or backwards. Only what happens at a time of day (a schedule edge, a line of a log)
/// reads it; durations and deadlines use `MonotonicClock`.
public enum WallClock {
    /// Now, in nanoseconds since 1970-01-01 00:00:00 UTC (leap seconds not counted).
    /// The corresponding C function is `clock_gettime(CLOCK_REALTIME)`.
    @inline(__always)
    public static func nanosecondsSinceEpoch() -> Int64 {
        let now = timespec.now(CLOCK_REALTIME)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }
}
