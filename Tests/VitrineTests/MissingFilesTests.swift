import Foundation
import Testing
import VitrineTestSupport

/// `vitrine run` on a catalog that starts with 12 missing files and then one good 2 s clip, on the
/// headless output in real time (the default without `--record` or `--snapshot-at`): the binary is
/// run as a child process and its standard output and error are read as they come.
@Suite("Missing files at the start of a catalog", .serialized,
       .enabled(if: VitrineBinary.available, VitrineBinary.absent))
struct MissingFilesTests {
    /// A catalog folder: `m0`…`m<missing-1>` name files that do not exist, then `good`, a 2 s 320x180
    /// red clip with a tone.
    static func catalog(missing count: Int = 12) throws -> String {
        let dir = try Harness.newFolder("missing")
        try FileManager.default.copyItem(atPath: try Harness.colorClip("red", seconds: 2, tone: 440), toPath: dir + "/media/good.mp4")
        let missing = (0..<count).map { #"{ "id": "m\#($0)", "type": "video", "src": "media/missing\#($0).mp4" }"# }
        try Harness.writeManifest("""
            { "schema": "vitrine.manifest/1", "version": 1,
              "playlist": [ \((missing + [#"{ "id": "good", "type": "video", "src": "media/good.mp4" }"#]).joined(separator: ",\n")) ] }
            """, in: dir)
        return dir
    }

    static func run(_ dir: String, duration: Double) throws -> RunningProcess {
        try VitrineBinary.start(["run", "--catalog", dir, "--output", "headless", "--duration", String(duration)])
    }

    @Test("12 missing files are skipped in under 1 s in all, and --duration 2 then ends the run on time")
    func skippedQuicklyAndDurationHonoured() throws {
        let p = try Self.run(try Self.catalog(), duration: 2)
        // The run begins (the output is made) once the manifest is read; the skips are timed from there.
        let begun = try #require(p.waitForLine(containing: "output: headless", on: .standardError, timeout: .seconds(30)), "the run never started:\n\(p.outputSoFar.err)")
        let playing = p.waitForLine(containing: "now playing good", on: .standardError, timeout: .seconds(5))
        // 2 s of catalog time after the skips, and a little for the process to start and stop.
        let ended = p.wait(timeout: .seconds(begun.time + 4 - p.elapsed))
        let status = ended.overstayed ? nil : Optional(ended.code)
        let skipped = p.lines.filter { $0.stream == .standardError && $0.text.contains("skipping m") }.count
        let end = p.lines.last.map(\.time) ?? 0
        let summary = p.lines.first { $0.stream == .standardOutput && $0.text.hasPrefix("catalog time:") }?.text ?? "no summary"
        #expect(skipped == 12, "\(skipped) of the 12 missing files were reported")
        let skips = playing.map { $0.time - begun.time }
        #expect(skips.map { $0 < 1 } == true, "the good item started \(skips.map { String(format: "%.2f s", $0) } ?? "not within 5 s") after the output was made, with \(skipped) files skipped")
        #expect(status == 0, "the run did not end by itself within 4 s of starting (\(summary); exit \(status.map(String.init) ?? "none: killed"))")
        #expect(end - begun.time < 4, "the run lasted \(String(format: "%.2f", end - begun.time)) s for --duration 2")
    }

    @Test("SIGTERM while the missing files are skipped, or while the good item plays, ends the run within 0.5 s with its statistics")
    func sigtermHonoured() throws {
        for phase in ["skipping m0", "now playing good"] {
            // The second case plays the good clip alone (looping), so it does not wait for the skips.
            let p = try Self.run(try Self.catalog(missing: phase == "skipping m0" ? 12 : 0), duration: 30)
            let line = p.waitForLine(containing: phase, on: .standardError, timeout: .seconds(30))
            let sent = ProcessInfo.processInfo.systemUptime
            p.send(SIGTERM)
            let ended = p.wait(timeout: .seconds(3))
            let status = ended.overstayed ? nil : Optional(ended.code)
            let took = ProcessInfo.processInfo.systemUptime - sent
            let summary = p.lines.contains { $0.stream == .standardOutput && $0.text.hasPrefix("catalog time:") }
            let check = {
                #expect(line != nil, "no \"\(phase)\" line")
                #expect(status != nil && took < 0.5, "SIGTERM after \"\(phase)\": the run ended \(String(format: "%.2f", took)) s later (exit \(status.map(String.init) ?? "none: killed after 3 s"))")
                #expect(summary, "SIGTERM after \"\(phase)\": no statistics printed")
            }
            check()
        }
    }

    @Test("SIGTERM before any item started (while unreadable files are skipped) is a stop: exit 0 with the statistics, not 65")
    func sigtermBeforeAnyItemExitsZero() throws {
        // Files that exist but are not media: each fails in its decoder, one a vblank, so the run is
        // still skipping them when the signal comes.
        let dir = try Self.catalog(missing: 0)
        var items: [String] = []
        for i in 0..<12 {
            try Data((0..<20000).map { UInt8(truncatingIfNeeded: ($0 + i) &* 2654435761 >> 7) })
                .write(to: URL(fileURLWithPath: dir + "/media/noise\(i).mp4"))
            items.append(#"{ "id": "n\#(i)", "type": "video", "src": "media/noise\#(i).mp4" }"#)
        }
        try Harness.writeManifest("""
            { "schema": "vitrine.manifest/1", "version": 1,
              "playlist": [ \((items + [#"{ "id": "good", "type": "video", "src": "media/good.mp4" }"#]).joined(separator: ",\n")) ] }
            """, in: dir)
        let p = try Self.run(dir, duration: 30)
        let line = p.waitForLine(containing: "skipping n0", on: .standardError, timeout: .seconds(30))
        p.send(SIGTERM)
        let ended = p.wait(timeout: .seconds(3))
        let started = p.lines.contains { $0.text.contains("now playing") }
        #expect(line != nil, "no \"skipping n0\" line:\n\(p.outputSoFar.err)")
        #expect(!started, "an item started before the signal: the case is not the one tested")
        #expect(!ended.overstayed && ended.code == 0, "exit \(ended.overstayed ? "none: killed" : String(ended.code)) after SIGTERM while skipping")
        #expect(p.lines.contains { $0.stream == .standardOutput && $0.text.hasPrefix("catalog time:") }, "no statistics printed")
    }
}
