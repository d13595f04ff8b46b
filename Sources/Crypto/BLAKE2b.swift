// BLAKE2b-512 through libsodium's generic hash (crypto_generichash).
internal import CSodium

/// BLAKE2b (RFC 7693) with a 64-byte output and no key: what minisign's prehashed ("ED")
/// signatures sign instead of the file itself.
///
/// The corresponding C function is `crypto_generichash` (libsodium, "Generic hashing").
public enum BLAKE2b {
    /// The 64-byte BLAKE2b-512 digest of `bytes`.
    public static func hash512(_ bytes: [UInt8]) -> [UInt8] {
        Sodium.require()
        var out = [UInt8](repeating: 0, count: Int(crypto_generichash_BYTES_MAX))
        bytes.withUnsafeBufferPointer { input in
            _ = crypto_generichash(&out, out.count, input.baseAddress, UInt64(input.count), nil, 0)
        }
        return out
    }
}
