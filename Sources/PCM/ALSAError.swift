internal import CALSA

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

    /// `snd_pcm_open("nope"): No such file or directory (-2)`.
    ///
    /// The message comes from `snd_strerror`; this is the only place the module converts codes to text.
    public var description: String {
        let call = subject.map { "\(operation)(\"\($0)\")" } ?? operation
        return "\(call): \(String(cString: snd_strerror(code))) (\(code))"
    }
}

/// Throws `ALSAError` when an alsa-lib call returned a negative value; returns the value otherwise.
@discardableResult
@inline(__always)
func check(_ operation: String, _ result: Int32, subject: String? = nil) throws(ALSAError) -> Int32 {
    guard result >= 0 else { throw ALSAError(operation: operation, code: result, subject: subject) }
    return result
}
