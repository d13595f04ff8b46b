internal import CALSA
internal import Glibc

extension PCMDevice {
    /// Writes interleaved frames in the negotiated format, blocking until the device has taken all of them.
    ///
    /// `bytes.count` must be a multiple of `bytesPerFrame` (a precondition). Short writes are
    /// continued and `-EAGAIN` / `-EINTR` retried. An underrun (`-EPIPE`) or a suspend
    /// (`-ESTRPIPE`) is recovered with `snd_pcm_recover`, counted in `xrunCount`, reported to
    /// `onXrun`, and writing goes on with the remaining frames. A stream stopped by `drop()` or
    /// `drain()` is prepared again first. While paused, the call blocks once the buffer is full.
    ///
    /// - Parameter bytes: Interleaved frames, `negotiated.format`, `negotiated.channels` per frame.
    /// - Returns: Frames written: `bytes.count / bytesPerFrame`.
    /// - Throws: `ALSAError` with operation `snd_pcm_writei` for any other error (`-ENODEV` when
    ///   the device was unplugged, `-EBADFD` in a state no write can fix), `snd_pcm_recover` when
    ///   recovery itself fails, `snd_pcm_prepare` when a stopped stream cannot be prepared.
    ///
    /// The corresponding C function is `snd_pcm_writei`.
    @discardableResult
    public func write(_ bytes: UnsafeRawBufferPointer) throws(ALSAError) -> Int {
        precondition(bytes.count % bytesPerFrame == 0,
                     "PCMDevice.write: \(bytes.count) bytes is not a whole number of \(bytesPerFrame)-byte frames")
        let total = bytes.count / bytesPerFrame
        guard total > 0, let base = bytes.baseAddress else { return 0 }
        if state == .setup { try prepare() }

        var written = 0
        while written < total {
            switch writei(base + written * bytesPerFrame, frames: total - written) {
            case .success(let frames) where frames > 0:
                written += frames
            case .success, .failure(.wouldBlock):
                _ = snd_pcm_wait(handle, 100)
            case .failure(.brokenPipe):
                try recover(from: -EPIPE, kind: .underrun)
            case .failure(.streamPipe):
                try recover(from: -ESTRPIPE, kind: .suspend)
            case .failure(let errno):
                throw ALSAError(operation: "snd_pcm_writei", code: -errno.rawValue, subject: name)
            }
        }
        return written
    }

    /// Writes interleaved signed 16-bit samples, converting them if the device negotiated another format.
    ///
    /// `samples.count` must be a multiple of `negotiated.channels` (a precondition). For s32le
    /// each sample is shifted left 16 bits; for floatLE it is divided by 32768.
    ///
    /// - Returns: Frames written.
    /// - Throws: As `write(_:)` with raw bytes.
    ///
    /// The corresponding C function is `snd_pcm_writei`.
    @discardableResult
    public func write(_ samples: [Int16]) throws(ALSAError) -> Int {
        switch negotiated.format {
        case .s16le:
            return try withRawBytes(of: samples)
        case .s32le:
            return try withRawBytes(of: samples.map { Int32($0) << 16 })
        case .floatLE:
            return try withRawBytes(of: samples.map { Float($0) / 32768 })
        default:
            preconditionFailure("PCMDevice.write([Int16]): no conversion to \(negotiated.format)")
        }
    }

    private func withRawBytes<T>(of samples: [T]) throws(ALSAError) -> Int {
        let result: Result<Int, ALSAError> = samples.withUnsafeBytes { bytes in
            Result { () throws(ALSAError) in try write(bytes) }
        }
        return try result.get()
    }

    /// Recovers from an underrun or suspend, then counts and reports it.
    private func recover(from code: Int32, kind: XrunKind) throws(ALSAError) {
        try check("snd_pcm_recover", subject: name) { snd_pcm_recover(handle, code, 1) }
        let handler = withShared { shared in
            shared.xrunCount += 1
            return shared.onXrun
        }
        handler?(kind)
    }

    /// The one place `snd_pcm_writei` is called, through the gateway (`EINTR` retried there; in debug
    /// builds a test's `FaultPlan` can fail it, or make it "take" fewer frames, as `snd_pcm_writei`).
    /// - Returns: the frames written, or the error.
    private func writei(_ frames: UnsafeRawPointer, frames count: Int) -> Result<Int, Errno> {
        valueOrErrno(SystemCall("snd_pcm_writei", name), convention: .negativeErrno) {
            snd_pcm_writei(handle, frames, snd_pcm_uframes_t(count))
        }
    }
}
