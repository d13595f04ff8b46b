// A tmpfs of a given size, mounted by the test (root only): a disk that fills up.
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Why a tmpfs could not be mounted or resized.
public struct MountError: Error, CustomStringConvertible {
    public var description: String
}

/// A tmpfs of a given size on a temporary folder; unmounted by `unmount()`.
public final class SmallTmpfs {
    public let path: String
    private var mounted = false

    public init(megabytes: Int) throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("vitrine-tmpfs-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let result = try Subprocess.run("/usr/bin/mount", ["-t", "tmpfs", "-o", "size=\(megabytes)m", "tmpfs", path])
        guard result.code == 0 else { throw MountError(description: "mount tmpfs on \(path): \(result.err)") }
        mounted = true
    }

    /// Grows (or shrinks) the file system; its files stay.
    public func resize(megabytes: Int) throws {
        let result = try Subprocess.run("/usr/bin/mount", ["-o", "remount,size=\(megabytes)m", path])
        guard result.code == 0 else { throw MountError(description: "remount \(path): \(result.err)") }
    }

    public func unmount() {
        guard mounted else { return }
        mounted = false
        _ = try? Subprocess.run("/usr/bin/umount", [path])
        try? FileManager.default.removeItem(atPath: path)
    }

    deinit { unmount() }

    /// Whether this process may mount a tmpfs (root, and a kernel and container that allow it).
    public static let canMount: Bool = {
        guard geteuid() == 0, let probe = try? SmallTmpfs(megabytes: 1) else { return false }
        probe.unmount()
        return true
    }()
}
