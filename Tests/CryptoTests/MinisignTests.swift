import Foundation
import Testing
import VitrineTestSupport
@testable import Crypto

/// Keys and signatures made by the real `minisign` CLI (Debian package `minisign`, installed by tools/setup).
private let minisign = "/usr/bin/minisign"

/// A throwaway key pair in a temporary folder, made with `minisign -G -W` (no password).
struct MinisignFixture {
    let folder: String
    var publicKeyFile: String { folder + "/key.pub" }
    var secretKeyFile: String { folder + "/key.key" }

    init() throws {
        folder = NSTemporaryDirectory() + "vitrine-minisign-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        _ = try run(minisign, ["-G", "-W", "-p", publicKeyFile, "-s", secretKeyFile])
    }

    /// The `.pub` file's text.
    var publicKeyText: String { (try? String(contentsOfFile: publicKeyFile, encoding: .utf8)) ?? "" }

    /// Signs `bytes` with `minisign -S` (prehashed, or `-l` legacy) and returns the `.minisig` bytes.
    func sign(_ bytes: [UInt8], legacy: Bool = false, trustedComment: String = "vitrine test") throws -> [UInt8] {
        let file = folder + "/message-\(UUID().uuidString)"
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        _ = try run(minisign, ["-S", "-s", secretKeyFile, "-m", file, "-t", trustedComment] + (legacy ? ["-l"] : []))
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: file + ".minisig")))
    }

    func remove() { try? FileManager.default.removeItem(atPath: folder) }
}

/// A key pair made once by `minisign -G -W` (no password; for tests only) whose key ID has a
/// leading zero nibble, 0x0E969CC1E0B42673: minisign prints it with 15 digits
/// (`printf("%" PRIX64, le64_load(keynum))`), as the comment line it wrote shows.
enum LeadingZeroKey {
    static let publicKey = """
        untrusted comment: minisign public key E969CC1E0B42673
        RWRzJrTgwZyWDmwvmajXSA00fMVh6cXs9cvUvoCCQAeJDbhb3OW7hiup

        """
    static let secretKey = """
        untrusted comment: minisign encrypted secret key
        RWQAAEIyAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAcya04MGclg7eM+zuf2j4Mb8QtueWYQXMxRomzysV5aptXOZdDnqjhGwvmajXSA00fMVh6cXs9cvUvoCCQAeJDbhb3OW7hiupAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=

        """
}

@Suite("minisign signatures", .enabled(if: FileManager.default.isExecutableFile(atPath: minisign),
                                       "minisign not installed: run tools/setup"))
struct MinisignTests {
    let message = Array("{\"schema\": \"vitrine.manifest/1\", \"version\": 7}\n".utf8)

    @Test("a .pub file and its base64 line parse to the key ID minisign prints", arguments: [false, true])
    func publicKey(wholeFile: Bool) throws {
        let fixture = try MinisignFixture()
        defer { fixture.remove() }
        let lines = fixture.publicKeyText.split(separator: "\n")
        let key = try MinisignPublicKey(wholeFile ? fixture.publicKeyText : String(lines[1]))
        #expect(lines[0] == "untrusted comment: minisign public key \(key.keyID)")
        #expect(key.keyBytes.count == 32)
    }

