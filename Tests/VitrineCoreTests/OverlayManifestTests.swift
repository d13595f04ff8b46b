import Foundation
import Testing
@testable import VitrineCore

/// A valid manifest (one video item "a") with `overlays` set to `overlays` and `extra` further members.
private func manifest(overlays: String, extra: String = "") -> String {
    manifest(itemFields: "", extra: #", "overlays": \#(overlays)\#(extra)"#)
}

/// A valid manifest with one overlay "promo" whose members are `fields`.
private func manifest(overlayFields fields: String) -> String {
    manifest(overlays: #"{"promo": {\#(fields)}}"#)
}

@Suite("Manifest: overlays and idle")
struct OverlayManifestTests {
    @Test func overlaysAndIdleParseToExactValues() throws {
        let json = #"""
        {
          "schema": "vitrine.manifest/1", "version": 3,
          "idle": { "after": 90, "jump": "welcome" },
          "playlist": [
            { "id": "welcome", "type": "video", "src": "media/welcome.mp4",
              "cuePoints": [ { "time": 12, "id": "promo", "action": { "type": "showOverlay", "overlay": "promo" } } ] }
          ],
          "overlays": {
            "promo": {
              "title": "Winter opening hours",
              "body": "Mon–Fri 9:00–18:00 · Sat 10:00–16:00",
              "image": "media/logo.png",
              "buttons": [
                { "label": "Watch the trailer", "action": { "type": "jump", "item": "welcome", "time": 0 } },
                { "label": "More", "action": { "type": "showOverlay", "overlay": "bare" } },
                { "label": "Close", "action": { "type": "hideOverlays" } }
              ],
              "style": "slide", "duration": 0.4, "modal": true,
              "dimming": { "color": "#102030", "alpha": 0.75 },
              "margins": { "top": 10, "left": 0, "bottom": 30, "right": 40 },
              "maxWidth": 720, "autoHide": 15
            },
            "bare": {}
          }
        }
        """#
        let result = ManifestParser.parse(Array(json.utf8))
        #expect(result.problems == [])
        let manifest = try #require(result.manifest)
        #expect(manifest.overlayIDs == ["promo", "bare"])
        #expect(manifest.overlays["promo"] == Overlay(
            title: "Winter opening hours", body: "Mon–Fri 9:00–18:00 · Sat 10:00–16:00", image: "media/logo.png",
            buttons: [OverlayButton(label: "Watch the trailer", action: .jump(item: "welcome", time: 0)),
                      OverlayButton(label: "More", action: .showOverlay("bare")),
                      OverlayButton(label: "Close", action: .hideOverlays)],
            style: .slide, duration: 0.4, modal: true,
            dimming: OverlayDimming(color: RGBColor(red: 0x10, green: 0x20, blue: 0x30), alpha: 0.75),
            margins: OverlayMargins(top: 10, left: 0, bottom: 30, right: 40), maxWidth: 720, autoHide: 15))
        #expect(manifest.idle == IdleRule(after: 90, item: "welcome"))
        #expect(manifest.idle?.action == .jump(item: "welcome", time: nil))

        // Every default.
        let bare = try #require(manifest.overlays["bare"])
        #expect(bare == Overlay())
        #expect(bare.title == "" && bare.body == "" && bare.image == nil && bare.buttons == [])
        #expect(bare.style == .fade && bare.duration == 0.25 && bare.modal == false)
        #expect(bare.dimming == OverlayDimming(color: .black, alpha: 0.5))
        #expect(bare.margins == OverlayMargins(top: 20, left: 20, bottom: 20, right: 20))
        #expect(bare.maxWidth == nil && bare.autoHide == nil)
    }

    @Test func noOverlaysOrIdleMeansEmptyAndNil() throws {
        let result = ManifestParser.parse(Array(manifest(itemFields: "").utf8))
        let manifest = try #require(result.manifest)
        #expect(manifest.overlays.isEmpty && manifest.overlayIDs.isEmpty && manifest.idle == nil)
    }

    @Test func manifestInitSortsOverlayIDsByDefault() {
        let m = Manifest(overlays: ["b": Overlay(), "a": Overlay(title: "A")])
        #expect(m.overlayIDs == ["a", "b"])
        #expect(Manifest(overlays: ["b": Overlay(), "a": Overlay()], overlayIDs: ["b", "a"]).overlayIDs == ["b", "a"])
    }

    struct BadCase: Sendable, CustomTestStringConvertible {
        var json: String
        var expected: [String]
        init(_ json: String, _ expected: String...) { self.json = json; self.expected = expected }
        var testDescription: String { expected.joined(separator: "; ") }
    }

    static let badCases: [BadCase] = [
        // The overlays object
        BadCase(manifest(overlays: #"{"promo": 3}"#), "overlays.promo: expected an object, found a number"),
        BadCase(manifest(overlays: #"{"": {}}"#), "overlays: an overlay id must not be empty"),
        // Fields
        BadCase(manifest(overlayFields: #""titel": "Hours""#), #"overlays.promo.titel: unknown field "titel""#),
        BadCase(manifest(overlayFields: #""title": 5"#), "overlays.promo.title: expected a string, found a number"),
        BadCase(manifest(overlayFields: #""body": ["a"]"#), "overlays.promo.body: expected a string, found an array"),
        BadCase(manifest(overlayFields: #""style": "zoom""#),
                #"overlays.promo.style: unknown style "zoom" (expected fade, popup or slide)"#),
        BadCase(manifest(overlayFields: #""duration": 0"#), "overlays.promo.duration: must be greater than 0 (found 0)"),
        BadCase(manifest(overlayFields: #""duration": -0.25"#), "overlays.promo.duration: must be greater than 0 (found -0.25)"),
        BadCase(manifest(overlayFields: #""modal": "yes""#), "overlays.promo.modal: expected a boolean, found a string"),
        BadCase(manifest(overlayFields: #""maxWidth": 0"#), "overlays.promo.maxWidth: must be at least 1 (found 0)"),
        BadCase(manifest(overlayFields: #""maxWidth": 720.5"#), "overlays.promo.maxWidth: expected an integer, found 720.5"),
        BadCase(manifest(overlayFields: #""autoHide": 0"#), "overlays.promo.autoHide: must be greater than 0 (found 0)"),
        BadCase(manifest(overlayFields: #""autoHide": "15""#), "overlays.promo.autoHide: expected a number, found a string"),
        // image
        BadCase(manifest(overlayFields: #""image": "/srv/logo.png""#),
                "overlays.promo.image: must be a relative path, not absolute: /srv/logo.png"),
        BadCase(manifest(overlayFields: #""image": "../logo.png""#),
                #"overlays.promo.image: must not contain a ".." component: ../logo.png"#),
        BadCase(manifest(overlayFields: #""image": """#), "overlays.promo.image: must not be empty"),
        // dimming
        BadCase(manifest(overlayFields: ##""dimming": {"color": "#00000"}"##),
                ##"overlays.promo.dimming.color: invalid colour "#00000" (expected #RRGGBB)"##),
        BadCase(manifest(overlayFields: #""dimming": {"alpha": 1.5}"#),
                "overlays.promo.dimming.alpha: must be between 0 and 1 (found 1.5)"),
        BadCase(manifest(overlayFields: #""dimming": {"opacity": 0.5}"#),
                #"overlays.promo.dimming.opacity: unknown field "opacity""#),
        BadCase(manifest(overlayFields: #""dimming": 0.5"#), "overlays.promo.dimming: expected an object, found a number"),
        // margins
        BadCase(manifest(overlayFields: #""margins": {"top": -1}"#), "overlays.promo.margins.top: must be at least 0 (found -1)"),
        BadCase(manifest(overlayFields: #""margins": {"left": 2.5}"#), "overlays.promo.margins.left: expected an integer, found 2.5"),
        BadCase(manifest(overlayFields: #""margins": {"all": 10}"#), #"overlays.promo.margins.all: unknown field "all""#),
        BadCase(manifest(overlayFields: #""margins": 20"#), "overlays.promo.margins: expected an object, found a number"),
        // buttons
        BadCase(manifest(overlayFields: #""buttons": {}"#), "overlays.promo.buttons: expected an array, found an object"),
        BadCase(manifest(overlayFields: #""buttons": [{}]"#),
                "overlays.promo.buttons[0].label: required", "overlays.promo.buttons[0].action: required"),
        BadCase(manifest(overlayFields: #""buttons": ["Close"]"#), "overlays.promo.buttons[0]: expected an object, found a string"),
        BadCase(manifest(overlayFields: #""buttons": [{"label": "", "action": {"type": "pause"}}]"#),
                "overlays.promo.buttons[0].label: must not be empty"),
        BadCase(manifest(overlayFields: #""buttons": [{"label": "x", "action": {"type": "pause"}, "colour": "red"}]"#),
                #"overlays.promo.buttons[0].colour: unknown field "colour""#),
        BadCase(manifest(overlayFields: #""buttons": [{"label": "ok", "action": {"type": "pause"}}, {"label": "go", "action": {"type": "jump", "item": "welcom"}}]"#),
                #"overlays.promo.buttons[1].action.item: unknown item "welcom""#),
        BadCase(manifest(overlayFields: #""buttons": [{"label": "more", "action": {"type": "showOverlay", "overlay": "nope"}}]"#),
                #"overlays.promo.buttons[0].action.overlay: unknown overlay "nope""#),
        BadCase(manifest(overlayFields: #""buttons": [{"label": "x", "action": {"type": "blink"}}]"#),
                #"overlays.promo.buttons[0].action.type: unknown action type "blink" (expected log, jump, seek, pause, resume, setVolume, showOverlay, hideOverlays, interrupt or endInterrupt)"#),
        BadCase(manifest(overlayFields: #""buttons": [{"label": "x", "action": {"type": "setVolume", "volume": 2}}]"#),
                "overlays.promo.buttons[0].action.volume: must be between 0 and 1 (found 2)"),
        // References from cue points to overlays that exist in a parsed overlays object
        BadCase(manifest(action: #"{"type": "showOverlay", "overlay": "x"}"#, extra: #", "overlays": {"promo": {"title": "T"}}"#),
                #"playlist[0].cuePoints[0].action.overlay: unknown overlay "x""#),
        // idle
        BadCase(manifest(itemFields: "", extra: #", "idle": {}"#), "idle.after: required", "idle.jump: required"),
        BadCase(manifest(itemFields: "", extra: #", "idle": {"after": 0, "jump": "a"}"#), "idle.after: must be greater than 0 (found 0)"),
        BadCase(manifest(itemFields: "", extra: #", "idle": {"after": "90", "jump": "a"}"#), "idle.after: expected a number, found a string"),
        BadCase(manifest(itemFields: "", extra: #", "idle": {"after": 90, "jump": "nowhere"}"#), #"idle.jump: unknown item "nowhere""#),
        BadCase(manifest(itemFields: "", extra: #", "idle": {"after": 90, "jump": 1}"#), "idle.jump: expected a string, found a number"),
        BadCase(manifest(itemFields: "", extra: #", "idle": {"after": 90, "jump": "a", "action": {"type": "pause"}}"#),
                #"idle.action: unknown field "action""#),
    ]

    @Test(arguments: badCases)
    func badOverlayGivesExactProblems(_ c: BadCase) {
        let result = ManifestParser.parse(Array(c.json.utf8))
        #expect(result.problems.map(\.description) == c.expected)
        #expect(result.problems.allSatisfy { $0.severity == .error })
        #expect(result.manifest == nil)
    }

    @Test func everyOverlayProblemIsReportedInOnePass() {
        let json = manifest(overlays: ##"""
        {
          "promo": { "title": 1, "style": "spin", "dimming": { "color": "black", "alpha": -1 },
                     "margins": { "top": -5, "bottom": 1.5 }, "buttons": [ { "label": "Go", "action": { "type": "jump", "item": "b" } },
                     { "action": { "type": "showOverlay", "overlay": "menu" }, "size": 3 } ], "autoHide": -2, "extra": 1 },
          "second": []
        }
        """##, extra: #", "idle": {"after": -1, "jump": "z"}"#)
        #expect(problems(json) == [
            "overlays.promo.title: expected a string, found a number",
            #"overlays.promo.style: unknown style "spin" (expected fade, popup or slide)"#,
            #"overlays.promo.dimming.color: invalid colour "black" (expected #RRGGBB)"#,
            "overlays.promo.dimming.alpha: must be between 0 and 1 (found -1)",
            "overlays.promo.margins.top: must be at least 0 (found -5)",
            "overlays.promo.margins.bottom: expected an integer, found 1.5",
            #"overlays.promo.buttons[0].action.item: unknown item "b""#,
            #"overlays.promo.buttons[1].action.overlay: unknown overlay "menu""#,
            #"overlays.promo.buttons[1].size: unknown field "size""#,
            "overlays.promo.buttons[1].label: required",
            "overlays.promo.autoHide: must be greater than 0 (found -2)",
            #"overlays.promo.extra: unknown field "extra""#,
            "overlays.second: expected an object, found an array",
            "idle.after: must be greater than 0 (found -1)",
            #"idle.jump: unknown item "z""#,
        ])
    }

    @Test func overlayImageIsLookedUpLikeSrc() {
        var asked: [String] = []
        let json = manifest(overlays: #"{"promo": {"image": "media/logo.png"}, "menu": {"image": "media/menu.png"}}"#)
        let result = ManifestParser.parse(Array(json.utf8), catalogDirectory: "/cat") { path in
            asked.append(path)
            return path == "/cat/media/logo.png" ? .missing : .regularFile
        }
        #expect(asked == ["/cat/media/a.mp4", "/cat/media/logo.png", "/cat/media/menu.png"])
        #expect(result.problems.map(\.description) == ["overlays.promo.image: file not found: media/logo.png"])
        #expect(result.manifest == nil)

        var none = 0
        let unchecked = ManifestParser.parse(Array(json.utf8), catalogDirectory: nil) { _ in none += 1; return .missing }
        #expect(none == 0)
        #expect(unchecked.manifest?.overlays["menu"]?.image == "media/menu.png")
    }

    @Test func malformedOverlaysLeaveReferencesUnchecked() {
        // `overlays` is not an object: only that is reported, not every showOverlay.
        let json = manifest(action: #"{"type": "showOverlay", "overlay": "promo"}"#, extra: #", "overlays": 5"#)
        #expect(problems(json) == ["overlays: expected an object, found a number"])
    }

    /// The published schema describes the same overlay and idle fields.
    @Test func schemaMatchesTheOverlayModel() throws {
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let data = try Data(contentsOf: repository.appendingPathComponent("config/manifest.schema.json"))
        let schema = try JSONValue(parsing: data, options: .init(maxDepth: 64))
        func strings(_ value: JSONValue?) -> [String] {
            guard case let .array(elements)? = value else { return [] }
            return elements.compactMap { if case let .string(s) = $0 { s } else { nil } }
        }
        func keys(_ value: JSONValue?) -> [String] {
            guard case let .object(members)? = value else { return [] }
            return members.map(\.key)
        }
        let defs = schema["$defs"], overlay = defs?["overlay"]
        #expect(schema["properties"]?["overlays"]?["additionalProperties"]?["$ref"] == .string("#/$defs/overlay"))
        #expect(overlay?["additionalProperties"] == .bool(false))
        #expect(keys(overlay?["properties"]) == ["title", "body", "image", "buttons", "style", "duration", "modal",
                                                 "dimming", "margins", "maxWidth", "autoHide"])
        #expect(strings(overlay?["properties"]?["style"]?["enum"]) == OverlayStyle.allCases.map(\.rawValue))
        #expect(overlay?["properties"]?["duration"]?["default"] == .number(JSONNumber(literal: "0.25")!))
        #expect(keys(overlay?["properties"]?["margins"]?["properties"]) == ["top", "left", "bottom", "right"])
        #expect(keys(overlay?["properties"]?["dimming"]?["properties"]) == ["color", "alpha"])
        #expect(strings(defs?["button"]?["required"]) == ["label", "action"])
        #expect(defs?["button"]?["properties"]?["action"]?["$ref"] == .string("#/$defs/action"))
        #expect(strings(schema["properties"]?["idle"]?["required"]) == ["after", "jump"])
        #expect(schema["properties"]?["idle"]?["additionalProperties"] == .bool(false))
    }
}
