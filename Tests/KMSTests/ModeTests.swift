import Testing
@testable import KMS

/// Real timings: CEA-861 (VIC numbers) and VESA DMT, as EDIDs list them and the kernel reports them.
enum Timings {
    /// VIC 16, 1920x1080p 60 Hz: 148.5 MHz, 2200 x 1125 total.
    static let p1080at60 = Mode.Timing(clock: 148_500, hdisplay: 1920, hsyncStart: 2008, hsyncEnd: 2052, htotal: 2200,
                                       vdisplay: 1080, vsyncStart: 1084, vsyncEnd: 1089, vtotal: 1125,
                                       vrefresh: 60, flags: 0x5, type: Mode.Timing.typePreferred | 0x40)
    /// VIC 16 at 60/1.001 Hz: 148.352 MHz.
    static let p1080at59_94 = Mode.Timing(clock: 148_352, hdisplay: 1920, hsyncStart: 2008, hsyncEnd: 2052, htotal: 2200,
                                          vdisplay: 1080, vsyncStart: 1084, vsyncEnd: 1089, vtotal: 1125, vrefresh: 60, flags: 0x5)
    /// VIC 5, 1920x1080i 60 Hz: 74.25 MHz, two fields per frame.
    static let i1080at60 = Mode.Timing(clock: 74_250, hdisplay: 1920, hsyncStart: 2008, hsyncEnd: 2052, htotal: 2200,
                                       vdisplay: 1080, vsyncStart: 1084, vsyncEnd: 1094, vtotal: 1125, vrefresh: 60,
                                       flags: 0x5 | Mode.Timing.flagInterlace, name: "1920x1080i")
    /// VIC 4, 1280x720p 60 Hz.
    static let p720at60 = Mode.Timing(clock: 74_250, hdisplay: 1280, hsyncStart: 1390, hsyncEnd: 1430, htotal: 1650,
                                      vdisplay: 720, vsyncStart: 725, vsyncEnd: 730, vtotal: 750, vrefresh: 60, flags: 0x5)
    /// VIC 95, 3840x2160p 30 Hz: 297 MHz, 4400 x 2250 total.
    static let p2160at30 = Mode.Timing(clock: 297_000, hdisplay: 3840, hsyncStart: 4016, hsyncEnd: 4104, htotal: 4400,
                                       vdisplay: 2160, vsyncStart: 2168, vsyncEnd: 2178, vtotal: 2250, vrefresh: 30, flags: 0x5)
    /// VESA DMT 1024x768 60 Hz: 65 MHz, 1344 x 806 total.
    static let dmt1024x768 = Mode.Timing(clock: 65_000, hdisplay: 1024, hsyncStart: 1048, hsyncEnd: 1184, htotal: 1344,
                                         vdisplay: 768, vsyncStart: 771, vsyncEnd: 777, vtotal: 806, vrefresh: 60, flags: 0xA)
    /// VIC 1, 640x480p 59.94 Hz: 25.175 MHz, 800 x 525 total.
    static let vga = Mode.Timing(clock: 25_175, hdisplay: 640, hsyncStart: 656, hsyncEnd: 752, htotal: 800,
                                 vdisplay: 480, vsyncStart: 490, vsyncEnd: 492, vtotal: 525, vrefresh: 60, flags: 0xA)
}

@Suite("Mode timings: the refresh rate as the kernel's drm_mode_vrefresh computes it, unrounded")
struct ModeTimingTests {
    @Test("refresh rate from clock and totals", arguments: [
        (Timings.p1080at60, 60.0),
        (Timings.p1080at59_94, 59.9402),
        (Timings.i1080at60, 60.0),            // interlaced: two fields per frame period
        (Timings.p720at60, 60.0),
        (Timings.p2160at30, 30.0),
        (Timings.dmt1024x768, 60.0038),
        (Timings.vga, 59.9405),
    ])
    func refreshRate(timing: Mode.Timing, hz: Double) {
        #expect(abs(timing.refreshRate - hz) < 0.0001)
    }

    @Test("double scan halves the rate, vscan divides it, a zero total gives 0")
    func scanFlags() {
        var doubled = Timings.vga
        doubled.flags |= Mode.Timing.flagDoubleScan
        #expect(abs(doubled.refreshRate - 29.970_2) < 0.0001)
        var vscan = Timings.p1080at60
        vscan.vscan = 3
        #expect(abs(vscan.refreshRate - 20) < 0.0001)
        var broken = Timings.p1080at60
        broken.htotal = 0
        #expect(broken.refreshRate == 0)
    }

    @Test("a mode from its timings: size, preferred bit, interlace, description")
    func modeFromTiming() {
        let p = Mode(timing: Timings.p1080at60)
        #expect(p.width == 1920 && p.height == 1080 && p.isPreferred && !p.isInterlaced)
        #expect(p.name == "1920x1080")
        #expect(p.description == "1920x1080@60.00*")
        #expect(Mode(timing: Timings.p1080at59_94).description == "1920x1080@59.94")
        #expect(Mode(timing: Timings.i1080at60).description == "1920x1080i@60.00")
        #expect(Mode(timing: Timings.dmt1024x768).description == "1024x768@60.00")
        #expect(Mode(name: "x", width: 800, height: 600, refreshRate: 59.999, isPreferred: false).description == "800x600@60.00")
    }
}

