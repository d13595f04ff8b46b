import Testing
@testable import Vitrine

@Suite("Playback clock")
struct PlaybackClockTests {
    @Test("the master: virtual vblanks without a sound device; the device while an item with sound (or none) plays; else the reference clock")
    func masters() {
        typealias M = PlaybackClock.Master
        #expect(M.choose(virtualOutput: true, soundDevice: false, itemHasSound: true) == .virtualVblank)
        #expect(M.choose(virtualOutput: true, soundDevice: false, itemHasSound: nil) == .virtualVblank)
        #expect(M.choose(virtualOutput: false, soundDevice: true, itemHasSound: true) == .audioDevice)
        #expect(M.choose(virtualOutput: false, soundDevice: true, itemHasSound: nil) == .audioDevice)
        #expect(M.choose(virtualOutput: true, soundDevice: true, itemHasSound: true) == .audioDevice)
        #expect(M.choose(virtualOutput: false, soundDevice: true, itemHasSound: false) == .external)
        #expect(M.choose(virtualOutput: false, soundDevice: false, itemHasSound: true) == .external)
    }

    @Test("virtual vblanks: catalog time is the vblank time less the time spent paused")
    func virtualPause() {
        var c = PlaybackClock()
        #expect(c.read(outputTime: 1, referenceTime: 101, master: .virtualVblank, soundDevice: nil, itemStart: 0) == 1)
        c.pause(atOutputTime: 1)
        c.pause(atOutputTime: 1.5)   // no effect: already paused
        #expect(c.isPaused)
        #expect(c.read(outputTime: 2, referenceTime: 102, master: .virtualVblank, soundDevice: nil, itemStart: 0) == 1)
        c.resume(atOutputTime: 3)
        #expect(!c.isPaused)
        #expect(c.read(outputTime: 3.5, referenceTime: 103.5, master: .virtualVblank, soundDevice: nil, itemStart: 0) == 1.5)
        #expect(c.position == 1.5)
    }

    @Test("the sound device is the master: its time is taken as it is; a pause freezes the reading")
    func soundMaster() {
        var c = PlaybackClock()
        #expect(c.read(outputTime: 50, referenceTime: 50, master: .audioDevice, soundDevice: 5.25, itemStart: 4) == 5.25)
        c.pause(atOutputTime: 50.1)
        #expect(c.read(outputTime: 51, referenceTime: 51, master: .audioDevice, soundDevice: 6.1, itemStart: 4) == 5.25)
    }

    @Test("the external clock runs free from the item's start, never back, and resynchronises with the sound device")
    func external() {
        var c = PlaybackClock()
        c.read(outputTime: 0, referenceTime: 98, master: .audioDevice, soundDevice: 2, itemStart: nil)
        // A silent item starting at 2.5 s: the reference clock from there.
        #expect(c.read(outputTime: 0, referenceTime: 100, master: .external, soundDevice: nil, itemStart: 2.5) == 2.5)
        #expect(c.read(outputTime: 0, referenceTime: 100.5, master: .external, soundDevice: nil, itemStart: 2.5) == 3)
        // Still synchronised: a new item start does not move it.
        #expect(c.read(outputTime: 0, referenceTime: 101, master: .external, soundDevice: nil, itemStart: 9) == 3.5)
        // Resynchronised: an item start before the position does not take the clock back.
        c.resynchronize()
        #expect(c.read(outputTime: 0, referenceTime: 101, master: .external, soundDevice: nil, itemStart: 1) == 3.5)
        // With a sound device it starts from the device's time.
        c.resynchronize()
        #expect(c.read(outputTime: 0, referenceTime: 102, master: .external, soundDevice: 10, itemStart: 1) == 10)
        #expect(c.read(outputTime: 0, referenceTime: 102.25, master: .external, soundDevice: 99, itemStart: 1) == 10.25)
        // A pause and a resume: frozen, then free again from where it stood.
        c.pause(atOutputTime: 0)
        #expect(c.read(outputTime: 0, referenceTime: 110, master: .external, soundDevice: nil, itemStart: 1) == 10.25)
        c.resume(atOutputTime: 0)
        #expect(c.read(outputTime: 0, referenceTime: 120, master: .external, soundDevice: nil, itemStart: 1) == 10.25)
        #expect(c.read(outputTime: 0, referenceTime: 121, master: .external, soundDevice: nil, itemStart: 1) == 11.25)
    }

    @Test("every seek or item change bumps the serial")
    func serial() {
        var c = PlaybackClock()
        #expect(c.serial == 0)
        c.bumpSerial()
        c.bumpSerial()
        #expect(c.serial == 2)
        #expect(c.reference == .monotonic)
        #expect(PlaybackClock(reference: .realtime).reference == .realtime)
    }

    @Test("the sound device: frames written less snd_pcm_delay, advanced by the time since, at most the delay and 0.1 s")
    func soundDevice() {
        var d = PlaybackClock.SoundDevice(rate: 48000)
        d.base = 48000
        #expect(d.catalogTime(at: 5) == 1, "before the first write: where the device starts")
        d.wrote(frames: 1024, pauseSilence: false, delay: 1024, at: 10)
        #expect(d.catalogTime(at: 10) == 1)
        #expect(abs(d.catalogTime(at: 10.01) - (48000 + 480) / 48000.0) < 1e-9)
        // A device that is no longer fed: the clock stops at the delay plus 0.1 s.
        #expect(abs(d.catalogTime(at: 11) - (48000 + 1024 + 4800) / 48000.0) < 1e-9)
        #expect(d.catalogTime(at: 9) == 1, "never before the last reading")
    }

    @Test("pause silence written to the device is not catalog time: the clock stands still while it plays")
    func pauseSilence() {
        var d = PlaybackClock.SoundDevice(rate: 48000)
        d.wrote(frames: 1024, pauseSilence: false, delay: 1024, at: 0)
        let t2 = 1024 / 48000.0
        d.wrote(frames: 1024, pauseSilence: true, delay: 1024, at: t2)
        d.wrote(frames: 1024, pauseSilence: true, delay: 2048, at: t2)   // one range: 1024..<3072
        #expect(d.silence == [1024..<3072])
        #expect(d.catalogTime(at: t2) == 1024 / 48000.0)
        #expect(abs(d.catalogTime(at: t2 + 0.02) - 1024 / 48000.0) < 1e-9, "960 frames of silence played")
        #expect(abs(d.catalogTime(at: t2 + 0.05) - (3424 - 2048) / 48000.0) < 1e-9, "after the silence, time runs again")
    }
}
