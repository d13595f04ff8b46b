import Foundation
import Testing
@testable import VitrineCore

/// The repository root, found from this file's path.
private let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent()

/// A fresh folder under the temporary directory, removed by the caller.
private func temporaryFolder() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("vitrine-manifest-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

@Suite("Manifest media files and loading")
struct ManifestFileTests {
    private static let threeItems = manifest(items: #"""
        {"id": "a", "type": "video", "src": "media/a.mp4"},
        {"id": "b", "type": "image", "src": "media/b.png", "duration": 5},
        {"id": "c", "type": "audio", "src": "media/intro.mp4"}
        """#)

    @Test func everySrcIsLookedUpUnderTheCatalogDirectory() {
        var asked: [String] = []
        let statuses: [String: MediaFileStatus] = [
            "/cat/media/a.mp4": .regularFile, "/cat/media/b.png": .empty, "/cat/media/intro.mp4": .missing,
        ]
        let result = ManifestParser.parse(Array(Self.threeItems.utf8), catalogDirectory: "/cat/") { path in
            asked.append(path)
            return statuses[path] ?? .notRegularFile
        }
        #expect(asked == ["/cat/media/a.mp4", "/cat/media/b.png", "/cat/media/intro.mp4"])
        #expect(result.problems.map(\.description) == [
            "playlist[1].src: file is empty: media/b.png",
            "playlist[2].src: file not found: media/intro.mp4",
        ])
        #expect(result.manifest == nil)
    }

    @Test func noCatalogDirectoryMeansNoFileChecks() {
        var asked = 0
        let result = ManifestParser.parse(Array(Self.threeItems.utf8), catalogDirectory: nil) { _ in asked += 1; return .missing }
        #expect(asked == 0)
        #expect(result.problems == [])
        #expect(result.manifest?.playlist.map(\.src) == ["media/a.mp4", "media/b.png", "media/intro.mp4"])
    }

    @Test func malformedSrcIsNotLookedUp() {
        var asked: [String] = []
        let json = manifest(items: #"{"id": "a", "type": "video", "src": "../a.mp4"}"#)
        let result = ManifestParser.parse(Array(json.utf8), catalogDirectory: "/cat") { asked.append($0); return .regularFile }
        #expect(asked == [])
        #expect(result.problems.map(\.description) == [#"playlist[0].src: must not contain a ".." component: ../a.mp4"#])
    }

    @Test func yesNoExistenceCheck() {
        let result = ManifestParser.parse(Array(Self.threeItems.utf8), catalogDirectory: "/cat",
                                          fileExists: { $0 != "/cat/media/a.mp4" })
        #expect(result.problems.map(\.description) == ["playlist[0].src: file not found: media/a.mp4"])
    }

    @Test func onDiskStatusFollowsSymbolicLinks() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.path
        try Data([1, 2, 3]).write(to: folder.appendingPathComponent("full.bin"))
        try Data().write(to: folder.appendingPathComponent("empty.bin"))
        try FileManager.default.createDirectory(atPath: path + "/dir", withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(atPath: path + "/link.bin", withDestinationPath: "full.bin")
        try FileManager.default.createSymbolicLink(atPath: path + "/dangling.bin", withDestinationPath: "nothing")
        #expect(MediaFileStatus.onDisk(path + "/full.bin") == .regularFile)
        #expect(MediaFileStatus.onDisk(path + "/empty.bin") == .empty)
        #expect(MediaFileStatus.onDisk(path + "/dir") == .notRegularFile)
        #expect(MediaFileStatus.onDisk(path + "/link.bin") == .regularFile)
        #expect(MediaFileStatus.onDisk(path + "/dangling.bin") == .missing)
        #expect(MediaFileStatus.onDisk(path + "/absent.bin") == .missing)
    }

    @Test func loadReadsTheFileAndChecksMediaBesideIt() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("media"), withIntermediateDirectories: false)
        try Data([0]).write(to: folder.appendingPathComponent("media/a.mp4"))
        try Data([0]).write(to: folder.appendingPathComponent("media/b.png"))
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("media/intro.mp4"), withIntermediateDirectories: false)
        let path = folder.appendingPathComponent("manifest.json").path
        try Data(Self.threeItems.utf8).write(to: URL(fileURLWithPath: path))

        let result = ManifestParser.load(path: path)
        #expect(result.problems.map(\.description) == ["playlist[2].src: not a regular file: media/intro.mp4"])

        try FileManager.default.removeItem(at: folder.appendingPathComponent("media/intro.mp4"))
        try Data([0]).write(to: folder.appendingPathComponent("media/intro.mp4"))
        #expect(ManifestParser.load(path: path).problems == [])
        #expect(ManifestParser.load(path: path).manifest?.playlist.map(\.id) == ["a", "b", "c"])
    }

    @Test func loadReportsAMissingOrUnreadableFile() throws {
        #expect(ManifestParser.load(path: "/nonexistent/vitrine/manifest.json")
            == ManifestResult(manifest: nil, problems: [ManifestProblem(path: "", reason: "manifest not found: /nonexistent/vitrine/manifest.json")]))
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(ManifestParser.load(path: folder.path).problems.map(\.description) == ["cannot read manifest: \(folder.path)"])
    }

    @Test func loadRefusesAFileOverOneMebibyte() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("manifest.json").path
        try Data(repeating: 0x20, count: (1 << 20) + 10).write(to: URL(fileURLWithPath: path))
        #expect(ManifestParser.load(path: path).problems.map(\.description)
            == ["invalid JSON at line 1, column 1048577: text larger than the limit of 1048576 bytes"])
    }

    @Test func lobbyExampleIsValid() throws {
        let path = repository.appendingPathComponent("config/examples/lobby/manifest.json").path
        var asked: [String] = []
        let result = ManifestParser.parse(try Data(contentsOf: URL(fileURLWithPath: path)), catalogDirectory: "lobby") {
            asked.append($0); return .regularFile
        }
        #expect(result.problems == [])
        #expect(asked == ["lobby/media/red.mp4", "lobby/media/card.png", "lobby/media/blue.mp4", "lobby/media/tone.mp4"])
        let manifest = try #require(result.manifest)
        #expect(manifest.playlist.map(\.type) == [.video, .image, .video, .audio])
        #expect(manifest.playlist[1].transition == Transition(type: .crossfade, duration: 0.5))
        #expect(manifest.playlist[3].cuePoints.last?.action == .jump(item: "red", time: 0))
    }

    /// The published schema lists the same values the validator accepts.
    @Test func schemaEnumsMatchTheModel() throws {
        let data = try Data(contentsOf: repository.appendingPathComponent("config/manifest.schema.json"))
        let schema = try JSONValue(parsing: data, options: .init(maxDepth: 64))
        func strings(_ value: JSONValue?) -> [String] {
            guard case let .array(elements)? = value else { return [] }
            return elements.compactMap { if case let .string(s) = $0 { s } else { nil } }
        }
        let defs = schema["$defs"]
        #expect(schema["properties"]?["schema"]?["const"] == .string(Manifest.schemaV1))
        #expect(strings(schema["properties"]?["display"]?["properties"]?["fit"]?["enum"]) == Fit.allCases.map(\.rawValue))
        #expect(schema["properties"]?["display"]?["properties"]?["rotation"]?["enum"]
            == .array(Rotation.allCases.map { .number(JSONNumber(literal: String($0.rawValue))!) }))
        #expect(strings(defs?["item"]?["properties"]?["type"]?["enum"]) == PlaylistItem.Kind.allCases.map(\.rawValue))
        #expect(strings(defs?["item"]?["properties"]?["transition"]?["properties"]?["type"]?["enum"])
            == Transition.Kind.allCases.map(\.rawValue))
        #expect(strings(defs?["action"]?["properties"]?["type"]?["enum"])
            == ["log", "jump", "seek", "pause", "resume", "setVolume", "showOverlay", "hideOverlays", "interrupt", "endInterrupt"])
        #expect(strings(schema["required"]) == ["schema", "version", "playlist"])
        #expect(strings(defs?["item"]?["required"]) == ["id", "type", "src"])
        #expect(strings(defs?["cuePoint"]?["required"]) == ["time", "id", "action"])
    }
}
