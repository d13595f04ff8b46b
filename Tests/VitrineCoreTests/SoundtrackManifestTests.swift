import Foundation
import Testing
@testable import VitrineCore

@Suite("Manifest: soundtrack")
struct SoundtrackManifestTests {
    private static let hash = String(repeating: "c", count: 64)

    @Test("every field parses to its exact value; omitted fields take their defaults")
    func parses() throws {
        let full = manifest(itemFields: "", extra: #", "soundtrack": {"src": "media/music.mp3", "volume": 0.5, "itemSound": "pause", "fade": 1.25, "size": 1234, "sha256": "\#(Self.hash.uppercased())"}"#)
        let result = ManifestParser.parse(Array(full.utf8))
        #expect(result.problems == [])
        #expect(result.manifest?.soundtrack == Soundtrack(src: "media/music.mp3", volume: 0.5, itemSound: .pause,
                                                          duckVolume: 0.2, fade: 1.25, size: 1234, sha256: Self.hash))
        let bare = ManifestParser.parse(Array(manifest(itemFields: "", extra: #", "soundtrack": {"src": "media/music.mp3"}"#).utf8))
        #expect(bare.manifest?.soundtrack == Soundtrack(src: "media/music.mp3", volume: 1, itemSound: .duck, duckVolume: 0.2, fade: 0.5))
        #expect(ManifestParser.parse(Array(manifest(itemFields: "").utf8)).manifest?.soundtrack == nil)
    }

    @Test("the level under an item: volume when it is silent; duckVolume (at most volume), 0 or volume when it has sound")
    func levels() {
        let duck = Soundtrack(src: "m.mp3", volume: 0.8, itemSound: .duck, duckVolume: 0.1)
        #expect(duck.level(itemHasSound: false) == 0.8 && duck.level(itemHasSound: true) == 0.1)
        #expect(Soundtrack(src: "m.mp3", volume: 0.1).level(itemHasSound: true) == 0.1, "ducking never raises the level")
        #expect(Soundtrack(src: "m.mp3", volume: 0.8, itemSound: .pause).level(itemHasSound: true) == 0)
        #expect(Soundtrack(src: "m.mp3", volume: 0.8, itemSound: .mix).level(itemHasSound: true) == 0.8)
    }

    @Test("every problem is reported with its JSON path")
    func problemsWithPaths() {
        #expect(problems(manifest(itemFields: "", extra: #", "soundtrack": "media/music.mp3""#))
                == ["soundtrack: expected an object, found a string"])
        #expect(problems(manifest(itemFields: "", extra: #", "soundtrack": {"volume": 0.5}"#)) == ["soundtrack.src: required"])
        #expect(problems(manifest(itemFields: "", extra: #"""
            , "soundtrack": {"src": "/abs/music.mp3", "volume": 1.5, "itemSound": "fade", "duckVolume": -1, "fade": 11,
                             "size": -3, "sha256": "xyz", "loop": true}
            """#)) == [
            "soundtrack.src: must be a relative path, not absolute: /abs/music.mp3",
            "soundtrack.volume: must be between 0 and 1 (found 1.5)",
            "soundtrack.itemSound: unknown itemSound \"fade\" (expected duck, pause or mix)",
            "soundtrack.duckVolume: must be between 0 and 1 (found -1)",
            "soundtrack.fade: must be at most 10 seconds (found 11)",
            "soundtrack.size: must be at least 0 (found -3)",
            "soundtrack.sha256: expected 64 hexadecimal digits, found \"xyz\"",
            "soundtrack.loop: unknown field \"loop\"",
        ])
        #expect(problems(manifest(itemFields: "", extra: #", "soundtrack": {"src": "media/m.mp3", "fade": -0.5}"#))
                == ["soundtrack.fade: must not be negative (found -0.5)"])
    }

    @Test("a duckVolume that cannot take effect is a warning, and the manifest is accepted")
    func duckWarnings() {
        let unused = ManifestParser.parse(Array(manifest(itemFields: "", extra: #", "soundtrack": {"src": "media/m.mp3", "itemSound": "mix", "duckVolume": 0.1}"#).utf8))
        #expect(unused.manifest != nil)
        #expect(unused.warnings.map(\.description) == ["soundtrack.duckVolume: only used when itemSound is duck (it is mix)"])
        let louder = ManifestParser.parse(Array(manifest(itemFields: "", extra: #", "soundtrack": {"src": "media/m.mp3", "volume": 0.3, "duckVolume": 0.5}"#).utf8))
        #expect(louder.manifest != nil)
        #expect(louder.warnings.map(\.description)
                == ["soundtrack.duckVolume: 0.5 is not below volume 0.3: the soundtrack is not lowered under items with sound"])
    }

    @Test("its file is looked up like an item's src")
    func fileChecked() {
        let json = manifest(itemFields: "", extra: #", "soundtrack": {"src": "media/music.mp3"}"#)
        let missing = ManifestParser.parse(Array(json.utf8), catalogDirectory: "/catalog") { $0 == "/catalog/media/a.mp4" }
        #expect(missing.errors.map(\.description) == ["soundtrack.src: file not found: media/music.mp3"])
        let empty = ManifestParser.parse(Array(json.utf8), catalogDirectory: "/catalog") { $0.hasSuffix("music.mp3") ? .empty : .regularFile }
        #expect(empty.errors.map(\.description) == ["soundtrack.src: file is empty: media/music.mp3"])
    }

    @Test("on a USB stick the soundtrack is a file to copy, with its size and hash inline or in files")
    func stickFile() throws {
        let item = #"{"id": "a", "type": "video", "src": "media/a.mp4", "size": 10, "sha256": "\#(Self.hash)"}"#
        let inline = try #require(ManifestParser.parse(Array(manifest(items: item, extra: #", "soundtrack": {"src": "media/music.mp3", "size": 99, "sha256": "\#(Self.hash)"}"#).utf8)).manifest)
        let (files, problems) = StickManifest.files(of: inline)
        #expect(problems.isEmpty)
        #expect(files.last == StickFile(path: "media/music.mp3", size: 99, sha256: Self.hash, pathField: "soundtrack.src",
                                        sizeField: "soundtrack.size", hashField: "soundtrack.sha256"))
        let listed = try #require(ManifestParser.parse(Array(manifest(items: item, extra: #", "soundtrack": {"src": "media/music.mp3"}, "files": [{"path": "media/music.mp3", "size": 7, "sha256": "\#(Self.hash)"}]"#).utf8)).manifest)
        #expect(StickManifest.files(of: listed).problems.isEmpty)
        #expect(StickManifest.files(of: listed).files.map(\.path) == ["media/a.mp4", "media/music.mp3"])
        let bare = try #require(ManifestParser.parse(Array(manifest(items: item, extra: #", "soundtrack": {"src": "media/music.mp3"}"#).utf8)).manifest)
        #expect(StickManifest.files(of: bare).problems.map(\.description)
                == ["soundtrack.size: media/music.mp3: size is required on a USB stick (on the soundtrack or in \"files\")"])
    }

    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test("the gallery example validates and plays its music under the slideshow, ducked under the video with sound")
    func galleryExample() throws {
        let data = try Data(contentsOf: Self.repository.appendingPathComponent("config/examples/gallery/manifest.json"))
        var asked: [String] = []
        let result = ManifestParser.parse([UInt8](data), catalogDirectory: "gallery") { asked.append($0); return .regularFile }
        #expect(result.problems == [])
        #expect(asked.contains("gallery/media/music.mp3"), "the soundtrack's file is looked up: \(asked)")
        let manifest = try #require(result.manifest)
        #expect(manifest.soundtrack == Soundtrack(src: "media/music.mp3", volume: 0.7, itemSound: .duck, duckVolume: 0.15, fade: 0.75))
        #expect(manifest.playlist.map(\.type) == [.image, .image, .video, .video, .image])
    }

    @Test("the published schema describes the soundtrack as the validator reads it")
    func schema() throws {
        let data = try Data(contentsOf: Self.repository.appendingPathComponent("config/manifest.schema.json"))
        let schema = try JSONValue(parsing: data, options: .init(maxDepth: 64))
        let track = try #require(schema["properties"]?["soundtrack"])
        guard case let .object(properties)? = track["properties"] else { Issue.record("no soundtrack.properties"); return }
        #expect(properties.map(\.key) == ["src", "volume", "itemSound", "duckVolume", "fade", "size", "sha256"])
        #expect(track["required"] == .array([.string("src")]) && track["additionalProperties"] == .bool(false))
        #expect(track["properties"]?["itemSound"]?["enum"] == .array(Soundtrack.ItemSound.allCases.map { .string($0.rawValue) }))
        func number(_ v: JSONValue?) -> Double? { if case let .number(n)? = v { n.value } else { nil } }
        #expect(number(track["properties"]?["volume"]?["default"]) == Soundtrack.defaultVolume)
        #expect(number(track["properties"]?["duckVolume"]?["default"]) == Soundtrack.defaultDuckVolume)
        #expect(number(track["properties"]?["fade"]?["default"]) == Soundtrack.defaultFade)
        #expect(number(track["properties"]?["fade"]?["maximum"]) == Soundtrack.maximumFade)
        #expect(track["properties"]?["itemSound"]?["default"] == .string(Soundtrack.ItemSound.duck.rawValue))
    }
}
