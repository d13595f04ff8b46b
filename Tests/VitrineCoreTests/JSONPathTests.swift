import Testing
@testable import VitrineCore

@Suite("JSON paths in messages")
struct JSONPathTests {
    @Test("plain keys read as .name; any other key as [\"…\"] with JSON escapes",
          arguments: [("overlays", "promo", "overlays.promo"), ("", "playlist", "playlist"), ("overlays", "a: b", #"overlays["a: b"]"#),
                      ("overlays", "a.b", #"overlays["a.b"]"#), ("playlist[0]", "x\ny", #"playlist[0]["x\ny"]"#),
                      ("", "\u{0}", #"["\u0000"]"#), ("overlays", "say \"hi\"", #"overlays["say \"hi\""]"#),
                      ("overlays", "2nd", #"overlays["2nd"]"#), ("overlays", "heures-d'ouverture", #"overlays["heures-d'ouverture"]"#),
                      ("overlays", "opening_hours-2", "overlays.opening_hours-2"), ("overlays", "Öffnungszeiten", #"overlays["Öffnungszeiten"]"#),
                      ("overlays", "", #"overlays[""]"#), ("overlays", "a\u{2028}b", #"overlays["a\u2028b"]"#)])
    func member(base: String, key: String, expected: String) {
        #expect(JSONPath.member(base, key) == expected)
    }

    @Test("printable leaves ordinary names alone and quotes any with a control or line-separator character")
    func printable() {
        #expect(JSONPath.printable("media/Grüße.mp4") == "media/Grüße.mp4")
        #expect(JSONPath.printable("media/a b.mp4") == "media/a b.mp4")
        #expect(JSONPath.printable("media/a\nb.mp4") == #""media/a\nb.mp4""#)
        #expect(JSONPath.printable("a\u{7}") == #""a\u0007""#)
    }

    @Test("a hostile key (\": \", a newline, a NUL) cannot forge a problem line: each problem is one line, its path escaped")
    func hostileKeys() {
        let json = #"""
        {"schema": "vitrine.manifest/1", "version": 1,
         "playlist": [{"id": "a", "type": "video", "src": "a.mp4", "x: \nplaylist[9].src": 1, "\u0000": 2}],
         "overlays": {"a: b": {"title": 3}, "ok\ninvalid": {"bogus\r": true}},
         "show: valid": true}
        """#
        let found = ManifestParser.parse(Array(json.utf8)).problems.map(\.description)
        #expect(found == [
            #"playlist[0]["x: \nplaylist[9].src"]: unknown field "x: \nplaylist[9].src""#,
            #"playlist[0]["\u0000"]: unknown field "\u0000""#,
            #"overlays["a: b"].title: expected a string, found a number"#,
            #"overlays["ok\ninvalid"]["bogus\r"]: unknown field "bogus\r""#,
            #"["show: valid"]: unknown field "show: valid""#,
        ])
        #expect(found.allSatisfy { !$0.contains("\n") && !$0.contains("\r") && !$0.contains("\u{0}") })
    }

    @Test("values quoted in reasons are escaped too: an id, a type, a file name")
    func hostileValues() {
        let json = #"""
        {"schema": "vitrine.manifest/1", "version": 1,
         "playlist": [{"id": "a", "type": "vid\neo", "src": "/etc/x\n.mp4",
                       "cuePoints": [{"time": 1, "id": "c", "action": {"type": "jump", "item": "b\nplaylist[0]: fine"}}]}]}
        """#
        let found = ManifestParser.parse(Array(json.utf8)).problems.map(\.description)
        #expect(found == [
            #"playlist[0].type: unknown type "vid\neo" (expected video, image or audio)"#,
            #"playlist[0].src: must be a relative path, not absolute: "/etc/x\n.mp4""#,
            #"playlist[0].cuePoints[0].action.item: unknown item "b\nplaylist[0]: fine""#,
        ])
    }
}
