/// The catalog clock: the catalog time (seconds from the start of the run) of the picture shown at a
/// presentation time, read once per vblank by the presenter.
///
/// Modelled on ffplay's `Clock` (`get_clock`, `set_clock_at`, `sync_clock_to_slave`): one master
/// drives catalog time, the others follow it.
/// - With a sound device, the device is the master (`Master.audioDevice`): catalog time is the time
///   of the sample being heard (`SoundDevice`, published by the ALSA thread after each write).
/// - An item without sound, or a screen without a sound device, runs on the reference clock from
///   where it was last synchronised (`Master.external`: ffplay's external clock, `pts` plus the time
///   since `last_updated`). Catalog time never jumps back when it takes over: it starts from the
///   master's time, or the item's start.
/// - The headless output with no sound device runs on its own virtual vblanks
///   (`Master.virtualVblank`): catalog time is the vblank time less the time spent paused, exact and
///   repeatable.
///
/// While paused the clock stands still at its last reading. `serial` grows with every seek and item
/// change (ffplay's packet-queue serial), so a reading can be matched to the playback it belongs to.
///
/// Times given to the clock are seconds on its `reference`: `CLOCK_MONOTONIC` today; a screen in a
/// synchronised wall will use `CLOCK_REALTIME`. Output times (`outputTime`) are the output's own
/// (`VideoOutput.nextPresentationTime()`), which the virtual master reads directly.
///
/// A value type, owned by the presenter (the run loop's thread); only `SoundDevice` crosses threads,
/// inside `ALSAAudio`'s lock.
struct PlaybackClock {
    /// Which clock drives catalog time (ffplay's `av_sync_type`).
    enum Master: Equatable {
        /// The headless output's virtual vblanks; there is no sound device.
        case virtualVblank
        /// The sound device: the catalog time of the sample being heard.
        case audioDevice
        /// The reference clock, running free from its last synchronisation (ffplay's external clock).
        case external

        /// The master for an output (`virtualOutput`: headless) with or without a sound device, while
        /// an item with (`true`) or without (`false`) sound is current, or none (`nil`).
        static func choose(virtualOutput: Bool, soundDevice: Bool, itemHasSound: Bool?) -> Master {
            if virtualOutput && !soundDevice { return .virtualVblank }
            if soundDevice && itemHasSound != false { return .audioDevice }
            return .external
        }
    }

    /// The system clock that reference times are read from.
    enum Reference: Equatable {
        /// `CLOCK_MONOTONIC`: a single screen.
        case monotonic
        /// `CLOCK_REALTIME`: screens that show one catalog in step (the reading follows clock steps).
        case realtime
    }

    let reference: Reference
    /// Grows by one with every seek or item change.
    private(set) var serial = 0
    /// Catalog seconds at the last reading (or where the clock stands while paused).
    private(set) var position = 0.0
    /// The output time at which the clock was paused; nil while it runs.
    private var pausedAt: Double?
    /// Output seconds spent paused so far (what the virtual master subtracts).
    private var pausedSeconds = 0.0
    /// The external clock: catalog seconds `pts` at reference time `lastUpdated` (ffplay's `pts` and
    /// `last_updated`); nil until the next `.external` reading synchronises it.
    private var external: (pts: Double, lastUpdated: Double)?

    init(reference: Reference = .monotonic) { self.reference = reference }

    var isPaused: Bool { pausedAt != nil }

    /// Stops the clock at the presentation at output time `outputTime`; no effect while paused.
    mutating func pause(atOutputTime outputTime: Double) {
        if pausedAt == nil { pausedAt = outputTime }
    }

    /// Starts the clock again from where it stood; the external clock synchronises again at the next
    /// reading. No effect on a running clock beyond that.
    mutating func resume(atOutputTime outputTime: Double) {
        if let t = pausedAt { pausedSeconds += outputTime - t }
        pausedAt = nil
        external = nil
    }

    /// The external clock synchronises again at its next reading (a new item without sound, a sound
    /// device that appeared).
    mutating func resynchronize() { external = nil }

