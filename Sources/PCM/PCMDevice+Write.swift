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
            let result = writei(base + written * bytesPerFrame, frames: total - written)
            if result > 0 {
                written += result
                continue
            }
            switch Int32(result) {
            case 0, -EAGAIN:
                _ = snd_pcm_wait(handle, 100)
            case -EINTR:
                continue
            case -EPIPE:
                try recover(from: -EPIPE, kind: .underrun)
            case -ESTRPIPE:
                try recover(from: -ESTRPIPE, kind: .suspend)
            default:
                throw ALSAError(operation: "snd_pcm_writei", code: Int32(result), subject: name)
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
        try check("snd_pcm_recover", snd_pcm_recover(handle, code, 1), subject: name)
        let handler = withShared { shared in
            shared.xrunCount += 1
            return shared.onXrun
        }
        handler?(kind)
    }

    /// The one place `snd_pcm_writei` is called; debug builds can inject results for tests.
    private func writei(_ frames: UnsafeRawPointer, frames count: Int) -> Int {
        #if DEBUG
        if let injected = withShared({ $0.injectedWriteResults.isEmpty ? nil : $0.injectedWriteResults.removeFirst() }) {
            return injected
        }
        #endif
        return snd_pcm_writei(handle, frames, snd_pcm_uframes_t(count))
    }

    #if DEBUG
    /// Test seam: makes the next `snd_pcm_writei` calls return `results` (negative errno or a
    /// frame count) instead of writing; the real alsa-lib recovery still runs on the real PCM.
    func injectWriteResults(_ results: [Int]) {
        withShared { $0.injectedWriteResults.append(contentsOf: results) }
    }
    #endif
}
