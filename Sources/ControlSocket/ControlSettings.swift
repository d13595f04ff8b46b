// The config's `control` object: where the control socket goes and who may use it.

/// The control socket's settings (`control` in `/etc/vitrine/config.json`, docs/config.md).
///
/// ```json
/// "control": { "enabled": true, "path": "/run/vitrine/control.sock", "group": "vitrine-admin" }
/// ```
public struct ControlSettings: Sendable, Equatable {
    /// Where `vitrine ctl` looks when neither `--socket` nor `VITRINE_CONTROL_SOCKET` says.
    public static let defaultPath = "/run/vitrine/control.sock"
    /// The group of the socket file unless the config says otherwise.
    public static let defaultGroup = "vitrine-admin"

    /// Whether the player opens the socket (`control.enabled`, default true).
    public var enabled: Bool
    /// The socket file (`control.path`): absolute, at most 107 bytes.
    public var path: String
    /// The socket file's group by name (`control.group`), whose members may connect (mode 0660);
    /// nil keeps the player's own group. The default, `vitrine-admin`, is the image's group of
    /// people allowed to steer the player; where it does not exist (a development machine) the
    /// player keeps its own group and says so.
    public var group: String?

    public init(enabled: Bool = true, path: String = ControlSettings.defaultPath, group: String? = ControlSettings.defaultGroup) {
        self.enabled = enabled
        self.path = path
        self.group = group
    }

    /// The longest socket path, in bytes (`sizeof(sun_path) - 1` on Linux).
    public static var maximumPathBytes: Int { UnixSocket.pathCapacity }
}