    /// A seek or item change: readings from now on belong to a new serial.
    mutating func bumpSerial() { serial += 1 }

    /// Sets catalog time to `position` (a synchronised catalog's wall-clock reading, `SyncLock`):
    /// never back, and not while paused. Returns the position kept.
    @discardableResult
    mutating func follow(_ position: Double) -> Double {
        if pausedAt != nil { return self.position }
        self.position = max(self.position, position)
        return self.position
    }

    /// Reads catalog time for the presentation at `outputTime` (reference time `referenceTime`) and
    /// keeps it as `position`.
    /// - Parameters:
    ///   - master: from `Master.choose`.
    ///   - soundDevice: the sound device's catalog time at `referenceTime`, when there is a device.
    ///   - itemStart: catalog seconds of the current item's time zero, if an item is current.
    /// - Returns: catalog seconds.
    @discardableResult
    mutating func read(outputTime: Double, referenceTime: Double, master: Master, soundDevice: Double?,
                       itemStart: Double?) -> Double {
        if pausedAt != nil { return position }
        switch master {
        case .virtualVblank:
            position = outputTime - pausedSeconds
        case .audioDevice:
            external = nil
            position = soundDevice ?? position
        case .external:
            if external == nil {
                // ffplay's sync_clock_to_slave: take the master's time, else the item's start (never back).
                let base = soundDevice ?? itemStart.map { max($0, position) } ?? position
                external = (base, referenceTime)
            }
            position = external!.pts + (referenceTime - external!.lastUpdated)
        }
        return position
    }

    /// The sound device's side of the clock: which catalog audio frame the device is playing. The ALSA
    /// thread records every write (`wrote`); the presenter reads `catalogTime(at:)`.
    ///
    /// Device frames count from the device's first frame. Frames played at reference time `t` are the
    /// frames written less `snd_pcm_delay` when it was read, plus the time since then (at most the
    /// delay and 0.1 s more: a device that stops being fed stops the clock). Pause silence (written
    /// while paused) is not catalog time: the clock stands still while it plays.
    struct SoundDevice: Equatable, Sendable {
        /// Frames per second.
        let rate: Int
        /// The catalog frame the device's first frame plays (a device opened after playback began).
        var base = 0
        /// Device frames written, and `snd_pcm_delay` (frames) read after the last write at reference time `at`.
        private(set) var written = 0
        private(set) var delay = 0
        private(set) var at = 0.0
        private(set) var started = false
        /// Device frame ranges that carried pause silence, oldest first.
        private(set) var silence: [Range<Int>] = []

        init(rate: Int) { self.rate = rate }

        /// Records a write of `frames` device frames (pause silence when `pauseSilence`) after which
        /// `snd_pcm_delay` read `delay` frames at reference time `at`. `catalogFrames`: the catalog
        /// frames they were stretched from (`DriftResampler`, a synchronised catalog), when not
        /// `frames`; the difference counts from this write on.
        mutating func wrote(frames: Int, pauseSilence: Bool, delay: Int, at: Double, catalogFrames: Int? = nil) {
            if !pauseSilence, let c = catalogFrames { base += c - frames }
            if pauseSilence {
                if let last = silence.last, last.upperBound == written {
                    silence[silence.count - 1] = last.lowerBound..<(written + frames)
                } else {
                    silence.append(written..<(written + frames))
                }
            }
            written += frames
            self.delay = delay
            self.at = at
            started = true
        }

        /// `frames` catalog frames were skipped (not written): the device plays on from after them.
        mutating func skipped(frames: Int) { base += frames }

        /// Catalog seconds of the sample heard at reference time `t`; `base` before the first write.
        func catalogTime(at t: Double) -> Double {
            let rate = Double(self.rate)
            guard started else { return Double(base) / rate }
            let ahead = min(max(0, t - at), Double(delay) / rate + 0.1)
            let devicePlayed = Double(written - delay) + ahead * rate
            var silencePlayed = 0.0
            for b in silence { silencePlayed += min(Double(b.count), max(0, devicePlayed - Double(b.lowerBound))) }
            return (Double(base) + devicePlayed - silencePlayed) / rate
        }
    }
}
