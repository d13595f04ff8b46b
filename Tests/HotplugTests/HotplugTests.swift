import Foundation
import Testing
import RunLoop
@testable import Hotplug

@Suite("DRM hot-plug uevents: parsing the properties")
struct HotplugEventParsingTests {
    /// A connector hot-plug as Linux 6.1 sends it through udevd (virtio-gpu, QEMU).
    static let connectorEvent = [
        "ACTION": "change", "DEVPATH": "/devices/pci0000:00/0000:00:02.0/virtio0/drm/card0",
        "SUBSYSTEM": "drm", "HOTPLUG": "1", "CONNECTOR": "35", "PROPERTY": "6",
        "DEVNAME": "/dev/dri/card0", "DEVTYPE": "drm_minor", "SEQNUM": "4321", "MAJOR": "226", "MINOR": "0",
        "USEC_INITIALIZED": "1700000",
    ]

    @Test("change with HOTPLUG=1: devnode, sysname, connector, property and sequence number")
    func connectorHotplug() throws {
        let event = try #require(DRMHotplugEvent(properties: Self.connectorEvent))
        #expect(event == DRMHotplugEvent(devnode: "/dev/dri/card0", sysname: "card0", connectorID: 35,
                                         propertyID: 6, sequenceNumber: 4321))
        #expect(event.description == "card0 (/dev/dri/card0) hot-plug #4321, connector 35, property 6")
    }

    @Test("a synthetic uevent (echo \"change UUID HOTPLUG=1\" > …/card0/uevent): its SYNTH_ARG_HOTPLUG=1 counts")
    func synthetic() throws {
        let event = try #require(DRMHotplugEvent(properties: [
            "ACTION": "change", "DEVPATH": "/devices/pci0000:00/0000:00:02.0/virtio0/drm/card0", "SUBSYSTEM": "drm",
            "SYNTH_UUID": "7a6f6c3e-0000-4000-8000-000000000015", "SYNTH_ARG_HOTPLUG": "1",
            "DEVNAME": "/dev/dri/card0", "DEVTYPE": "drm_minor", "SEQNUM": "5000",
        ]))
        #expect(event == DRMHotplugEvent(devnode: "/dev/dri/card0", sysname: "card0", sequenceNumber: 5000))
        // A synthetic change without the argument is not a hot-plug.
        #expect(DRMHotplugEvent(properties: ["ACTION": "change", "DEVNAME": "/dev/dri/card0", "SYNTH_UUID": "0"]) == nil)
        #expect(DRMHotplugEvent(properties: ["ACTION": "change", "DEVNAME": "/dev/dri/card0", "SYNTH_ARG_HOTPLUG": "0"]) == nil)
    }

    @Test("a card-wide hot-plug (no CONNECTOR, PROPERTY), the kernel's relative DEVNAME")
    func cardWide() throws {
        let event = try #require(DRMHotplugEvent(properties: [
            "ACTION": "change", "DEVPATH": "/devices/platform/gpu/drm/card1", "HOTPLUG": "1",
            "DEVNAME": "dri/card1", "SEQNUM": "7",
        ]))
        #expect(event == DRMHotplugEvent(devnode: "/dev/dri/card1", sysname: "card1", sequenceNumber: 7))
        #expect(event.description == "card1 (/dev/dri/card1) hot-plug #7")
    }

    @Test("no DEVPATH: the sysname from DEVNAME; no DEVNAME: no devnode; a bad number is absent")
    func partial() throws {
        let fromNode = try #require(DRMHotplugEvent(properties: ["ACTION": "change", "HOTPLUG": "1", "DEVNAME": "/dev/dri/card2"]))
        #expect(fromNode == DRMHotplugEvent(devnode: "/dev/dri/card2", sysname: "card2", sequenceNumber: 0))
        let noNode = try #require(DRMHotplugEvent(properties: [
            "ACTION": "change", "HOTPLUG": "1", "DEVPATH": "/devices/x/drm/card0", "CONNECTOR": "abc", "SEQNUM": "-1",
        ]))
        #expect(noNode == DRMHotplugEvent(devnode: nil, sysname: "card0", connectorID: nil, sequenceNumber: 0))
    }

    @Test("not a hot-plug: another action, HOTPLUG missing or not 1, no device named", arguments: [
        ["ACTION": "add", "HOTPLUG": "1", "DEVPATH": "/devices/x/drm/card0"],
        ["ACTION": "remove", "DEVPATH": "/devices/x/drm/card0"],
        ["ACTION": "change", "DEVPATH": "/devices/x/drm/card0"],
        ["ACTION": "change", "HOTPLUG": "0", "DEVPATH": "/devices/x/drm/card0"],
        ["ACTION": "change", "LEASE": "1", "DEVPATH": "/devices/x/drm/card0"],
        ["ACTION": "change", "HOTPLUG": "1"],
        [:],
    ])
    func notHotplug(properties: [String: String]) {
        #expect(DRMHotplugEvent(properties: properties) == nil)
    }
}

