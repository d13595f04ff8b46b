import Foundation
import Testing
@testable import Vitrine
import VitrineCore
import VitrineTestSupport

/// The command line as an installer meets it: help, mistakes, missing folders, exit codes, pipes
/// that close, and log lines.
@Suite("Command line: an installer's first steps", .serialized, .enabled(if: VitrineBinary.available, VitrineBinary.absent))
struct CommandLineTests {
    /// A catalog folder with one red clip of `seconds`.
    static func redCatalog(seconds: Double = 2) throws -> String {
        let dir = try Harness.newFolder("cli-red")
        try FileManager.default.copyItem(atPath: try Harness.colorClip("red", seconds: seconds), toPath: dir + "/media/red.mp4")
        try Harness.writeManifest("""
            { "schema": "vitrine.manifest/1", "version": 1, "playlist": [ { "id": "r", "type": "video", "src": "media/red.mp4" } ] }
            """, in: dir)
        return dir
    }

    static let commands = ["run", "play", "validate", "probe", "bench", "import"]

    @Test("-h and --help print each command's usage and exit 0, wherever they stand; `help CMD` too", arguments: commands)
    func help(command: String) throws {
        for args in [[command, "-h"], [command, "--help"], [command, "x", "-h"], ["help", command]] {
            let r = try VitrineBinary.run(args)
            #expect(r.code == 0, "\(args): \(r.err)")
            #expect(r.out.hasPrefix("usage: vitrine \(command)"), "\(args): \(r.out.prefix(80))")
            #expect(r.out.contains("-h, --help"))
        }
        #expect(try VitrineBinary.run(["-h"]).out.hasPrefix("usage: vitrine <command>"))
    }

    @Test("play -h prints the usage: it does not try to play a file named -h")
    func playDashH() throws {
        let r = try VitrineBinary.run(["play", "-h", "--output", "headless", "--duration", "0.1"])
        #expect(r.code == 0)
        #expect(r.out.hasPrefix("usage: vitrine play"))
        #expect(!r.err.contains("-h"), "\(r.err)")
    }

    @Test("an unknown option is refused (64) with the nearest known one; none when nothing is close",
          arguments: [(["run", "--catalg", "/tmp"], "unknown option --catalg (did you mean --catalog?)"),
                      (["run", "--snapshot-a", "1"], "unknown option --snapshot-a (did you mean --snapshot-at?)"),
                      (["import", "--libary", "/tmp/l", "/tmp/s"], "unknown option --libary (did you mean --library?)"),
                      (["play", "--onec", "a.mp4"], "unknown option --onec (did you mean --once?)"),
                      (["run", "-catalog", "x"], "unknown option -catalog (did you mean --catalog?)"),
                      (["run", "--frobnicate"], "unknown option --frobnicate\n"),
                      (["runn"], "unknown command runn (did you mean run?)"),
                      (["run", "--verbose=yes"], "--verbose takes no value")])
    func unknownOption(args: [String], message: String) throws {
        let r = try VitrineBinary.run(args)
        #expect(r.code == 64)
        #expect(r.err.contains(message), "\(r.err)")
    }

    @Test("run --catalog on a folder that does not exist: 66 (EX_NOINPUT) with the folder named, at once")
    func missingCatalog() throws {
        let missing = NSTemporaryDirectory() + "vitrine-no-such-catalog-\(UUID().uuidString)"
        let r = try VitrineBinary.run(["run", "--catalog", missing, "--output", "headless", "--duration", "30"])
        #expect(r.code == 66)
        #expect(r.err == "vitrine: catalog not found: \(missing) (no such folder)\n")
        #expect(r.out == "", "no run: nothing played")
        let v = try VitrineBinary.run(["validate", missing])
        #expect(v.code == 66 && v.err.contains(missing))
    }

    @Test("an empty library still shows the slate (65 at the end, not 66)")
    func emptyLibrary() throws {
        let library = try Harness.newFolder("cli-empty-library") + "/lib"
        let r = try VitrineBinary.run(["run", "--library", library, "--output", "headless", "--duration", "0.3"])
        #expect(r.code == 65)
        #expect(r.err.contains("no playable catalog; showing the slate"))
    }

    @Test("a catalog folder without a manifest shows the slate as a missing manifest, not an invalid one (65)")
    func missingManifest() throws {
        let dir = try Harness.newFolder("cli-no-manifest")
        let r = try VitrineBinary.run(["run", "--catalog", dir, "--output", "headless", "--duration", "0.3"])
        #expect(r.code == 65)
        #expect(r.err.contains("\(dir)/manifest.json: no such file; showing the slate"), "\(r.err)")
        #expect(!r.err.contains("invalid manifest"))
    }

    @Test("--catalog takes the manifest file too, as validate does")
    func catalogManifestFile() throws {
        let dir = try Self.redCatalog()
        let r = try VitrineBinary.run(["run", "--catalog", dir + "/manifest.json", "--output", "headless", "--duration", "1",
                                       // On the virtual clock (a snapshot run): exactly 30 frames, however busy the machine.
                                       "--snapshot-at", "0.5", "--snapshot-dir", Harness.scratch + "/cli-shots"])
        #expect(r.code == 0, "\(r.err)")
        #expect(r.out.contains("frames presented: 30"), "\(r.out)")
        #expect(r.err.contains("now playing r (media/red.mp4)"))
    }

