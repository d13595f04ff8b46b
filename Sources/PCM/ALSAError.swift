internal import CALSA
@_exported import SystemSupport

/// An error reported by alsa-lib: the function that failed and the negative errno it returned.
///
/// alsa-lib reports failures as negative `errno` values (`-ENOENT`, `-EPIPE`, `-EBUSY`, …);
/// `code` keeps that value exactly as the library returned it.
public struct ALSAError: Error, CustomStringConvertible, Equatable, Sendable {
    /// The alsa-lib function that failed, for example `"snd_pcm_open"`.
    public var operation: String
    /// The negative `errno` value the function returned, for example `-2` (`-ENOENT`).
    public var code: Int32
    /// The PCM name or other argument the operation was about, when there is one.
    public var subject: String?

    public init(operation: String, code: Int32, subject: String? = nil) {
        self.operation = operation
        self.code = code
        self.subject = subject
    }

    /// The code as an `Errno` (`-ENOENT` → `.noSuchFile`); nil for alsa-lib's own codes
    /// (`SND_ERROR_BEGIN` and up, such as `SND_ERROR_INCOMPATIBLE_VERSION`).
    public var errno: Errno? {
        code < 0 && -code < Self.alsaErrorsBegin ? Errno(-code) : nil
    }

    /// `snd_pcm_open("nope"): No such file or directory (-2)`.
    ///
    /// The text is `Errno`'s for system codes and `snd_strerror`'s for alsa-lib's own.
    public var description: String {
        let call = subject.map { "\(operation)(\"\($0)\")" } ?? operation
        let text = errno?.message ?? String(cString: snd_strerror(code))
        return "\(call): \(text) (\(code))"
    }

    /// `SND_ERROR_BEGIN`: alsa-lib's own error codes start here.
    static let alsaErrorsBegin = Int32(SND_ERROR_BEGIN)
}

/// This module's side of the gateway (`valueOrErrno` in SystemSupport): runs an alsa-lib call that
/// returns a negative `errno` on failure, and throws `ALSAError` for it. `EINTR` is retried there,
/// and in debug builds a test's `FaultPlan` sees the call as `SystemCall(operation, subject)`.
/// - Returns: the call's non-negative result.
@discardableResult
@inline(__always)
func check(_ operation: String, subject: String? = nil, _ body: () -> Int32) throws(ALSAError) -> Int32 {
    switch valueOrErrno(SystemCall(operation, subject), convention: .negativeErrno, body) {
    case .success(let value): return value
    case .failure(let errno): throw ALSAError(operation: operation, code: -errno.rawValue, subject: subject)
    }
}
