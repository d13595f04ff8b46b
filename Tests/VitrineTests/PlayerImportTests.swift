import Foundation
import SystemSupport
import Testing
@testable import Vitrine
import VitrineCore
import VitrineTestSupport
import CatalogStore

/// USB catalog updates in a running player (`vitrine run` on a library, headless, in real time):
/// a stick appearing under the media folder, and `vitrine import` handing its stick to the player.
@Suite("Import: in the running player", .serialized)
struct PlayerImportTests {
    /// A stick folder `<mount>/vitrine/` with one `colour` clip and a manifest of `version` giving
    /// its size and sha256 (from `sha256sum`).
    static func stick(at mount: String, colour: String, version: Int, display: String? = nil) throws {
        let dir = mount + "/vitrine"
        try FileManager.default.createDirectory(atPath: dir + "/media", withIntermediateDirectories: true)
        let clip = dir + "/media/\(colour).mp4"
        try? FileManager.default.removeItem(atPath: clip)
        try FileManager.default.copyItem(atPath: try Harness.colorClip(colour, seconds: 1), toPath: clip)
        let size = try #require(try FileManager.default.attributesOfItem(atPath: clip)[.size] as? Int)
        let sum = try Subprocess.output("/usr/bin/sha256sum", [clip]).prefix(64)
        let manifest = """
        {"schema": "vitrine.manifest/1", "version": \(version), "title": "\(colour)",\(display.map { " \"display\": \($0)," } ?? "")
         "playlist": [{"id": "\(colour)", "type": "video", "src": "media/\(colour).mp4", "size": \(size), "sha256": "\(sum)"}]}
        """
        try Data(manifest.utf8).write(to: URL(fileURLWithPath: dir + "/manifest.json"))
    }

    /// The event log's lines with `"event":"<name>"`.
    static func events(_ path: String, _ name: String) -> [String] {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
            .filter { $0.contains("\"event\":\"\(name)\"") }
    }

    /// The player's scans of the media folder, from its debug log, in order.
    static func scans(_ log: String) -> [String] {
        ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
            .filter { $0.contains("[vitrine.import] scanned ") }
    }

    static func waitFor(_ seconds: Double, _ condition: () -> Bool) -> Bool {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end { if condition() { return true }; Thread.sleep(forTimeInterval: 0.1) }
        return condition()
    }

