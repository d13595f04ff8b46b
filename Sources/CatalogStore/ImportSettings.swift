// How imports are checked and when the player switches: config `import.*`.
import Crypto

/// The import policy, from the appliance config's `import` object:
///
/// ```json
/// "import": { "requireSignature": false, "trustedKeys": ["RWQ…"], "allowDowngrade": false, "switch": "boundary" }
/// ```
public struct ImportSettings: Sendable, Equatable {
    /// When the player moves to a newly imported catalog (`import.switch`).
    public enum SwitchMode: String, Sendable, Equatable, CaseIterable {
        /// At the end of the item on screen (default).
        case boundary
        /// At once, cutting the item on screen.
        case immediate
    }

    /// Refuse a stick without a valid `vitrine/manifest.json.minisig` (`import.requireSignature`, default false).
    /// A signature that is present is always verified when `trustedKeys` is not empty.
    public var requireSignature = false
    /// Up to two minisign public keys (two allow a rotation) (`import.trustedKeys`).
    public var trustedKeys: [MinisignPublicKey] = []
    /// Accept a `version` that is not greater than the last accepted one (`import.allowDowngrade`, default false).
    public var allowDowngrade = false
    /// `import.switch`, default `boundary`.
    public var switchMode = SwitchMode.boundary

    /// The most keys `trustedKeys` may hold.
    public static let maximumTrustedKeys = 2

    public init(requireSignature: Bool = false, trustedKeys: [MinisignPublicKey] = [], allowDowngrade: Bool = false,
                switchMode: SwitchMode = .boundary) {
        self.requireSignature = requireSignature; self.trustedKeys = trustedKeys
        self.allowDowngrade = allowDowngrade; self.switchMode = switchMode
    }
}
