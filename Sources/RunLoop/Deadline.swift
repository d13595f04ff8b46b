// Points in time on the loop's two clocks, in whole nanoseconds.

/// A point in time on `CLOCK_MONOTONIC` (the clock of page-flip timestamps and ALSA's), in
/// nanoseconds since an unspecified start (boot, on Linux). It never jumps: clock steps do not move it.
///
/// `EventLoop.now` reads it; on a manual clock it is the time tests advanced to.
public struct Deadline: Comparable, Hashable, Sendable, CustomStringConvertible {
    /// Nanoseconds on `CLOCK_MONOTONIC`.
    public var nanoseconds: Int64

    public init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }

    /// From seconds on `CLOCK_MONOTONIC`, as `PageFlip.time` and the engine's clock give them.
    public init(seconds: Double) { self.nanoseconds = Int64((seconds * 1_000_000_000).rounded()) }

    /// Seconds on `CLOCK_MONOTONIC`.
    public var seconds: Double { Double(nanoseconds) / 1_000_000_000 }

    /// Later than any deadline a timer can have.
    public static let distantFuture = Deadline(nanoseconds: .max)

    public static func < (a: Deadline, b: Deadline) -> Bool { a.nanoseconds < b.nanoseconds }

    /// `deadline` moved by `duration` (to the nearest nanosecond), saturating at `distantFuture`.
    public static func + (deadline: Deadline, duration: Duration) -> Deadline {
        Deadline(nanoseconds: deadline.nanoseconds.saturatingAdd(duration.wholeNanoseconds))
    }

    public static func - (deadline: Deadline, duration: Duration) -> Deadline {
        Deadline(nanoseconds: deadline.nanoseconds.saturatingAdd(-duration.wholeNanoseconds))
    }

    /// The time from `b` to `a`.
    public static func - (a: Deadline, b: Deadline) -> Duration { .nanoseconds(a.nanoseconds &- b.nanoseconds) }

    /// `12.500000000 s (monotonic)`.
    public var description: String { "\(Self.format(nanoseconds)) s (monotonic)" }

    static func format(_ nanoseconds: Int64) -> String {
        let sign = nanoseconds < 0 ? "-" : ""
        let magnitude = nanoseconds.magnitude
        let fraction = String(magnitude % 1_000_000_000)
        return "\(sign)\(magnitude / 1_000_000_000).\(String(repeating: "0", count: 9 - fraction.count))\(fraction)"
    }
}

/// A point in time on `CLOCK_REALTIME`, the wall clock, in nanoseconds since 1970-01-01 00:00:00 UTC.
/// Unlike `Deadline` it can jump: an administrator, NTP or the RTC at boot may step it, and the loop
/// reports each step (see `EventLoop.onWallClockChange(_:)`).
public struct WallClockTime: Comparable, Hashable, Sendable, CustomStringConvertible {
    /// Nanoseconds since the Unix epoch (UTC, leap seconds not counted, as `clock_gettime` gives it).
    public var nanosecondsSinceEpoch: Int64

    public init(nanosecondsSinceEpoch: Int64) { self.nanosecondsSinceEpoch = nanosecondsSinceEpoch }

    /// From seconds since the Unix epoch.
    public init(secondsSinceEpoch: Double) {
        self.nanosecondsSinceEpoch = Int64((secondsSinceEpoch * 1_000_000_000).rounded())
    }

    public var secondsSinceEpoch: Double { Double(nanosecondsSinceEpoch) / 1_000_000_000 }

    public static func < (a: WallClockTime, b: WallClockTime) -> Bool { a.nanosecondsSinceEpoch < b.nanosecondsSinceEpoch }

    public static func + (time: WallClockTime, duration: Duration) -> WallClockTime {
        WallClockTime(nanosecondsSinceEpoch: time.nanosecondsSinceEpoch.saturatingAdd(duration.wholeNanoseconds))
    }

    public static func - (time: WallClockTime, duration: Duration) -> WallClockTime {
        WallClockTime(nanosecondsSinceEpoch: time.nanosecondsSinceEpoch.saturatingAdd(-duration.wholeNanoseconds))
    }

    public static func - (a: WallClockTime, b: WallClockTime) -> Duration {
        .nanoseconds(a.nanosecondsSinceEpoch &- b.nanosecondsSinceEpoch)
    }

    /// `1767225600.000000000 s (wall clock)`.
    public var description: String { "\(Deadline.format(nanosecondsSinceEpoch)) s (wall clock)" }
}

extension Duration {
    /// The duration in nanoseconds, rounded to the nearest (half away from zero), clamped to `Int64`.
    var wholeNanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        let (nanoseconds, remainder) = attoseconds.quotientAndRemainder(dividingBy: 1_000_000_000)
        let rounding: Int64 = remainder >= 500_000_000 ? 1 : remainder <= -500_000_000 ? -1 : 0
        return scaled.saturatingAdd(nanoseconds + rounding)
    }
}

extension Int64 {
    func saturatingAdd(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? .max : .min) : sum
    }
}
