// The catalog manifest, v1: the model that `ManifestParser` builds and the player reads, with its
// named playlists and schedule (Schedule.swift). Format: `config/manifest.schema.json`; prose:
// README "Writing a catalog".

/// A validated catalog manifest (`manifest.json`, schema `vitrine.manifest/1`).
public struct Manifest: Sendable, Equatable {
    /// The only schema string this version accepts.
    public static let schemaV1 = "vitrine.manifest/1"

    public var schema: String
    /// Monotonic catalog version, an integer ≥ 0.
    public var version: Int
    public var title: String
    public var display: DisplaySettings
    public var audio: AudioSettings
    /// Whether the playlist restarts after its last item. Default true.
    public var loop: Bool
    public var playlist: [PlaylistItem]
    /// Popups by id (`overlays`), presented by `showOverlay` actions. Empty when the manifest has none.
    public var overlays: [String: Overlay]
    /// The keys of `overlays` in document order.
    public var overlayIDs: [String]
    /// What to do after a time without touch input; nil when the manifest has no `idle`.
    public var idle: IdleRule?
    /// `tap`: the action a tap performs when no popup is visible (typically `showOverlay` of a
    /// menu); nil when the manifest has none, and then a tap on the video does nothing.
    public var tap: Action?
    /// `files`: sizes and SHA-256 hashes of files the manifest names elsewhere (overlay images) or
    /// nowhere else (copied from a stick as they are). Empty when the manifest has none.
    public var files: [ManifestFile]
    /// `soundtrack`: audio that plays under the whole catalog, looping; nil when the manifest has none.
    public var soundtrack: Soundtrack?
    /// `playlists`: named playlists, each non-empty, of the same items as `playlist`. Empty when the
    /// manifest has none. No name is `"default"` (that name means `playlist`).
    public var playlists: [String: [PlaylistItem]]
    /// The keys of `playlists` in document order.
    public var playlistNames: [String]
    /// `schedule`: which playlist plays when; nil when the manifest has none (then `playlist` always plays).
    public var schedule: Schedule?
    /// `timezone`: the IANA zone the schedule and `display.power` are read in (a TZif file in the
    /// zoneinfo folder); nil means the config's, else the system's.
    public var timezone: String?
    /// `sync`: the playlist locked to the wall clock (`SyncSettings`); nil plays it from its start.
    public var sync: SyncSettings?

    /// `overlayIDs` defaults to the keys of `overlays` in sorted order.
    public init(schema: String = Manifest.schemaV1, version: Int = 1, title: String = "",
                display: DisplaySettings = .init(), audio: AudioSettings = .init(),
                loop: Bool = true, playlist: [PlaylistItem] = [],
                overlays: [String: Overlay] = [:], overlayIDs: [String]? = nil, idle: IdleRule? = nil,
                tap: Action? = nil, files: [ManifestFile] = [], soundtrack: Soundtrack? = nil,
                playlists: [String: [PlaylistItem]] = [:], playlistNames: [String]? = nil,
                schedule: Schedule? = nil, timezone: String? = nil, sync: SyncSettings? = nil) {
        self.schema = schema; self.version = version; self.title = title
        self.display = display; self.audio = audio; self.loop = loop; self.playlist = playlist
        self.overlays = overlays; self.overlayIDs = overlayIDs ?? overlays.keys.sorted(); self.idle = idle
        self.tap = tap
        self.files = files
        self.soundtrack = soundtrack
        self.playlists = playlists; self.playlistNames = playlistNames ?? playlists.keys.sorted()
        self.schedule = schedule; self.timezone = timezone
        self.sync = sync
    }

    /// The name a schedule entry gives the default `playlist`.
    public static let defaultPlaylistName = "default"

    /// Every item: `playlist` first, then each named playlist in document order (`playlistNames`).
    public var allItems: [PlaylistItem] { allItemsWithPaths.map(\.item) }

