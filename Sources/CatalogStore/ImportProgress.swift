// What an import reports while it runs: for the on-screen banner and the command line.

/// A snapshot of a running import, passed to the progress callback of `CatalogLibrary.importStick`.
///
/// Reported when each phase begins and after every chunk copied (at most every 4 MiB).
public struct ImportProgress: Sendable, Equatable {
    public enum Phase: String, Sendable, Equatable {
        /// Reading and checking the manifest, its signature and the files' sizes.
        case checking
        /// Copying and hashing files into the staging folder.
        case copying
        /// Flushing folders and writing `catalog.json`.
        case syncing
        /// Renaming the generation into place and switching `current`.
        case switching
    }

    public var phase: Phase
    /// The stick manifest's `version`, once read.
    public var version: Int?
    /// Bytes copied and hashed so far, and in all.
    public var bytesDone: Int64
    public var bytesTotal: Int64
    /// Files finished so far, and in all.
    public var filesDone: Int
    public var filesTotal: Int
    /// The file being copied, relative to `vitrine/`.
    public var file: String?
    /// Seconds since the import began.
    public var elapsed: Double
    /// Copy rate so far in bytes per second; nil until the copy has run for 0.2 s.
    public var bytesPerSecond: Double?
    /// Estimated seconds until the copy ends, from the rate so far; nil while the rate is unknown.
    public var eta: Double?

    /// `bytesDone / bytesTotal` in 0…1 (1 when there is nothing to copy).
    public var fraction: Double { bytesTotal > 0 ? min(1, Double(bytesDone) / Double(bytesTotal)) : 1 }

    public init(phase: Phase, version: Int? = nil, bytesDone: Int64 = 0, bytesTotal: Int64 = 0, filesDone: Int = 0,
                filesTotal: Int = 0, file: String? = nil, elapsed: Double = 0, bytesPerSecond: Double? = nil, eta: Double? = nil) {
        self.phase = phase; self.version = version; self.bytesDone = bytesDone; self.bytesTotal = bytesTotal
        self.filesDone = filesDone; self.filesTotal = filesTotal; self.file = file; self.elapsed = elapsed
        self.bytesPerSecond = bytesPerSecond; self.eta = eta
    }

    /// One line for a terminal: `copying media/a.mp4: 120.0 of 300.0 MiB (40 %), 45.2 MiB/s, 4 s left`.
    public var summary: String {
        switch phase {
        case .copying:
            var line = "copying"
            if let file { line += " " + file }
            line += ": \(ByteCount.mebibytes(bytesDone)) of \(ByteCount.mebibytes(bytesTotal)) MiB (\(Int(fraction * 100)) %)"
            if let rate = bytesPerSecond { line += ", \(ByteCount.mebibytes(Int64(rate))) MiB/s" }
            if let eta { line += ", \(Int(eta.rounded(.up))) s left" }
            return line
        default:
            return phase.rawValue
        }
    }
}

/// Byte counts for messages.
public enum ByteCount {
    /// Mebibytes with one decimal: `12.3`.
    public static func mebibytes(_ bytes: Int64) -> String {
        let tenths = (bytes * 10 + (1 << 19)) >> 20
        return "\(tenths / 10).\(tenths % 10)"
    }

    /// A size for people: `812 bytes`, `12.3 MiB`, `1.5 GiB`.
    public static func text(_ bytes: Int64) -> String {
        if bytes < 1 << 10 { return "\(bytes) bytes" }
        if bytes < 1 << 20 {
            let tenths = (bytes * 10 + (1 << 9)) >> 10
            return "\(tenths / 10).\(tenths % 10) KiB"
        }
        if bytes < 1 << 30 { return mebibytes(bytes) + " MiB" }
        let tenths = (bytes * 10 + (1 << 29)) >> 30
        return "\(tenths / 10).\(tenths % 10) GiB"
    }
}
