import Foundation
import Testing
@testable import VitrineCore

/// Parses `json` without looking at files and returns every problem as `path: reason`.
func problems(_ json: String) -> [String] {
    ManifestParser.parse(Array(json.utf8)).problems.map(\.description)
}

/// A valid manifest whose `playlist` is `items` and which ends with `extra` top-level members.
func manifest(items: String, extra: String = "") -> String {
    #"{"schema": "vitrine.manifest/1", "version": 1, "playlist": [\#(items)]\#(extra)}"#
}

/// A valid manifest with one video item holding `fields` besides id, type and src.
func manifest(itemFields fields: String, extra: String = "") -> String {
    manifest(items: #"{"id": "a", "type": "video", "src": "media/a.mp4"\#(fields)}"#, extra: extra)
}

/// A valid manifest with one cue point (time 1, id "c") whose action is `action`.
func manifest(action: String, extra: String = "") -> String {
    manifest(itemFields: #", "cuePoints": [{"time": 1, "id": "c", "action": \#(action)}]"#, extra: extra)
}

@Suite("Manifest parsing")
struct ManifestParserTests {
    @Test func fullManifestParsesToExactValues() throws {
        let json = #"""
        {
          "schema": "vitrine.manifest/1",
          "version": 42,
          "title": "Lobby, December",
          "display": { "mode": "1920x1080@60", "rotation": 90, "fit": "cover", "background": "#10a0Ff" },
          "audio": { "device": "hw:0,0", "volume": 0.8 },
          "loop": false,
          "idle": { "after": 90, "jump": "welcome" },
          "tap": { "type": "showOverlay", "overlay": "promo" },
          "playlist": [
            { "id": "welcome", "type": "video", "src": "media/welcome.mp4", "size": 18874368,
              "sha256": "9F2C000000000000000000000000000000000000000000000000000000000001",
              "cuePoints": [
                { "time": 12.0, "id": "promo", "action": { "type": "showOverlay", "overlay": "promo" } },
                { "time": 30, "id": "promo-end", "action": { "type": "hideOverlays" } },
                { "time": 31, "id": "note", "action": { "type": "log", "message": "half-way" } },
                { "time": 32, "id": "skip", "action": { "type": "jump", "item": "jingle", "time": 1.5 } },
                { "time": 33, "id": "back", "action": { "type": "jump", "item": "welcome" } },
                { "time": 34, "id": "seek", "action": { "type": "seek", "time": 2 } },
                { "time": 35, "id": "p", "action": { "type": "pause" } },
                { "time": 36, "id": "r", "action": { "type": "resume" } },
                { "time": 37, "id": "v", "action": { "type": "setVolume", "volume": 0.25 } }
              ] },
            { "id": "menu", "type": "image", "src": "media/menu.png", "duration": 10,
              "transition": { "type": "crossfade", "duration": 0.75 } },
            { "id": "jingle", "type": "audio", "src": "media/jingle.opus", "transition": { "type": "crossfade" } }
          ],
          "overlays": { "promo": { "title": "Winter opening hours" } }
        }
        """#
        let result = ManifestParser.parse(Array(json.utf8))
        #expect(result.problems == [])
        let expected = Manifest(
            schema: "vitrine.manifest/1", version: 42, title: "Lobby, December",
            display: DisplaySettings(mode: .exact(width: 1920, height: 1080, refresh: 60), rotation: .clockwise90,
                                     fit: .cover, background: RGBColor(red: 0x10, green: 0xA0, blue: 0xFF)),
            audio: AudioSettings(device: "hw:0,0", volume: 0.8),
            loop: false,
            playlist: [
                PlaylistItem(id: "welcome", type: .video, src: "media/welcome.mp4", size: 18_874_368,
                             sha256: "9f2c000000000000000000000000000000000000000000000000000000000001",
                             cuePoints: [
                                CuePoint(time: 12, id: "promo", action: .showOverlay("promo")),
                                CuePoint(time: 30, id: "promo-end", action: .hideOverlays),
                                CuePoint(time: 31, id: "note", action: .log(message: "half-way")),
                                CuePoint(time: 32, id: "skip", action: .jump(item: "jingle", time: 1.5)),
                                CuePoint(time: 33, id: "back", action: .jump(item: "welcome", time: nil)),
                                CuePoint(time: 34, id: "seek", action: .seek(time: 2)),
                                CuePoint(time: 35, id: "p", action: .pause),
                                CuePoint(time: 36, id: "r", action: .resume),
                                CuePoint(time: 37, id: "v", action: .setVolume(0.25)),
                             ]),
                PlaylistItem(id: "menu", type: .image, src: "media/menu.png", duration: 10,
                             transition: Transition(type: .crossfade, duration: 0.75)),
                PlaylistItem(id: "jingle", type: .audio, src: "media/jingle.opus",
                             transition: Transition(type: .crossfade, duration: 0.5)),
            ],
            overlays: ["promo": Overlay(title: "Winter opening hours")],
            idle: IdleRule(after: 90, item: "welcome"), tap: .showOverlay("promo"))
        #expect(result.manifest == expected)
    }

    @Test func minimalManifestGetsDefaults() throws {
        let result = ManifestParser.parse(Array(manifest(items: #"{"id": "a", "type": "video", "src": "a.mp4"}"#).utf8))
        #expect(result.problems == [])
        #expect(result.manifest == Manifest(version: 1, playlist: [PlaylistItem(id: "a", type: .video, src: "a.mp4")]))
        #expect(result.manifest?.title == "")
        #expect(result.manifest?.display == DisplaySettings(mode: .preferred, rotation: .none, fit: .contain, background: .black))
        #expect(result.manifest?.audio == AudioSettings(device: "default", volume: 1))
        #expect(result.manifest?.loop == true)
    }

    @Test func integralNumbersCountAsIntegers() {
        let result = ManifestParser.parse(Array(#"{"schema": "vitrine.manifest/1", "version": 7.0, "display": {"rotation": 2.7e2}, "playlist": [{"id": "a", "type": "video", "src": "a", "size": 1e3}]}"#.utf8))
        #expect(result.problems == [])
        #expect(result.manifest?.version == 7)
        #expect(result.manifest?.display.rotation == .clockwise270)
        #expect(result.manifest?.playlist.first?.size == 1000)
    }

    struct BadCase: Sendable, CustomTestStringConvertible {
        var json: String
        var expected: [String]
        init(_ json: String, _ expected: String...) { self.json = json; self.expected = expected }
        var testDescription: String { expected.joined(separator: "; ") }
    }

    static let badCases: [BadCase] = [
        // The document
        BadCase(#"{"schema": "#, "invalid JSON at line 1, column 12: unexpected end of text, expected a value"),
        BadCase("{\"schema\": 1,\n \"schema\": 2}", #"invalid JSON at line 2, column 2: duplicate key "schema""#),
        BadCase("[]", "the manifest must be a JSON object at its root, found an array"),
        BadCase("{}", "schema: required", "version: required", "playlist: required"),
        // Top level
        BadCase(#"{"schema": "vitrine.manifest/2", "version": 1, "playlist": [{"id": "a", "type": "video", "src": "a"}]}"#,
                #"schema: unsupported schema "vitrine.manifest/2" (expected "vitrine.manifest/1")"#),
        BadCase(#"{"schema": 1, "version": 1, "playlist": [{"id": "a", "type": "video", "src": "a"}]}"#,
                "schema: expected a string, found a number"),
        BadCase(#"{"schema": "vitrine.manifest/1", "version": -1, "playlist": [{"id": "a", "type": "video", "src": "a"}]}"#,
                "version: must be at least 0 (found -1)"),
        BadCase(#"{"schema": "vitrine.manifest/1", "version": 1.5, "playlist": [{"id": "a", "type": "video", "src": "a"}]}"#,
                "version: expected an integer, found 1.5"),
        BadCase(#"{"schema": "vitrine.manifest/1", "version": "1", "playlist": [{"id": "a", "type": "video", "src": "a"}]}"#,
                "version: expected an integer, found a string"),
        BadCase(#"{"schema": "vitrine.manifest/1", "version": 1e30, "playlist": [{"id": "a", "type": "video", "src": "a"}]}"#,
                "version: integer out of range: 1e30"),
        BadCase(manifest(itemFields: "", extra: #", "title": 5"#), "title: expected a string, found a number"),
        BadCase(manifest(itemFields: "", extra: #", "loop": "yes""#), "loop: expected a boolean, found a string"),
        BadCase(manifest(itemFields: "", extra: #", "Loop": true"#), #"Loop: unknown field "Loop""#),
        BadCase(#"{"schema": "vitrine.manifest/1", "version": 1, "playlist": []}"#, "playlist: must contain at least one item"),
        BadCase(#"{"schema": "vitrine.manifest/1", "version": 1, "playlist": {}}"#, "playlist: expected an array, found an object"),
        BadCase(manifest(itemFields: "", extra: #", "overlays": []"#), "overlays: expected an object, found an array"),
        BadCase(manifest(itemFields: "", extra: #", "idle": 5"#), "idle: expected an object, found a number"),
        BadCase(manifest(itemFields: "", extra: #", "tap": {"type": "showOverlay", "overlay": "menu"}"#),
                #"tap.overlay: unknown overlay "menu" (the manifest has no overlays)"#),
        BadCase(manifest(itemFields: "", extra: #", "tap": {"type": "wave"}"#),
                #"tap.type: unknown action type "wave" (expected log, jump, seek, pause, resume, setVolume, showOverlay, hideOverlays, interrupt or endInterrupt)"#),
        // display and audio
        BadCase(manifest(itemFields: "", extra: #", "display": {"rotation": 45}"#), "display.rotation: must be 0, 90, 180 or 270 (found 45)"),
        BadCase(manifest(itemFields: "", extra: #", "display": {"rotation": "90"}"#), "display.rotation: expected an integer, found a string"),
        BadCase(manifest(itemFields: "", extra: #", "display": {"mode": "1920x1080"}"#),
                #"display.mode: invalid mode "1920x1080" (expected "WxH@Hz", "preferred" or "highest")"#),
        BadCase(manifest(itemFields: "", extra: #", "display": {"mode": "100000x100000@30"}"#),
                #"display.mode: mode "100000x100000@30": 100000x100000 is larger than Vitrine drives (up to 7680 pixels a side and 7680x4320 pixels in all)"#),
        BadCase(manifest(itemFields: "", extra: #", "display": {"mode": "7680x7680@30"}"#),
                #"display.mode: mode "7680x7680@30": 7680x7680 is larger than Vitrine drives (up to 7680 pixels a side and 7680x4320 pixels in all)"#),
        BadCase(manifest(itemFields: "", extra: #", "display": {"mode": "320x180@100000"}"#),
                #"display.mode: mode "320x180@100000": 100000 Hz is above 240 Hz"#),
        BadCase(manifest(itemFields: "", extra: #", "display": {"fit": "fill"}"#),
                #"display.fit: unknown fit "fill" (expected contain, cover or stretch)"#),
        BadCase(manifest(itemFields: "", extra: ##", "display": {"background": "#12345"}"##),
                ##"display.background: invalid colour "#12345" (expected #RRGGBB)"##),
        BadCase(manifest(itemFields: "", extra: #", "display": {"brightness": 1}"#), #"display.brightness: unknown field "brightness""#),
        BadCase(manifest(itemFields: "", extra: #", "display": "1080p""#), "display: expected an object, found a string"),
        BadCase(manifest(itemFields: "", extra: #", "audio": {"volume": 1.5}"#), "audio.volume: must be between 0 and 1 (found 1.5)"),
        BadCase(manifest(itemFields: "", extra: #", "audio": {"volume": -0.1}"#), "audio.volume: must be between 0 and 1 (found -0.1)"),
        BadCase(manifest(itemFields: "", extra: #", "audio": {"device": ""}"#), "audio.device: must not be empty"),
        // Items
        BadCase(manifest(items: "3"), "playlist[0]: expected an object, found a number"),
        BadCase(manifest(items: "{}"), "playlist[0].id: required", "playlist[0].type: required", "playlist[0].src: required"),
        BadCase(manifest(items: #"{"id": "a", "type": "video", "srcc": "a.mp4"}"#),
                #"playlist[0].srcc: unknown field "srcc""#, "playlist[0].src: required"),
        BadCase(manifest(items: #"{"id": "", "type": "video", "src": "a.mp4"}"#), "playlist[0].id: must not be empty"),
        BadCase(manifest(items: #"{"id": "a", "type": "video", "src": "a.mp4"}, {"id": "b", "type": "audio", "src": "b"}, {"id": "a", "type": "audio", "src": "c"}"#),
                #"playlist[2].id: duplicate id "a" (also playlist[0])"#),
        BadCase(manifest(items: #"{"id": "a", "type": "vid", "src": "a.mp4"}"#),
                #"playlist[0].type: unknown type "vid" (expected video, image or audio)"#),
        BadCase(manifest(items: #"{"id": "a", "type": "image", "src": "a.png"}"#), "playlist[0].duration: required for images"),
        BadCase(manifest(itemFields: #", "duration": 0"#), "playlist[0].duration: must be greater than 0 (found 0)"),
        BadCase(manifest(itemFields: #", "duration": "10""#), "playlist[0].duration: expected a number, found a string"),
        BadCase(manifest(itemFields: #", "size": -1"#), "playlist[0].size: must be at least 0 (found -1)"),
        BadCase(manifest(itemFields: #", "size": 1.5"#), "playlist[0].size: expected an integer, found 1.5"),
        BadCase(manifest(itemFields: #", "sha256": "abc""#), #"playlist[0].sha256: expected 64 hexadecimal digits, found "abc""#),
        // src paths
        BadCase(manifest(items: #"{"id": "a", "type": "video", "src": ""}"#), "playlist[0].src: must not be empty"),
        BadCase(manifest(items: #"{"id": "a", "type": "video", "src": "/media/a.mp4"}"#),
                "playlist[0].src: must be a relative path, not absolute: /media/a.mp4"),
        BadCase(manifest(items: #"{"id": "a", "type": "video", "src": "media\\a.mp4"}"#),
                #"playlist[0].src: must use "/" between folders, not "\": media\a.mp4"#),
        BadCase(manifest(items: #"{"id": "a", "type": "video", "src": "a\u0000.mp4"}"#), "playlist[0].src: must not contain a NUL character"),
        BadCase(manifest(items: #"{"id": "a", "type": "video", "src": "media/../../etc/passwd"}"#),
                #"playlist[0].src: must not contain a ".." component: media/../../etc/passwd"#),
        BadCase(manifest(items: #"{"id": "a", "type": "video", "src": ".."}"#), #"playlist[0].src: must not contain a ".." component: .."#),
        // Transitions
        BadCase(manifest(itemFields: #", "transition": {"type": "fade"}"#),
                #"playlist[0].transition.type: unknown transition "fade" (expected cut or crossfade)"#),
        BadCase(manifest(itemFields: #", "transition": {"duration": -1}"#),
                "playlist[0].transition.duration: must not be negative (found -1)", "playlist[0].transition.type: required"),
        BadCase(manifest(itemFields: #", "transition": {"type": "cut", "easing": "linear"}"#),
                #"playlist[0].transition.easing: unknown field "easing""#),
        BadCase(manifest(itemFields: #", "transition": "cut""#), "playlist[0].transition: expected an object, found a string"),
        // Cue points
        BadCase(manifest(itemFields: #", "cuePoints": {}"#), "playlist[0].cuePoints: expected an array, found an object"),
        BadCase(manifest(itemFields: #", "cuePoints": [{}]"#), "playlist[0].cuePoints[0].time: required",
                "playlist[0].cuePoints[0].id: required", "playlist[0].cuePoints[0].action: required"),
        BadCase(manifest(itemFields: #", "cuePoints": [{"time": -1, "id": "c", "action": {"type": "pause"}}]"#),
                "playlist[0].cuePoints[0].time: must not be negative (found -1)"),
        BadCase(manifest(itemFields: #", "cuePoints": [{"time": 1, "id": "c", "action": {"type": "pause"}}, {"time": 2, "id": "c", "action": {"type": "resume"}}]"#),
                #"playlist[0].cuePoints[1].id: duplicate id "c" (also playlist[0].cuePoints[0])"#),
        BadCase(manifest(itemFields: #", "cuePoints": [{"time": 1, "id": "c", "action": {"type": "pause"}, "at": 1}]"#),
                #"playlist[0].cuePoints[0].at: unknown field "at""#),
        // Actions
        BadCase(manifest(action: #"{"type": "jump", "item": "welcom"}"#), #"playlist[0].cuePoints[0].action.item: unknown item "welcom""#),
        BadCase(manifest(action: #"{"type": "jump", "item": "a", "time": -2}"#),
                "playlist[0].cuePoints[0].action.time: must not be negative (found -2)"),
        BadCase(manifest(action: #"{"type": "jump"}"#), "playlist[0].cuePoints[0].action.item: required"),
        BadCase(manifest(action: #"{"type": "seek"}"#), "playlist[0].cuePoints[0].action.time: required"),
        BadCase(manifest(action: #"{"type": "log"}"#), "playlist[0].cuePoints[0].action.message: required"),
        BadCase(manifest(action: #"{"type": "log", "message": 1}"#), "playlist[0].cuePoints[0].action.message: expected a string, found a number"),
        BadCase(manifest(action: #"{"type": "log", "message": "x", "item": "a"}"#),
                #"playlist[0].cuePoints[0].action.item: unknown field "item""#),
        BadCase(manifest(action: #"{"type": "pause", "time": 1}"#), #"playlist[0].cuePoints[0].action.time: unknown field "time""#),
        BadCase(manifest(action: #"{"type": "setVolume", "volume": 2}"#),
                "playlist[0].cuePoints[0].action.volume: must be between 0 and 1 (found 2)"),
        BadCase(manifest(action: #"{"type": "setVolume"}"#), "playlist[0].cuePoints[0].action.volume: required"),
        BadCase(manifest(action: #"{"type": "showOverlay", "overlay": "promo"}"#),
                #"playlist[0].cuePoints[0].action.overlay: unknown overlay "promo" (the manifest has no overlays)"#),
        BadCase(manifest(action: #"{"type": "showOverlay", "overlay": "promo"}"#, extra: #", "overlays": {"menu": {}}"#),
                #"playlist[0].cuePoints[0].action.overlay: unknown overlay "promo""#),
        BadCase(manifest(action: #"{"type": "showOverlay"}"#, extra: #", "overlays": {"menu": {}}"#),
                "playlist[0].cuePoints[0].action.overlay: required"),
        BadCase(manifest(action: #"{"type": "blink", "rate": 2}"#),
                #"playlist[0].cuePoints[0].action.type: unknown action type "blink" (expected log, jump, seek, pause, resume, setVolume, showOverlay, hideOverlays, interrupt or endInterrupt)"#),
        BadCase(manifest(action: #"{"item": "a"}"#), "playlist[0].cuePoints[0].action.type: required"),
        BadCase(manifest(action: #"{"type": 3}"#), "playlist[0].cuePoints[0].action.type: expected a string, found a number"),
        BadCase(manifest(action: #""pause""#), "playlist[0].cuePoints[0].action: expected an object, found a string"),
    ]

    @Test(arguments: badCases)
    func badManifestGivesExactProblems(_ c: BadCase) {
        let result = ManifestParser.parse(Array(c.json.utf8))
        #expect(result.problems.map(\.description) == c.expected)
        #expect(result.problems.allSatisfy { $0.severity == .error })
        #expect(result.manifest == nil)
    }

    @Test func everyProblemIsReportedInOnePass() {
        let json = #"""
        {
          "schema": "vitrine.manifest/0",
          "version": -3,
          "display": { "rotation": 45, "fit": "fill", "background": "black", "mode": "4k" },
          "audio": { "volume": 3 },
          "playlist": [
            { "id": "intro", "type": "video", "src": "/abs/intro.mp4", "srcc": "x",
              "cuePoints": [
                { "time": -1, "id": "c1", "action": { "type": "jump", "item": "welcom" } },
                { "time": 2, "id": "c1", "action": { "type": "showOverlay", "overlay": "nope" } }
              ] },
            { "id": "intro", "type": "image", "src": "media\\card.png" },
            { "id": "x", "type": "sound", "src": "../tone.mp4", "duration": -5 }
          ],
          "overlays": { "promo": {} },
          "extra": true
        }
        """#
        let result = ManifestParser.parse(Array(json.utf8))
        #expect(result.manifest == nil)
        #expect(result.problems.count == 20)
        #expect(result.problems.map(\.description) == [
            #"schema: unsupported schema "vitrine.manifest/0" (expected "vitrine.manifest/1")"#,
            "version: must be at least 0 (found -3)",
            "display.rotation: must be 0, 90, 180 or 270 (found 45)",
            #"display.fit: unknown fit "fill" (expected contain, cover or stretch)"#,
            #"display.background: invalid colour "black" (expected #RRGGBB)"#,
            #"display.mode: invalid mode "4k" (expected "WxH@Hz", "preferred" or "highest")"#,
            "audio.volume: must be between 0 and 1 (found 3)",
            "playlist[0].src: must be a relative path, not absolute: /abs/intro.mp4",
            #"playlist[0].srcc: unknown field "srcc""#,
            "playlist[0].cuePoints[0].time: must not be negative (found -1)",
            #"playlist[0].cuePoints[0].action.item: unknown item "welcom""#,
            #"playlist[0].cuePoints[1].id: duplicate id "c1" (also playlist[0].cuePoints[0])"#,
            #"playlist[0].cuePoints[1].action.overlay: unknown overlay "nope""#,
            #"playlist[1].id: duplicate id "intro" (also playlist[0])"#,
            #"playlist[1].src: must use "/" between folders, not "\": media\card.png"#,
            "playlist[1].duration: required for images",
            #"playlist[2].type: unknown type "sound" (expected video, image or audio)"#,
            "playlist[2].src: must not contain a \"..\" component: ../tone.mp4",
            "playlist[2].duration: must be greater than 0 (found -5)",
            #"extra: unknown field "extra""#,
        ])
    }

    @Test func cuePointPastTheDurationIsOnlyAWarning() throws {
        let json = manifest(itemFields: #", "duration": 30, "cuePoints": [{"time": 12, "id": "in", "action": {"type": "pause"}}, {"time": 40.5, "id": "late", "action": {"type": "resume"}}]"#)
        let result = ManifestParser.parse(Array(json.utf8))
        #expect(result.problems == [ManifestProblem(path: "playlist[0].cuePoints[1].time",
                                                    reason: "40.5 is past the item's duration of 30", severity: .warning)])
        #expect(result.warnings.count == 1)
        #expect(result.errors == [])
        let item = try #require(result.manifest?.playlist.first)
        #expect(item.duration == 30)
        #expect(item.cuePoints.map(\.time) == [12, 40.5])
    }

    @Test func problemDescriptionIsPathColonReason() {
        #expect(ManifestProblem(path: "playlist[1].duration", reason: "required for images").description
            == "playlist[1].duration: required for images")
        #expect(ManifestProblem(path: "", reason: "manifest not found: /x").description == "manifest not found: /x")
        #expect(ManifestProblem(path: "a", reason: "b").severity == .error)
    }
}
