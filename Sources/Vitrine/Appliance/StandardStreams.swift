import Foundation
import RunLoop

/// The process's standard output and standard error, written so that nothing about them can crash
/// the player: a reader that went away (`vitrine run … | head`: EPIPE), a full disk or a revoked
/// terminal drops the text and playback goes on.
///
/// Foundation's `FileHandle.write(_:)` traps on such an error (SIGILL, exit 132), and a write to a
/// closed pipe raises SIGPIPE, which ends the process unless ignored: `ignoreBrokenPipes()` ignores
/// it, and these writes retry on EINTR and give up on any other error. The corresponding C function
/// is `write(2)`.
public enum StandardStreams {
    /// Writes `text` (UTF-8) to standard output; errors are ignored.
    public static func out(_ text: String) { write(text, to: STDOUT_FILENO) }

    /// Writes `text` (UTF-8) to standard error; errors are ignored.
    public static func err(_ text: String) { write(text, to: STDERR_FILENO) }

    /// Makes a write to a closed pipe or socket fail with EPIPE instead of killing the process
    /// (`signal(SIGPIPE, SIG_IGN)`, inherited by threads).
    public static func ignoreBrokenPipes() { SignalMask.ignore([.pipe]) }

    /// Writes all of `text` to `fd`, retrying after EINTR and short writes; returns false on any
    /// other error (EPIPE, ENOSPC, EIO…), having written part of it or none.
    @discardableResult
    static func write(_ text: String, to fd: Int32) -> Bool {
        var bytes = Array(text.utf8)
        return bytes.withUnsafeMutableBytes { buffer -> Bool in
            var offset = 0
            while offset < buffer.count {
                let n = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if n > 0 { offset += n; continue }
                if n < 0 && errno == EINTR { continue }
                return false
            }
            return true
        }
    }
}
