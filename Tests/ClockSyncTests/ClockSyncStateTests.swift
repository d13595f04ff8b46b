// The kernel's NTP state read through adjtimex(2): the raw fields' units, and a real read on this
// machine (whatever disciplines its clock, or nothing).
import Testing
import ClockSync

@Suite("ClockSyncState: adjtimex(2) fields in ms and ppm, and a read of this kernel")
struct ClockSyncStateTests {
    @Test("offset in µs, or in ns with STA_NANO; freq in ppm·65536; errors in µs; TIME_ERROR or STA_UNSYNC is unsynchronized")
    func units() {
        let micro = ClockSyncState(clockState: 0, status: 0x1, offset: 1_500, frequency: -12 * 65536 - 32768,
                                   maxError: 3_100, estimatedError: 500)
        #expect(micro.synchronized)
        #expect(micro.offsetMilliseconds == 1.5)
        #expect(micro.frequencyPPM == -12.5)
        #expect(micro.maxErrorMilliseconds == 3.1)
        #expect(micro.estimatedErrorMilliseconds == 0.5)
        let nano = ClockSyncState(clockState: 0, status: 0x1 | ClockSyncState.nanosecondBit, offset: 120_000, frequency: 65536,
                                  maxError: 0, estimatedError: 0)
        #expect(nano.offsetMilliseconds == 0.12)
        #expect(nano.frequencyPPM == 1)
        // The kernel's state of a box nothing disciplines: TIME_ERROR, STA_UNSYNC, 16 s.
        let free = ClockSyncState(clockState: ClockSyncState.errorState, status: ClockSyncState.unsynchronizedBit, offset: 0,
                                  frequency: 0, maxError: 16_000_000, estimatedError: 16_000_000)
        #expect(!free.synchronized)
        #expect(free.maxErrorMilliseconds == 16_000)
        #expect(ClockSyncState.unsynchronizedBit == 0x40 && ClockSyncState.nanosecondBit == 0x2000 && ClockSyncState.errorState == 5)
        // A leap second pending (TIME_INS) on a synchronized clock is still synchronized.
        #expect(ClockSyncState(clockState: 1, status: 0x11, offset: 0, frequency: 0, maxError: 1, estimatedError: 1).synchronized)
        // STA_UNSYNC alone is enough.
        #expect(!ClockSyncState(clockState: 0, status: 0x40, offset: 0, frequency: 0, maxError: 1, estimatedError: 1).synchronized)
    }

    @Test("a read of this kernel: a clock state 0…5, errors ≥ 0 and at most the kernel's 16 s, |freq| ≤ 500 ppm, synchronized as the bits say")
    func realKernel() throws {
        let c = try ClockSyncState.read()
        #expect((0...5).contains(c.clockState), "clock state \(c.clockState)")
        #expect(c.maxErrorMilliseconds >= 0 && c.maxErrorMilliseconds <= 16_000, "maxerror \(c.maxErrorMilliseconds) ms")
        #expect(c.estimatedErrorMilliseconds >= 0 && c.estimatedErrorMilliseconds <= 16_000, "esterror \(c.estimatedErrorMilliseconds) ms")
        // The kernel clamps freq to ±MAXFREQ (500 ppm) and the offset of one adjustment to ±0.5 s.
        #expect(abs(c.frequencyPPM) <= 500, "freq \(c.frequencyPPM) ppm")
        #expect(abs(c.offsetMilliseconds) <= 500, "offset \(c.offsetMilliseconds) ms")
        #expect(c.synchronized == (c.clockState != ClockSyncState.errorState && c.statusBits & ClockSyncState.unsynchronizedBit == 0))
        // Two reads a moment apart: the same discipline (maxerror grows by 500 µs/s at most between updates).
        let again = try ClockSyncState.read()
        #expect(abs(again.maxErrorMilliseconds - c.maxErrorMilliseconds) < 1_000)
    }
}
