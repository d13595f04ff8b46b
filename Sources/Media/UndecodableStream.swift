internal import CAVUtil
internal import CAVCodec
internal import CAVFormat

/// A stream `MediaFile` chose (the best video or audio stream) but could not open a decoder for:
/// FFmpeg has no decoder for its codec, or the decoder refused the stream's headers (a corrupt Vorbis
/// setup header, Theora extradata, an H.264 parameter set…). The file plays without it.
public struct UndecodableStream: Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable { case video, audio }
    public var kind: Kind
    /// The stream's index in the container.
    public var index: Int
    /// FFmpeg's name for the stream's codec, for example `theora` (`avcodec_get_name`).
    public var codecName: String
    /// Why: `avcodec_find_decoder` (no decoder), `avcodec_parameters_to_context` or `avcodec_open2`.
    public var error: AVError

    init(_ kind: Kind, format: UnsafeMutablePointer<AVFormatContext>, index: Int32, error: AVError) {
        self.kind = kind
        self.index = Int(index)
        codecName = String(cString: avcodec_get_name(format.pointee.streams[Int(index)]!.pointee.codecpar.pointee.codec_id))
        self.error = error
    }

    /// `video stream 0 (theora): avcodec_open2: Invalid data found when processing input`.
    public var description: String { "\(kind) stream \(index) (\(codecName)): \(error)" }
}
