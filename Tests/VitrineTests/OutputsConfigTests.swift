import Foundation
import Testing
@testable import Vitrine
import VitrineCore
import VitrineTestSupport

/// The config's `outputs` (two screens on one card) and what each output's run plays.
@Suite("Two outputs: config and playlists")
struct OutputsConfigTests {
    @Test("outputs: connectors, a named playlist and a wall tile each, into the run options")
    func parsesOutputs() throws {
        let c = try PlayerConfig(json: Array(#"""
        {"outputs": [{"connector": "HDMI-A-1"},
                     {"connector": "HDMI-A-2", "playlist": "menu", "mode": "1280x720@60", "wall": {"columns": 2, "rows": 1, "column": 1, "row": 0}}]}
        """#.utf8))
        #expect(c.outputs.count == 2)
        #expect(c.outputs[0] == OutputSettings(connector: "HDMI-A-1"))
        #expect(c.outputs[1].connector == "HDMI-A-2")
        #expect(c.outputs[1].playlist == "menu")
        #expect(c.outputs[1].wall?.columns == 2)
        #expect(c.outputs[1].wall?.column == 1)
        #expect(c.outputs[1].mode == .exact(width: 1280, height: 720, refresh: 60))
        var o = RunOptions()
        c.apply(to: &o)
        #expect(o.outputs.map(\.connector) == ["HDMI-A-1", "HDMI-A-2"])
        #expect(o.lessor == nil && !o.isSecondaryOutput)
    }

    @Test("bad outputs are errors naming their JSON path", arguments: [
        (#"{"outputs": {"connector": "HDMI-A-1"}}"#, "outputs: expected an array"),
        (#"{"outputs": [{"connector": "HDMI-A-1"}, {"playlist": "x"}]}"#, #"outputs[1]: "connector" is required"#),
        (#"{"outputs": [{"connector": "HDMI-A-1"}, {"connector": ""}]}"#, "outputs[1].connector: expected a connector name"),
        (#"{"outputs": [{"connector": "HDMI-A-1"}, {"connector": "hdmi-a-1"}]}"#, #"outputs[1].connector: "hdmi-a-1" is named twice"#),
        (#"{"outputs": [{"connector": "HDMI-A-1"}, {"connector": "DP-1\nforged: line"}]}"#, #"outputs[1].connector: "DP-1\nforged: line" is not a connector name"#),
        (#"{"connector": "HDMI A 1"}"#, #"connector: "HDMI A 1" is not a connector name"#),
        (#"{"outputs": [{"connector": "HDMI-A-1"}, {"connector": "DP-1", "mode": "big"}]}"#, #"outputs[1].mode: expected "WxH@Hz""#),
        (#"{"outputs": [{"connector": "HDMI-A-1"}, {"connector": "DP-1", "mode": "9000x9000@60"}]}"#, "outputs[1].mode: 9000x9000 is larger"),
        (#"{"outputs": [{"connector": "HDMI-A-1"}, {"connector": "DP-1", "size": 3}]}"#, #"outputs[1]: unknown field "size""#),
        (#"{"outputs": [{"connector": "HDMI-A-1"}, {"connector": "DP-1", "playlist": 3}]}"#, "outputs[1].playlist: expected the name"),
        (#"{"outputs": [{"connector": "HDMI-A-1"}]}"#, #"outputs: one output is the config's "connector""#),
        (#"{"outputs": [{"connector": "HDMI-A-1"}, {"connector": "DP-1", "wall": {"columns": 0}}]}"#, "outputs[1].wall.columns"),
    ])
    func rejectsBadOutputs(json: String, problem: String) {
        do {
            _ = try PlayerConfig(json: Array(json.utf8))
            Issue.record("accepted \(json)")
        } catch {
            #expect(error.problems.contains { $0.hasPrefix(problem) }, "\(error.problems) lacks \(problem)")
        }
    }

    static let cafe = #"""
    {"schema": "vitrine.manifest/1", "version": 1, "loop": false,
     "playlist": [{"id": "a", "type": "image", "src": "a.png", "duration": 5}],
     "playlists": {"menu": [{"id": "m1", "type": "image", "src": "m1.png", "duration": 7},
                            {"id": "m2", "type": "image", "src": "m2.png", "duration": 8}]},
     "schedule": [{"playlist": "menu", "time": {"from": "07:00", "to": "11:00"}}]}
    """#

    @Test("an output's playlist: that named playlist, looped, without the schedule; an unknown name keeps the catalog and is logged")
    func outputPlaylist() throws {
        let parsed = ManifestParser.parse(Array(Self.cafe.utf8), catalogDirectory: nil)
        let manifest = try #require(parsed.manifest, "\(parsed.problems)")
        #expect(manifest.schedule != nil)
        let (sink, records) = LogSink.memory()
        let log = Logger(label: "t", sink: sink)

        let menu = manifest.forOutput(playlist: "menu", log: log)
        #expect(menu.playlist.map(\.id) == ["m1", "m2"])
        #expect(menu.schedule == nil)
        #expect(menu.loop)
        #expect(records().isEmpty)

        #expect(manifest.forOutput(playlist: nil, log: log) == manifest)
        let unknown = manifest.forOutput(playlist: "lunch", log: log)
        #expect(unknown == manifest)
        let line = try #require(records().first)
        #expect(line.level == .error)
        #expect(line.message.contains(#""lunch""#) && line.message.contains("it has menu"))
    }
}
