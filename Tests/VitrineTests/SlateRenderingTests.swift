import Foundation
import Testing
import Media
import Canvas
@testable import Vitrine
import VitrineCore

/// The slate through the headless output: a calm centred screen, the public line large, the
/// installer's details smaller below with a count.
@Suite("The slate drawn for the public", .serialized)
struct SlateRenderingTests {
    static let background: UInt32 = 0x1E2A38

    /// A 1280×720 engine showing `message`, one vblank stepped; its screen.
    static func screen(_ message: SlateMessage, width: Int = 1280, height: Int = 720) throws -> ImageBuffer {
        let rig = EngineRig(catalog: try Harness.newFolder("slate"), width: width, height: height)
        rig.engine.fixedSlate = message
        try rig.step(2)
        return BannerRenderingTests.screen(rig)
    }

    /// The layout the renderer gives `message` on a `width`×`height` screen.
    static func layout(_ message: SlateMessage, width: Int = 1280, height: Int = 720) throws -> SlateLayout {
        let c = try Canvas(width: width, height: height)
        return SlateRenderer.layOut(message, on: c)
    }

    /// The columns (leftmost, rightmost) and rows (top, bottom) holding ink in `r`: pixels away from
    /// the background by more than 40 on some channel. Nil when there is none.
    static func ink(_ img: ImageBuffer, in r: Rect) -> (left: Int, right: Int, top: Int, bottom: Int)? {
        var box: (Int, Int, Int, Int)?
        for y in max(0, r.y)..<min(img.height, r.y + r.height) {
            for x in max(0, r.x)..<min(img.width, r.x + r.width) where !img.isColor(x: x, y: y, background, tolerance: 40) {
                box = box.map { (min($0.0, x), max($0.1, x), min($0.2, y), max($0.3, y)) } ?? (x, x, y, y)
            }
        }
        return box.map { (left: $0.0, right: $0.1, top: $0.2, bottom: $0.3) }
    }

    static func expectCentred(_ box: (left: Int, right: Int, top: Int, bottom: Int)?, width: Int, _ what: String,
                              sourceLocation: SourceLocation = #_sourceLocation) {
        guard let box else { Issue.record("no ink for \(what)", sourceLocation: sourceLocation); return }
        let left = box.left, right = width - 1 - box.right
        #expect(abs(left - right) <= 3, "\(what): \(left) px of margin on the left, \(right) on the right", sourceLocation: sourceLocation)
    }

    @Test("an invalid manifest: the headline large and centred, the summary under it, 7 problems and \"and 13 more\", the block centred")
    func invalidManifest() throws {
        let m = SlateMessage.invalidManifest("/srv/catalog/manifest.json", problems: (0..<20).map { "playlist[\($0)].duration: required for images" })
        let img = try Self.screen(m)
        let l = try Self.layout(m)
        #expect(l.detailLines.count == 8 && l.detailLines.last == "and 13 more", "\(l.detailLines)")
        let headline = try #require(Self.ink(img, in: l.headline))
        Self.expectCentred(headline, width: 1280, "the headline")
        Self.expectCentred(Self.ink(img, in: try #require(l.summary)), width: 1280, "the summary")
        for (i, r) in l.details.enumerated() { Self.expectCentred(Self.ink(img, in: r), width: 1280, "detail line \(i)") }
        // The headline's letters are the tallest; the count line is the shortest line, and drawn.
        let detailInk = l.details.compactMap { Self.ink(img, in: $0) }
        #expect(detailInk.count == 8)
        let headlineHeight = headline.bottom - headline.top
        #expect(detailInk.allSatisfy { $0.bottom - $0.top < headlineHeight / 2 })
        let countLine = detailInk.last!, widest = detailInk.map { $0.right - $0.left }.max()!
        #expect(countLine.right - countLine.left < widest / 2, "\"and 13 more\" is short")
        // The block as a whole is centred vertically (within 2 % of the height), and nothing is drawn outside it.
        let all = try #require(Self.ink(img, in: Rect(x: 0, y: 0, width: 1280, height: 720)))
        #expect(abs(all.top - (719 - all.bottom)) <= 15, "top margin \(all.top), bottom \(719 - all.bottom)")
        #expect(img.isColor(x: 4, y: 4, Self.background, tolerance: 2) && img.isColor(x: 1275, y: 715, Self.background, tolerance: 2))
        // The headline is bright, the details dimmer.
        #expect(Self.brightest(img, in: l.headline) > 220 && Self.brightest(img, in: l.details[0]) < 180)
    }

    static func brightest(_ img: ImageBuffer, in r: Rect) -> Int {
        var m = 0
        for y in r.y..<(r.y + r.height) { for x in r.x..<(r.x + r.width) { let p = img.rgb(x: x, y: y); m = max(m, Int(p.r) + Int(p.g) + Int(p.b)) } }
        return m / 3
    }

    @Test("a missing library: \"Coming soon\", centred, no detail lines")
    func noCatalog() throws {
        let m = SlateMessage.noCatalog(library: "/var/lib/vitrine")
        let img = try Self.screen(m)
        let l = try Self.layout(m)
        #expect(l.details.isEmpty)
        Self.expectCentred(Self.ink(img, in: l.headline), width: 1280, "the headline")
        Self.expectCentred(Self.ink(img, in: try #require(l.summary)), width: 1280, "the summary")
        let all = try #require(Self.ink(img, in: Rect(x: 0, y: 0, width: 1280, height: 720)))
        #expect(abs(all.top - (719 - all.bottom)) <= 15, "top margin \(all.top), bottom \(719 - all.bottom)")
    }

    @Test("unplayable files: the slate names the files (not the item ids), with the count, whatever the screen size",
          arguments: [(1280, 720), (320, 180), (720, 1280)])
    func unplayableFiles(width: Int, height: Int) throws {
        let dir = try Harness.newFolder("slate-files")
        try Data("text".utf8).write(to: URL(fileURLWithPath: dir + "/media/notes.mp4"))
        try Data([0, 1, 2, 3]).write(to: URL(fileURLWithPath: dir + "/media/noise.mp4"))
        let rig = EngineRig(catalog: dir, width: width, height: height)
        rig.engine.timeline.failureLimit = 3
        for (id, src) in [("first", "media/notes.mp4"), ("second", "media/noise.mp4"), ("third", "media/gone.mp4")] {
            rig.engine.enqueue(PlaylistItem(id: id, type: .video, src: src))
        }
        rig.engine.play()
        for _ in 0..<90 where rig.engine.timeline.slateMessage == nil { try rig.step(1) }
        let m = try #require(rig.engine.timeline.slateMessage)
        try rig.step(1)
        #expect(m.reason == .nothingPlayable && m.headline == "Back soon")
        #expect(m.summary == "None of the catalog's 3 files can play")
        #expect(m.details.map { String($0.prefix(while: { $0 != ":" })) } == ["media/notes.mp4", "media/noise.mp4", "media/gone.mp4"], "\(m.details)")
        #expect(!m.details.contains { $0.hasPrefix("first") || $0.hasPrefix("second") })
        let img = BannerRenderingTests.screen(rig)
        let l = try Self.layout(m, width: width, height: height)
        Self.expectCentred(Self.ink(img, in: l.headline), width: width, "the headline")
        for r in l.details { Self.expectCentred(Self.ink(img, in: r), width: width, "a file line") }
        #expect(l.detailLines == m.detailLines(fitting: l.detailLines.count))
    }
}
