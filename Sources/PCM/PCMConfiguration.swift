/// Stream parameters: what a caller asks a PCM for, or what the PCM accepted.
public struct PCMConfiguration: Hashable, Sendable {
    /// Frames per second, in Hz.
    public var rate: Int
    /// Interleaved channels per frame.
    public var channels: Int
    /// Sample format of every channel.
    public var format: SampleFormat
    /// Frames per period (the unit the device wakes the writer for); `nil` asks for the default.
    public var periodFrames: Int?
    /// Frames the ring buffer holds; `nil` asks for the default.
    public var bufferFrames: Int?

    public init(rate: Int, channels: Int, format: SampleFormat,
                periodFrames: Int? = nil, bufferFrames: Int? = nil) {
        self.rate = rate
        self.channels = channels
        self.format = format
        self.periodFrames = periodFrames
        self.bufferFrames = bufferFrames
    }

    /// Bytes in one frame: one sample for each channel.
    public var bytesPerFrame: Int { channels * format.bytesPerSample }
}