    /// `allItems`, each with the JSON path of the item: `playlist[2]`, `playlists.lunch[0]`.
    public var allItemsWithPaths: [(path: String, item: PlaylistItem)] {
        var out = playlist.enumerated().map { (path: "playlist[\($0)]", item: $1) }
        for name in playlistNames {
            for (index, item) in (playlists[name] ?? []).enumerated() {
                out.append((JSONPath.element(JSONPath.member("playlists", name), index), item))
            }
        }
        return out
    }

    /// The items of the playlist `name`: `"default"` is `playlist`; nil for a name `playlists` lacks.
    public func items(ofPlaylist name: String) -> [PlaylistItem]? {
        name == Self.defaultPlaylistName ? playlist : playlists[name]
    }

    /// What plays for a schedule selection (`Schedule.selection(atUTC:zone:)`): `playlist` when it is
    /// empty, one entry's playlist, or several entries' playlists taking turns (`interleave`).
    public func items(forSelection selection: [Int]) -> [PlaylistItem] {
        guard let schedule, !selection.isEmpty else { return playlist }
        return interleave(selection.map { items(ofPlaylist: schedule.entries[$0].playlist) ?? [] })
    }
}

/// One entry of `files`: a path relative to the catalog folder with its size and SHA-256.
public struct ManifestFile: Sendable, Equatable {
    /// `/`-separated, relative to the catalog folder (`vitrine/` on a stick).
    public var path: String
    /// Size in bytes.
    public var size: Int
    /// SHA-256 of the file, 64 lowercase hex digits.
    public var sha256: String
    public init(path: String, size: Int, sha256: String) { self.path = path; self.size = size; self.sha256 = sha256 }
}

/// `idle`: after `after` seconds without touch input, play the item `item` (from its start).
public struct IdleRule: Sendable, Equatable {
    /// Seconds without input, > 0.
    public var after: Double
    /// The playlist id to jump to (`idle.jump`).
    public var item: String
    public init(after: Double, item: String) { self.after = after; self.item = item }
    /// The action the rule posts when it fires.
    public var action: Action { .jump(item: item, time: nil) }
}

/// How the screen is driven and how pictures fill it.
public struct DisplaySettings: Sendable, Equatable {
    public var mode: DisplayModeRequest
    /// Clockwise rotation of the picture on the panel, in degrees.
    public var rotation: Rotation
    public var fit: Fit
    /// Colour of letterbox/pillarbox bars and of the empty screen.
    public var background: RGBColor
    /// `display.power`: when the screen is on; nil means always.
    public var power: PowerSchedule?
    /// `display.wall`: this screen is one tile of a video wall (`VideoWall`); nil: it shows the whole
    /// picture. In a manifest as written (the box's config usually adds `column` and `row`); in the
    /// player, the merged and complete wall (`VideoWall.merge(catalog:config:)`).
    public var wall: WallSettings?

    public init(mode: DisplayModeRequest = .preferred, rotation: Rotation = .none,
                fit: Fit = .contain, background: RGBColor = .black, power: PowerSchedule? = nil,
                wall: WallSettings? = nil) {
        self.mode = mode; self.rotation = rotation; self.fit = fit; self.background = background; self.power = power
        self.wall = wall
    }

    /// The settings that shape the picture (all but `power`): a catalog switch needs a new output
    /// only when these differ (`==` on `DisplaySettings` compares `power` too).
    public var output: DisplayOutputSettings {
        DisplayOutputSettings(mode: mode, rotation: rotation, fit: fit, background: background, wall: wall)
    }
}

/// The part of `DisplaySettings` an output is built from: everything but `power`.
public struct DisplayOutputSettings: Sendable, Equatable {
    public var mode: DisplayModeRequest
    public var rotation: Rotation
    public var fit: Fit
    public var background: RGBColor
    public var wall: WallSettings?
}

