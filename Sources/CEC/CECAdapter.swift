// HDMI-CEC through libcec's C API (cecc.h, libcec 6): the one module that touches libcec's
// pointers and fixed-size C strings.
internal import CCEC
#if canImport(Glibc)
internal import Glibc
#endif

/// A CEC adapter that libcec found: a Pulse-Eight USB adapter (`/dev/ttyACM0`), a Linux CEC
/// framework device (`/dev/cec0`) or a board's own CEC line.
public struct CECAdapterInfo: Sendable, Equatable {
    /// The com port to open, libcec's `strComName` (`/dev/ttyACM0`, `/dev/cec0`): what
    /// `CECAdapter(port:)` takes.
    public var port: String
    /// The device's path, libcec's `strComPath` (the USB device's sysfs path for a Pulse-Eight adapter).
    public var path: String
}

/// A CEC call that failed. libcec returns 1 or 0 without a reason (it logs the reason to its
/// callbacks, which this module does not install), so the error names the call and the port.
public enum CECError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `libcec_initialise` returned `NULL`.
    case initialiseFailed
    /// No port was given and `libcec_detect_adapters` found no adapter.
    case noAdapter
    /// `libcec_open` failed on this port (in use by another program, no permission, not a CEC
    /// adapter, or no answer within the timeout).
    case openFailed(String)
    /// A command was not acknowledged: the C function that failed (`libcec_standby_devices`).
    case commandFailed(String)

    public var description: String {
        switch self {
        case .initialiseFailed: "libcec_initialise failed"
        case .noAdapter: "no CEC adapter found"
        case .openFailed(let port): "cannot open the CEC adapter at \(port)"
        case .commandFailed(let call): "\(call) failed: the command was not acknowledged on the CEC bus"
        }
    }
}

/// HDMI-CEC through libcec: standby and power-on of the display (logical address 0, the TV).
///
/// Every call blocks: opening an adapter takes 1–3 s, a command up to about a second while libcec
/// waits for the bus's acknowledgement. Call from a thread that may wait, never from a run loop.
/// One instance is used from one thread at a time (it is not `Sendable`).
public final class CECAdapter {
    private let connection: UnsafeMutableRawPointer
    /// The com port that was opened (`/dev/ttyACM0`).
    public let port: String

    /// The adapters libcec finds, with their com ports and paths; empty when there are none, and
    /// when libcec cannot start or reports an error (-1). A quick scan (`bQuickScan`): libcec opens
    /// no connection to the adapters, so it takes milliseconds, and this may run while another
    /// instance holds an adapter open.
    /// The corresponding C function is `libcec_detect_adapters` (with `bQuickScan` set).
    public static func detect() -> [CECAdapterInfo] {
        var config = configuration(deviceName: "Vitrine")
        guard let connection = libcec_initialise(&config) else { return [] }
        defer { libcec_destroy(connection) }
        return detect(connection)
    }

    /// Opens the adapter at `port`, or the first one `detect()` finds, and registers on the CEC bus
    /// as a playback device named `deviceName` (at most 14 bytes of UTF-8 are kept: the CEC OSD
    /// name's limit). Opening does not wake the TV or take its input: libcec's `bActivateSource`
    /// is off and its wake list is empty, so a standby sent at night does not first switch the TV on.
    ///
    /// - Parameters:
    ///   - port: a com port as `CECAdapterInfo.port` gives it; nil takes the first adapter found.
    ///   - timeoutMilliseconds: how long `libcec_open` may wait for the adapter, in milliseconds.
    /// - Throws: `CECError.initialiseFailed` when `libcec_initialise` fails, `CECError.noAdapter`
    ///   when `port` is nil and none is found, `CECError.openFailed(port)` when `libcec_open` fails.
    /// The corresponding C functions are `libcec_initialise`, `libcec_detect_adapters` and `libcec_open`.
    public init(port: String? = nil, deviceName: String = "Vitrine", timeoutMilliseconds: UInt32 = 10_000) throws(CECError) {
        var config = Self.configuration(deviceName: deviceName)
        guard let connection = libcec_initialise(&config) else { throw .initialiseFailed }
        guard let chosen = port ?? Self.detect(connection).first?.port else {
            libcec_destroy(connection)
            throw .noAdapter
        }
        guard libcec_open(connection, chosen, timeoutMilliseconds) == 1 else {
            libcec_destroy(connection)
            throw .openFailed(chosen)
        }
        self.connection = connection
        self.port = chosen
    }

