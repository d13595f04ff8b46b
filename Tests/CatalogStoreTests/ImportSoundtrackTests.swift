import Foundation
import Testing
@testable import CatalogStore
import Crypto
import VitrineCore

@Suite("Import: a stick with a soundtrack")
struct ImportSoundtrackTests {
    @Test("the soundtrack's file is copied and verified like an item's; without its size the stick is refused by field")
    func soundtrackCopied() throws {
        var stick = TestStick(files: 1, size: 40_000, seed: 11)
        let music = randomBytes(30_000, seed: 99)
        // The music is on the stick; only the manifest's soundtrack makes the import copy it (it is
        // not a playlist item).
        let item = stick.media[0]
        stick.media.append(("media/music.mp3", music))
        let soundtrack = #"{"src": "media/music.mp3", "size": 30000, "sha256": "\#(SHA256.hash(music).hex)"}"#
        let manifest = #"{"schema": "vitrine.manifest/1", "version": 1, "playlist": [{"id": "a", "type": "video", "src": "\#(item.path)", "size": \#(item.bytes.count), "sha256": "\#(SHA256.hash(item.bytes).hex)"}], "soundtrack": \#(soundtrack)}"#
        try stick.write()
        try stick.writeManifest(manifest)
        let library = newLibrary()
        let result = library.importStick(at: stick.mount)
        #expect(result.outcome == .switched, "\(result.message) \(result.problems)")
        #expect(result.files == 2 && result.bytes == 70_000)
        #expect(library.files(inGeneration: 1) == ["catalog.json", "media/clip0.mp4", "media/music.mp3"])
        #expect([UInt8](try Data(contentsOf: URL(fileURLWithPath: library.path + "/gen.1/media/music.mp3"))) == music)

        // A soundtrack without size or hash: refused, naming the field.
        try stick.writeManifest(manifest.replacingOccurrences(of: #""size": 30000, "#, with: ""))
        let refused = newLibrary().importStick(at: stick.mount)
        #expect(refused.outcome != .switched)
        #expect(refused.problems.map(\.description).contains { $0.hasPrefix("soundtrack.size: media/music.mp3: size is required on a USB stick") },
                "\(refused.problems)")
    }
}
