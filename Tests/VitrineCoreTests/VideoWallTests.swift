import Testing
import VitrineCore

/// `display.wall`: parsing and its errors by JSON path, the tile rectangles, and the merge of the
/// catalog's wall with a box's config.
@Suite("Video wall settings")
struct VideoWallTests {
    static func manifest(wall: String) -> String {
        """
        { "schema": "vitrine.manifest/1", "version": 1, "display": { "wall": \(wall) },
          "playlist": [ { "id": "a", "type": "video", "src": "a.mp4" } ] }
        """
    }

    static func problems(_ wall: String) -> [String] {
        ManifestParser.parse(Array(manifest(wall: wall).utf8)).problems.map(\.description)
    }

    @Test("a whole wall and a partial one (the boxes' configs give column and row) are accepted")
    func accepted() throws {
        let whole = ManifestParser.parse(Array(Self.manifest(wall: #"{"columns": 2, "rows": 3, "column": 1, "row": 2, "bezel": 12}"#).utf8))
        #expect(whole.problems.isEmpty)
        #expect(whole.manifest?.display.wall == WallSettings(columns: 2, rows: 3, column: 1, row: 2, bezelX: 12, bezelY: 12))
        let partial = ManifestParser.parse(Array(Self.manifest(wall: #"{"columns": 4, "rows": 1, "bezel": {"x": 10, "y": 6}}"#).utf8))
        #expect(partial.problems.isEmpty)
        #expect(partial.manifest?.display.wall == WallSettings(columns: 4, rows: 1, bezelX: 10, bezelY: 6))
        #expect(ManifestParser.parse(Array(Self.manifest(wall: "{}").utf8)).manifest?.display.wall == WallSettings())
    }

    @Test("every wrong key or value is an error at its JSON path")
    func errors() {
        #expect(Self.problems(#"{"columns": 2, "rows": 2, "column": 2, "row": 0}"#)
                == ["display.wall.column: 2 is outside 0…1 (columns is 2)"])
        #expect(Self.problems(#"{"columns": 2, "rows": 1, "column": 0, "row": 1}"#)
                == ["display.wall.row: 1 is outside 0…0 (rows is 1)"])
        #expect(Self.problems(#"{"columns": 0, "rows": 17}"#)
                == ["display.wall.columns: must be an integer from 1 to 16 (found 0)",
                    "display.wall.rows: must be an integer from 1 to 16 (found 17)"])
        #expect(Self.problems(#"{"column": -1, "row": 1.5}"#)
                == ["display.wall.column: must be an integer (0 is the left-most screen) from 0 to 15 (found -1)",
                    "display.wall.row: must be an integer (0 is the top screen) from 0 to 15 (found 1.5)"])
        #expect(Self.problems(#"{"bezel": "3mm"}"#)
                == [#"display.wall.bezel: must be a whole number of source pixels (or {"x": …, "y": …}) from 0 to 15360 (found a string)"#])
        #expect(Self.problems(#"{"bezel": {"x": 4, "z": 1, "y": -2}}"#)
                == [#"display.wall.bezel.z: unknown field "z" (expected x or y)"#,
                    "display.wall.bezel.y: must be a whole number of source pixels from 0 to 15360 (found -2)"])
        #expect(Self.problems(#"{"colums": 2}"#)
                == [#"display.wall.colums: unknown field "colums" (expected columns, rows, column, row or bezel)"#])
        #expect(Self.problems("[2, 2]")
                == [#"display.wall: expected an object {"columns", "rows", "column", "row", "bezel"}, found an array"#])
    }

    @Test("tile rectangles: tw = (W − (C−1)·B)/C at c·(tw+B), for bezel 0 and 16, and the picture's far edge")
    func tiles() {
        let flush = (0..<2).flatMap { r in (0..<2).map { c in VideoWall(columns: 2, rows: 2, column: c, row: r).tile(sourceWidth: 320, sourceHeight: 240) } }
        #expect(flush == [Rect(x: 0, y: 0, width: 160, height: 120), Rect(x: 160, y: 0, width: 160, height: 120),
                          Rect(x: 0, y: 120, width: 160, height: 120), Rect(x: 160, y: 120, width: 160, height: 120)])
        let bezel = VideoWall(columns: 2, rows: 2, column: 1, row: 1, bezelX: 16, bezelY: 16).tile(sourceWidth: 320, sourceHeight: 240)
        #expect(bezel == Rect(x: 168, y: 128, width: 152, height: 112))
        // 3×1 of 1920x1080 with a 30-pixel bezel: 620 wide tiles at 0, 650, 1300; the last ends at 1920.
        let three = (0..<3).map { VideoWall(columns: 3, rows: 1, column: $0, row: 0, bezelX: 30, bezelY: 30).tile(sourceWidth: 1920, sourceHeight: 1080) }
        #expect(three.map(\.x) == [0, 650, 1300] && three.allSatisfy { $0.width == 620 && $0.height == 1080 && $0.y == 0 })
        // A bezel wider than the picture: one-pixel tiles, inside it.
        let silly = VideoWall(columns: 2, rows: 1, column: 1, row: 0, bezelX: 500, bezelY: 0).tile(sourceWidth: 320, sourceHeight: 240)
        #expect(silly == Rect(x: 319, y: 0, width: 1, height: 240))
    }

    @Test("the config's keys override the catalog's one by one; missing and contradicting keys name where they came from")
    func merge() {
        let catalog = WallSettings(columns: 2, rows: 2, bezelX: 8, bezelY: 8)
        let box = WallSettings(column: 1, row: 0)
        let merged = VideoWall.merge(catalog: catalog, config: box)
        #expect(merged.problems == [])
        #expect(merged.wall == WallSettings(columns: 2, rows: 2, column: 1, row: 0, bezelX: 8, bezelY: 8))
        #expect(merged.wall.flatMap(VideoWall.init) == VideoWall(columns: 2, rows: 2, column: 1, row: 0, bezelX: 8, bezelY: 8))
        // The config's bezel and rows win over the catalog's.
        let over = VideoWall.merge(catalog: WallSettings(columns: 2, rows: 2, column: 0, row: 0, bezelX: 8, bezelY: 8),
                                   config: WallSettings(rows: 1, bezelX: 3, bezelY: 3))
        #expect(over.wall == WallSettings(columns: 2, rows: 1, column: 0, row: 0, bezelX: 3, bezelY: 3))
        #expect(VideoWall.merge(catalog: nil, config: nil).wall == nil && VideoWall.merge(catalog: nil, config: nil).problems == [])
        #expect(VideoWall.merge(catalog: catalog, config: nil).problems
                == ["wall.column: required: this box's config must say which column of the wall it drives (0-based)",
                    "wall.row: required: this box's config must say which row of the wall it drives (0-based)"])
        #expect(VideoWall.merge(catalog: catalog, config: WallSettings(column: 2, row: 1)).problems
                == ["wall.column: 2 is outside 0…1 (columns is 2, from display.wall.columns in the catalog)"])
        #expect(VideoWall.merge(catalog: WallSettings(column: 1, row: 1), config: WallSettings(columns: 1, rows: 3)).problems
                == ["display.wall.column: 1 is outside 0…0 (columns is 1, from wall.columns in the config)"])
        #expect(VideoWall.merge(catalog: nil, config: box).problems
                == ["wall.columns: required: give it in the catalog's display.wall or in the config's wall",
                    "wall.rows: required: give it in the catalog's display.wall or in the config's wall"])
    }

    @Test("an output's wall over the config's: the keys it gives win, the others are the config's")
    func outputOverConfig() {
        let config = WallSettings(columns: 2, rows: 1, row: 0, bezelX: 12)
        #expect(WallSettings(column: 1).over(config) == WallSettings(columns: 2, rows: 1, column: 1, row: 0, bezelX: 12))
        #expect(WallSettings(columns: 3, column: 2, bezelX: 0).over(config) == WallSettings(columns: 3, rows: 1, column: 2, row: 0, bezelX: 0))
        #expect(WallSettings(column: 1).over(nil) == WallSettings(column: 1))
        // Then over the catalog's, as a box's config is.
        #expect(VideoWall.merge(catalog: WallSettings(columns: 4, rows: 1), config: WallSettings(column: 3).over(WallSettings(row: 0))).wall
                == WallSettings(columns: 4, rows: 1, column: 3, row: 0))
    }

    @Test("a different wall is a different output (a catalog switch restarts the display)")
    func outputSettings() {
        var a = DisplaySettings(), b = DisplaySettings()
        b.wall = WallSettings(columns: 2, rows: 1)
        #expect(a.output != b.output)
        a.wall = WallSettings(columns: 2, rows: 1)
        #expect(a.output == b.output)
    }
}

/// Bezels wider than the picture allows leave a tile nothing: the compositor then shows the
/// background (and logs it) rather than a one-pixel sliver stretched over the screen.
struct VideoWallEmptyTileTests {
    @Test func bezelsThatLeaveNoPicture() {
        #expect(VideoWall(columns: 2, rows: 1, column: 1, row: 0, bezelX: 10).leavesPicture(sourceWidth: 320, sourceHeight: 90))
        #expect(VideoWall(columns: 2, rows: 1, column: 1, row: 0, bezelX: 318).leavesPicture(sourceWidth: 320, sourceHeight: 90))
        #expect(!VideoWall(columns: 2, rows: 1, column: 1, row: 0, bezelX: 319).leavesPicture(sourceWidth: 320, sourceHeight: 90))
        #expect(!VideoWall(columns: 2, rows: 1, column: 1, row: 0, bezelX: 400).leavesPicture(sourceWidth: 320, sourceHeight: 90))
        #expect(!VideoWall(columns: 16, rows: 16, column: 15, row: 15, bezelX: 10, bezelY: 10).leavesPicture(sourceWidth: 160, sourceHeight: 90))
    }
}
