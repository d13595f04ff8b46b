// `vitrine chrony-config`: the file it writes for the unit, its exit codes, and the status's clock object.
import Testing
import Foundation
@testable import Vitrine
import VitrineCore
import VitrineTestSupport
import ClockSync
import SystemSupport

@Suite("vitrine chrony-config and the status's clock", .serialized)
struct ChronyConfigCommandTests {
    static func folder() throws -> String {
        let dir = NSTemporaryDirectory() + "chrony-config-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    @Test("--out writes the lines (0644); stdout without it; an invalid config: 65, the paths on stderr, Debian's pool in the file",
          .enabled(if: VitrineBinary.available, VitrineBinary.absent))
    func command() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let config = dir + "/config.json", out = dir + "/vitrine.conf"
        try Data(#"{"clock": {"servers": ["10.0.0.5"], "serve": {"allow": ["10.0.0.0/24"], "localStratum": 8}}}"#.utf8)
            .write(to: URL(fileURLWithPath: config))
        let r = try VitrineBinary.run(["chrony-config", "--config", config, "--out", out])
        #expect(r.code == 0, "\(r.err)")
        #expect(r.out.isEmpty)
        let written = try String(contentsOfFile: out, encoding: .utf8)
        #expect(written.split(separator: "\n").filter { !$0.hasPrefix("#") } == ["server 10.0.0.5 iburst", "allow 10.0.0.0/24", "local stratum 8"])
        let mode = try FileManager.default.attributesOfItem(atPath: out)[.posixPermissions] as? Int
        #expect(mode == 0o644)
        let printed = try VitrineBinary.run(["chrony-config", "--config", config])
        #expect(printed.code == 0 && printed.out == written)

        try Data(#"{"clock": {"servers": ["a b"], "serve": {"allow": ["10.0.0.0/24"], "localStratum": 99}}}"#.utf8)
            .write(to: URL(fileURLWithPath: config))
        let bad = try VitrineBinary.run(["chrony-config", "--config", config, "--out", out])
        #expect(bad.code == 65)
        #expect(bad.err.contains("clock.servers[0]: expected a host name or address"))
        #expect(bad.err.contains("clock.serve.localStratum: expected an integer stratum from 1 to 15"))
        let fallback = try String(contentsOfFile: out, encoding: .utf8)
        #expect(fallback.split(separator: "\n").filter { !$0.hasPrefix("#") } == ["pool 2.debian.pool.ntp.org iburst"])
        let badPrinted = try VitrineBinary.run(["chrony-config", "--config", config])
        #expect(badPrinted.code == 65 && badPrinted.out.isEmpty)

        let missing = try VitrineBinary.run(["chrony-config", "--config", dir + "/none.json"])
        #expect(missing.code == 66 && missing.err.contains("cannot read config \(dir)/none.json"))
        let unwritable = try VitrineBinary.run(["chrony-config", "--config", config.replacingOccurrences(of: "config.json", with: "none.json"),
                                                "--out", dir + "/no-such-folder/vitrine.conf"])
        #expect(unwritable.code == 66)
        try Data("{}".utf8).write(to: URL(fileURLWithPath: config))
        let noFolder = try VitrineBinary.run(["chrony-config", "--config", config, "--out", dir + "/no-such-folder/vitrine.conf"])
        #expect(noFolder.code == 1 && noFolder.err.contains("no-such-folder"))
        #expect(try VitrineBinary.run(["chrony-config", "extra"]).code == 64)
    }

    @Test("the status's clock object: ms and ppm from adjtimex, or the error")
    func statusObject() throws {
        let good = FleetService.clockStatus(.success(ClockSyncState(clockState: 0, status: 0x2001, offset: 120_000, frequency: -806_093,
                                                                   maxError: 3_100, estimatedError: 500)))
        #expect(good.text == #"{"synchronized":true,"offsetMs":0.12,"maxErrorMs":3.1,"estErrorMs":0.5,"frequencyPpm":-12.3,"source":"adjtimex"}"#)
        let failed = FleetService.clockStatus(.failure(.notPermitted))
        #expect(failed.text == #"{"synchronized":null,"source":"adjtimex","error":"adjtimex: Operation not permitted (EPERM)"}"#)
        // This kernel.
        let real = FleetService.clockStatus(Result { () throws(Errno) in try ClockSyncState.read() })
        #expect(real["source"]?.stringValue == "adjtimex")
        #expect(real["maxErrorMs"]?.doubleValue.map { $0 >= 0 } == true)
    }

    @Test("one warning when the clock is not synchronized, one info line when it becomes so, nothing while it stays")
    func logLines() {
        let (sink, records) = LogSink.memory()
        let readings = ReadingScript([
            .success(ClockSyncState(synchronized: false, offsetMilliseconds: 0, maxErrorMilliseconds: 16_000, estimatedErrorMilliseconds: 16_000, frequencyPPM: 0)),
            .success(ClockSyncState(synchronized: false, offsetMilliseconds: 0, maxErrorMilliseconds: 16_000, estimatedErrorMilliseconds: 16_000, frequencyPPM: 0)),
            .success(ClockSyncState(synchronized: true, offsetMilliseconds: 0.25, maxErrorMilliseconds: 3.5, estimatedErrorMilliseconds: 0.5, frequencyPPM: -12)),
            .success(ClockSyncState(synchronized: true, offsetMilliseconds: 0.01, maxErrorMilliseconds: 1, estimatedErrorMilliseconds: 0.2, frequencyPPM: -12)),
            .failure(.notPermitted),
            .failure(.notPermitted),
        ])
        let fleet = FleetService(mqtt: nil, library: NSTemporaryDirectory(), problems: nil, log: Logger(label: "fleet", sink: sink),
                                 readClock: { readings.next() })
        for _ in 0..<6 { fleet.checkClock() }
        let lines = records().map { "\($0.level) \($0.message)" }
        #expect(lines.count == 3, "\(lines)")
        #expect(lines.first?.hasPrefix("warning the clock is not synchronized (adjtimex: max error 16000.000 ms): playing on") == true)
        #expect(lines.dropFirst().first == "info the clock is synchronized (offset 0.250 ms, max error 3.500 ms)")
        #expect(lines.last == "warning the clock's state cannot be read: adjtimex: Operation not permitted (EPERM)")
    }
}

/// Readings handed out in order (the last one repeated).
final class ReadingScript: @unchecked Sendable {
    private var readings: [Result<ClockSyncState, Errno>]
    init(_ readings: [Result<ClockSyncState, Errno>]) { self.readings = readings }
    func next() -> Result<ClockSyncState, Errno> { readings.count > 1 ? readings.removeFirst() : readings[0] }
}
