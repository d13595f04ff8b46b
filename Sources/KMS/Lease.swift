// Choosing the objects of a lease: one connector, a CRTC it can use, that CRTC's primary plane.
internal import CDRM
#if canImport(Glibc)
internal import Glibc
#endif

/// What one output leases from the card (`KMSDevice.lease(connector:crtc:plane:)`).
public struct LeaseObjects: Sendable, Equatable {
    /// The connector's name (`HDMI-A-1`) and object id.
    public var connectorName: String
    public var connectorID: UInt32
    /// The CRTC, chosen as `Scanout` chooses one (the one driving the connector now, else a free one
    /// its encoders allow), never one in `reserved`.
    public var crtcID: UInt32
    /// The CRTC's primary plane; nil without universal planes.
    public var planeID: UInt32?
}

extension KMSDevice {
    /// The objects to lease for the connector named `name` (`Connector.named`: `HDMI-A-1`, `HDMI1`,
    /// `hdmi-a-1`), whether or not a sink is connected to it now: a lease of an unplugged connector
    /// is what lets its output wait for the screen.
    ///
    /// - Parameter reserved: CRTCs leased to the process's other outputs.
    /// - Throws: `DRMError` `ENOENT` for an unknown connector, `ENOSPC` when every CRTC it can use is
    ///   reserved, and the errors of `drmModeGetResources`, `drmModeGetEncoder`, `drmModeGetPlane`.
    /// The corresponding C functions are `drmModeGetConnectorCurrent`, `drmModeGetEncoder` and
    /// `drmModeGetPlaneResources`.
    public func leaseObjects(connector name: String, reserved: Set<UInt32>) throws(DRMError) -> LeaseObjects {
        let connectors = try connectors(probe: false)
        guard let connector = Connector.named(name, in: connectors) else {
            let have = connectors.map(\.name).joined(separator: ", ")
            throw DRMError(operation: "find connector \(name)", errno: ENOENT, detail: "no such connector (have: \(have.isEmpty ? "none" : have))")
        }
        let crtcIDs = try resources().crtcs
        let (crtcID, crtcIndex) = try Scanout.chooseCRTC(for: connector, among: crtcIDs, others: connectors, reserved: reserved) {
            id throws(DRMError) in try encoder(id)
        }
        var planeID: UInt32?
        if capabilities.universalPlanes {
            planeID = try Scanout.choosePrimaryPlane(crtcID: crtcID, crtcIndex: crtcIndex, planes: planes())?.id
        }
        return LeaseObjects(connectorName: connector.name, connectorID: connector.id, crtcID: crtcID, planeID: planeID)
    }
}