@Suite("The MODE_ID blob: struct drm_mode_modeinfo, byte for byte")
struct ModeBlobTests {
    /// The kernel's layout (include/uapi/drm/drm_mode.h), written out field by field, little-endian.
    func kernelBytes(_ t: Mode.Timing) -> [UInt8] {
        var out: [UInt8] = []
        func u32(_ v: UInt32) { out += withUnsafeBytes(of: v.littleEndian, Array.init) }
        func u16(_ v: Int) { out += withUnsafeBytes(of: UInt16(v).littleEndian, Array.init) }
        u32(t.clock)
        [t.hdisplay, t.hsyncStart, t.hsyncEnd, t.htotal, t.hskew].forEach(u16)
        [t.vdisplay, t.vsyncStart, t.vsyncEnd, t.vtotal, t.vscan].forEach(u16)
        u32(t.vrefresh); u32(t.flags); u32(t.type)
        out += Array(t.name.utf8) + [UInt8](repeating: 0, count: 32 - t.name.utf8.count)
        return out
    }

    @Test("timings become the 68 bytes the kernel expects, and read back the same",
          arguments: [Timings.p1080at60, Timings.i1080at60, Timings.p2160at30, Timings.vga])
    func roundTrip(timing: Mode.Timing) throws {
        #expect(Mode.Timing.modeInfoSize == 68)
        let bytes = timing.modeInfoBytes
        #expect(bytes == kernelBytes(timing))
        let back = try #require(Mode.Timing(modeInfoBytes: bytes))
        #expect(back == timing)
    }

    @Test("a blob of another size is not a mode; a name longer than 31 bytes is cut, NUL-terminated")
    func malformed() throws {
        #expect(Mode.Timing(modeInfoBytes: Array(repeating: 0, count: 67)) == nil)
        #expect(Mode.Timing(modeInfoBytes: Array(repeating: 0, count: 69)) == nil)
        var long = Timings.p720at60
        long.name = String(repeating: "m", count: 40)
        let bytes = long.modeInfoBytes
        #expect(bytes[36 + 31] == 0)
        #expect(try #require(Mode.Timing(modeInfoBytes: bytes)).name == String(repeating: "m", count: 31))
    }
}

@Suite("Mode selection: the requested mode, else PREFERRED, else the largest (kmscube's order)")
struct ModeSelectionTests {
    /// A monitor's list in the kernel's order: the preferred mode first.
    static let monitor = [Timings.p1080at60, Timings.p1080at59_94, Timings.i1080at60, Timings.p2160at30,
                          Timings.p720at60, Timings.dmt1024x768, Timings.vga].map(Mode.init(timing:))
    /// The same without a PREFERRED mark, in another order.
    static let unmarked = [Timings.vga, Timings.p720at60, Timings.p1080at59_94, Timings.i1080at60, Timings.dmt1024x768]
        .map { var t = $0; t.type = 0; return Mode(timing: t) }

    @Test("requests against a monitor's modes", arguments: [
        (ModeRequest.preferred, "1920x1080@60.00*"),
        (.highest, "3840x2160@30.00"),                              // most pixels wins over refresh rate
        (.exact(width: 1920, height: 1080, refresh: 60), "1920x1080@60.00*"),  // progressive, exactly 60, preferred
        (.exact(width: 1280, height: 720, refresh: 60), "1280x720@60.00"),
        (.exact(width: 640, height: 480, refresh: 60), "640x480@59.94"),       // 59.94 rounds to 60
        (.exact(width: 3840, height: 2160, refresh: 30), "3840x2160@30.00"),
        (.exact(width: 3840, height: 2160, refresh: 60), "1920x1080@60.00*"),  // not offered: PREFERRED
        (.exact(width: 1920, height: 1080, refresh: 50), "1920x1080@60.00*"),  // no 50 Hz: PREFERRED
        (.exact(width: 1024, height: 768, refresh: 75), "1920x1080@60.00*"),
    ])
    func monitorModes(request: ModeRequest, expected: String) throws {
        let mode = try #require(Mode.select(request, from: Self.monitor))
        #expect(mode.description == expected)
    }

    @Test("without a PREFERRED mode: the largest, then the highest rate (1080i60 before 1080p59.94)", arguments: [
        (ModeRequest.preferred, "1920x1080i@60.00"),
        (.highest, "1920x1080i@60.00"),
        (.exact(width: 1920, height: 1080, refresh: 60), "1920x1080@59.94"),   // progressive before interlaced
        (.exact(width: 800, height: 600, refresh: 60), "1920x1080i@60.00"),
    ])
    func unmarkedModes(request: ModeRequest, expected: String) throws {
        let mode = try #require(Mode.select(request, from: Self.unmarked))
        #expect(mode.description == expected)
    }

    @Test("among equal candidates: the closest rate, then the preferred one; an interlaced-only match is taken")
    func ties() throws {
        var other60 = Timings.p1080at60
        other60.type = 0
        other60.name = "1920x1080-alt"
        let modes = [Mode(timing: other60), Mode(timing: Timings.p1080at59_94), Mode(timing: Timings.p1080at60)]
        let exact = try #require(Mode.select(.exact(width: 1920, height: 1080, refresh: 60), from: modes))
        #expect(exact.isPreferred && abs(exact.refreshRate - 60) < 1e-9)
        let interlacedOnly = [Mode(timing: Timings.i1080at60), Mode(timing: Timings.p720at60)]
        #expect(Mode.select(.exact(width: 1920, height: 1080, refresh: 60), from: interlacedOnly)?.isInterlaced == true)
        #expect(Mode.select(.preferred, from: []) == nil)
        #expect(Mode.select(.highest, from: []) == nil)
    }
}
