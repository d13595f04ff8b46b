// minisign public keys and signatures (https://jedisct1.github.io/minisign/, "Signature format"),
// verified with libsodium's Ed25519 and BLAKE2b.

/// Why a minisign key or signature was rejected.
public enum MinisignError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The public key text is not a minisign public key; the reason says what is wrong.
    case malformedPublicKey(String)
    /// The `.minisig` text does not follow the four-line format; the reason says what is wrong.
    case malformedSignature(String)
    /// The signature's algorithm is neither `Ed` (legacy) nor `ED` (prehashed with BLAKE2b-512).
    case unsupportedAlgorithm(String)
    /// The signature was made with a key whose ID is not among the trusted ones.
    case untrustedKey(keyID: String, trusted: [String])
    /// The signature does not match the signed bytes (they were changed, or it was made for another file).
    case signatureMismatch(keyID: String)
    /// The global signature over the signature and the trusted comment is wrong: the trusted comment
    /// was edited after signing.
    case trustedCommentMismatch(keyID: String)

    public var description: String {
        switch self {
        case let .malformedPublicKey(reason): return "not a minisign public key: \(reason)"
        case let .malformedSignature(reason): return "not a minisign signature: \(reason)"
        case let .unsupportedAlgorithm(name): return "unsupported signature algorithm \"\(name)\" (expected Ed or ED)"
        case let .untrustedKey(keyID, trusted):
            return "signed with key \(keyID), which is not trusted"
                + (trusted.isEmpty ? " (no trusted keys are configured)" : " (trusted: \(trusted.joined(separator: ", ")))")
        case let .signatureMismatch(keyID): return "signature by key \(keyID) does not match the file"
        case let .trustedCommentMismatch(keyID): return "trusted comment does not match its signature (key \(keyID))"
        }
    }
}

/// A minisign Ed25519 public key: the base64 line of a `.pub` file, which decodes to 42 bytes:
/// the algorithm `Ed` (2 bytes), the key ID (8 bytes, little-endian) and the Ed25519 key (32 bytes).
public struct MinisignPublicKey: Sendable, Hashable, CustomStringConvertible {
    /// The key ID as minisign prints it: uppercase hex without leading zeros (16 digits, 15 when
    /// the top nibble is 0: `E969CC1E0B42673`).
    public let keyID: String
    /// The 8 key-ID bytes as stored.
    public let keyIDBytes: [UInt8]
    /// The 32-byte Ed25519 public key.
    public let keyBytes: [UInt8]

    /// Parses the base64 line (`RWQ…`, 56 characters), or a whole `.pub` file
    /// (`untrusted comment: …` then the base64 line).
    /// - Throws: `MinisignError.malformedPublicKey` with the reason.
    public init(_ text: String) throws(MinisignError) {
        let lines = text.split(whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" })
            .map { $0.trimmingSpaces() }.filter { !$0.isEmpty }
        let line: String
        if lines.count == 2, lines[0].hasPrefix("untrusted comment:") {
            line = lines[1]
        } else if lines.count == 1 {
            line = lines[0]
        } else {
            throw .malformedPublicKey("expected one base64 line (or a .pub file)")
        }
        guard let bytes = Base64.decode(line) else { throw .malformedPublicKey("invalid base64") }
        guard bytes.count == 42 else { throw .malformedPublicKey("decodes to \(bytes.count) bytes, expected 42") }
        guard bytes[0] == UInt8(ascii: "E"), bytes[1] == UInt8(ascii: "d") else {
            throw .malformedPublicKey("algorithm is not Ed25519 (\"Ed\")")
        }
        keyIDBytes = Array(bytes[2..<10])
        keyBytes = Array(bytes[10..<42])
        keyID = Minisign.keyIDText(keyIDBytes)
    }

    public var description: String { "minisign key \(keyID)" }
}

/// A detached minisign signature (a `.minisig` file), parsed:
///
/// ```
/// untrusted comment: <text>
/// base64(<algorithm "Ed" or "ED"><key ID, 8 bytes><Ed25519 signature, 64 bytes>)
/// trusted comment: <text>
/// base64(<Ed25519 signature of (signature ‖ trusted comment)>)
/// ```
/// `Ed` signs the file itself; `ED` (minisign's default since 0.10) signs its BLAKE2b-512 hash.
public struct MinisignSignature: Sendable, Equatable {
    public enum Algorithm: String, Sendable, Equatable {
        /// `Ed`: Ed25519 over the file's bytes (minisign -l).
        case legacy = "Ed"
        /// `ED`: Ed25519 over the file's BLAKE2b-512 hash.
        case prehashed = "ED"
    }

    public let algorithm: Algorithm
    /// The signing key's ID, as minisign prints it.
    public let keyID: String
    public let keyIDBytes: [UInt8]
    /// The 64-byte Ed25519 signature of the file (or of its hash).
    public let signature: [UInt8]
    /// The text after `untrusted comment: ` (not covered by any signature).
    public let untrustedComment: String
    /// The text after `trusted comment: `, covered by `globalSignature`.
    public let trustedComment: String
    /// The 64-byte Ed25519 signature of `signature ‖ trustedComment`.
    public let globalSignature: [UInt8]

