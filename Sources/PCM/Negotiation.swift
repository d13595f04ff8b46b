internal import CALSA

/// Hardware and software parameter negotiation for a freshly opened playback PCM.
enum Negotiation {
    /// Formats tried, in order, after the requested one is refused.
    static let fallbackFormats: [SampleFormat] = [.s16le, .s32le, .floatLE]

    /// What `negotiate` installed on the PCM.
    struct Result {
        var configuration: PCMConfiguration
        var canPause: Bool
    }

    /// Installs hardware parameters near `requested`, then software parameters, on `pcm`.
    ///
    /// Hardware: access `RW_INTERLEAVED`; the requested format, else the first of
    /// `fallbackFormats` the PCM accepts; channels near; rate near (alsa-lib may resample);
    /// period size near; buffer size near. A missing period defaults to 20 ms at the negotiated
    /// rate, a missing buffer to 4 periods; a missing period with a buffer given is a quarter of it.
    ///
    /// Software: start threshold = buffer − period (at least one period), `avail_min` = one period.
    ///
    /// - Throws: `ALSAError` naming the `snd_pcm_hw_params_*` or `snd_pcm_sw_params*` call the PCM refused.
    static func negotiate(_ pcm: OpaquePointer, requested: PCMConfiguration) throws(ALSAError) -> Result {
        var hw: OpaquePointer?
        try check("snd_pcm_hw_params_malloc") { snd_pcm_hw_params_malloc(&hw) }
        defer { snd_pcm_hw_params_free(hw) }

        try check("snd_pcm_hw_params_any") { snd_pcm_hw_params_any(pcm, hw) }
        try check("snd_pcm_hw_params_set_rate_resample") { snd_pcm_hw_params_set_rate_resample(pcm, hw, 1) }
        try check("snd_pcm_hw_params_set_access") {
            snd_pcm_hw_params_set_access(pcm, hw, SND_PCM_ACCESS_RW_INTERLEAVED)
        }

        let candidates = [requested.format] + fallbackFormats.filter { $0 != requested.format }
        guard let format = candidates.first(where: { snd_pcm_hw_params_test_format(pcm, hw, $0.alsa) == 0 }) else {
            throw ALSAError(operation: "snd_pcm_hw_params_set_format",
                            code: snd_pcm_hw_params_set_format(pcm, hw, requested.format.alsa))
        }
        try check("snd_pcm_hw_params_set_format") { snd_pcm_hw_params_set_format(pcm, hw, format.alsa) }

        var channels = UInt32(clamping: requested.channels)
        try check("snd_pcm_hw_params_set_channels_near") { snd_pcm_hw_params_set_channels_near(pcm, hw, &channels) }

        var rate = UInt32(clamping: requested.rate)
        var direction: Int32 = 0
        try check("snd_pcm_hw_params_set_rate_near") { snd_pcm_hw_params_set_rate_near(pcm, hw, &rate, &direction) }

        let defaultPeriod = max(Int(rate) / 50, 32)
        let wantedPeriod = requested.periodFrames ?? requested.bufferFrames.map { max($0 / 4, 1) } ?? defaultPeriod
        var period = snd_pcm_uframes_t(clamping: wantedPeriod)
        try check("snd_pcm_hw_params_set_period_size_near") {
            snd_pcm_hw_params_set_period_size_near(pcm, hw, &period, &direction)
        }

        var buffer = snd_pcm_uframes_t(clamping: requested.bufferFrames ?? Int(period) * 4)
        try check("snd_pcm_hw_params_set_buffer_size_near") { snd_pcm_hw_params_set_buffer_size_near(pcm, hw, &buffer) }

        try check("snd_pcm_hw_params") { snd_pcm_hw_params(pcm, hw) }

        // Read back what was installed: `*_near` results can still move when later choices refine them.
        var installedFormat = SND_PCM_FORMAT_UNKNOWN
        try check("snd_pcm_hw_params_get_format") { snd_pcm_hw_params_get_format(hw, &installedFormat) }
        try check("snd_pcm_hw_params_get_channels") { snd_pcm_hw_params_get_channels(hw, &channels) }
        try check("snd_pcm_hw_params_get_rate") { snd_pcm_hw_params_get_rate(hw, &rate, &direction) }
        try check("snd_pcm_hw_params_get_period_size") { snd_pcm_hw_params_get_period_size(hw, &period, &direction) }
        try check("snd_pcm_hw_params_get_buffer_size") { snd_pcm_hw_params_get_buffer_size(hw, &buffer) }
        let canPause = snd_pcm_hw_params_can_pause(hw) == 1

        try installSoftwareParameters(pcm, period: period, buffer: buffer)

        let configuration = PCMConfiguration(
            rate: Int(rate), channels: Int(channels), format: SampleFormat(installedFormat),
            periodFrames: Int(period), bufferFrames: Int(buffer))
        return Result(configuration: configuration, canPause: canPause)
    }

    /// Start threshold = buffer − period (at least one period); wake the writer when a period is free.
    private static func installSoftwareParameters(
        _ pcm: OpaquePointer, period: snd_pcm_uframes_t, buffer: snd_pcm_uframes_t
    ) throws(ALSAError) {
        var sw: OpaquePointer?
        try check("snd_pcm_sw_params_malloc") { snd_pcm_sw_params_malloc(&sw) }
        defer { snd_pcm_sw_params_free(sw) }

        try check("snd_pcm_sw_params_current") { snd_pcm_sw_params_current(pcm, sw) }
        let startThreshold = buffer > period ? max(buffer - period, period) : buffer
        try check("snd_pcm_sw_params_set_start_threshold") {
            snd_pcm_sw_params_set_start_threshold(pcm, sw, startThreshold)
        }
        try check("snd_pcm_sw_params_set_avail_min") { snd_pcm_sw_params_set_avail_min(pcm, sw, period) }
        try check("snd_pcm_sw_params") { snd_pcm_sw_params(pcm, sw) }
    }
}