    /// Wakes the TV (logical address 0) with `<Image View On>`.
    /// - Throws: `CECError.commandFailed("libcec_power_on_devices")` when the TV does not acknowledge it.
    /// The corresponding C function is `libcec_power_on_devices(CECDEVICE_TV)`.
    public func powerOn() throws(CECError) {
        guard libcec_power_on_devices(connection, CECDEVICE_TV) == 1 else { throw .commandFailed("libcec_power_on_devices") }
    }

    /// Puts the TV (logical address 0) in standby with a directed `<Standby>`. Directed, not
    /// broadcast (address 15): a broadcast standby also switches off every other device on the bus
    /// (an AV receiver, another player), which a signage schedule must leave alone; and a directed
    /// message is acknowledged, so a TV that did not hear it is reported.
    /// - Throws: `CECError.commandFailed("libcec_standby_devices")` when the TV does not acknowledge it.
    /// The corresponding C function is `libcec_standby_devices(CECDEVICE_TV)`.
    public func standby() throws(CECError) {
        guard libcec_standby_devices(connection, CECDEVICE_TV) == 1 else { throw .commandFailed("libcec_standby_devices") }
    }

    /// Closes the adapter and frees libcec's instance (`libcec_close`, then `libcec_destroy`).
    deinit {
        libcec_close(connection)
        libcec_destroy(connection)
    }

    /// libcec's defaults (`libcec_clear_configuration`) for a playback device named `deviceName`,
    /// that neither takes the TV's input nor wakes it when opened, with no callbacks.
    private static func configuration(deviceName: String) -> libcec_configuration {
        var config = libcec_configuration()
        libcec_clear_configuration(&config)
        config.clientVersion = UInt32(LIBCEC_VERSION_CURRENT.rawValue)
        withUnsafeMutableBytes(of: &config.strDeviceName) { name in
            _ = name.initializeMemory(as: UInt8.self, repeating: 0)
            // The OSD name is at most 14 bytes (cec_osd_name); keep whole UTF-8 characters.
            var bytes: [UInt8] = []
            for c in deviceName.unicodeScalars {
                let utf8 = Array(String(c).utf8)
                if bytes.count + utf8.count > min(14, name.count - 1) { break }
                bytes += utf8
            }
            name.copyBytes(from: bytes)
        }
        withUnsafeMutableBytes(of: &config.deviceTypes.types) { types in
            let list = types.bindMemory(to: cec_device_type.self)
            list.update(repeating: CEC_DEVICE_TYPE_RESERVED)
            list[0] = CEC_DEVICE_TYPE_PLAYBACK_DEVICE
        }
        config.bActivateSource = 0
        config.wakeDevices.primary = CECDEVICE_UNREGISTERED
        withUnsafeMutableBytes(of: &config.wakeDevices.addresses) { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) }
        config.callbacks = nil
        config.callbackParam = nil
        return config
    }

    /// Up to 16 adapters through an open libcec instance; empty when libcec reports an error.
    private static func detect(_ connection: UnsafeMutableRawPointer) -> [CECAdapterInfo] {
        var found = [cec_adapter_descriptor](repeating: cec_adapter_descriptor(), count: 16)
        let count = found.withUnsafeMutableBufferPointer { libcec_detect_adapters(connection, $0.baseAddress, UInt8($0.count), nil, 1) }
        guard count > 0 else { return [] }
        return found.prefix(Int(count)).map { d in
            CECAdapterInfo(port: string(d.strComName), path: string(d.strComPath))
        }
    }

    /// A NUL-terminated C array held in a tuple, as UTF-8 (invalid bytes become U+FFFD).
    private static func string<T>(_ tuple: T) -> String {
        withUnsafeBytes(of: tuple) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }
}