/// `display.mode`: `"WxH@Hz"`, `"preferred"` or `"highest"`.
public enum DisplayModeRequest: Sendable, Equatable, CustomStringConvertible {
    /// The connector's PREFERRED mode, else the largest.
    case preferred
    /// The largest mode (by pixel count, then refresh rate).
    case highest
    /// An exact size, and refresh rate in Hz (matched to the nearest integer).
    case exact(width: Int, height: Int, refresh: Int)

    public var description: String {
        switch self {
        case .preferred: return "preferred"
        case .highest: return "highest"
        case let .exact(w, h, r): return "\(w)x\(h)@\(r)"
        }
    }

    /// The largest side, the most pixels and the highest refresh rate (Hz) an exact mode may ask
    /// for: 8K UHD, and 240 Hz.
    public static let maxSide = 7680, maxPixels = 7680 * 4320, maxRefresh = 240

    /// Why an exact mode is outside those limits (nil when it is within them, or not exact).
    public var outOfRange: String? {
        guard case let .exact(w, h, r) = self else { return nil }
        if w > Self.maxSide || h > Self.maxSide || w * h > Self.maxPixels {
            return "\(w)x\(h) is larger than Vitrine drives (up to \(Self.maxSide) pixels a side and 7680x4320 pixels in all)"
        }
        if r > Self.maxRefresh { return "\(r) Hz is above \(Self.maxRefresh) Hz" }
        return nil
    }

    /// Parses `"WxH@Hz"` (decimal digits only, each > 0), `"preferred"` or `"highest"`; nil for anything else.
    public init?(parsing text: String) {
        switch text {
        case "preferred": self = .preferred
        case "highest": self = .highest
        default:
            guard text.utf8.allSatisfy({ (48...57).contains($0) || $0 == UInt8(ascii: "x") || $0 == UInt8(ascii: "@") })
            else { return nil }
            let parts = text.split(separator: "@", omittingEmptySubsequences: false)
            guard parts.count == 2, let hz = Int(parts[1]), hz > 0 else { return nil }
            let wh = parts[0].split(separator: "x", omittingEmptySubsequences: false)
            guard wh.count == 2, let w = Int(wh[0]), let h = Int(wh[1]), w > 0, h > 0 else { return nil }
            self = .exact(width: w, height: h, refresh: hz)
        }
    }
}

/// Clockwise picture rotation in degrees: 0, 90, 180 or 270.
public enum Rotation: Int, Sendable, Equatable, CaseIterable {
    case none = 0, clockwise90 = 90, upsideDown = 180, clockwise270 = 270
    /// Whether width and height swap between the panel and the logical canvas.
    public var swapsAxes: Bool { self == .clockwise90 || self == .clockwise270 }
}

/// How a picture fills the screen.
public enum Fit: String, Sendable, Equatable, CaseIterable {
    /// Whole picture visible, aspect kept, bars in `background`.
    case contain
    /// Screen filled, aspect kept, picture cropped.
    case cover
    /// Screen filled, aspect ignored.
    case stretch
}

/// An sRGB colour, 8 bits per channel (`#RRGGBB`).
public struct RGBColor: Sendable, Equatable, Hashable, CustomStringConvertible {
    public var red: UInt8, green: UInt8, blue: UInt8
    public init(red: UInt8, green: UInt8, blue: UInt8) { self.red = red; self.green = green; self.blue = blue }
    public static let black = RGBColor(red: 0, green: 0, blue: 0)
    /// Parses exactly `#RRGGBB` (hex digits, either case); nil otherwise.
    public init?(hex: String) {
        let u = Array(hex.utf8)
        guard u.count == 7, u[0] == UInt8(ascii: "#") else { return nil }
        func nib(_ c: UInt8) -> UInt8? {
            switch c {
            case 48...57: return c - 48
            case 65...70: return c - 55
            case 97...102: return c - 87
            default: return nil
            }
        }
        var v: [UInt8] = []
        for i in stride(from: 1, to: 7, by: 2) {
            guard let hi = nib(u[i]), let lo = nib(u[i + 1]) else { return nil }
            v.append(hi << 4 | lo)
        }
        self.init(red: v[0], green: v[1], blue: v[2])
    }
    /// The colour as a little-endian XRGB8888 / ARGB8888 pixel (alpha 0xFF): bytes B, G, R, A in memory.
    public var xrgb8888: UInt32 { 0xFF00_0000 | UInt32(red) << 16 | UInt32(green) << 8 | UInt32(blue) }
    public var description: String {
        func h(_ b: UInt8) -> String { let s = String(b, radix: 16, uppercase: true); return s.count == 1 ? "0" + s : s }
        return "#" + h(red) + h(green) + h(blue)
    }
}

