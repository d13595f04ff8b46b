// `playlist[].transition`: how an item replaces the one before it.

/// How an item enters, replacing the previous one: `{"type": "cut" | "crossfade", "duration": seconds}`.
public struct Transition: Sendable, Equatable {
    public enum Kind: String, Sendable, Equatable, CaseIterable {
        /// The new item's first frame replaces the old one at once.
        case cut
        /// The old picture fades into the new one over `duration`.
        case crossfade
    }

    public var type: Kind
    /// Seconds, ≥ 0. Default 0 for `cut` and 0.5 for `crossfade`.
    public var duration: Double

    public init(type: Kind, duration: Double? = nil) {
        self.type = type
        self.duration = duration ?? Transition.defaultDuration(type)
    }

    /// The duration used when the manifest gives none, in seconds.
    public static func defaultDuration(_ type: Kind) -> Double { type == .crossfade ? 0.5 : 0 }
}
