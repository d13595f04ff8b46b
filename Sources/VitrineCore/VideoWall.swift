// Video walls: several boxes, each driving one screen of a `columns`×`rows` wall, show one picture
// together; each shows its own tile, with the part of the picture behind the bezels left out.
// Prose: docs/sync.md "Video walls"; keys: docs/config.md, config/manifest.schema.json.

/// `display.wall` of a manifest, or `wall` of a player config, as written: every key optional, so the
/// catalog (the same on every box) can give the wall's shape and bezel, and each box's config its
/// place (`column`, `row`). `VideoWall.merge(catalog:config:)` puts the two together and checks them.
///
/// JSON: `{"columns": C, "rows": R, "column": c, "row": r, "bezel": B}` or `"bezel": {"x": BX, "y": BY}`;
/// `column` and `row` count from 0 (the top-left screen is column 0, row 0); `columns` and `rows`
/// are 1…16; the bezel is in source pixels (see `VideoWall`).
public struct WallSettings: Sendable, Equatable {
    public var columns: Int?
    public var rows: Int?
    /// 0-based, from the left.
    public var column: Int?
    /// 0-based, from the top.
    public var row: Int?
    /// Source pixels hidden between the active areas of two tiles side by side.
    public var bezelX: Int?
    /// Source pixels hidden between the active areas of two tiles one above the other.
    public var bezelY: Int?

    public init(columns: Int? = nil, rows: Int? = nil, column: Int? = nil, row: Int? = nil,
                bezelX: Int? = nil, bezelY: Int? = nil) {
        self.columns = columns; self.rows = rows; self.column = column; self.row = row
        self.bezelX = bezelX; self.bezelY = bezelY
    }

    /// These keys over `base`'s, key by key: each key this one gives wins, each it leaves out is
    /// `base`'s. How a config's output's `wall` (`outputs[i].wall`) sits on the config's `wall`, so
    /// a box driving two tiles gives the wall's shape once and each output its `column` and `row`.
    public func over(_ base: WallSettings?) -> WallSettings {
        guard let base else { return self }
        return WallSettings(columns: columns ?? base.columns, rows: rows ?? base.rows, column: column ?? base.column,
                            row: row ?? base.row, bezelX: bezelX ?? base.bezelX, bezelY: bezelY ?? base.bezelY)
    }

    /// The value of `key` (`columns`, `rows`, `column`, `row`); nil when not given or not one of these.
    public subscript(key: String) -> Int? {
        switch key {
        case "columns": columns
        case "rows": rows
        case "column": column
        case "row": row
        default: nil
        }
    }

    /// The most screens a wall has across, and down.
    public static let maximumTiles = 16
    /// The largest bezel accepted, in source pixels (twice the widest mode's side: a typo beyond).
    public static let maximumBezel = 2 * DisplayModeRequest.maxSide