/// Audio output settings.
public struct AudioSettings: Sendable, Equatable {
    /// ALSA PCM name, as given to `snd_pcm_open` (default `"default"`).
    public var device: String
    /// Linear gain 0…1 applied to every sample (default 1).
    public var volume: Double
    public init(device: String = "default", volume: Double = 1.0) { self.device = device; self.volume = volume }
}

/// One entry of `playlist` or of a named playlist (`playlists`).
public struct PlaylistItem: Sendable, Equatable {
    public enum Kind: String, Sendable, Equatable, CaseIterable { case video, image, audio }
    /// Unique within the manifest, across `playlist` and every named playlist.
    public var id: String
    public var type: Kind
    /// Path relative to the catalog folder, as written in the manifest (`/`-separated).
    public var src: String
    /// Seconds to show the item. Required for images; for video and audio it caps playback.
    public var duration: Double?
    /// Expected file size in bytes (optional here; required on a USB stick).
    public var size: Int?
    /// Expected SHA-256 of the file, lowercase hex (optional here; required on a USB stick).
    public var sha256: String?
    public var cuePoints: [CuePoint]
    /// How this item replaces the previous one; nil means the player's default (a cut).
    public var transition: Transition?

    public init(id: String, type: Kind, src: String, duration: Double? = nil, size: Int? = nil,
                sha256: String? = nil, cuePoints: [CuePoint] = [], transition: Transition? = nil) {
        self.id = id; self.type = type; self.src = src; self.duration = duration
        self.size = size; self.sha256 = sha256; self.cuePoints = cuePoints; self.transition = transition
    }
}

/// A timed trigger inside an item.
public struct CuePoint: Sendable, Equatable {
    /// Seconds from the start of the item, ≥ 0.
    public var time: Double
    public var id: String
    public var action: Action
    public init(time: Double, id: String, action: Action) { self.time = time; self.id = id; self.action = action }
}

/// The action vocabulary shared by cue points, overlay buttons and the idle rule.
public enum Action: Sendable, Equatable {
    case log(message: String)
    /// Play the item with this id, from `time` seconds (default 0).
    case jump(item: String, time: Double?)
    /// Seek within the current item, in seconds.
    case seek(time: Double)
    case pause
    case resume
    /// Output gain 0…1.
    case setVolume(Double)
    /// Present the overlay with this id.
    case showOverlay(String)
    case hideOverlays
    /// Start an announcement now, over every schedule entry (`interrupt`).
    case interrupt(InterruptAction)
    /// End the announcement in progress, if any (`endInterrupt`): back to what the schedule says.
    case endInterrupt
}

/// `{"type": "interrupt", "playlist": NAME | "overlay": ID, "timeout": S}`: an announcement that
/// pre-empts every schedule entry (and a display off by schedule) for `timeout` seconds, then returns
/// to what the schedule says. The popups on screen are hidden when it starts.
public struct InterruptAction: Sendable, Equatable {
    public enum Content: Sendable, Equatable {
        /// A playlist of `playlists` (or `"default"`), cut in at once and looping.
        case playlist(String)
        /// A popup of `overlays`, presented over what plays.
        case overlay(String)
    }
    public var content: Content
    /// Seconds, > 0, until it ends by itself.
    public var timeout: Double
    public init(content: Content, timeout: Double) { self.content = content; self.timeout = timeout }
}
