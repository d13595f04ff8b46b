import Foundation
import Testing
@testable import Crypto
import VitrineTestSupport

@Suite("SHA-256 and BLAKE2b (libsodium)")
struct HashTests {
    @Test("FIPS 180-2 vectors: empty, \"abc\", the 448-bit message")
    func vectors() {
        #expect(SHA256.hash([]).hex == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hash(Array("abc".utf8)).hex == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256.hash(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)).hex
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    }

    @Test("streaming in uneven pieces gives the one-shot digest, and counts the bytes")
    func streaming() {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<1_000_003).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let hasher = SHA256()
        var offset = 0
        for piece in [1, 63, 64, 65, 4096, 0, bytes.count - 4289] {
            hasher.update(bytes, range: offset..<offset + piece)
            offset += piece
        }
        #expect(offset == bytes.count)
        #expect(hasher.count == Int64(bytes.count))
        #expect(hasher.finalize() == SHA256.hash(bytes))
    }

    @Test("agrees with sha256sum on a 3 MB random file")
    func agreesWithCoreutils() throws {
        let path = NSTemporaryDirectory() + "vitrine-sha-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let bytes = (0..<3_000_000).map { _ in UInt8.random(in: 0...255) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let out = try run("/usr/bin/sha256sum", [path])
        #expect(String(out.prefix(64)) == SHA256.hash(bytes).hex)
    }

    @Test("digests parse from hex in either case and print in lowercase")
    func digestHex() throws {
        let upper = "BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD"
        let digest = try #require(SHA256.Digest(hex: upper))
        #expect(digest.hex == upper.lowercased())
        #expect(SHA256.Digest(hex: String(upper.dropLast())) == nil)
        #expect(SHA256.Digest(hex: "g" + upper.dropFirst()) == nil)
    }

    @Test("BLAKE2b-512 of \"abc\" (RFC 7693 appendix A)")
    func blake2b() {
        let hex = BLAKE2b.hash512(Array("abc".utf8)).map { String(format: "%02x", $0) }.joined()
        #expect(hex == "ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d1"
                    + "7d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923")
    }
}

/// Runs a program and returns its standard output; throws when it exits non-zero.
func run(_ program: String, _ arguments: [String], input: Data? = nil) throws -> String {
    try Subprocess.output(program, arguments, input: input)
}

