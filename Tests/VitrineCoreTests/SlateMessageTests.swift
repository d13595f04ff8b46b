import Testing
import VitrineCore

@Suite("Slate text")
struct SlateMessageTests {
    @Test("details beyond the room end with \"and N more\"; all of them when they fit")
    func fitting() {
        let m = SlateMessage.invalidManifest("/c/manifest.json", problems: (1...20).map { "playlist[\($0)].src: required" })
        #expect(m.detailLines(fitting: 8) == (1...7).map { "playlist[\($0)].src: required" } + ["and 13 more"])
        #expect(m.detailLines(fitting: 20) == m.details)
        #expect(m.detailLines(fitting: 1) == ["and 20 more"])
        #expect(m.detailLines(fitting: 0) == [])
    }

    @Test("each case has a calm public line and says what is wrong, with a count")
    func cases() {
        let empty = SlateMessage.noCatalog(library: "/var/lib/vitrine")
        #expect(empty.headline == "Coming soon" && empty.reason == .noCatalog)
        #expect(empty.summary == "No catalog to play in /var/lib/vitrine yet: insert a USB stick with vitrine/manifest.json")
        let missing = SlateMessage.missingManifest("/c/manifest.json")
        #expect(missing.headline == "Back soon" && missing.summary == "No manifest: /c/manifest.json does not exist")
        #expect(!missing.summary.contains("Invalid"), "a missing manifest is not called invalid")
        #expect(SlateMessage.invalidManifest("/c/m.json", problems: ["a"]).summary == "The manifest has 1 problem: /c/m.json")
        #expect(SlateMessage.invalidManifest("/c/m.json", problems: ["a", "b", "c"]).summary == "The manifest has 3 problems: /c/m.json")
        #expect(SlateMessage.nothingPlayable(["media/a.mp4: x"]).summary == "The catalog's only file cannot play")
        #expect(SlateMessage.nothingPlayable(["media/a.mp4: x", "media/b.mp4: y"]).summary == "None of the catalog's 2 files can play")
    }
}
