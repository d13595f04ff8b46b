// An open DRM card: capabilities and the objects it has (connectors, CRTCs, planes).
internal import CDRM
#if canImport(Glibc)
internal import Glibc
#endif

/// An open `/dev/dri/card*` device. Owns the file descriptor and closes it in `deinit`.
///
/// Immutable after `init`, so it may be shared between threads; the kernel serialises the ioctls.
public final class KMSDevice: Sendable {
    /// What the driver and this client can do, read once at open.
    public struct Capabilities: Sendable, Equatable {
        /// Atomic modesetting is enabled for this client (`DRM_CLIENT_CAP_ATOMIC` was accepted).
        public var atomic: Bool
        /// Primary and cursor planes are listed too (`DRM_CLIENT_CAP_UNIVERSAL_PLANES` was accepted).
        public var universalPlanes: Bool
        /// The driver can create dumb (CPU-mapped) buffers (`DRM_CAP_DUMB_BUFFER`).
        public var dumbBuffer: Bool
        /// Page-flip timestamps are `CLOCK_MONOTONIC` (`DRM_CAP_TIMESTAMP_MONOTONIC`).
        public var timestampMonotonic: Bool
        /// The colour depth in bits the driver prefers for dumb buffers (`DRM_CAP_DUMB_PREFERRED_DEPTH`), 0 if unknown.
        public var preferredDepth: Int

        public init(atomic: Bool, universalPlanes: Bool, dumbBuffer: Bool, timestampMonotonic: Bool, preferredDepth: Int) {
            self.atomic = atomic
            self.universalPlanes = universalPlanes
            self.dumbBuffer = dumbBuffer
            self.timestampMonotonic = timestampMonotonic
            self.preferredDepth = preferredDepth
        }
    }

    /// The path the device was opened from, e.g. `/dev/dri/card0`.
    public let path: String
    /// The kernel driver's name, e.g. `"virtio_gpu"`, `"i915"`, `"vc4"`, `"bochs-drm"`.
    public let driverName: String
    /// The driver's description and version, e.g. `"virtio GPU 0.1.0"`.
    public let driverDescription: String
    /// What the driver and this client can do.
    public let capabilities: Capabilities
    /// The open file descriptor; readable when DRM events (page flips) are waiting.
    public let fileDescriptor: Int32

    var fd: Int32 { fileDescriptor }

    /// The DRM card nodes on this machine, `/dev/dri/card0`, `/dev/dri/card1`, ... in numeric order.
    /// Empty when there are none (no GPU driver loaded, or a container without `/dev/dri`).
    public static func cardPaths() -> [String] {
        cardPaths(in: "/dev/dri")
    }