@Suite("DRM hot-plug monitor: a real udev netlink monitor on the event loop")
struct HotplugMonitorTests {
    /// The sockets this process has open, as `/proc/self/fd` links name them (`socket:[inode]`).
    /// (Counting descriptors would race with the tests running alongside.)
    static func openSockets() throws -> Set<String> {
        let fds = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")
        return Set(fds.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0) }
            .filter { $0.hasPrefix("socket:") })
    }

    @Test("created, non-blocking, registered on an EventLoop; nothing queued: no event, no handler call")
    func createAndRegister() throws {
        let loop = try EventLoop()
        defer { loop.close() }
        let monitor = try DRMHotplugMonitor()
        #expect(monitor.fileDescriptor >= 0)
        #expect(fcntl(monitor.fileDescriptor, F_GETFL) & O_NONBLOCK != 0)
        #expect(fcntl(monitor.fileDescriptor, F_GETFD) & FD_CLOEXEC != 0)
        var received: [DRMHotplugEvent] = []
        let registration = try monitor.register(on: loop) { received.append($0) }
        #expect(registration.isActive)
        #expect(registration.fileDescriptor == monitor.fileDescriptor)
        try loop.runOnce(timeout: .milliseconds(20))
        #expect(received.isEmpty)
        #expect(monitor.receive().isEmpty)
        #expect(monitor.otherUevents == 0)
        registration.cancel()
        #expect(!registration.isActive)
    }

    @Test("each monitor owns its netlink socket: 50 created, registered and released leave none of theirs open")
    func releasesItsSocket() throws {
        let loop = try EventLoop()
        defer { loop.close() }
        var sockets: [String] = []
        for _ in 0..<50 {
            let monitor = try DRMHotplugMonitor()
            try monitor.register(on: loop) { _ in }
            var st = stat()
            #expect(fstat(monitor.fileDescriptor, &st) == 0)
            sockets.append("socket:[\(st.st_ino)]")
            #expect(try Self.openSockets().contains(sockets.last!))
        }
        #expect(Set(sockets).count == 50)
        #expect(try Self.openSockets().intersection(sockets) == [])
    }

    /// A synthetic uevent with HOTPLUG=1 written to the card's `uevent` file (Linux 4.13 and later:
    /// `ACTION UUID KEY=VALUE…`), as `udevadm trigger --action=change --subsystem-match=drm` writes
    /// `change` without the variable. Needs a DRM card, root and udevd: the VM covers it
    /// (tools/vm); this machine has no /dev/dri.
    @Test("a change uevent with HOTPLUG=1 on card0 reaches the handler",
          .enabled(if: FileManager.default.fileExists(atPath: "/dev/dri/card0"), "no /dev/dri/card0 (the VM test covers it)"),
          .enabled(if: FileManager.default.isWritableFile(atPath: "/sys/class/drm/card0/uevent"), "/sys/class/drm/card0/uevent is not writable (needs root)"),
          .enabled(if: FileManager.default.fileExists(atPath: "/run/udev/control"), "udevd is not running"))
    func injectedUevent() throws {
        let loop = try EventLoop()
        defer { loop.close() }
        let monitor = try DRMHotplugMonitor()
        var received: [DRMHotplugEvent] = []
        try monitor.register(on: loop) { received.append($0) }
        try "change 00000000-0000-0000-0000-000000000000 HOTPLUG=1\n"
            .write(toFile: "/sys/class/drm/card0/uevent", atomically: false, encoding: .utf8)
        for _ in 0..<50 where received.isEmpty { try loop.runOnce(timeout: .milliseconds(100)) }
        let event = try #require(received.first)
        #expect(event.sysname == "card0")
        #expect(event.devnode == "/dev/dri/card0")
        #expect(event.sequenceNumber > 0)
    }
}
