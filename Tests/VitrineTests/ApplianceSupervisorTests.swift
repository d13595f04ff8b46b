import Foundation
import Testing
@testable import Vitrine
import VitrineCore
import CatalogStore

/// The appliance's runs, in this process, on the headless output as fast as possible.
@Suite("Appliance supervisor: library, slate and --duration across runs", .serialized)
struct ApplianceSupervisorTests {
    static func options(duration: Double) -> RunOptions {
        var o = RunOptions()
        o.output = .headless
        o.realtime = false
        o.audioDevice = "none"
        o.duration = duration
        return o
    }

    @Test("a catalog with no manifest shows the slate 10 s at a time, looking again after each, until --duration is spent")
    func slateRunsAcrossTheDuration() throws {
        Player.clearStopRequest()
        let dir = try Harness.newFolder("no-manifest")
        let (sink, records) = LogSink.memory()
        let supervisor = ApplianceSupervisor(source: .catalog(folder: dir, manifest: dir + "/manifest.json"),
                                             options: Self.options(duration: 25), eventLog: nil, log: Logger(label: "t", sink: sink))
        #expect(supervisor.run() == .nothingPlayable)
        let looks = records().filter { $0.message == "\(dir)/manifest.json: no such file; showing the slate and checking again in 10 s" }
        #expect(looks.count == 3, "10 s, 10 s, then the last 5 s: \(looks.count) looks")
        #expect(records().filter { $0.message.hasPrefix("output: headless") }.count == 3)
    }

    @Test("a library plays its current catalog (imported from a stick) and ends with --duration")
    func libraryPlaysCurrent() throws {
        Player.clearStopRequest()
        let root = try Harness.newFolder("supervisor-library")
        try PlayerImportTests.stick(at: root + "/stick", colour: "red", version: 1)
        let library = CatalogLibrary(path: root + "/lib")
        let imported = library.importStick(at: root + "/stick")
        try #require(imported.outcome == .switched, "\(imported.message)")
        let (sink, records) = LogSink.memory()
        let supervisor = ApplianceSupervisor(source: .library(library), options: Self.options(duration: 1.5),
                                             mediaRoot: root + "/media", eventLog: nil, log: Logger(label: "t", sink: sink))
        #expect(supervisor.run() == .played)
        let messages = records().map(\.message)
        #expect(messages.contains { $0.hasPrefix("library \(root)/lib: playing current") }, "\(messages.prefix(10))")
        #expect(messages.contains("now playing red (media/red.mp4)"))
        // It held the player lock while it played, and let go of it.
        #expect(!ImportService.isPlayerRunning(library: library.path))
    }
}
