import Foundation
import Testing
@testable import Vitrine
import CEC
import VitrineTestSupport

/// `CECPower` with libcec for real. This machine (CI, the VMs) has no CEC adapter, so what runs is
/// the path a screen without one takes: one info line, no error, nothing on the caller's thread.
@Suite("CEC power")
struct CECPowerTests {
    static let noAdapter = CECAdapter.detect().isEmpty

    static func records(_ all: [LogRecord], at level: LogRecord.Level) -> [LogRecord] { all.filter { $0.level == level } }

    @Test("a missing adapter is logged once, at info, however often the power is switched; never as a warning or an error",
          .enabled(if: noAdapter, "a CEC adapter is attached to this machine"))
    func missingAdapterOnce() {
        let (sink, logged) = LogSink.memory()
        // No wait between tries: libcec is asked for an adapter each time.
        let cec = CECPower(enabled: true, port: nil, log: Logger(label: "vitrine.cec", sink: sink), retryInterval: 0)
        cec.set(on: false)
        cec.set(on: true)
        cec.set(on: false)
        cec.waitUntilIdle()
        #expect(cec.openAttempts == 3)
        let info = Self.records(logged(), at: .info)
        #expect(info.count == 1)
        #expect(info.first?.message == "no CEC adapter: the display's power is switched through KMS only")
        #expect(info.first?.label == "vitrine.cec")
        #expect(Self.records(logged(), at: .warning).isEmpty)
        #expect(Self.records(logged(), at: .error).isEmpty)
        #expect(Self.records(logged(), at: .debug).count == 2)
    }

    @Test("after a failed open, libcec is asked again at most once a minute",
          .enabled(if: noAdapter, "a CEC adapter is attached to this machine"))
    func retryAtMostOnceAMinute() {
        let (sink, logged) = LogSink.memory()
        let cec = CECPower(enabled: true, port: nil, log: Logger(label: "t", sink: sink))
        for on in [false, true, false] { cec.set(on: on) }
        cec.waitUntilIdle()
        #expect(cec.openAttempts == 1)
        #expect(Self.records(logged(), at: .info).count == 1)
        let skipped = Self.records(logged(), at: .debug)
        #expect(skipped.map(\.message) == Array(repeating: "no CEC adapter open; the next try is at most once every 60 s", count: 2))
        #expect(skipped.map { $0.metadata["power"] } == ["on", "standby"])
    }

    @Test("set(on:) returns before libcec has answered: the caller (the run loop) never waits for the adapter")
    func neverBlocksTheCaller() {
        let (sink, logged) = LogSink.memory()
        // A port that is not an adapter: libcec_open tries it for a while before it gives up.
        let cec = CECPower(enabled: true, port: "/dev/null", log: Logger(label: "t", sink: sink), retryInterval: 0,
                           openTimeoutMilliseconds: 1000)
        let start = Date()
        cec.set(on: false)
        cec.set(on: true)
        let returned = Date().timeIntervalSince(start)
        cec.waitUntilIdle()
        let done = Date().timeIntervalSince(start)
        #expect(returned < 0.05 && returned < done / 4, "set(on:) took \(returned) s of \(done) s")
        #expect(cec.openAttempts == 2)
        // Each distinct failure once above debug; an adapter that fails to open is a warning, not an error.
        let warnings = Self.records(logged(), at: .warning)
        #expect(warnings.map(\.message) == ["cannot open the CEC adapter at /dev/null"])
        #expect(warnings.first?.metadata == ["port": "/dev/null"])
        #expect(Self.records(logged(), at: .error).isEmpty)
    }

    @Test("disabled, it logs nothing and never asks libcec for an adapter")
    func disabled() {
        let (sink, logged) = LogSink.memory()
        let cec = CECPower(enabled: false, port: nil, log: Logger(label: "t", sink: sink))
        cec.set(on: false)
        cec.set(on: true)
        cec.waitUntilIdle()
        #expect(cec.openAttempts == 0)
        #expect(logged().isEmpty)
    }

    @Test("built from the run options: the config's cec.enabled and cec.port")
    func fromOptions() throws {
        var o = RunOptions()
        #expect(CECPower(options: o, log: Logger(label: "t", sink: LogSink.memory().0)).enabled == false)
        try PlayerConfig(json: Array(#"{"cec": {"enabled": true, "port": "/dev/cec0"}}"#.utf8)).apply(to: &o)
        let cec = CECPower(options: o, log: Logger(label: "t", sink: LogSink.memory().0))
        #expect(cec.enabled && cec.port == "/dev/cec0")
    }
}

@Suite("CEC config")
struct CECConfigTests {
    @Test("cec is off by default, and config/config.json leaves it off")
    func defaults() throws {
        #expect(PlayerConfig().cecEnabled == false && PlayerConfig().cecPort == nil)
        let shipped = try PlayerConfig(json: [UInt8](try Data(contentsOf: URL(fileURLWithPath: Repository.path("config/config.json")))))
        #expect(shipped.cecEnabled == false && shipped.cecPort == nil)
        #expect(RunOptions().cecEnabled == false && RunOptions().cecPort == nil)
    }

    @Test("cec.enabled and cec.port are read and applied to the run options")
    func values() throws {
        let c = try PlayerConfig(json: Array(#"{"cec": {"enabled": true, "port": "/dev/ttyACM0"}}"#.utf8))
        #expect(c.cecEnabled == true && c.cecPort == "/dev/ttyACM0")
        var o = RunOptions()
        c.apply(to: &o)
        #expect(o.cecEnabled == true && o.cecPort == "/dev/ttyACM0")
        let auto = try PlayerConfig(json: Array(#"{"cec": {"enabled": true, "port": null}}"#.utf8))
        #expect(auto.cecEnabled == true && auto.cecPort == nil)
    }

    @Test("a cec value of the wrong type, or an unknown cec key, is an error naming its path; every problem at once")
    func wrongTypes() {
        #expect {
            _ = try PlayerConfig(json: Array(#"{"cec": {"enabled": "yes", "port": 3, "adapter": 1}}"#.utf8))
        } throws: { error in
            guard let e = error as? ConfigError else { return false }
            return e.problems.sorted() == [#"cec.adapter: unknown field "adapter""#, "cec.enabled: expected true or false",
                                           "cec.port: expected a string"]
        }
        #expect {
            _ = try PlayerConfig(json: Array(#"{"cec": true}"#.utf8))
        } throws: { error in (error as? ConfigError)?.problems == ["cec: expected an object"] }
        #expect {
            _ = try PlayerConfig(json: Array(#"{"cec": {"port": ""}}"#.utf8))
        } throws: { error in (error as? ConfigError)?.problems == [#"cec.port: expected a com port such as "/dev/ttyACM0", or null"#] }
    }
}