    /// Reads a `wall` object at `path` (`display.wall` in a manifest, `wall` in a config).
    /// - Returns: the keys that are well formed, and one `(path, reason)` per problem: not an object,
    ///   an unknown key (`display.wall.colums: unknown field "colums"`), a value that is not an integer
    ///   in range (`display.wall.columns: must be an integer from 1 to 16 (found 0)`), and a column or
    ///   row outside the columns or rows given in the same object
    ///   (`display.wall.column: 2 is outside 0…1 (columns is 2)`).
    public static func parse(_ value: JSONValue, at path: String) -> (settings: WallSettings, problems: [(path: String, reason: String)]) {
        var s = WallSettings()
        var problems: [(path: String, reason: String)] = []
        guard case let .object(members) = value else {
            return (s, [(path, "expected an object {\"columns\", \"rows\", \"column\", \"row\", \"bezel\"}, found \(value.typeDescription)")])
        }
        func integer(_ v: JSONValue, _ at: String, _ range: ClosedRange<Int>, _ what: String) -> Int? {
            if case let .number(n) = v, let i = n.intValue, range.contains(i) { return i }
            let found = { if case let .number(n) = v { return n.description } else { return v.typeDescription } }()
            problems.append((at, "must be \(what) from \(range.lowerBound) to \(range.upperBound) (found \(found))"))
            return nil
        }
        let tiles = 1...maximumTiles, places = 0...(maximumTiles - 1), bezels = 0...maximumBezel
        for (key, v) in members {
            let at = JSONPath.member(path, key)
            switch key {
            case "columns": s.columns = integer(v, at, tiles, "an integer")
            case "rows": s.rows = integer(v, at, tiles, "an integer")
            case "column": s.column = integer(v, at, places, "an integer (0 is the left-most screen)")
            case "row": s.row = integer(v, at, places, "an integer (0 is the top screen)")
            case "bezel":
                if case .object(let axes) = v {
                    for (axis, b) in axes {
                        let bat = JSONPath.member(at, axis)
                        switch axis {
                        case "x": s.bezelX = integer(b, bat, bezels, "a whole number of source pixels")
                        case "y": s.bezelY = integer(b, bat, bezels, "a whole number of source pixels")
                        default: problems.append((bat, "unknown field \(JSONPath.quoted(axis)) (expected x or y)"))
                        }
                    }
                } else if let b = integer(v, at, bezels, "a whole number of source pixels (or {\"x\": …, \"y\": …})") {
                    s.bezelX = b; s.bezelY = b
                }
            default: problems.append((at, "unknown field \(JSONPath.quoted(key)) (expected columns, rows, column, row or bezel)"))
            }
        }
        if let c = s.column, let n = s.columns, c >= n {
            problems.append((JSONPath.member(path, "column"), "\(c) is outside 0…\(n - 1) (columns is \(n))"))
        }
        if let r = s.row, let n = s.rows, r >= n {
            problems.append((JSONPath.member(path, "row"), "\(r) is outside 0…\(n - 1) (rows is \(n))"))
        }
        return (s, problems)
    }
}

/// One box's place in a video wall, complete and checked: a picture of W×H source pixels is cut into
/// `columns`×`rows` tiles with `bezelX` (`bezelY`) source pixels left out between neighbours, the
/// part the two panels' borders hide, as real walls do (the picture runs on behind the bezel).
///
/// Tile (c, r): width `tw = (W − (columns−1)·bezelX) / columns`, height
/// `th = (H − (rows−1)·bezelY) / rows` (whole pixels, rounded down), at `x = c·(tw + bezelX)`,
/// `y = r·(th + bezelY)` in the picture as displayed (after its own rotation).
///
/// The bezel from millimetres: `B = gap mm × tw ÷ active width mm`, where the gap is both panels'
/// borders between two active areas (e.g. 2 × 1.75 mm), and `tw` the tile width in source pixels.
public struct VideoWall: Sendable, Equatable {
    public var columns: Int, rows: Int, column: Int, row: Int, bezelX: Int, bezelY: Int

    /// Nil unless every key of `settings` is there (the bezel defaults to 0) and column and row lie
    /// inside the wall.
    public init?(_ settings: WallSettings) {
        guard let columns = settings.columns, let rows = settings.rows, let column = settings.column, let row = settings.row,
              (0..<columns).contains(column), (0..<rows).contains(row) else { return nil }
        self.init(columns: columns, rows: rows, column: column, row: row,
                  bezelX: settings.bezelX ?? 0, bezelY: settings.bezelY ?? 0)
    }

    public init(columns: Int, rows: Int, column: Int, row: Int, bezelX: Int = 0, bezelY: Int = 0) {
        self.columns = columns; self.rows = rows; self.column = column; self.row = row
        self.bezelX = bezelX; self.bezelY = bezelY
    }