    @Test("a key ID with a leading zero nibble is printed as minisign prints it: E969CC1E0B42673, 15 digits")
    func leadingZeroKeyID() throws {
        let key = try MinisignPublicKey(LeadingZeroKey.publicKey)
        #expect(key.keyIDBytes == [0x73, 0x26, 0xB4, 0xE0, 0xC1, 0x9C, 0x96, 0x0E])
        #expect(key.keyID == "E969CC1E0B42673")
        #expect(LeadingZeroKey.publicKey.hasPrefix("untrusted comment: minisign public key \(key.keyID)\n"))
        // The CLI now: sign with the key, then verify against another key, and minisign names the
        // signature's key ID in its own words.
        let other = try MinisignFixture()
        defer { other.remove() }
        let secret = other.folder + "/zero.key", file = other.folder + "/message"
        try Data(LeadingZeroKey.secretKey.utf8).write(to: URL(fileURLWithPath: secret))
        try Data(message).write(to: URL(fileURLWithPath: file))
        _ = try run(minisign, ["-S", "-s", secret, "-m", file, "-t", "version 7"])
        let signature = try MinisignSignature([UInt8](try Data(contentsOf: URL(fileURLWithPath: file + ".minisig"))))
        #expect(signature.keyID == "E969CC1E0B42673")
        try signature.verify(message, with: key)
        let otherKey = String(other.publicKeyText.split(separator: "\n")[1])
        let mismatch = #expect(throws: SubprocessError.self) {
            try run(minisign, ["-V", "-P", otherKey, "-m", file, "-x", file + ".minisig"])
        }
        #expect(mismatch?.description.contains("Signature key id in \(file).minisig is \(signature.keyID)\n") == true)
        #expect(throws: MinisignError.untrustedKey(keyID: "E969CC1E0B42673", trusted: [try MinisignPublicKey(other.publicKeyText).keyID])) {
            try signature.verify(message, trustedKeys: [try MinisignPublicKey(other.publicKeyText)])
        }
    }

    @Test("prehashed (ED, the default) and legacy (Ed) signatures by minisign verify", arguments: [false, true])
    func verifies(legacy: Bool) throws {
        let fixture = try MinisignFixture()
        defer { fixture.remove() }
        let key = try MinisignPublicKey(fixture.publicKeyText)
        let signature = try MinisignSignature(try fixture.sign(message, legacy: legacy, trustedComment: "version 7"))
        #expect(signature.algorithm == (legacy ? .legacy : .prehashed))
        #expect(signature.keyID == key.keyID)
        #expect(signature.trustedComment == "version 7")
        try signature.verify(message, with: key)
        #expect(try signature.verify(message, trustedKeys: [key]) == key)
    }

    @Test("one changed byte of the message is a mismatch", arguments: [false, true])
    func tamperedMessage(legacy: Bool) throws {
        let fixture = try MinisignFixture()
        defer { fixture.remove() }
        let key = try MinisignPublicKey(fixture.publicKeyText)
        let signature = try MinisignSignature(try fixture.sign(message, legacy: legacy))
        var changed = message
        changed[20] ^= 0x01
        #expect(throws: MinisignError.signatureMismatch(keyID: key.keyID)) { try signature.verify(changed, with: key) }
    }

    @Test("an edited trusted comment fails the global signature")
    func tamperedTrustedComment() throws {
        let fixture = try MinisignFixture()
        defer { fixture.remove() }
        let key = try MinisignPublicKey(fixture.publicKeyText)
        let text = String(decoding: try fixture.sign(message, trustedComment: "version 7"), as: UTF8.self)
        let edited = try MinisignSignature(Array(text.replacingOccurrences(of: "trusted comment: version 7",
                                                                           with: "trusted comment: version 9").utf8))
        #expect(throws: MinisignError.trustedCommentMismatch(keyID: key.keyID)) { try edited.verify(message, with: key) }
    }

    @Test("a signature by another key is untrusted, and names both key IDs")
    func wrongKey() throws {
        let signer = try MinisignFixture(), other = try MinisignFixture()
        defer { signer.remove(); other.remove() }
        let trusted = try MinisignPublicKey(other.publicKeyText)
        let signature = try MinisignSignature(try signer.sign(message))
        #expect(throws: MinisignError.untrustedKey(keyID: signature.keyID, trusted: [trusted.keyID])) {
            try signature.verify(message, trustedKeys: [trusted])
        }
        // Rotation: the signer's key as the second trusted key verifies.
        let signerKey = try MinisignPublicKey(signer.publicKeyText)
        #expect(try signature.verify(message, trustedKeys: [trusted, signerKey]) == signerKey)
    }

    @Test("malformed signature files and keys are rejected with a reason")
    func malformed() throws {
        #expect(throws: MinisignError.malformedSignature("expected 4 lines, found 1")) { try MinisignSignature(Array("hello\n".utf8)) }
        let bad = "untrusted comment: x\nRWQ!!!!\ntrusted comment: y\nAAAA\n"
        #expect(throws: MinisignError.malformedSignature("line 2 is not base64")) { try MinisignSignature(Array(bad.utf8)) }
        #expect(throws: MinisignError.self) { try MinisignPublicKey("RWQ") }
        #expect(throws: MinisignError.self) { try MinisignPublicKey("") }
        // A key line with a flipped algorithm byte ("Ee").
        let fixture = try MinisignFixture()
        defer { fixture.remove() }
        let line = String(fixture.publicKeyText.split(separator: "\n")[1])
        var bytes = try #require(Base64.decode(line))
        bytes[1] = UInt8(ascii: "e")
        let reencoded = Data(bytes).base64EncodedString()
        #expect(throws: MinisignError.malformedPublicKey("algorithm is not Ed25519 (\"Ed\")")) { try MinisignPublicKey(reencoded) }
    }

    @Test("strict base64: padding only at the end, canonical bits, standard alphabet")
    func base64() {
        #expect(Base64.decode("aGVsbG8=") == Array("hello".utf8))
        #expect(Base64.decode("aGVsbG8") == nil)
        #expect(Base64.decode("aGVsbG9=") == nil)  // non-zero padding bits
        #expect(Base64.decode("aG=sbG8=") == nil)
        #expect(Base64.decode("aGVs bG8=") == nil)
        #expect(Base64.decode("aGVs_G8=") == nil)
    }
}
