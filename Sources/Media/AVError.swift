internal import CAVUtil

/// An error returned by an FFmpeg library call: the operation's name and its negative `AVERROR` code.
///
/// `EAGAIN` and `EOF` from the send/receive API are control flow and never surface as `AVError`.
public struct AVError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The FFmpeg function that failed, for example `avformat_open_input`.
    public var operation: String
    /// The negative `AVERROR` code the function returned.
    public var code: Int32
    /// What `av_strerror` says about `code`.
    public var message: String

    public init(operation: String, code: Int32) {
        self.operation = operation
        self.code = code
        var buf = [CChar](repeating: 0, count: 128)
        vt_strerror(code, &buf, buf.count)
        self.message = String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// An error that is not a library return code (for example "no decodable stream").
    public init(operation: String, message: String) {
        self.operation = operation
        self.code = -1
        self.message = message
    }

    public var description: String { "\(operation): \(message)" }
}

/// Returns `result` when it is ≥ 0, else throws an `AVError` naming `operation`. All FFmpeg calls
/// that can fail go through here.
@inline(__always)
@discardableResult
func avCheck(_ operation: String, _ result: Int32) throws(AVError) -> Int32 {
    if result < 0 { throw AVError(operation: operation, code: result) }
    return result
}

let averrorEOF = vt_averror_eof()
let averrorEAGAIN = vt_averror_eagain()
let noPTS = vt_nopts_value()

/// Sets FFmpeg's global log level (`av_log_set_level`); the player silences it (errors come back as `AVError`).
public enum FFmpegLog {
    public static func silent() { av_log_set_level(AV_LOG_QUIET) }
}
