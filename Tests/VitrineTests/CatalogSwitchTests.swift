import Foundation
import Testing
import Media
@testable import Vitrine
import VitrineCore

/// A running player moving to a new catalog (what a finished USB import hands it).
@Suite("Catalog switch in a running player", .serialized)
struct CatalogSwitchTests {
    /// A catalog folder with one `seconds`-long clip of `colour`, as `media/<colour>.mp4`.
    static func catalog(_ colour: String, seconds: Double) throws -> (String, Manifest) {
        let dir = try Harness.newFolder("switch-\(colour)")
        try FileManager.default.copyItem(atPath: try Harness.colorClip(colour, seconds: seconds), toPath: dir + "/media/\(colour).mp4")
        let m = Manifest(version: 1, playlist: [PlaylistItem(id: colour, type: .video, src: "media/\(colour).mp4")])
        return (dir, m)
    }

    /// Plays red (2 s clips, looped; a cue point at 1.5 s opens its popup "o"); after 0.5 s of
    /// catalog time the player is offered blue (no popups). With `relative`, the new catalog's folder
    /// is given relative to the working folder (as a relative `--library` makes it).
    static func run(immediate: Bool, relative: Bool = false) throws -> [Double: ImageBuffer] {
        var (redDir, red) = try Self.catalog("red", seconds: 2)
        red.overlays = ["o": Overlay(title: "Red's popup", duration: 0.1)]
        red.overlayIDs = ["o"]
        red.playlist[0].cuePoints = [CuePoint(time: 1.5, id: "open", action: .showOverlay("o"))]
        var (blueDir, blue) = try Self.catalog("blue", seconds: 2)
        if relative {
            let up = FileManager.default.currentDirectoryPath.split(separator: "/").count
            blueDir = String(repeating: "../", count: up) + blueDir.drop(while: { $0 == "/" })
        }
        let shots = try Harness.newFolder("switch-shots")
        var o = RunOptions()
        o.output = .headless
        o.duration = 4.5
        o.snapshotTimes = [0.4, 1.0, 1.9, 2.3, 4.3]
        o.snapshotDirectory = shots
        o.realtime = false
        let player = Player(manifest: red, catalogDirectory: redDir, options: o, log: Logger(label: "t", sink: LogSink.memory().0))
        let offered = Offer()
        player.configureEngine = { engine in
            player.nextCatalog = { engine.catalogTime >= 0.5 ? offered.take(CatalogSwitch(manifest: blue, directory: blueDir, immediate: immediate)) : nil }
        }
        _ = try player.run()
        var images: [Double: ImageBuffer] = [:]
        for t in o.snapshotTimes { images[t] = try Harness.readPNG(shots + "/" + String(format: "snapshot-%07.3f.png", t)) }
        return images
    }

    /// Hands the switch over once.
    final class Offer: @unchecked Sendable {
        private var given = false
        func take(_ s: CatalogSwitch) -> CatalogSwitch? { if given { return nil }; given = true; return s }
    }

    /// Pixels of the popup panel's colour (#F4F6F8).
    static func panelPixels(_ img: ImageBuffer) -> Int {
        var n = 0
        for y in 0..<img.height { for x in 0..<img.width where img.rgb(x: x, y: y) == (r: 0xF4, g: 0xF6, b: 0xF8) { n += 1 } }
        return n
    }

    static func isRed(_ img: ImageBuffer) -> Bool { let p = img.rgb(x: img.width / 2, y: img.height / 2); return p.r > 200 && p.g < 60 && p.b < 60 }
    static func isBlue(_ img: ImageBuffer) -> Bool { let p = img.rgb(x: img.width / 2, y: img.height / 2); return p.b > 200 && p.r < 60 && p.g < 60 }

    @Test("at the next item boundary: red plays to its end (2 s), then blue, looping blue")
    func atBoundary() throws {
        let images = try Self.run(immediate: false)
        #expect(Self.isRed(images[0.4]!))
        #expect(Self.isRed(images[1.0]!), "the item on screen is not cut")
        #expect(Self.panelPixels(images[1.9]!) > 1000, "the item on screen keeps its catalog's popups")
        #expect(Self.panelPixels(images[2.3]!) == 0)
        #expect(Self.isBlue(images[2.3]!), "the new catalog starts at the boundary, with its own (no) popups")
        #expect(Self.isBlue(images[4.3]!), "and loops itself, not the old one")
    }

    @Test("immediate: blue replaces red at once")
    func immediate() throws {
        let images = try Self.run(immediate: true)
        #expect(Self.isRed(images[0.4]!))
        #expect(Self.isBlue(images[1.0]!))
        #expect(Self.isBlue(images[2.3]!))
    }

    @Test("a catalog folder relative to the working folder (a relative --library) plays, not resolved against the old one")
    func relativeFolder() throws {
        let images = try Self.run(immediate: false, relative: true)
        #expect(Self.isRed(images[1.0]!))
        #expect(Self.isBlue(images[2.3]!), "the new catalog starts at the boundary")
        #expect(Self.isBlue(images[4.3]!))
    }
}
