import Foundation
import SystemSupport

/// `--vblank-log FILE`: one line per vblank, `WALL ITEM PTS [HEARD]`: the vblank's wall-clock time
/// (seconds since 1970 UTC, to the microsecond: its `CLOCK_MONOTONIC` time plus the clocks' offset
/// read then), the id of the item whose frame is on screen and that frame's PTS in seconds, or
/// `- -` when the screen shows no frame (the background, the slate); with a sound device, the
/// catalog time of the sample heard at the vblank less the vblank's catalog time, in milliseconds
/// (positive: the sound is ahead). What screens that play in step are
/// compared with (`SyncTests`, `tools/bench --only sync`).
///
/// Lines are buffered and written every 64 vblanks and at `close()`; a write error ends the log
/// with one log line (playback goes on). Confined to the run loop's thread.
final class VblankLog {
    private let handle: FileHandle
    private var buffer = ""
    private var lines = 0
    private var failed = false

    /// - Throws: `CocoaError` when FILE cannot be created.
    init(path: String) throws {
        guard FileManager.default.createFile(atPath: path, contents: nil) else {
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: path])
        }
        handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
    }

    func write(monotonic t: Double, item: String?, pts: Double?, heard: Double?) {
        guard !failed else { return }
        let wall = t + Double(SyncLock.readOffset()) / 1e9
        if let item, let pts {
            buffer += String(format: "%.6f ", wall) + item + String(format: " %.6f", pts)
        } else {
            buffer += String(format: "%.6f - -", wall)
        }
        buffer += heard.map { String(format: " %.3f\n", $0 * 1000) } ?? "\n"
        lines += 1
        if lines % 64 == 0 { flush() }
    }

    private func flush() {
        guard !buffer.isEmpty else { return }
        do { try handle.write(contentsOf: Data(buffer.utf8)) } catch { failed = true }
        buffer = ""
    }

    func close() {
        flush()
        try? handle.close()
    }
}