    @Test("a stick mounted under the media folder is imported and played; vitrine import hands a stick to the player (0 switched, 65 refused)",
          .enabled(if: VitrineBinary.available, VitrineBinary.absent))
    func stickAndHandOff() throws {
        let root = try Harness.newFolder("player-import")
        let library = root + "/lib", media = root + "/media", events = root + "/events.jsonl"
        try FileManager.default.createDirectory(atPath: media, withIntermediateDirectories: true)
        // The library starts with red (version 1), imported standalone.
        try Self.stick(at: root + "/first", colour: "red", version: 1)
        let first = try VitrineBinary.run(["import", root + "/first", "--library", library, "--quiet"])
        #expect(first.code == 0, "\(first.err)")

        let player = try VitrineBinary.start(["run", "--library", library, "--media-root", media, "--output", "headless",
                                              "--events", events, "--audio-device", "none", "--duration", "60", "--verbose"],
                                             standardOutput: .discard, standardError: .file(root + "/player.log"))
        defer { player.terminate(); player.wait() }
        #expect(Self.waitFor(10) { Self.events(events, "renderingStarted").count >= 1 })
        #expect(ImportService.isPlayerRunning(library: library))

        // A stick appears (as systemd-mount makes it): the player imports it and plays blue next.
        try Self.stick(at: media + "/sda1", colour: "blue", version: 2)
        #expect(Self.waitFor(20) { Self.events(events, "importFinished").count >= 1 })
        let finished = Self.events(events, "importFinished").first ?? ""
        #expect(finished.contains("\"result\":\"switched\""), "\(finished)")
        #expect(finished.contains("\"message\":\"Updated to version 2: 1 item\""), "\(finished)")
        #expect(Self.waitFor(10) { Self.events(events, "nowPlayingChanged").contains { $0.contains("\"item\":\"blue\"") } })
        // The same stick stays mounted: the player's next scan of the media folder sees it, as handled,
        // and does not import it again.
        let scans = Self.scans(root + "/player.log").count
        #expect(Self.waitFor(20) { Self.scans(root + "/player.log").dropFirst(scans).contains { $0.hasSuffix("1 stick(s) with a manifest, 0 new") } })
        #expect(Self.events(events, "importStarted").count == 1)
        // Pulled and plugged in again: looked at again, and found to be the catalog playing (no fault shown).
        try FileManager.default.removeItem(atPath: media + "/sda1")
        let pulled = Self.scans(root + "/player.log").count
        #expect(Self.waitFor(20) { Self.scans(root + "/player.log").dropFirst(pulled).contains { $0.hasSuffix("0 stick(s) with a manifest, 0 new") } })
        try Self.stick(at: media + "/sda1", colour: "blue", version: 2)
        #expect(Self.waitFor(20) { Self.events(events, "importFinished").count >= 2 })
        #expect(Self.waitFor(5) {
            ((try? String(contentsOfFile: root + "/player.log", encoding: .utf8)) ?? "").contains("the catalog on it is the one playing")
        })

        // `vitrine import` while the player runs: the player does it and answers.
        try Self.stick(at: root + "/third", colour: "green", version: 3)
        let handed = try VitrineBinary.run(["import", root + "/third", "--library", library])
        #expect(handed.code == 0, "\(handed.err)")
        #expect(handed.out == "Updated to version 3: 1 item\n")
        #expect(handed.err.contains("the player is running"))
        let older = try VitrineBinary.run(["import", root + "/first", "--library", library, "--quiet"])
        #expect(older.code == 65)
        #expect(older.err.contains("version 1 is not newer than the last accepted version 3"), "\(older.err)")
        #expect(Self.waitFor(10) { Self.events(events, "nowPlayingChanged").contains { $0.contains("\"item\":\"green\"") } })
        #expect(Self.events(events, "importFinished").count == 4)
        // The stick that plays, handed over again: up to date, exit 0.
        let same = try VitrineBinary.run(["import", root + "/third", "--library", library, "--quiet"])
        #expect(same.code == 0, "\(same.err)")
        #expect(same.out == "Catalog is up to date: version 3 is already playing\n")
        player.terminate()
        player.wait()
        #expect(!ImportService.isPlayerRunning(library: library))
    }
}