    /// Parses the four lines of a `.minisig` file (LF or CRLF line ends; a fifth, empty line is allowed).
    /// - Throws: `MinisignError.malformedSignature` or `.unsupportedAlgorithm`.
    public init(_ bytes: [UInt8]) throws(MinisignError) {
        guard bytes.count <= 64 * 1024 else { throw .malformedSignature("larger than 64 KiB") }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw .malformedSignature("not UTF-8 text") }
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            line.hasSuffix("\r") ? String(line.dropLast()) : String(line)
        }
        while lines.last == "" { lines.removeLast() }
        guard lines.count == 4 else { throw .malformedSignature("expected 4 lines, found \(lines.count)") }
        let untrustedPrefix = "untrusted comment: ", trustedPrefix = "trusted comment: "
        guard lines[0].hasPrefix(untrustedPrefix) else { throw .malformedSignature("line 1 must start with \"\(untrustedPrefix)\"") }
        guard lines[2].hasPrefix(trustedPrefix) else { throw .malformedSignature("line 3 must start with \"\(trustedPrefix)\"") }
        guard let signatureBlock = Base64.decode(lines[1]) else { throw .malformedSignature("line 2 is not base64") }
        guard signatureBlock.count == 74 else {
            throw .malformedSignature("line 2 decodes to \(signatureBlock.count) bytes, expected 74")
        }
        let algorithmName = String(decoding: signatureBlock[0..<2], as: UTF8.self)
        guard let algorithm = Algorithm(rawValue: algorithmName) else { throw .unsupportedAlgorithm(algorithmName) }
        guard let global = Base64.decode(lines[3]), global.count == 64 else {
            throw .malformedSignature("line 4 is not a base64 64-byte signature")
        }
        self.algorithm = algorithm
        keyIDBytes = Array(signatureBlock[2..<10])
        keyID = Minisign.keyIDText(keyIDBytes)
        signature = Array(signatureBlock[10..<74])
        untrustedComment = String(lines[0].dropFirst(untrustedPrefix.count))
        trustedComment = String(lines[2].dropFirst(trustedPrefix.count))
        globalSignature = global
    }

    /// Checks that this signature is `key`'s signature of `message`, and that the trusted comment is
    /// intact, as `minisign -V` does.
    /// - Throws: `MinisignError.untrustedKey` when the key IDs differ, `.signatureMismatch`,
    ///   `.trustedCommentMismatch`.
    public func verify(_ message: [UInt8], with key: MinisignPublicKey) throws(MinisignError) {
        guard key.keyIDBytes == keyIDBytes else { throw .untrustedKey(keyID: keyID, trusted: [key.keyID]) }
        let signed = algorithm == .prehashed ? BLAKE2b.hash512(message) : message
        guard Ed25519.isValid(signature: signature, of: signed, publicKey: key.keyBytes) else {
            throw .signatureMismatch(keyID: keyID)
        }
        guard Ed25519.isValid(signature: globalSignature, of: signature + Array(trustedComment.utf8),
                              publicKey: key.keyBytes) else {
            throw .trustedCommentMismatch(keyID: keyID)
        }
    }

    /// Verifies `message` with whichever of `trustedKeys` has this signature's key ID.
    /// - Returns: the key that verified it.
    /// - Throws: `MinisignError.untrustedKey` when no trusted key has the ID, else as `verify(_:with:)`.
    @discardableResult
    public func verify(_ message: [UInt8], trustedKeys: [MinisignPublicKey]) throws(MinisignError) -> MinisignPublicKey {
        guard let key = trustedKeys.first(where: { $0.keyIDBytes == keyIDBytes }) else {
            throw .untrustedKey(keyID: keyID, trusted: trustedKeys.map(\.keyID))
        }
        try verify(message, with: key)
        return key
    }
}

enum Minisign {
    /// minisign prints the 8 key-ID bytes as one little-endian 64-bit number in uppercase hex,
    /// without leading zeros: `printf("%" PRIX64, le64_load(keynum))` (minisign.c), so an ID
    /// whose top nibble is 0 has 15 digits.
    static func keyIDText(_ bytes: [UInt8]) -> String {
        let value = bytes.reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return String(value, radix: 16, uppercase: true)
    }
}

/// Strict RFC 4648 base64 (standard alphabet, `=` padding required, no whitespace inside).
enum Base64 {
    private static let values: [Int8] = {
        var table = [Int8](repeating: -1, count: 256)
        for (i, c) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8.enumerated() {
            table[Int(c)] = Int8(i)
        }
        return table
    }()

    static func decode(_ text: String) -> [UInt8]? {
        let chars = Array(text.utf8)
        guard !chars.isEmpty, chars.count % 4 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(chars.count / 4 * 3)
        for start in stride(from: 0, to: chars.count, by: 4) {
            let quad = chars[start..<start + 4]
            let isLast = start + 4 == chars.count
            var v: [UInt32] = []
            var padding = 0
            for (j, c) in quad.enumerated() {
                if c == UInt8(ascii: "=") {
                    guard isLast, j >= 2 else { return nil }
                    padding += 1
                    v.append(0)
                } else {
                    guard padding == 0, values[Int(c)] >= 0 else { return nil }
                    v.append(UInt32(values[Int(c)]))
                }
            }
            let n = v[0] << 18 | v[1] << 12 | v[2] << 6 | v[3]
            out.append(UInt8(n >> 16 & 0xFF))
            if padding < 2 { out.append(UInt8(n >> 8 & 0xFF)) }
            if padding < 1 { out.append(UInt8(n & 0xFF)) }
            // Non-canonical encodings (bits set in the padding) are rejected.
            if padding == 1, n & 0xFF != 0 { return nil }
            if padding == 2, n & 0xFFFF != 0 { return nil }
        }
        return out
    }
}

extension Substring {
    func trimmingSpaces() -> String {
        var s = self
        while let f = s.first, f == " " || f == "\t" { s.removeFirst() }
        while let l = s.last, l == " " || l == "\t" { s.removeLast() }
        return String(s)
    }
}
