import Foundation
import Testing
@testable import Touch

/// The real libinput, on a machine that may have no input devices and no udev daemon (the build
/// machines have neither /dev/input nor /dev/uinput). Real devices are tested in the VM:
/// tools/vm/touch-test.
@Suite("InputContext on the host")
struct ContextTests {
    static let hasInputDevices = FileManager.default.fileExists(atPath: "/dev/input")

    @Test("the udev backend opens with no devices, and dispatch gives only device events")
    func udevWithoutDevices() throws {
        let context = try InputContext.udev()
        #expect(context.backend == .udev(seat: "seat0"))
        #expect(context.fileDescriptor >= 0)
        let events = try context.dispatch()
        #expect(events.allSatisfy { if case .deviceAdded = $0 { true } else { false } })
        #expect(context.devices.count == events.count)
        if !Self.hasInputDevices {
            #expect(events.isEmpty)
            #expect(context.devices.isEmpty)
        }
        #expect(try context.dispatch().isEmpty || Self.hasInputDevices)
    }

    @Test("a seat with no devices is not an error")
    func unknownSeat() throws {
        let context = try InputContext.udev(seat: "seat-vitrine-test")
        #expect(try context.dispatch().isEmpty)
    }

    @Test("the path backend with no nodes opens and has nothing to say")
    func emptyPath() throws {
        let context = try InputContext.path([])
        #expect(context.backend == .path)
        #expect(try context.dispatch().isEmpty)
        #expect(context.devices.isEmpty)
    }

    @Test("a node that does not exist throws from libinput_path_add_device with ENOENT")
    func missingNode() {
        var messages: [String] = []
        let error = #expect(throws: InputError.self) {
            try InputContext.path(["/dev/input/event-vitrine-missing"], log: { _, message in messages.append(message) })
        }
        #expect(error?.operation == "libinput_path_add_device")
        #expect(error?.code == ENOENT)
        #expect(error?.subject == "/dev/input/event-vitrine-missing")
        #expect(error?.description
            == "libinput_path_add_device(\"/dev/input/event-vitrine-missing\"): No such file or directory (ENOENT)")
        // libinput's own complaint reached the log handler instead of stderr.
        #expect(messages.contains { $0.contains("/dev/input/event-vitrine-missing") })
    }

    @Test("a node that is not an input device throws ENODEV (libinput waits ~2 s for udev first)",
          .timeLimit(.minutes(1)))
    func notAnInputDevice() throws {
        let context = try InputContext.path([], log: { _, _ in })
        let error = #expect(throws: InputError.self) { try context.addDevice(path: "/dev/null") }
        #expect(error?.operation == "libinput_path_add_device")
        #expect(error?.code == ENODEV)
        #expect(context.devices.isEmpty)
    }

    @Test("addDevice on a udev context is refused with EINVAL, without asking libinput")
    func addDeviceOnUdev() throws {
        let context = try InputContext.udev()
        let error = #expect(throws: InputError.self) { try context.addDevice(path: "/dev/null") }
        #expect(error?.operation == "libinput_path_add_device")
        #expect(error?.code == EINVAL)
    }

    @Test("calibration needs six finite values and a present device")
    func calibrationErrors() throws {
        let context = try InputContext.path([])
        let operation = "libinput_device_config_calibration_set_matrix"
        let short = #expect(throws: InputError.self) { try context.setCalibration([1, 0, 0, 0, 1], sysname: "event0") }
        #expect(short == InputError(operation: operation, code: EINVAL, subject: "event0"))
        let nan = #expect(throws: InputError.self) { try context.setCalibration([1, 0, .nan, 0, 1, 0], sysname: "event0") }
        #expect(nan?.code == EINVAL)
        let absent = #expect(throws: InputError.self) { try context.setCalibration([1, 0, 0, 0, 1, 0], sysname: "event0") }
        #expect(absent == InputError(operation: operation, code: ENODEV, subject: "event0"))
        let read = #expect(throws: InputError.self) { try context.calibration(sysname: "event0") }
        #expect(read?.code == ENODEV)
    }

    @Test("the descriptor polls: nothing readable on an idle context")
    func pollIdle() throws {
        let context = try InputContext.path([])
        var descriptor = pollfd(fd: context.fileDescriptor, events: Int16(POLLIN), revents: 0)
        #expect(poll(&descriptor, 1, 0) == 0)
    }
}

/// The C-call gateway, failed on purpose through the bindings' fault seam (debug builds only).
@Suite("Injected failures")
struct FailureInjectionTests {
    @Test("a failing libinput_dispatch throws InputError named after it")
    func dispatchFails() throws {
        let context = try InputContext.path([])
        let error = #expect(throws: InputError.self) {
            try FaultInjection.withPlan(FaultPlan { $0.function == "libinput_dispatch" ? .fail(.ioError) : nil }) {
                try context.dispatch()
            }
        }
        #expect(error == InputError(operation: "libinput_dispatch", code: EIO))
    }

    @Test("a failing seat assignment throws, and the half-made context is released")
    func assignSeatFails() {
        let error = #expect(throws: InputError.self) {
            try FaultInjection.withPlan(FaultPlan { $0.function == "libinput_udev_assign_seat" ? .fail(.noMemory) : nil }) {
                try InputContext.udev(seat: "seat0")
            }
        }
        #expect(error == InputError(operation: "libinput_udev_assign_seat", code: ENOMEM, subject: "seat0"))
    }

    @Test("failing udev_new throws before libinput is touched")
    func udevNewFails() {
        let error = #expect(throws: InputError.self) {
            try FaultInjection.withPlan(FaultPlan { $0.function == "udev_new" ? .fail(.noMemory) : nil }) {
                try InputContext.udev()
            }
        }
        #expect(error?.operation == "udev_new")
    }
}