extension PlayerImportTests {
    @Test("an imported catalog with another display mode and rotation restarts the display with them, and plays",
          .enabled(if: VitrineBinary.available, VitrineBinary.absent))
    func displayChangeRestartsTheOutput() throws {
        let root = try Harness.newFolder("player-display")
        let library = root + "/lib", media = root + "/media", events = root + "/events.jsonl", log = root + "/player.log"
        try FileManager.default.createDirectory(atPath: media, withIntermediateDirectories: true)
        try Self.stick(at: root + "/first", colour: "red", version: 1, display: #"{"mode": "320x180@30"}"#)
        #expect(try VitrineBinary.run(["import", root + "/first", "--library", library, "--quiet"]).code == 0)

        let player = try VitrineBinary.start(["run", "--library", library, "--media-root", media, "--output", "headless",
                                              "--events", events, "--audio-device", "none", "--duration", "60"],
                                             standardOutput: .discard, standardError: .file(log))
        defer { player.terminate(); player.wait() }
        func logText() -> String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }
        #expect(Self.waitFor(10) { Self.events(events, "renderingStarted").count >= 1 })
        #expect(logText().contains("output: headless 320x180@30.00"))

        try Self.stick(at: media + "/sda1", colour: "blue", version: 2, display: #"{"mode": "160x90@25", "rotation": 180}"#)
        #expect(Self.waitFor(20) { Self.events(events, "importFinished").count >= 1 })
        #expect(Self.events(events, "importFinished").first?.contains("\"result\":\"switched\"") == true)
        // The run ends and a new one starts on the library, with a new output in the new mode.
        #expect(Self.waitFor(10) { logText().contains("output: headless 160x90@25.00") }, "\(logText().suffix(2000))")
        #expect(logText().contains("the new catalog changes the display (mode 160x90@25, rotation 180, fit contain): restarting the display with it"))
        #expect(Self.waitFor(10) { Self.events(events, "nowPlayingChanged").contains { $0.contains("\"item\":\"blue\"") } })
        #expect(player.isRunning)
        player.terminate()
        #expect(player.wait().status == 0)
    }

    @Test("--duration counts the catalog time of every run: a display restart does not start it again",
          .enabled(if: VitrineBinary.available, VitrineBinary.absent))
    func durationAcrossARestart() throws {
        let root = try Harness.newFolder("player-duration")
        let library = root + "/lib", media = root + "/media"
        try FileManager.default.createDirectory(atPath: media, withIntermediateDirectories: true)
        try Self.stick(at: root + "/first", colour: "red", version: 1, display: #"{"mode": "320x180@30"}"#)
        #expect(try VitrineBinary.run(["import", root + "/first", "--library", library, "--quiet"]).code == 0)
        let log = root + "/player.log"
        let player = try VitrineBinary.start(["run", "--library", library, "--media-root", media, "--output", "headless",
                                              "--audio-device", "none", "--duration", "6"], standardError: .file(log))
        // The first run plays before the stick comes.
        #expect(Self.waitFor(10) { ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains("first frame on screen") })
        try Self.stick(at: media + "/sda1", colour: "blue", version: 2, display: #"{"mode": "160x90@30", "fit": "cover"}"#)
        let ended = player.wait()
        let text = ended.out
        #expect(ended.status == 0)
        // One summary per run: the first cut by the restart, the second for the rest of the 6 s.
        let times = text.split(separator: "\n").compactMap { line -> Double? in
            guard line.hasPrefix("catalog time: ") else { return nil }
            return Double(line.dropFirst("catalog time: ".count).split(separator: " ")[0])
        }
        #expect(times.count == 2, "\(text)")
        #expect(abs(times.reduce(0, +) - 6) < 0.1, "catalog times \(times)")
    }

    /// An import service on a fresh library, watching a media folder where a stick with blue
    /// (version 1) is mounted as `sda1`.
    static func serviceWithStick(_ name: String) throws -> ImportService {
        let root = try Harness.newFolder(name)
        try FileManager.default.createDirectory(atPath: root + "/media", withIntermediateDirectories: true)
        try Self.stick(at: root + "/media/sda1", colour: "blue", version: 1)
        return ImportService(library: CatalogLibrary(path: root + "/lib"), settings: ImportSettings(),
                             mediaRoot: root + "/media", eventLog: nil, log: Logger(label: "t", sink: LogSink.memory().0))
    }

    @Test("the import's result banner moves to the next engine (the slate left for the imported catalog) for the rest of its 10 s")
    func resultBannerOutlivesTheSlate() throws {
        let service = try Self.serviceWithStick("import-banner")
        let slate = StatusBanner()
        service.banner = slate
        var switched: LibraryCatalog?
        #expect(Self.waitFor(20) { service.poll(now: monotonicNow()); switched = service.takeSwitchedCatalog(); return switched != nil })
        #expect(slate.current?.title == "Updated to version 1: 1 item")
        // The player leaves the slate: the new engine's banner shows the result too, for what is left of it.
        let next = StatusBanner()
        service.banner = next
        let carried = try #require(next.current)
        #expect(carried.title == "Updated to version 1: 1 item")
        #expect(carried.style == .success)
        #expect((carried.hideAfter ?? 0) > 5 && (carried.hideAfter ?? 99) <= ImportService.resultSeconds)
        // Setting the same board again does not restart it.
        next.hide()
        service.banner = next
        #expect(next.current == nil)
    }
}

@Suite("Event log rotation")
struct EventLogRotationTests {
    @Test("past maxBytes the log moves to FILE.1 and starts again: both stay under the limit, every line whole")
    func rotates() throws {
        let dir = try Harness.newFolder("events")
        let path = dir + "/events.jsonl"
        let log = try EventLog(path: path, maxBytes: 4096)
        for i in 0..<200 { log.write(event: "importStarted", fields: [("source", EventLog.quote("/run/vitrine/media/sda\(i)"))]) }
        let current = try String(contentsOfFile: path, encoding: .utf8), old = try String(contentsOfFile: path + ".1", encoding: .utf8)
        #expect(current.utf8.count <= 4096 && old.utf8.count <= 4096)
        #expect(old.utf8.count > 3000, "rotated when full, not early")
        let lines = (old + current).split(separator: "\n")
        for line in lines { #expect((try? JSONValue(parsing: Array(line.utf8))) != nil, "\(line)") }
        #expect(current.hasSuffix("sda199\"}\n"), "the newest event is in FILE")
    }
}