    static func cardPaths(in directory: String) -> [String] {
        guard let dir = opendir(directory) else { return [] }
        defer { closedir(dir) }
        var numbered: [(Int, String)] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
                String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard name.hasPrefix("card"), let number = Int(name.dropFirst(4)) else { continue }
            numbered.append((number, "\(directory)/\(name)"))
        }
        return numbered.sorted { $0.0 < $1.0 }.map(\.1)
    }

    /// Opens a DRM card and turns on universal planes and atomic modesetting where the driver allows.
    ///
    /// - Parameter path: a card node such as `/dev/dri/card0`.
    /// - Throws: `DRMError` from `open` (`ENOENT`, `EACCES`: the user is not in the `video` group)
    ///   or from `drmGetVersion` (the file is not a DRM device).
    /// The corresponding C functions are `open`, `drmSetClientCap`, `drmGetCap` and `drmGetVersion`.
    public convenience init(path: String) throws(DRMError) {
        let fd = try DRMCall.check("open \(path)") { open(path, O_RDWR | O_CLOEXEC) }
        try self.init(fileDescriptor: fd, path: path, lessor: nil)
    }

    /// The device this one is a lease of (`lease(connector:crtc:plane:)`), kept alive with it: a
    /// lease ends when its lessor's file closes.
    public let lessor: KMSDevice?

    /// Takes ownership of `fd` (closed on error and in `deinit`).
    private init(fileDescriptor fd: Int32, path: String, lessor: KMSDevice?) throws(DRMError) {
        self.lessor = lessor
        let version: UnsafeMutablePointer<drmVersion>
        do {
            version = try DRMCall.pointer("drmGetVersion \(path)") { drmGetVersion(fd) }
        } catch {
            close(fd)
            throw error
        }
        defer { drmFreeVersion(version) }

        func string(_ pointer: UnsafeMutablePointer<CChar>?, _ length: Int32) -> String {
            guard let pointer, length > 0 else { return "" }
            return String(decoding: UnsafeRawBufferPointer(start: pointer, count: Int(length)), as: UTF8.self)
        }
        func setClientCap(_ cap: Int32, _ name: String) -> Bool {
            (try? DRMCall.check("drmSetClientCap(\(name))") { drmSetClientCap(fd, UInt64(cap), 1) }) != nil
        }
        func getCap(_ cap: Int32, _ name: String) -> UInt64 {
            var value: UInt64 = 0
            guard (try? DRMCall.check("drmGetCap(\(name))") { drmGetCap(fd, UInt64(cap), &value) }) != nil else { return 0 }
            return value
        }

        self.path = path
        self.fileDescriptor = fd
        self.driverName = string(version.pointee.name, version.pointee.name_len)
        let description = string(version.pointee.desc, version.pointee.desc_len)
        let number = "\(version.pointee.version_major).\(version.pointee.version_minor).\(version.pointee.version_patchlevel)"
        self.driverDescription = description.isEmpty ? number : "\(description) \(number)"

        // Universal planes first: atomic implies it, and some kernels want it set explicitly.
        let universal = setClientCap(DRM_CLIENT_CAP_UNIVERSAL_PLANES, "UNIVERSAL_PLANES")
        let atomic = universal && setClientCap(DRM_CLIENT_CAP_ATOMIC, "ATOMIC")
        self.capabilities = Capabilities(
            atomic: atomic,
            universalPlanes: universal,
            dumbBuffer: getCap(DRM_CAP_DUMB_BUFFER, "DUMB_BUFFER") != 0,
            timestampMonotonic: getCap(DRM_CAP_TIMESTAMP_MONOTONIC, "TIMESTAMP_MONOTONIC") != 0,
            preferredDepth: Int(getCap(DRM_CAP_DUMB_PREFERRED_DEPTH, "DUMB_PREFERRED_DEPTH")))
    }

    deinit {
        close(fileDescriptor)
    }

    /// Leases one connector, its CRTC and the CRTC's primary plane to a new DRM file: a device of
    /// its own that sees only those objects, sets their mode and gets their page-flip events, while
    /// this one (the lessor, which must be DRM master) keeps the rest. Two outputs of one process
    /// each drive a lease, so each has its own event queue and its own modesets, and one failing
    /// leaves the other's objects alone. The lease ends when the returned device is released (its
    /// file closes); the lessor's file must stay open as long (the lessee holds it).
    ///
    /// - Parameters: the objects' ids (`Connector.id`, a CRTC id of `resources().crtcs`, a primary
    ///   `Plane.id`; no plane on a driver without universal planes: the kernel adds the CRTC's own).
    /// - Throws: `DRMError` from `drmModeCreateLease`: `EACCES` when this file is not master,
    ///   `EBUSY` when an object is leased already, `EINVAL` for an object of another kind.
    /// The corresponding C function is `drmModeCreateLease` (the kernel's drm_lease.c).
    public func lease(connector: UInt32, crtc: UInt32, plane: UInt32?) throws(DRMError) -> KMSDevice {
        var objects = [connector, crtc]
        if let plane { objects.append(plane) }
        var lesseeID: UInt32 = 0
        let fd = fd
        let leaseFD = try DRMCall.check("drmModeCreateLease(connector \(connector), CRTC \(crtc)\(plane.map { ", plane \($0)" } ?? ""))") {
            objects.withUnsafeBufferPointer { drmModeCreateLease(fd, $0.baseAddress, Int32($0.count), O_CLOEXEC, &lesseeID) }
        }
        return try KMSDevice(fileDescriptor: leaseFD, path: path, lessor: self)
    }

    /// Whether this device is a lease (`lease(connector:crtc:plane:)`) rather than the card itself.
    public var isLease: Bool { lessor != nil }

    /// Whether this open file is the DRM master, the client allowed to set modes and flip pages.
    /// The first process to open a card becomes master; a running compositor holds it.
    /// The corresponding C function is `drmIsMaster`.
    public var isMaster: Bool { drmIsMaster(fd) != 0 }

    /// Every connector with its state and modes. Probes the sinks (reads EDID), which can take
    /// tens of milliseconds per connector.
    ///
    /// - Throws: `DRMError` from `drmModeGetResources` (`EOPNOTSUPP` on a render-only GPU) or
    ///   `drmModeGetConnector`.
    /// The corresponding C functions are `drmModeGetResources` and `drmModeGetConnector`.
    public func connectors() throws(DRMError) -> [Connector] { try connectors(probe: true) }

    /// Every connector with its state and modes; with `probe: false` as the kernel last knew them,
    /// without probing the sinks (no EDID read: cheap enough to poll from a run loop). The kernel
    /// updates a connector's state on its hot-plug interrupt, and its modes when it is probed (a
    /// `probe: true` read, or a write to `/sys/class/drm/card*-*/status`).
    ///
    /// - Throws: `DRMError` from `drmModeGetResources` or `drmModeGetConnector` /
    ///   `drmModeGetConnectorCurrent`.
    /// The corresponding C functions are `drmModeGetConnector` and `drmModeGetConnectorCurrent`.
    public func connectors(probe: Bool) throws(DRMError) -> [Connector] {
        var result: [Connector] = []
        for id in try resources().connectors {
            let connector = try DRMCall.pointer(probe ? "drmModeGetConnector(\(id))" : "drmModeGetConnectorCurrent(\(id))") {
                probe ? drmModeGetConnector(fd, id) : drmModeGetConnectorCurrent(fd, id)
            }
            defer { drmModeFreeConnector(connector) }
            result.append(Connector(connector.pointee))
        }
        return result
    }

    /// Every CRTC, in the kernel's order (the order `possibleCRTCs` bits refer to).
    ///
    /// - Throws: `DRMError` from `drmModeGetResources` or `drmModeGetCrtc`.
    /// The corresponding C functions are `drmModeGetResources` and `drmModeGetCrtc`.
    public func crtcs() throws(DRMError) -> [CRTC] {
        var result: [CRTC] = []
        for (index, id) in try resources().crtcs.enumerated() {
            let crtc = try DRMCall.pointer("drmModeGetCrtc(\(id))") { drmModeGetCrtc(fd, id) }
            defer { drmModeFreeCrtc(crtc) }
            let mode = crtc.pointee.mode_valid != 0 ? Mode(timing: Mode.Timing(crtc.pointee.mode)) : nil
            result.append(CRTC(id: id, index: index, framebufferID: crtc.pointee.buffer_id, mode: mode,
                               x: Int(crtc.pointee.x), y: Int(crtc.pointee.y)))
        }
        return result
    }

    /// The number of CRTCs, i.e. how many displays the card can drive at once.
    ///
    /// - Throws: `DRMError` from `drmModeGetResources`.
    /// The corresponding C function is `drmModeGetResources`.
    public func crtcCount() throws(DRMError) -> Int {
        try resources().crtcs.count
    }

    /// Every plane with its type, formats and possible CRTCs. Primary and cursor planes are
    /// listed only when `capabilities.universalPlanes` is true.
    ///
    /// - Throws: `DRMError` from `drmModeGetPlaneResources`, `drmModeGetPlane`, or the property calls.
    /// The corresponding C functions are `drmModeGetPlaneResources`, `drmModeGetPlane` and
    /// `drmModeObjectGetProperties`.
    public func planes() throws(DRMError) -> [Plane] {
        let list = try DRMCall.pointer("drmModeGetPlaneResources") { drmModeGetPlaneResources(fd) }
        defer { drmModeFreePlaneResources(list) }
        let ids = Array(UnsafeBufferPointer(start: list.pointee.planes, count: Int(list.pointee.count_planes)))
        var result: [Plane] = []
        for id in ids {
            let plane = try DRMCall.pointer("drmModeGetPlane(\(id))") { drmModeGetPlane(fd, id) }
            defer { drmModeFreePlane(plane) }
            let formats = UnsafeBufferPointer(start: plane.pointee.formats, count: Int(plane.pointee.count_formats))
                .map { FourCC(rawValue: $0) }
            let properties = try ObjectProperties(fd: fd, objectID: id, type: .plane)
            result.append(Plane(id: id, type: PlaneType(properties),
                                formats: formats, possibleCRTCs: plane.pointee.possible_crtcs,
                                crtcID: plane.pointee.crtc_id, framebufferID: plane.pointee.fb_id))
        }
        return result
    }

    // MARK: - Internal helpers

    /// The object ids of the card (`drmModeRes`), copied and freed.
    struct Resources {
        var crtcs: [UInt32]
        var connectors: [UInt32]
        var encoders: [UInt32]
    }

    /// - Throws: `DRMError` from `drmModeGetResources`.
    func resources() throws(DRMError) -> Resources {
        let res = try DRMCall.pointer("drmModeGetResources") { drmModeGetResources(fd) }
        defer { drmModeFreeResources(res) }
        func ids(_ pointer: UnsafeMutablePointer<UInt32>?, _ count: Int32) -> [UInt32] {
            Array(UnsafeBufferPointer(start: pointer, count: pointer == nil ? 0 : Int(max(count, 0))))
        }
        return Resources(crtcs: ids(res.pointee.crtcs, res.pointee.count_crtcs),
                         connectors: ids(res.pointee.connectors, res.pointee.count_connectors),
                         encoders: ids(res.pointee.encoders, res.pointee.count_encoders))
    }

    /// An encoder's current CRTC (0 if none) and its `possible_crtcs` mask.
    ///
    /// - Throws: `DRMError` from `drmModeGetEncoder`.
    func encoder(_ id: UInt32) throws(DRMError) -> (crtcID: UInt32, possibleCRTCs: UInt32) {
        let encoder = try DRMCall.pointer("drmModeGetEncoder(\(id))") { drmModeGetEncoder(fd, id) }
        defer { drmModeFreeEncoder(encoder) }
        return (encoder.pointee.crtc_id, encoder.pointee.possible_crtcs)
    }

    /// Reads all properties of an object (see `ObjectProperties`).
    func properties(of objectID: UInt32, type: ObjectType) throws(DRMError) -> ObjectProperties {
        try ObjectProperties(fd: fd, objectID: objectID, type: type)
    }
}
