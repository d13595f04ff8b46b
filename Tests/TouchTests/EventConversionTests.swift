import Testing
@testable import Touch

/// libinput events as numbers (what `RawInputEvent.read` copies out of a `struct libinput_event`)
/// and the `InputEvent` each must become. The numbers in `vmTap` are the ones the VM test recorded
/// for a tap at (800, 1350) on a 3201 x 1801 uinput touchscreen.
@Suite("Event conversion")
struct EventConversionTests {
    let screen = InputDeviceInfo(name: "Vitrine touch A", sysname: "event2", hasTouch: true, widthMM: 320, heightMM: 180)

    @Test("libinput's event type numbers are the ones its ABI fixes")
    func typeNumbers() {
        #expect(InputEventType.deviceAdded.rawValue == 1)
        #expect(InputEventType.deviceRemoved.rawValue == 2)
        #expect(InputEventType.keyboardKey.rawValue == 300)
        #expect([InputEventType.pointerMotion, .pointerMotionAbsolute, .pointerButton].map(\.rawValue) == [400, 401, 402])
        #expect([InputEventType.touchDown, .touchUp, .touchMotion, .touchCancel, .touchFrame].map(\.rawValue)
            == [500, 501, 502, 503, 504])
    }

    @Test("a tap: down, frame, motion, frame, up; microseconds become seconds")
    func vmTap() {
        let x0: Double = 800.0 / 3201, y0: Double = 1350.0 / 1801
        let x1: Double = 810.0 / 3201, y1: Double = 1355.0 / 1801
        let raw: [RawInputEvent] = [
            RawInputEvent(type: .deviceAdded, device: screen),
            RawInputEvent(type: .touchDown, timeMicroseconds: 16_023_176, slot: 0, x: x0, y: y0),
            RawInputEvent(type: .touchFrame, timeMicroseconds: 16_023_176),
            RawInputEvent(type: .touchMotion, timeMicroseconds: 16_076_000, slot: 0, x: x1, y: y1),
            RawInputEvent(type: .touchFrame, timeMicroseconds: 16_076_000),
            RawInputEvent(type: .touchUp, timeMicroseconds: 16_129_500, slot: 0),
        ]
        let events = raw.compactMap(InputEvent.init)
        let expected: [InputEvent] = [
            .deviceAdded(screen),
            .touchDown(slot: 0, x: x0, y: y0, time: 16.023176),
            .touchFrame(time: 16.023176),
            .touchMotion(slot: 0, x: x1, y: y1, time: 16.076),
            .touchFrame(time: 16.076),
            .touchUp(slot: 0, time: 16.1295),
        ]
        #expect(events == expected)
        #expect(events.map(\.description) == [
            #"deviceAdded sysname=event2 name="Vitrine touch A" touch=1 pointer=0 keyboard=0 size=320.0x180.0mm"#,
            "touchDown slot=0 x=0.2499 y=0.7496 time=16.023176",
            "touchFrame time=16.023176",
            "touchMotion slot=0 x=0.2530 y=0.7524 time=16.076000",
            "touchFrame time=16.076000",
            "touchUp slot=0 time=16.129500",
        ])
    }

    @Test("a second finger keeps its own seat slot; cancel carries the slot")
    func slots() {
        #expect(InputEvent(RawInputEvent(type: .touchDown, timeMicroseconds: 1, slot: 1, x: 0.5, y: 0.5))
            == .touchDown(slot: 1, x: 0.5, y: 0.5, time: 0.000001))
        #expect(InputEvent(RawInputEvent(type: .touchCancel, timeMicroseconds: 2_000_000, slot: 1))
            == .touchCancel(slot: 1, time: 2))
    }

    @Test("pointer: relative motion, absolute motion, buttons pressed and released")
    func pointer() {
        #expect(InputEvent(RawInputEvent(type: .pointerMotion, timeMicroseconds: 1_500_000, x: 3.559, y: -1.78))
            == .pointerMotion(dx: 3.559, dy: -1.78, time: 1.5))
        #expect(InputEvent(RawInputEvent(type: .pointerMotionAbsolute, timeMicroseconds: 2_000_000, x: 0.25, y: 1))
            == .pointerMotionAbsolute(x: 0.25, y: 1, time: 2))
        #expect(InputEvent(RawInputEvent(type: .pointerButton, timeMicroseconds: 0, code: 0x110, state: 1))
            == .pointerButton(button: InputEvent.buttonLeft, pressed: true, time: 0))
        #expect(InputEvent(RawInputEvent(type: .pointerButton, timeMicroseconds: 0, code: 0x111, state: 0))
            == .pointerButton(button: InputEvent.buttonRight, pressed: false, time: 0))
    }

    @Test("keys: Linux key codes, pressed and released")
    func keys() {
        #expect(InputEvent(RawInputEvent(type: .keyboardKey, timeMicroseconds: 7_000_001, code: 1, state: 1))
            == .key(code: InputEvent.keyEscape, pressed: true, time: 7.000001))
        #expect(InputEvent(RawInputEvent(type: .keyboardKey, timeMicroseconds: 7_100_000, code: 1, state: 0))?.description
            == "key code=1 pressed=0 time=7.100000")
    }

    @Test("types this module does not convert are skipped: gestures, tablet tools, switches, scrolling")
    func skipped() {
        for type: UInt32 in [0, 3, 403, 404, 405, 406, 600, 700, 800, 900, 12_345] {
            #expect(InputEvent(RawInputEvent(type: InputEventType(rawValue: type))) == nil, "type \(type)")
        }
        #expect(InputEvent(RawInputEvent(type: .deviceAdded)) == nil, "a device event without its device")
    }

    @Test("device removal keeps the device's description")
    func removal() {
        #expect(InputEvent(RawInputEvent(type: .deviceRemoved, device: screen)) == .deviceRemoved(screen))
        let tablet = InputDeviceInfo(name: "QEMU QEMU USB Tablet", sysname: "event1", hasPointer: true)
        #expect(InputEvent.deviceAdded(tablet).description
            == #"deviceAdded sysname=event1 name="QEMU QEMU USB Tablet" touch=0 pointer=1 keyboard=0 size=unknown"#)
    }

    @Test("names and times of events")
    func namesAndTimes() {
        #expect(InputEvent.touchFrame(time: 3).name == "touchFrame")
        #expect(InputEvent.touchFrame(time: 3).time == 3)
        #expect(InputEvent.deviceAdded(screen).time == nil)
        #expect(InputEvent.pointerButton(button: 272, pressed: true, time: 1).description
            == "pointerButton button=272 pressed=1 time=1.000000")
        #expect(InputEvent.pointerMotion(dx: -0.5, dy: 2, time: 1).description
            == "pointerMotion dx=-0.500 dy=2.000 time=1.000000")
    }

    @Test("fixed decimals round half away from zero and keep leading zeros")
    func fixedDecimals() {
        #expect(fixed(0.24992, 4) == "0.2499")
        #expect(fixed(0.00005, 4) == "0.0001")
        #expect(fixed(1.0005, 3) == "1.001")
        #expect(fixed(-0.0004, 3) == "0.000")
        #expect(fixed(-2.5, 0) == "-3")
        #expect(fixed(320, 1) == "320.0")
        #expect(fixed(16.023176, 6) == "16.023176")
    }
}
