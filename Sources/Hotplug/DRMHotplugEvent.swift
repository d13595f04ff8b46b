// One DRM hot-plug uevent, parsed from its properties: no C here, so that the parsing is tested
// with dictionaries.

/// A DRM hot-plug uevent: the kernel's `change` uevent with `HOTPLUG=1` on a card's `drm_minor`
/// device, sent after a connector's state, EDID or link status changed (`drm_kms_helper_hotplug_event`,
/// `drm_sysfs_hotplug_event` and `drm_sysfs_connector_hotplug_event` in drivers/gpu/drm/drm_sysfs.c).
///
/// Example, as `udevadm monitor --udev --property --subsystem-match=drm` shows it:
/// `ACTION=change`, `DEVPATH=/devices/pci0000:00/0000:00:02.0/drm/card0`, `SUBSYSTEM=drm`,
/// `HOTPLUG=1`, `CONNECTOR=95`, `PROPERTY=96`, `DEVNAME=/dev/dri/card0`, `DEVTYPE=drm_minor`,
/// `SEQNUM=4321`.
public struct DRMHotplugEvent: Sendable, Equatable, CustomStringConvertible {
    /// The card's device node, e.g. `/dev/dri/card0` (`DEVNAME`, made absolute: the kernel sends
    /// `dri/card0`, udev `/dev/dri/card0`); nil when the uevent names none.
    public var devnode: String?
    /// The kernel's name of the device, e.g. `card0`: the last component of `DEVPATH` (else of `DEVNAME`).
    public var sysname: String
    /// The connector's kernel object id (`CONNECTOR=`), when the kernel says which connector
    /// changed (Linux 5.x and later for some drivers, `drm_sysfs_connector_hotplug_event` since
    /// 5.18); nil for a card-wide event, after which every connector must be read again.
    public var connectorID: UInt32?
    /// The id of the connector property that changed (`PROPERTY=`, e.g. `Content Protection`,
    /// `link-status`), when the kernel says; nil otherwise.
    public var propertyID: UInt32?
    /// The uevent's sequence number (`SEQNUM`): increases by one for every uevent the kernel sends,
    /// so that a gap shows events were missed. 0 when absent.
    public var sequenceNumber: UInt64

    public init(devnode: String?, sysname: String, connectorID: UInt32? = nil, propertyID: UInt32? = nil,
                sequenceNumber: UInt64) {
        self.devnode = devnode
        self.sysname = sysname
        self.connectorID = connectorID
        self.propertyID = propertyID
        self.sequenceNumber = sequenceNumber
    }

    /// Reads a uevent's properties (`udev_device_get_properties_list_entry`, or the `KEY=value`
    /// lines of a kernel uevent).
    ///
    /// A synthetic uevent written to the card's `uevent` file (`echo "change UUID HOTPLUG=1" >
    /// /sys/class/drm/card0/uevent`) carries its arguments as `SYNTH_ARG_KEY=value` (the kernel's
    /// Documentation/ABI/testing/sysfs-uevent): `SYNTH_ARG_HOTPLUG=1` counts as `HOTPLUG=1`, so a
    /// test (the VM's hot-plug check) can stand in for a hot-plug interrupt.
    ///
    /// - Returns: the event when `ACTION` is `change` and `HOTPLUG` is `1`; nil for any other
    ///   uevent (an `add` or `remove` of the card, a `change` without `HOTPLUG`, e.g. a lease),
    ///   or when neither `DEVPATH` nor `DEVNAME` names the device. A `CONNECTOR`, `PROPERTY` or
    ///   `SEQNUM` that is not a decimal number is taken as absent.
    public init?(properties: [String: String]) {
        guard properties["ACTION"] == "change", properties["HOTPLUG"] == "1" || properties["SYNTH_ARG_HOTPLUG"] == "1"
        else { return nil }
        let devnode = properties["DEVNAME"].flatMap { $0.isEmpty ? nil : ($0.hasPrefix("/") ? $0 : "/dev/" + $0) }
        let path = properties["DEVPATH"] ?? devnode ?? ""
        guard let last = path.split(separator: "/").last else { return nil }
        self.init(devnode: devnode, sysname: String(last),
                  connectorID: properties["CONNECTOR"].flatMap { UInt32($0) },
                  propertyID: properties["PROPERTY"].flatMap { UInt32($0) },
                  sequenceNumber: properties["SEQNUM"].flatMap { UInt64($0) } ?? 0)
    }

    /// `card0 (/dev/dri/card0) hot-plug #4321, connector 95, property 96`.
    public var description: String {
        var text = "\(sysname)"
        if let devnode { text += " (\(devnode))" }
        text += " hot-plug #\(sequenceNumber)"
        if let connectorID { text += ", connector \(connectorID)" }
        if let propertyID { text += ", property \(propertyID)" }
        return text
    }
}
