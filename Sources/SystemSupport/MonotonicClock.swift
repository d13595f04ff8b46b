// The one monotonic clock: CLOCK_MONOTONIC, the clock of page-flip timestamps, libinput event
// times and every deadline.
#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#endif

/// `CLOCK_MONOTONIC`: never steps with the wall clock, stops while the machine is suspended
/// (unlike Swift's `ContinuousClock`, which is `CLOCK_BOOTTIME` on Linux). DRM page-flip events
/// (with `DRM_CAP_TIMESTAMP_MONOTONIC`) and libinput event times are on this clock.
public enum MonotonicClock {
    /// Now, in seconds since an arbitrary start (usually boot), e.g. `1234.567891`.
    /// The corresponding C function is `clock_gettime(CLOCK_MONOTONIC)`.
    @inline(__always)
    public static func seconds() -> Double {
        let now = timespec.now(CLOCK_MONOTONIC)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1_000_000_000
    }

    /// Now, in nanoseconds since the same start as `seconds()`.
    /// The corresponding C function is `clock_gettime(CLOCK_MONOTONIC)`.
    @inline(__always)
    public static func nanoseconds() -> UInt64 {
        let now = timespec.now(CLOCK_MONOTONIC)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    /// The time since `start` (a value of `nanoseconds()`), as a `Duration`.
    public static func elapsed(sinceNanoseconds start: UInt64) -> Duration {
        .nanoseconds(Int64(bitPattern: nanoseconds() &- start))
    }
}

/// Now, in seconds on `CLOCK_MONOTONIC`: `MonotonicClock.seconds()`.
@inline(__always)
public func monotonicNow() -> Double { MonotonicClock.seconds() }

extension timespec {
    /// Now on `clock`, the one `clock_gettime` call of the package.
    @inline(__always)
    static func now(_ clock: clockid_t) -> timespec {
        var now = timespec()
        // Cannot fail for CLOCK_MONOTONIC or CLOCK_REALTIME with a valid pointer (clock_gettime(2)).
        _ = clock_gettime(clock, &now)
        return now
    }
}
