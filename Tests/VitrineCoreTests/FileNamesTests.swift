import Foundation
import Testing
import VitrineCore

@Suite("File names on disk across NFC and NFD")
struct FileNamesTests {
    static let nfc = "Gr\u{00FC}\u{00DF}e", nfd = "Gru\u{0308}\u{00DF}e"

    static func folder() throws -> String {
        let dir = NSTemporaryDirectory() + "vitrine-filenames-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir + "/\(nfd)/sub", withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: dir + "/\(nfd)/sub/\(nfc).mp4", contents: Data([1]))
        FileManager.default.createFile(atPath: dir + "/plain.mp4", contents: Data([1]))
        return dir
    }

    @Test("each component is found in the other form; the result is the disk's spelling, byte for byte")
    func bothForms() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let found = try #require(FileNames.onDisk("\(Self.nfc)/sub/\(Self.nfd).mp4", in: dir))
        #expect(Array(found.utf8) == Array("\(Self.nfd)/sub/\(Self.nfc).mp4".utf8))
        #expect(FileManager.default.fileExists(atPath: FileNames.path("\(Self.nfc)/sub/\(Self.nfd).mp4", in: dir)))
        #expect(FileNames.onDisk("plain.mp4", in: dir + "/") == "plain.mp4")
    }

    @Test("a name that is not there in any form is nil, and path() keeps the manifest's spelling")
    func missing() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(FileNames.onDisk("\(Self.nfc)/sub/other.mp4", in: dir) == nil)
        #expect(FileNames.onDisk("nowhere/\(Self.nfc).mp4", in: dir) == nil)
        #expect(Array(FileNames.path("x/\(Self.nfc).mp4", in: dir).utf8) == Array((dir + "/x/\(Self.nfc).mp4").utf8))
    }
}
