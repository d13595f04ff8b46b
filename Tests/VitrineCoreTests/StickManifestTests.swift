import Foundation
import Testing
@testable import VitrineCore

private let hashA = String(repeating: "a", count: 64)
private let hashB = String(repeating: "b", count: 64)

/// Parses a manifest that must be valid v1 and returns the stick files and problems as strings.
private func stick(_ json: String) throws -> (files: [StickFile], problems: [String]) {
    let result = ManifestParser.parse(Array(json.utf8))
    let manifest = try #require(result.manifest, "\(result.errors)")
    let (files, problems) = StickManifest.files(of: manifest)
    return (files, problems.map(\.description))
}

private func item(_ id: String, _ src: String, size: Int? = 10, sha: String? = hashA) -> String {
    var fields = #"{"id": "\#(id)", "type": "video", "src": "\#(src)""#
    if let size { fields += #", "size": \#(size)"# }
    if let sha { fields += #", "sha256": "\#(sha)""# }
    return fields + "}"
}

@Suite("Stick paths")
struct StickPathTests {
    @Test("accepted: ASCII letters, digits, . _ - space, printable non-ASCII",
          arguments: ["media/a.mp4", "media/Été 2024/clip 1.mp4", "a-b_c.d", "日本/動画.mp4", "x", "a.b.c/d e"])
    func accepted(path: String) {
        #expect(StickPath.problem(path) == nil)
    }

    @Test("refused, with the kind and reason", arguments: [
        ("", ImportProblem.Kind.badPath, "must not be empty"),
        ("/media/a.mp4", .badPath, "must be a relative path, not absolute"),
        ("media\\a.mp4", .badPath, "must use \"/\" between folders, not \"\\\""),
        ("media//a.mp4", .badPath, "has an empty component (\"//\", or \"/\" at the end)"),
        ("media/", .badPath, "has an empty component (\"//\", or \"/\" at the end)"),
        ("./a.mp4", .badPath, "must not contain a \".\" component"),
        ("media/../../etc/passwd", .badPath, "must not contain a \"..\" component"),
        ("a\u{0}b", .badPath, "must not contain a NUL character"),
        ("media/._a.mp4", .hiddenFile, "names a hidden file (\"._a.mp4\"); hidden and AppleDouble \"._\" files are never copied"),
        (".git/x", .hiddenFile, "names a hidden file (\".git\"); hidden and AppleDouble \"._\" files are never copied"),
        ("a:b.mp4", .badPath, "character U+003A is not allowed (use letters, digits, \".\", \"_\", \"-\" and spaces)"),
        ("a*.mp4", .badPath, "character U+002A is not allowed (use letters, digits, \".\", \"_\", \"-\" and spaces)"),
        ("a\u{202E}4pm.exe", .badPath, "character U+202E is not allowed (use letters, digits, \".\", \"_\", \"-\" and spaces)"),
        ("a\u{85}b", .badPath, "character U+0085 is not allowed (use letters, digits, \".\", \"_\", \"-\" and spaces)"),
        ("a\tb", .badPath, "character U+0009 is not allowed (use letters, digits, \".\", \"_\", \"-\" and spaces)"),
        ("Catalog.JSON", .badPath, "\"Catalog.JSON\" is a reserved name"),
        ("manifest.json.minisig", .badPath, "\"manifest.json.minisig\" is a reserved name"),
        (String(repeating: "x", count: 256), .badPath, "has a name longer than 255 bytes"),
    ])
    func refused(path: String, kind: ImportProblem.Kind, reason: String) {
        let problem = StickPath.problem(path)
        #expect(problem?.kind == kind)
        #expect(problem?.reason == reason)
    }
}

@Suite("Stick manifests")
struct StickManifestTests {
    @Test("every item and overlay image becomes one file with its size, hash and fields")
    func files() throws {
        let json = manifest(items: item("a", "media/a.mp4") + ", " + item("b", "media/b.png", size: 20, sha: hashB)
                            + ", " + item("again", "media/a.mp4"),
                            extra: #", "overlays": {"promo": {"image": "media/logo.png"}}, "files": [{"path": "media/logo.png", "size": 5, "sha256": "\#(hashB.uppercased())"}]"#)
        let (files, problems) = try stick(json)
        #expect(problems == [])
        #expect(files == [
            StickFile(path: "media/a.mp4", size: 10, sha256: hashA, pathField: "playlist[0].src",
                      sizeField: "playlist[0].size", hashField: "playlist[0].sha256"),
            StickFile(path: "media/b.png", size: 20, sha256: hashB, pathField: "playlist[1].src",
                      sizeField: "playlist[1].size", hashField: "playlist[1].sha256"),
            StickFile(path: "media/logo.png", size: 5, sha256: hashB, pathField: "overlays.promo.image",
                      sizeField: "files[0].size", hashField: "files[0].sha256"),
        ])
    }

    @Test("size and sha256 are required for every file, an overlay image through files")
    func missingChecksums() throws {
        let json = manifest(items: item("a", "media/a.mp4", size: nil) + ", " + item("b", "media/b.mp4", sha: nil),
                            extra: #", "overlays": {"promo": {"image": "media/logo.png"}}"#)
        #expect(try stick(json).problems == [
            "playlist[0].size: media/a.mp4: size is required on a USB stick (on the item or in \"files\")",
            "playlist[1].sha256: media/b.mp4: sha256 is required on a USB stick (on the item or in \"files\")",
            "overlays.promo.image.size: media/logo.png: size is required on a USB stick (in a \"files\" entry)",
        ])
    }

    @Test("an item may take its size and hash from files; declarations must agree")
    func declarations() throws {
        let covered = manifest(items: item("a", "media/a.mp4", size: nil, sha: nil),
                               extra: #", "files": [{"path": "media/a.mp4", "size": 3, "sha256": "\#(hashA)"}]"#)
        #expect(try stick(covered).problems == [])
        #expect(try stick(covered).files.map(\.size) == [3])
        let conflicting = manifest(items: item("a", "media/a.mp4", size: 4, sha: hashB),
                                   extra: #", "files": [{"path": "media/a.mp4", "size": 3, "sha256": "\#(hashA)"}]"#)
        #expect(try stick(conflicting).problems == [
            "files[0].size: media/a.mp4: size 3 differs from playlist[0].size (4)",
            "files[0].sha256: media/a.mp4: sha256 differs from playlist[0].sha256",
        ])
    }

    @Test("paths that differ only by case or normalisation, or are file and folder, collide")
    func collisions() throws {
        let nfc = "media/caf\u{E9}.mp4", nfd = "media/cafe\u{301}.mp4"
        let json = manifest(items: [item("a", "media/A.mp4"), item("b", "media/a.mp4"), item("c", nfc), item("d", nfd),
                                    item("e", "Media/x.mp4"), item("f", "clips"), item("g", "clips/one.mp4")].joined(separator: ", "))
        let problems = try stick(json).problems
        #expect(problems == [
            "playlist[1].src: media/a.mp4: differs only by case from \"media/A.mp4\" (playlist[0].src)",
            "playlist[3].src: \(nfd): differs only by case from \"\(nfc)\" (playlist[2].src)",
            "playlist[4].src: Media/x.mp4: folder \"Media\" differs only by case from a folder of \"media/A.mp4\" (playlist[0].src)",
            "playlist[5].src: clips: is also a folder in \"clips/one.mp4\" (playlist[6].src)",
        ])
    }

    @Test("path rules apply to every field that names a file")
    func pathRules() throws {
        let json = manifest(items: item("a", "media/._a.mp4") + ", " + item("b", "media/b?.mp4"),
                            extra: #", "files": [{"path": "manifest.json", "size": 1, "sha256": "\#(hashA)"}]"#)
        #expect(try stick(json).problems == [
            "playlist[0].src: media/._a.mp4: names a hidden file (\"._a.mp4\"); hidden and AppleDouble \"._\" files are never copied",
            "playlist[1].src: media/b?.mp4: character U+003F is not allowed (use letters, digits, \".\", \"_\", \"-\" and spaces)",
            "files[0].path: manifest.json: \"manifest.json\" is a reserved name",
        ])
    }

    @Test("an empty file cannot play")
    func emptyFile() throws {
        #expect(try stick(manifest(items: item("a", "media/a.mp4", size: 0))).problems
                == ["playlist[0].size: media/a.mp4: an empty file cannot play (size 0)"])
    }

    @Test("files entries are validated like the rest of the manifest")
    func filesField() {
        let json = manifest(itemFields: "", extra: #", "files": [{"path": "a", "size": 1, "sha256": "\#(hashA)"}, {"path": "a", "size": -1, "sha256": "xyz", "mtime": 3}, {"size": 1}, 7]"#)
        #expect(problems(json) == [
            "files[1].path: duplicate path \"a\" (also files[0])",
            "files[1].size: must be at least 0 (found -1)",
            "files[1].sha256: expected 64 hexadecimal digits, found \"xyz\"",
            "files[1].mtime: unknown field \"mtime\"",
            "files[2].path: required",
            "files[2].sha256: required",
            "files[3]: expected an object, found a number",
        ])
    }

    @Test("space: the files plus 5 %, at least 64 MiB")
    func space() {
        #expect(ImportSpace.required(forCopying: 0) == 64 << 20)
        #expect(ImportSpace.required(forCopying: 100 << 20) == (100 << 20) + (64 << 20))
        #expect(ImportSpace.required(forCopying: 10 << 30) == (10 << 30) + (512 << 20))
    }

    @Test("the published schema describes files like the validator")
    func schema() throws {
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let schema = try JSONValue(parsing: Data(contentsOf: repository.appendingPathComponent("config/manifest.schema.json")),
                                   options: .init(maxDepth: 64))
        let entry = schema["properties"]?["files"]?["items"]
        #expect(schema["properties"]?["files"]?["type"] == .string("array"))
        #expect(entry?["required"] == .array([.string("path"), .string("size"), .string("sha256")]))
        #expect(entry?["additionalProperties"] == .bool(false))
        #expect(entry?["properties"]?["path"]?["$ref"] == .string("#/$defs/path"))
    }
}