    /// Whether the bezels leave each tile of a `width`×`height` picture at least a pixel each way:
    /// `(width − (columns − 1) × bezelX) / columns` and the same down, both ≥ 1.
    public func leavesPicture(sourceWidth width: Int, sourceHeight height: Int) -> Bool {
        (width - (columns - 1) * max(0, bezelX)) / max(1, columns) >= 1
            && (height - (rows - 1) * max(0, bezelY)) / max(1, rows) >= 1
    }

    /// The source rectangle this box shows of a `width`×`height` picture (as displayed). A bezel that
    /// leaves less than a pixel per tile gives one-pixel tiles, kept inside the picture.
    public func tile(sourceWidth width: Int, sourceHeight height: Int) -> Rect {
        func axis(_ size: Int, _ count: Int, _ index: Int, _ bezel: Int) -> (Int, Int) {
            // Counts, indices and bezels out of range (a wall not made by `init?(_:)`) are clamped.
            let count = max(1, count), index = max(0, min(index, count - 1)), bezel = max(0, bezel)
            let t = max(1, (size - (count - 1) * bezel) / count)
            return (max(0, min(index * (t + bezel), size - t)), min(t, max(1, size)))
        }
        let (x, w) = axis(width, columns, column, bezelX)
        let (y, h) = axis(height, rows, row, bezelY)
        return Rect(x: x, y: y, width: w, height: h)
    }

    /// The wall of one box: the catalog's `display.wall` with the config's `wall` over it, key by key.
    /// - Returns: nil and no problems when neither has a wall; the wall; or nil and every problem as
    ///   `path: reason`, naming where each value came from (`wall.column: 2 is outside 0…1 (columns
    ///   is 2, from the catalog's display.wall)`; `wall.column: required: the catalog's display.wall
    ///   makes a 2×2 wall, and this box's config must say which column it is`).
    /// - Parameter configKey: the path in the config of each key (`columns`, `column`…) it gives, or
    ///   should give when both leave it out: `wall.column` (the default), or `outputs[1].wall.column`
    ///   for an output's own.
    public static func merge(catalog: WallSettings?, config: WallSettings?,
                             configKey: (String) -> String = { "wall.\($0)" }) -> (wall: WallSettings?, problems: [String]) {
        guard catalog != nil || config != nil else { return (nil, []) }
        let a = catalog ?? WallSettings(), b = config ?? WallSettings()
        func pick(_ key: String, _ ca: Int?, _ cb: Int?) -> (value: Int?, origin: String) {
            if let cb { return (cb, "\(configKey(key)) in the config") }
            return (ca, "display.wall.\(key) in the catalog")
        }
        let columns = pick("columns", a.columns, b.columns), rows = pick("rows", a.rows, b.rows)
        let column = pick("column", a.column, b.column), row = pick("row", a.row, b.row)
        let merged = WallSettings(columns: columns.value, rows: rows.value, column: column.value, row: row.value,
                                  bezelX: b.bezelX ?? a.bezelX, bezelY: b.bezelY ?? a.bezelY)
        var problems: [String] = []
        for (key, v) in [("columns", columns.value), ("rows", rows.value)] where v == nil {
            problems.append("\(configKey(key)): required: give it in the catalog's display.wall or in the config's wall")
        }
        for (key, v) in [("column", column.value), ("row", row.value)] where v == nil {
            problems.append("\(configKey(key)): required: this box's config must say which \(key) of the wall it drives (0-based)")
        }
        if let c = column.value, let n = columns.value, c >= n {
            problems.append("\(column.origin.split(separator: " ")[0]): \(c) is outside 0…\(n - 1) (columns is \(n), from \(columns.origin))")
        }
        if let r = row.value, let n = rows.value, r >= n {
            problems.append("\(row.origin.split(separator: " ")[0]): \(r) is outside 0…\(n - 1) (rows is \(n), from \(rows.origin))")
        }
        if !problems.isEmpty { return (nil, problems) }
        return (merged, [])
    }
}
