// Ed25519 signature verification through libsodium (crypto_sign_verify_detached).
internal import CSodium

/// Ed25519 (RFC 8032) detached-signature verification.
///
/// The corresponding C function is `crypto_sign_verify_detached` (libsodium, "Public-key signatures").
public enum Ed25519 {
    /// Length of a public key in bytes.
    public static let publicKeyLength = 32
    /// Length of a signature in bytes.
    public static let signatureLength = 64

    /// Whether `signature` (64 bytes) is a valid signature of `message` by `publicKey` (32 bytes).
    /// Wrong lengths are simply invalid.
    public static func isValid(signature: [UInt8], of message: [UInt8], publicKey: [UInt8]) -> Bool {
        guard signature.count == signatureLength, publicKey.count == publicKeyLength else { return false }
        Sodium.require()
        return message.withUnsafeBufferPointer { m in
            crypto_sign_verify_detached(signature, m.baseAddress, UInt64(m.count), publicKey) == 0
        }
    }
}