    @Test("a catalog where nothing can play exits 65 whatever the options (real time, snapshots, a recording)")
    func unplayableExitCode() throws {
        let dir = try Harness.newFolder("cli-unplayable")
        try Data("not a video\n".utf8).write(to: URL(fileURLWithPath: dir + "/media/a.mp4"))
        try Harness.writeManifest("""
            { "schema": "vitrine.manifest/1", "version": 1, "playlist": [ { "id": "a", "type": "video", "src": "media/a.mp4" } ] }
            """, in: dir)
        let variants: [[String]] = [["--duration", "0.5"], ["--duration", "0.5", "--realtime"],
                                    ["--snapshot-at", "0.2", "--snapshot-dir", dir + "/shots"],
                                    ["--record", dir + "/out.mkv", "--duration", "0.5"]]
        // The decoder's failure races the start of playback: several runs of each.
        for options in variants {
            for _ in 0..<3 {
                let r = try VitrineBinary.run(["run", "--catalog", dir, "--output", "headless", "--audio-device", "none"] + options)
                #expect(r.code == 65, "\(options): exit \(r.code)\n\(r.err)")
            }
        }
    }

    @Test("a reader that goes away (run … | head) ends nothing: the run plays to its --duration and exits 0",
          arguments: [(1, nil), (nil, 1), (1, 1)] as [(Int?, Int?)])
    func closedPipe(outBytes: Int?, errBytes: Int?) throws {
        let dir = try Self.redCatalog()
        let events = dir + "/events.jsonl"
        let p = try VitrineBinary.start(["run", "--catalog", dir, "--output", "headless", "--realtime", "--duration", "1.5",
                                         "--events", events, "--verbose"],
                                        standardOutput: outBytes.map { .closeAfter(bytes: $0) } ?? .capture,
                                        standardError: errBytes.map { .closeAfter(bytes: $0) } ?? .capture)
        let r = p.wait()
        #expect(!r.signaled, "ended by signal \(r.status)")
        #expect(r.code == 0, "exit \(r.status) (132 is SIGILL: a trap on the write error)")
        let lines = try String(contentsOfFile: events, encoding: .utf8).split(separator: "\n")
        #expect(lines.last?.contains("\"event\":\"decoderCanceled\"") == true, "the run ended by itself: \(lines.last ?? "")")
        #expect(lines.contains { $0.contains("\"event\":\"renderingStarted\"") })
    }

    @Test("validate | head -c 0: no SIGPIPE death")
    func closedPipeValidate() throws {
        let dir = try Self.redCatalog()
        let r = try VitrineBinary.start(["validate", dir], standardOutput: .closeAfter(bytes: 0)).wait()
        #expect(!r.signaled, "ended by signal \(r.status)")
        #expect(r.code == 0)
    }

    /// A log line on stderr: `2026-12-01T21:30:00.123Z info [vitrine] …`.
    static func isStamped(_ line: Substring) -> Bool {
        line.contains(#/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (debug|info|warning|error) \[vitrine/#)
    }

    @Test("log lines on stderr carry the UTC time, unless stderr is the journal's stream (JOURNAL_STREAM)")
    func timestamps() throws {
        let dir = try Self.redCatalog(seconds: 1)
        let args = ["run", "--catalog", dir, "--output", "headless", "--duration", "0.3"]
        let plain = try VitrineBinary.run(args)
        let lines = plain.err.split(separator: "\n")
        #expect(!lines.isEmpty && lines.allSatisfy(Self.isStamped), "\(plain.err)")
        // Under systemd, JOURNAL_STREAM names stderr's device and inode: journald stamps the lines.
        let file = dir + "/journal-stand-in.log"
        FileManager.default.createFile(atPath: file, contents: nil)
        var st = stat()
        #expect(stat(file, &st) == 0)
        let journal = try VitrineBinary.start(args, environment: ["JOURNAL_STREAM": "\(st.st_dev):\(st.st_ino)"],
                                              standardError: .file(file)).wait()
        #expect(journal.code == 0)
        let text = try String(contentsOfFile: file, encoding: .utf8)
        #expect(text.hasPrefix("info [vitrine] output: headless"), "\(text.prefix(120))")
        #expect(!text.split(separator: "\n").contains(where: Self.isStamped))
        // Inherited by a child whose stderr went elsewhere: the variable names another file.
        let other = try VitrineBinary.run(args, environment: ["JOURNAL_STREAM": "\(st.st_dev):\(st.st_ino)"])
        #expect(other.err.split(separator: "\n").allSatisfy(Self.isStamped))
    }

    @Test("--log-file FILE appends timestamped lines to FILE, and none to stderr")
    func logFile() throws {
        let dir = try Self.redCatalog(seconds: 1)
        let file = dir + "/vitrine.log"
        try Data("earlier line\n".utf8).write(to: URL(fileURLWithPath: file))
        let r = try VitrineBinary.run(["run", "--catalog", dir, "--output", "headless", "--duration", "0.3", "--log-file", file])
        #expect(r.code == 0)
        #expect(r.err == "")
        let lines = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n")
        #expect(lines.first == "earlier line")
        #expect(lines.count > 3 && lines.dropFirst().allSatisfy(Self.isStamped), "\(lines)")
        #expect(lines.contains { $0.hasSuffix("info [vitrine] first frame on screen") })
        let bad = try VitrineBinary.run(["run", "--catalog", dir, "--log-file", dir + "/no/such/folder/x.log"])
        #expect(bad.code == 64 && bad.err.contains("cannot open log file"), "\(bad.err)")
    }
}
