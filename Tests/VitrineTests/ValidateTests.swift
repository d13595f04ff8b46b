import Foundation
import Testing
import Media
@testable import Vitrine
import VitrineCore
import VitrineTestSupport

/// `vitrine validate` as an installer runs it on a catalog or a USB stick before delivering it.
@Suite("vitrine validate: media, sticks, cue points, paths", .serialized, .enabled(if: VitrineBinary.available, VitrineBinary.absent))
struct ValidateTests {
    /// A folder with `manifest.json` listing `items` (JSON objects) and the given media files copied in.
    static func catalog(_ name: String, files: [String: String], items: [String], extra: String = "") throws -> String {
        let dir = try Harness.newFolder(name)
        for (target, source) in files { try FileManager.default.copyItem(atPath: source, toPath: dir + "/" + target) }
        try Harness.writeManifest(#"{"schema": "vitrine.manifest/1", "version": 3, "playlist": ["# + items.joined(separator: ",") + "]" + extra + "}",
                                  in: dir)
        return dir
    }

    /// The first `count` bytes of a real file, with byte `offset` set to `value`.
    static func damaged(_ name: String, count: Int, offset: Int, from: UInt8, to: UInt8) throws -> String {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: RealMedia.path(name))).prefix(count))
        #expect(bytes[offset] == from, "the corpus changed: byte \(offset) of \(name) is \(bytes[offset])")
        bytes[offset] = to
        let path = Harness.scratch + "/damaged-\(offset)-" + name
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test("hostile files and a text file named as a video are named as unplayable, never \"valid\" (65)",
          .enabled(if: RealMedia.available, RealMedia.absent))
    func unplayableFiles() throws {
        let vorbis = try Self.damaged("video-demo.mkv", count: 5000, offset: 3784, from: 0x25, to: 0x7f)
        let theora = try Self.damaged("video-demo.ogv", count: 8192, offset: 303, from: 0x20, to: 0x6a)
        let text = Harness.scratch + "/notes.txt"
        try Data("Opening hours: 9 to 5\n".utf8).write(to: URL(fileURLWithPath: text))
        let dir = try Self.catalog("validate-hostile", files: ["media/a.mkv": vorbis, "media/b.ogv": theora, "media/c.mp4": text,
                                                              "media/ok.mp4": try Harness.colorClip("red", seconds: 1)],
                                   items: [#"{"id": "a", "type": "video", "src": "media/a.mkv"}"#, #"{"id": "b", "type": "video", "src": "media/b.ogv"}"#,
                                           #"{"id": "c", "type": "video", "src": "media/c.mp4"}"#, #"{"id": "ok", "type": "video", "src": "media/ok.mp4"}"#])
        let r = try VitrineBinary.run(["validate", dir])
        #expect(r.code == 65)
        #expect(!r.out.contains(": valid"))
        let lines = r.out.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix("\(dir)/manifest.json: playlist[0].src: media/a.mkv cannot play: ") })
        #expect(lines.contains { $0.hasPrefix("\(dir)/manifest.json: playlist[1].src: media/b.ogv cannot play: ") })
        #expect(lines.contains("\(dir)/manifest.json: playlist[2].src: media/c.mp4 cannot play: cannot open: avformat_open_input: Invalid data found when processing input"))
        #expect(!lines.contains { $0.contains("playlist[3]") }, "the good clip is fine")
        #expect(lines.last == "\(dir)/manifest.json: invalid: 3 error(s)")
    }

    @Test("a soundtrack that is text, or a video without sound, cannot play: named at soundtrack.src (65)", arguments: [false, true])
    func unplayableSoundtrack(silentVideo: Bool) throws {
        let text = Harness.scratch + "/music.txt"
        try Data("not a sound file".utf8).write(to: URL(fileURLWithPath: text))
        let music = silentVideo ? try Harness.colorClip("red", seconds: 1) : text
        let dir = try Self.catalog("validate-soundtrack", files: ["media/music.mp3": music, "media/red.mp4": try Harness.colorClip("red", seconds: 1)],
                                   items: [#"{"id": "red", "type": "video", "src": "media/red.mp4"}"#],
                                   extra: #", "soundtrack": {"src": "media/music.mp3"}"#)
        let r = try VitrineBinary.run(["validate", dir])
        #expect(r.code == 65)
        let lines = r.out.split(separator: "\n").map(String.init)
        let want = "\(dir)/manifest.json: soundtrack.src: media/music.mp3 cannot play: "
            + (silentVideo ? "cannot open: av_find_best_stream: no audio or video stream" : "cannot open: avformat_open_input: Invalid argument")
        #expect(lines.contains(want), "\(lines)")
        #expect(lines.last == "\(dir)/manifest.json: invalid: 1 error(s)")
    }

    @Test("an empty file, a folder and a FIFO are each reported once, by what is wrong with them")
    func reportedOnce() throws {
        let dir = try Self.catalog("validate-once", files: [:],
                                   items: [#"{"id": "e", "type": "video", "src": "media/empty.mp4"}"#,
                                           #"{"id": "d", "type": "video", "src": "media/folder.mp4"}"#,
                                           #"{"id": "f", "type": "video", "src": "media/fifo.mp4"}"#])
        try Data().write(to: URL(fileURLWithPath: dir + "/media/empty.mp4"))
        try FileManager.default.createDirectory(atPath: dir + "/media/folder.mp4", withIntermediateDirectories: false)
        #expect(mkfifo(dir + "/media/fifo.mp4", 0o644) == 0)
        let r = try VitrineBinary.run(["validate", dir])
        #expect(r.code == 65)
        let lines = r.out.split(separator: "\n").map(String.init)
        for i in 0..<3 {
            #expect(lines.filter { $0.contains("playlist[\(i)].src") }.count == 1, "\(lines)")
        }
        #expect(lines.last == "\(dir)/manifest.json: invalid: 3 error(s)", "\(lines)")
    }

    @Test("a text file named as an image, and an audio item without sound, cannot play")
    func wrongKinds() throws {
        let text = Harness.scratch + "/card.txt"
        try Data("not a picture".utf8).write(to: URL(fileURLWithPath: text))
        let dir = try Self.catalog("validate-kinds", files: ["media/card.png": text, "media/red.mp4": try Harness.colorClip("red", seconds: 1)],
                                   items: [#"{"id": "card", "type": "image", "src": "media/card.png", "duration": 5}"#,
                                           #"{"id": "music", "type": "audio", "src": "media/red.mp4"}"#])
        let r = try VitrineBinary.run(["validate", dir + "/manifest.json"])
        #expect(r.code == 65)
        #expect(r.out.contains("playlist[0].src: media/card.png cannot play: no decodable frames\n"), "\(r.out)")
        #expect(r.out.contains("playlist[1].src: media/red.mp4 cannot play: cannot open: av_find_best_stream: no audio or video stream"), "\(r.out)")
    }

    @Test("a cue point past the end of its video warns (still valid, 0); one at the end does not")
    func cuePastTheEnd() throws {
        let dir = try Self.catalog("validate-cues", files: ["media/red.mp4": try Harness.colorClip("red", seconds: 2)],
                                   items: [#"{"id": "r", "type": "video", "src": "media/red.mp4", "cuePoints": [{"time": 2, "id": "end", "action": {"type": "pause"}}, {"time": 2.5, "id": "late", "action": {"type": "pause"}}]}"#,
                                           #"{"id": "s", "type": "video", "src": "media/red.mp4", "duration": 1, "cuePoints": [{"time": 1.5, "id": "cut", "action": {"type": "pause"}}]}"#])
        let r = try VitrineBinary.run(["validate", dir])
        #expect(r.code == 0, "\(r.out)")
        #expect(r.out == """
            \(dir)/manifest.json: warning: playlist[1].cuePoints[0].time: 1.5 is past the item's duration of 1
            \(dir)/manifest.json: warning: playlist[0].cuePoints[1].time: 2.5 s is past the end of media/red.mp4 (2 s): it never fires
            \(dir)/manifest.json: valid: 2 item(s), version 3

            """)
    }

    /// A stick `<mount>/vitrine/` with one clip and its size and sha256 as given (nil: the true ones).
    static func stick(size: Int? = nil, sha256: String? = nil, omitHash: Bool = false) throws -> (mount: String, clip: String) {
        let mount = try Harness.newFolder("validate-stick")
        let dir = mount + "/vitrine"
        try FileManager.default.createDirectory(atPath: dir + "/media", withIntermediateDirectories: true)
        let clip = dir + "/media/red.mp4"
        try FileManager.default.copyItem(atPath: try Harness.colorClip("red", seconds: 1), toPath: clip)
        let trueSize = try #require(try FileManager.default.attributesOfItem(atPath: clip)[.size] as? Int)
        let trueHash = String(try Subprocess.output("/usr/bin/sha256sum", [clip]).prefix(64))
        let hash = omitHash ? "" : #", "sha256": "\#(sha256 ?? trueHash)""#
        try Data(#"{"schema": "vitrine.manifest/1", "version": 1, "playlist": [{"id": "r", "type": "video", "src": "media/red.mp4", "size": \#(size ?? trueSize)\#(hash)}]}"#.utf8)
            .write(to: URL(fileURLWithPath: dir + "/manifest.json"))
        return (mount, clip)
    }

    @Test("a stick (its mount point, its vitrine/ folder or its manifest): sizes and hashes checked, and required")
    func stickChecksums() throws {
        let good = try Self.stick()
        for path in [good.mount, good.mount + "/vitrine", good.mount + "/vitrine/", good.mount + "/vitrine/manifest.json"] {
            let r = try VitrineBinary.run(["validate", path])
            #expect(r.code == 0, "\(path): \(r.out)")
            #expect(r.out.hasSuffix("manifest.json: valid: 1 item(s), version 1, a USB stick (sizes and hashes checked)\n"), "\(r.out)")
        }
        let small = try Self.stick(size: 1)
        let sized = try VitrineBinary.run(["validate", small.mount])
        let actual = try #require(try FileManager.default.attributesOfItem(atPath: small.clip)[.size] as? Int)
        #expect(sized.code == 65)
        #expect(sized.out.contains("manifest.json: playlist[0].size: media/red.mp4: size mismatch (manifest 1, file \(actual) bytes)\n"), "\(sized.out)")
        let wrong = try Self.stick(sha256: String(repeating: "0", count: 64))
        let hashed = try VitrineBinary.run(["validate", wrong.mount + "/vitrine"])
        #expect(hashed.code == 65)
        #expect(hashed.out.contains("manifest.json: playlist[0].sha256: media/red.mp4: hash mismatch (manifest 000000000000…, file "), "\(hashed.out)")
        let bare = try Self.stick(omitHash: true)
        let required = try VitrineBinary.run(["validate", bare.mount])
        #expect(required.code == 65)
        #expect(required.out.contains("playlist[0].sha256: media/red.mp4: sha256 is required on a USB stick (on the item or in \"files\")"), "\(required.out)")
        // The same manifest as a plain catalog (not in a vitrine/ folder): hashes are optional there.
        let plain = try Harness.newFolder("validate-plain")
        try FileManager.default.copyItem(atPath: bare.mount + "/vitrine/media", toPath: plain + "/media2")
        try FileManager.default.removeItem(atPath: plain + "/media")
        try FileManager.default.moveItem(atPath: plain + "/media2", toPath: plain + "/media")
        try FileManager.default.copyItem(atPath: bare.mount + "/vitrine/manifest.json", toPath: plain + "/manifest.json")
        #expect(try VitrineBinary.run(["validate", plain]).code == 0)
    }

    @Test("keys holding \": \", a newline or a NUL cannot forge an output line: one line per problem, paths escaped")
    func hostileKeys() throws {
        let dir = try Self.catalog("validate-keys", files: ["media/red.mp4": try Harness.colorClip("red", seconds: 1)],
                                   items: [#"{"id": "r", "type": "video", "src": "media/red.mp4", "x\n/tmp/m.json: valid: 9 item(s)": 1}"#],
                                   extra: #", "overlays": {"a: b": {"title": 1}}, "\u0000": 0"#)
        let r = try VitrineBinary.run(["validate", dir])
        #expect(r.code == 65)
        let prefix = "\(dir)/manifest.json: "
        #expect(r.out == prefix + #"playlist[0]["x\n/tmp/m.json: valid: 9 item(s)"]: unknown field "x\n/tmp/m.json: valid: 9 item(s)""# + "\n"
                + prefix + #"overlays["a: b"].title: expected a string, found a number"# + "\n"
                + prefix + #"["\u0000"]: unknown field "\u0000""# + "\n"
                + prefix + "invalid: 3 error(s)\n")
    }

    @Test("a manifest that is not an object names the root")
    func notAnObject() throws {
        let dir = try Harness.newFolder("validate-root")
        try Harness.writeManifest("[1, 2]", in: dir)
        let r = try VitrineBinary.run(["validate", dir])
        #expect(r.code == 65)
        #expect(r.out == "\(dir)/manifest.json: the manifest must be a JSON object at its root, found an array\n\(dir)/manifest.json: invalid: 1 error(s)\n")
    }

    @Test("config/examples/lobby, as its README says: without its media, four file-not-found errors and 65")
    func lobbyExample() throws {
        let r = try VitrineBinary.run(["validate", Repository.path("config/examples/lobby")])
        #expect(r.code == 65)
        let errors = r.out.split(separator: "\n").dropLast()
        #expect(errors.count == 4 && errors.allSatisfy { $0.contains(": file not found: media/") }, "\(r.out)")
        let readme = try String(contentsOfFile: Repository.path("config/examples/README.md"), encoding: .utf8)
        #expect(readme.contains("reports `file not found` for each of the four files, and exits 65"))
    }

    /// A catalog with the named playlist `menu`, and a config at `configPath` holding `config`.
    static func withConfig(_ name: String, config: String) throws -> (dir: String, config: String) {
        let dir = try Self.catalog(name, files: ["media/red.mp4": try Harness.colorClip("red", seconds: 1)],
                                   items: [#"{"id": "red", "type": "video", "src": "media/red.mp4"}"#],
                                   extra: #", "playlists": {"menu": [{"id": "menu", "type": "video", "src": "media/red.mp4"}]}"#)
        let path = dir + "-config.json"
        try Data(config.utf8).write(to: URL(fileURLWithPath: path))
        return (dir, path)
    }

    @Test("--config: outputs naming the catalog's playlists are valid (0), with the number of screens")
    func configOutputsValid() throws {
        let (dir, config) = try Self.withConfig("validate-config-ok", config: """
            {"outputs": [{"connector": "HDMI-A-1"}, {"connector": "HDMI-A-2", "playlist": "menu"},
                         {"connector": "DP-1", "wall": {"columns": 2, "rows": 1, "column": 1, "row": 0}}]}
            """)
        let r = try VitrineBinary.run(["validate", dir, "--config", config])
        #expect(r.code == 0, "\(r.out)")
        #expect(r.out == "\(dir)/manifest.json: valid: 2 item(s), version 3; config \(config): 3 screen(s)\n")
    }

    @Test("--config: an output's unknown playlist and a wall that does not fit are named at their config paths (65); the manifest stays valid")
    func configOutputsWrong() throws {
        let (dir, config) = try Self.withConfig("validate-config-wrong", config: """
            {"wall": {"columns": 2, "rows": 1, "row": 0},
             "outputs": [{"connector": "HDMI-A-1", "wall": {"column": 0}}, {"connector": "HDMI-A-2", "playlist": "lunch"},
                         {"connector": "DP-1", "wall": {"column": 2}}]}
            """)
        let r = try VitrineBinary.run(["validate", dir, "--config", config])
        #expect(r.code == 65)
        let lines = r.out.split(separator: "\n").map(String.init)
        #expect(lines == [
            #"\#(config): outputs[1].playlist: "lunch" is not one of the catalog's playlists (it has "menu"); "HDMI-A-2" would play the catalog's own playlist, as without "playlist""#,
            #"\#(config): outputs[1].wall.column: required: this box's config must say which column of the wall it drives (0-based); "HDMI-A-2" would show the slate"#,
            #"\#(config): outputs[2].wall.column: 2 is outside 0…1 (columns is 2, from wall.columns in the config); "DP-1" would show the slate"#,
            "\(dir)/manifest.json: valid: 2 item(s), version 3",
            "\(config): invalid: 3 error(s)",
        ], "\(r.out)")
    }

    @Test("--config: a config that does not parse is reported key by key (65), a connector name that could forge a line among them")
    func configUnparsable() throws {
        let (dir, config) = try Self.withConfig("validate-config-bad", config: #"""
            {"outputs": [{"connector": "HDMI-A-1", "playlist": "nope"}, {"connector": "DP-1\nok.json: valid"}], "colour": 1}
            """#)
        let r = try VitrineBinary.run(["validate", dir, "--config", config])
        #expect(r.code == 65)
        let lines = r.out.split(separator: "\n").map(String.init)
        #expect(lines.count == 4, "one line per problem, then one per file: \(r.out)")
        #expect(lines.contains(#"\#(config): outputs[1].connector: "DP-1\nok.json: valid" is not a connector name (the kernel's are printable ASCII without spaces, such as "HDMI-A-1")"#), "\(r.out)")
        #expect(lines.contains(#"\#(config): colour: unknown field "colour""#), "\(r.out)")
        #expect(lines[2] == "\(dir)/manifest.json: valid: 2 item(s), version 3")
        #expect(lines[3] == "\(config): invalid: 2 error(s); its screens are checked against the catalog once these are fixed")
    }

    @Test("--config: a catalog with a missing file is still checked against the config; a config that is missing, a folder or given twice is refused")
    func configWithBrokenCatalog() throws {
        let (dir, config) = try Self.withConfig("validate-config-missing", config: #"""
            {"outputs": [{"connector": "HDMI-A-1"}, {"connector": "HDMI-A-2", "playlist": "lunch"}]}
            """#)
        try FileManager.default.removeItem(atPath: dir + "/media/red.mp4")
        let r = try VitrineBinary.run(["validate", dir, "--config", config])
        #expect(r.code == 65)
        let lines = r.out.split(separator: "\n").map(String.init)
        #expect(lines.filter { $0.hasPrefix("\(dir)/manifest.json: ") && $0.contains("file not found: media/red.mp4") }.count == 2, "\(r.out)")
        #expect(lines.contains { $0.hasPrefix(#"\#(config): outputs[1].playlist: "lunch" is not one of the catalog's playlists"#) }, "\(r.out)")
        #expect(lines.suffix(2) == ["\(dir)/manifest.json: invalid: 2 error(s)", "\(config): invalid: 1 error(s)"], "\(r.out)")

        let missing = try VitrineBinary.run(["validate", dir, "--config", dir + "/nowhere.json"])
        #expect(missing.code == 66)
        #expect(missing.err.contains("config not found: \(dir)/nowhere.json"), "\(missing.err)")
        let folder = try VitrineBinary.run(["validate", dir, "--config", dir + "/media"])
        #expect(folder.code == 66)
        #expect(folder.err.contains("config \(dir)/media is not a regular file"), "\(folder.err)")
        let twice = try VitrineBinary.run(["validate", dir, "--config", config, "--config", dir + "/manifest.json"])
        #expect(twice.code == 64)
        #expect(twice.err.contains("--config is given twice"), "\(twice.err)")
        let empty = try VitrineBinary.run(["validate", dir, "--config="])
        #expect(empty.code == 64)
        #expect(empty.err.contains("--config needs a value"), "\(empty.err)")
    }

    @Test("a FIFO named manifest.json is refused at once, not opened (opening it would wait for a writer)")
    func fifoManifest() throws {
        let dir = try Harness.newFolder("validate-fifo")
        #expect(mkfifo(dir + "/manifest.json", 0o644) == 0)
        let r = try VitrineBinary.run(["validate", dir])
        #expect(r.code == 65)
        #expect(r.out.contains("cannot read manifest: \(dir)/manifest.json (not a regular file)"), "\(r.out)")
    }
}
