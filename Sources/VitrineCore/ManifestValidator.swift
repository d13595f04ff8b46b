// The walk over a parsed manifest: checks every field against v1, records every problem with its
// JSON path, and builds the `Manifest` as it goes (used only when no problem is an error).
// `playlists`, `schedule`, `timezone` and `display.power`: ManifestValidator+Schedule.swift.

/// Validates one manifest document in a single pass; see `ManifestParser` for the rules.
struct ManifestValidator {
    typealias Members = [(key: String, value: JSONValue)]

    private(set) var problems: [ManifestProblem] = []
    /// Item ids (of `playlist` and of every named playlist) mapped to the JSON path of their first
    /// item, for references and duplicates.
    private var itemPaths: [String: String] = [:]
    /// The keys of `playlists`; nil when `playlists` is malformed, so schedule entries go unchecked.
    var playlistNames: Set<String>? = []
    /// Ids in `overlays`; nil when `overlays` is malformed, so references to it go unchecked.
    private var overlayIDs: Set<String>? = []
    /// Called for each well-formed `src`; returns a reason when the file is unusable.
    private let checkFile: (String) -> String?

    init(checkFile: @escaping (String) -> String?) { self.checkFile = checkFile }

    // MARK: Top level

    mutating func manifest(_ root: JSONValue) -> Manifest {
        var manifest = Manifest()
        guard case let .object(members) = root else {
            error("", "the manifest must be a JSON object at its root, found \(root.typeDescription)")
            return manifest
        }
        collectIDs(members)
        for (key, value) in members {
            switch key {
            case "schema":
                if let schema = string(value, at: key), schema != Manifest.schemaV1 {
                    error(key, "unsupported schema \(JSONPath.quoted(schema)) (expected \"\(Manifest.schemaV1)\")")
                }
            case "version": manifest.version = integer(value, at: key, minimum: 0) ?? 0
            case "title": manifest.title = string(value, at: key) ?? ""
            case "display": manifest.display = display(value, at: key)
            case "audio": manifest.audio = audio(value, at: key)
            case "loop": manifest.loop = bool(value, at: key) ?? true
            case "playlist":
                guard let items = array(value, at: key) else { break }
                if items.isEmpty { error(key, "must contain at least one item") }
                manifest.playlist = items.indices.map { item(items[$0], at: JSONPath.element(key, $0)) }
            case "playlists": (manifest.playlists, manifest.playlistNames) = playlists(value, at: key)
            case "schedule": manifest.schedule = schedule(value, at: key)
            case "timezone": manifest.timezone = timezone(value, at: key)
            case "sync": manifest.sync = sync(value, at: key)
            case "overlays": (manifest.overlays, manifest.overlayIDs) = overlays(value, at: key)
            case "idle": manifest.idle = idle(value, at: key)
            case "tap": manifest.tap = action(value, at: key)
            case "files": manifest.files = files(value, at: key)
            case "soundtrack": manifest.soundtrack = soundtrack(value, at: key)
            default: unknownField(key, at: "")
            }
        }
        require(["schema", "version", "playlist"], in: members, at: "")
        if let schedule = manifest.schedule { checkReachable(schedule, path: "schedule") }
        if manifest.sync != nil {
            if !manifest.loop { error("loop", "a synchronized catalog (sync) plays its playlist as a cycle: loop must be true") }
            if manifest.schedule != nil {
                error("sync", "a synchronized catalog plays one cycle; it cannot have a schedule (remove schedule or sync)")
            }
            if manifest.display.power != nil {
                error("sync", "a synchronized catalog plays one cycle; it cannot have display.power windows")
            }
        }
        return manifest
    }

    /// `sync`: `{"epoch": RFC 3339 with Z or an offset}`.
    private mutating func sync(_ value: JSONValue, at path: String) -> SyncSettings? {
        guard let members = object(value, at: path) else { return nil }
        var epoch: Int64?
        for (key, v) in members {
            let at = JSONPath.member(path, key)
            switch key {
            case "epoch":
                guard let text = string(v, at: at) else { break }
                if let t = parseSyncEpoch(text) { epoch = t } else {
                    error(at, "\(JSONPath.quoted(text)) is not an RFC 3339 time in whole seconds with Z or an offset (like \"2026-01-01T00:00:00Z\")")
                }
            default: unknownField(key, at: path)
            }
        }
        require(["epoch"], in: members, at: path)
        return epoch.map { SyncSettings(epoch: $0) }
    }

    /// Records item ids (first occurrence wins, `playlist` before `playlists`), playlist names and
    /// overlay ids before the walk, so references may point forward.
    private mutating func collectIDs(_ members: Members) {
        var lists: [(path: String, items: [JSONValue])] = []
        if case let .array(items)? = field("playlist", members) { lists.append(("playlist", items)) }
        switch field("playlists", members) {
        case nil: playlistNames = []
        case let .object(named)?:
            playlistNames = Set(named.map(\.key))
            for (name, value) in named {
                if case let .array(items) = value { lists.append((JSONPath.member("playlists", name), items)) }
            }
        default: playlistNames = nil
        }
        for (path, items) in lists {
            for (index, item) in items.enumerated() {
                if case let .string(id)? = item["id"], !id.isEmpty, itemPaths[id] == nil { itemPaths[id] = JSONPath.element(path, index) }
            }
        }
        switch field("overlays", members) {
        case nil: overlayIDs = []
        case let .object(overlays)?: overlayIDs = Set(overlays.map(\.key))
        default: overlayIDs = nil
        }
    }

    private mutating func display(_ value: JSONValue, at path: String) -> DisplaySettings {
        var display = DisplaySettings()
        for (key, value) in object(value, at: path) ?? [] {
            let at = path + "." + key
            switch key {
            case "mode":
                guard let text = string(value, at: at) else { break }
                if let mode = DisplayModeRequest(parsing: text) {
                    if let why = mode.outOfRange { error(at, "mode \(JSONPath.quoted(text)): \(why)") } else { display.mode = mode }
                } else {
                    error(at, "invalid mode \(JSONPath.quoted(text)) (expected \"WxH@Hz\", \"preferred\" or \"highest\")")
                }
            case "rotation":
                guard let degrees = integer(value, at: at, minimum: nil) else { break }
                if let rotation = Rotation(rawValue: degrees) { display.rotation = rotation } else {
                    error(at, "must be 0, 90, 180 or 270 (found \(degrees))")
                }
            case "fit":
                guard let text = string(value, at: at) else { break }
                if let fit = Fit(rawValue: text) { display.fit = fit } else {
                    error(at, "unknown fit \(JSONPath.quoted(text)) (expected contain, cover or stretch)")
                }
            case "background":
                guard let text = string(value, at: at) else { break }
                if let colour = RGBColor(hex: text) { display.background = colour } else {
                    error(at, "invalid colour \(JSONPath.quoted(text)) (expected #RRGGBB)")
                }
            case "power": display.power = power(value, at: at)
            case "wall":
                let (wall, problems) = WallSettings.parse(value, at: at)
                for p in problems { error(p.path, p.reason) }
                display.wall = wall
            default: unknownField(key, at: path)
            }
        }
        return display
    }

    private mutating func audio(_ value: JSONValue, at path: String) -> AudioSettings {
        var audio = AudioSettings()
        for (key, value) in object(value, at: path) ?? [] {
            let at = path + "." + key
            switch key {
            case "device": audio.device = nonEmptyString(value, at: at) ?? audio.device
            case "volume": audio.volume = fraction(value, at: at) ?? audio.volume
            default: unknownField(key, at: path)
            }
        }
        return audio
    }

    // MARK: Playlist items

    /// One item of `playlist` or of a named playlist, at `path` (`playlist[2]`, `playlists.lunch[0]`).
    mutating func item(_ value: JSONValue, at path: String) -> PlaylistItem {
        var item = PlaylistItem(id: "", type: .video, src: "")
        guard let members = object(value, at: path) else { return item }
        var cueTimes: [(path: String, time: JSONNumber)] = []
        for (key, value) in members {
            let at = path + "." + key
            switch key {
            case "id":
                guard let id = nonEmptyString(value, at: at) else { break }
                item.id = id
                if let first = itemPaths[id], first != path { error(at, "duplicate id \(JSONPath.quoted(id)) (also \(first))") }
            case "type":
                guard let text = string(value, at: at) else { break }
                if let type = PlaylistItem.Kind(rawValue: text) { item.type = type } else {
                    error(at, "unknown type \(JSONPath.quoted(text)) (expected video, image or audio)")
                }
            case "src":
                guard let src = string(value, at: at) else { break }
                item.src = src
                if let reason = Self.srcProblem(src) ?? checkFile(src) { error(at, reason) }
            case "duration": item.duration = positive(value, at: at)?.value
            case "size": item.size = integer(value, at: at, minimum: 0)
            case "sha256": item.sha256 = sha256(value, at: at)
            case "transition": item.transition = transition(value, at: at)
            case "cuePoints": item.cuePoints = cuePoints(value, at: at, times: &cueTimes)
            default: unknownField(key, at: path)
            }
        }
        require(["id", "type", "src"], in: members, at: path)
        if item.type == .image, field("type", members) != nil, field("duration", members) == nil {
            error(path + ".duration", "required for images")
        }
        if item.duration != nil, case let .number(duration)? = field("duration", members) {
            for cue in cueTimes where cue.time.value > duration.value {
                warning(cue.path, "\(cue.time) is past the item's duration of \(duration)")
            }
        }
        return item
    }

    /// Why `src` is not an acceptable relative path, or nil when it is.
    static func srcProblem(_ src: String) -> String? {
        if src.isEmpty { return "must not be empty" }
        if src.utf8.contains(0) { return "must not contain a NUL character" }
        if src.hasPrefix("/") { return "must be a relative path, not absolute: \(JSONPath.printable(src))" }
        if src.contains("\\") { return "must use \"/\" between folders, not \"\\\": \(JSONPath.printable(src))" }
        if src.split(separator: "/").contains("..") { return "must not contain a \"..\" component: \(JSONPath.printable(src))" }
        return nil
    }

    /// 64 hex digits, returned in lowercase.
    private mutating func sha256(_ value: JSONValue, at path: String) -> String? {
        guard let hex = string(value, at: path) else { return nil }
        if hex.utf8.count == 64, hex.utf8.allSatisfy(Self.isHexDigit) { return hex.lowercased() }
        error(path, "expected 64 hexadecimal digits, found \(JSONPath.quoted(hex))")
        return nil
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (48...57).contains(byte) || (65...70).contains(byte) || (97...102).contains(byte)
    }

    private mutating func transition(_ value: JSONValue, at path: String) -> Transition? {
        guard let members = object(value, at: path) else { return nil }
        var type: Transition.Kind?, duration: Double?
        for (key, value) in members {
            let at = path + "." + key
            switch key {
            case "type":
                guard let text = string(value, at: at) else { break }
                type = Transition.Kind(rawValue: text)
                if type == nil { error(at, "unknown transition \(JSONPath.quoted(text)) (expected cut or crossfade)") }
            case "duration": duration = nonNegative(value, at: at)?.value
            default: unknownField(key, at: path)
            }
        }
        require(["type"], in: members, at: path)
        return type.map { Transition(type: $0, duration: duration) }
    }

    private mutating func cuePoints(_ value: JSONValue, at path: String,
                                    times: inout [(path: String, time: JSONNumber)]) -> [CuePoint] {
        var firstIndex: [String: Int] = [:]
        return (array(value, at: path) ?? []).enumerated().map { index, value in
            let cuePath = "\(path)[\(index)]"
            var cue = CuePoint(time: 0, id: "", action: .pause)
            guard let members = object(value, at: cuePath) else { return cue }
            for (key, value) in members {
                let at = cuePath + "." + key
                switch key {
                case "time":
                    guard let time = nonNegative(value, at: at) else { break }
                    cue.time = time.value
                    times.append((at, time))
                case "id":
                    guard let id = nonEmptyString(value, at: at) else { break }
                    cue.id = id
                    if let first = firstIndex[id] { error(at, "duplicate id \(JSONPath.quoted(id)) (also \(path)[\(first)])") } else {
                        firstIndex[id] = index
                    }
                case "action": cue.action = action(value, at: at) ?? cue.action
                default: unknownField(key, at: cuePath)
                }
            }
            require(["time", "id", "action"], in: members, at: cuePath)
            return cue
        }
    }

    // MARK: Actions

    /// The fields each action type takes besides `type`, and which of them are required.
    private static let actionFields: [String: (fields: [String], required: [String])] = [
        "log": (["message"], ["message"]), "jump": (["item", "time"], ["item"]), "seek": (["time"], ["time"]),
        "pause": ([], []), "resume": ([], []), "setVolume": (["volume"], ["volume"]),
        "showOverlay": (["overlay"], ["overlay"]), "hideOverlays": ([], []),
        "interrupt": (["playlist", "overlay", "timeout"], ["timeout"]), "endInterrupt": ([], []),
    ]

    private mutating func action(_ value: JSONValue, at path: String) -> Action? {
        guard let members = object(value, at: path) else { return nil }
        guard let typeValue = field("type", members) else { require(["type"], in: members, at: path); return nil }
        guard let type = string(typeValue, at: path + ".type") else { return nil }
        guard let spec = Self.actionFields[type] else {
            error(path + ".type", "unknown action type \(JSONPath.quoted(type)) (expected log, jump, seek, pause, resume, "
                + "setVolume, showOverlay, hideOverlays, interrupt or endInterrupt)")
            return nil
        }
        var text = "", number: Double?, playlist: String?
        for (key, value) in members where key != "type" {
            let at = path + "." + key
            guard spec.fields.contains(key) else { unknownField(key, at: path); continue }
            switch key {
            case "message": text = string(value, at: at) ?? ""
            case "playlist":
                guard let name = string(value, at: at) else { break }
                playlist = name
                if name != Manifest.defaultPlaylistName, let known = playlistNames, !known.contains(name) {
                    error(at, "unknown playlist \(JSONPath.quoted(name))"
                          + (known.isEmpty ? " (the manifest has no playlists)" : ""))
                }
            case "timeout": number = positive(value, at: at)?.value
            case "item":
                guard let id = string(value, at: at) else { break }
                text = id
                if itemPaths[id] == nil { error(at, "unknown item \(JSONPath.quoted(id))") }
            case "overlay":
                guard let id = string(value, at: at) else { break }
                text = id
                if let overlayIDs, !overlayIDs.contains(id) {
                    error(at, overlayIDs.isEmpty ? "unknown overlay \(JSONPath.quoted(id)) (the manifest has no overlays)"
                                                 : "unknown overlay \(JSONPath.quoted(id))")
                }
            case "time": number = nonNegative(value, at: at)?.value
            default: number = fraction(value, at: at)  // "volume"
            }
        }
        require(spec.required, in: members, at: path)
        if type == "interrupt" {
            let overlay = field("overlay", members) != nil
            guard (playlist != nil) != overlay else {
                error(path, "an interrupt names either a playlist or an overlay")
                return nil
            }
            return .interrupt(InterruptAction(content: playlist.map { .playlist($0) } ?? .overlay(text), timeout: number ?? 1))
        }
        switch type {
        case "log": return .log(message: text)
        case "jump": return .jump(item: text, time: number)
        case "seek": return .seek(time: number ?? 0)
        case "pause": return .pause
        case "resume": return .resume
        case "setVolume": return .setVolume(number ?? 1)
        case "showOverlay": return .showOverlay(text)
        case "endInterrupt": return .endInterrupt
        default: return .hideOverlays
        }
    }

    // MARK: Files

    private mutating func files(_ value: JSONValue, at path: String) -> [ManifestFile] {
        var files: [ManifestFile] = [], firstIndex: [String: Int] = [:]
        for (index, value) in (array(value, at: path) ?? []).enumerated() {
            let entryPath = "\(path)[\(index)]"
            guard let members = object(value, at: entryPath) else { continue }
            var file = ManifestFile(path: "", size: 0, sha256: ""), complete = true
            for (key, value) in members {
                let at = entryPath + "." + key
                switch key {
                case "path":
                    guard let name = string(value, at: at) else { complete = false; break }
                    file.path = name
                    if let reason = Self.srcProblem(name) ?? checkFile(name) { error(at, reason) }
                    if let first = firstIndex[name] { error(at, "duplicate path \(JSONPath.quoted(name)) (also \(path)[\(first)])") } else {
                        firstIndex[name] = index
                    }
                case "size":
                    if let size = integer(value, at: at, minimum: 0) { file.size = size } else { complete = false }
                case "sha256":
                    if let hex = sha256(value, at: at) { file.sha256 = hex } else { complete = false }
                default: unknownField(key, at: entryPath)
                }
            }
            require(["path", "size", "sha256"], in: members, at: entryPath)
            if complete, ["path", "size", "sha256"].allSatisfy({ field($0, members) != nil }) { files.append(file) }
        }
        return files
    }

    // MARK: Overlays and idle

    private mutating func overlays(_ value: JSONValue, at path: String) -> ([String: Overlay], [String]) {
        var overlays: [String: Overlay] = [:], ids: [String] = []
        for (id, value) in object(value, at: path) ?? [] {
            if id.isEmpty { error(path, "an overlay id must not be empty") }
            overlays[id] = overlay(value, at: JSONPath.member(path, id))
            ids.append(id)
        }
        return (overlays, ids)
    }

    private mutating func overlay(_ value: JSONValue, at path: String) -> Overlay {
        var overlay = Overlay()
        for (key, value) in object(value, at: path) ?? [] {
            let at = path + "." + key
            switch key {
            case "title": overlay.title = string(value, at: at) ?? ""
            case "body": overlay.body = string(value, at: at) ?? ""
            case "image":
                guard let image = string(value, at: at) else { break }
                overlay.image = image
                if let reason = Self.srcProblem(image) ?? checkFile(image) { error(at, reason) }
            case "buttons":
                overlay.buttons = (array(value, at: at) ?? []).enumerated().map { button($1, at: "\(at)[\($0)]") }
            case "style":
                guard let text = string(value, at: at) else { break }
                if let style = OverlayStyle(rawValue: text) { overlay.style = style } else {
                    error(at, "unknown style \(JSONPath.quoted(text)) (expected fade, popup or slide)")
                }
            case "duration": overlay.duration = positive(value, at: at)?.value ?? overlay.duration
            case "modal": overlay.modal = bool(value, at: at) ?? false
            case "dimming": overlay.dimming = dimming(value, at: at)
            case "margins": overlay.margins = margins(value, at: at)
            case "maxWidth": overlay.maxWidth = integer(value, at: at, minimum: 1)
            case "autoHide": overlay.autoHide = positive(value, at: at)?.value
            default: unknownField(key, at: path)
            }
        }
        return overlay
    }

    private mutating func button(_ value: JSONValue, at path: String) -> OverlayButton {
        var button = OverlayButton(label: "", action: .hideOverlays)
        guard let members = object(value, at: path) else { return button }
        for (key, value) in members {
            let at = path + "." + key
            switch key {
            case "label": button.label = nonEmptyString(value, at: at) ?? ""
            case "action": button.action = action(value, at: at) ?? button.action
            default: unknownField(key, at: path)
            }
        }
        require(["label", "action"], in: members, at: path)
        return button
    }

    private mutating func dimming(_ value: JSONValue, at path: String) -> OverlayDimming {
        var dimming = OverlayDimming()
        for (key, value) in object(value, at: path) ?? [] {
            let at = path + "." + key
            switch key {
            case "color":
                guard let text = string(value, at: at) else { break }
                if let colour = RGBColor(hex: text) { dimming.color = colour } else {
                    error(at, "invalid colour \(JSONPath.quoted(text)) (expected #RRGGBB)")
                }
            case "alpha": dimming.alpha = fraction(value, at: at) ?? dimming.alpha
            default: unknownField(key, at: path)
            }
        }
        return dimming
    }

    private mutating func margins(_ value: JSONValue, at path: String) -> OverlayMargins {
        var margins = OverlayMargins()
        for (key, value) in object(value, at: path) ?? [] {
            let at = path + "." + key
            switch key {
            case "top": margins.top = integer(value, at: at, minimum: 0) ?? margins.top
            case "left": margins.left = integer(value, at: at, minimum: 0) ?? margins.left
            case "bottom": margins.bottom = integer(value, at: at, minimum: 0) ?? margins.bottom
            case "right": margins.right = integer(value, at: at, minimum: 0) ?? margins.right
            default: unknownField(key, at: path)
            }
        }
        return margins
    }

    private mutating func idle(_ value: JSONValue, at path: String) -> IdleRule? {
        guard let members = object(value, at: path) else { return nil }
        var after: Double?, item: String?
        for (key, value) in members {
            let at = path + "." + key
            switch key {
            case "after": after = positive(value, at: at)?.value
            case "jump":
                guard let id = string(value, at: at) else { break }
                if itemPaths[id] == nil { error(at, "unknown item \(JSONPath.quoted(id))") } else { item = id }
            default: unknownField(key, at: path)
            }
        }
        require(["after", "jump"], in: members, at: path)
        guard let after, let item else { return nil }
        return IdleRule(after: after, item: item)
    }

    // MARK: Soundtrack

    private mutating func soundtrack(_ value: JSONValue, at path: String) -> Soundtrack? {
        guard let members = object(value, at: path) else { return nil }
        var soundtrack = Soundtrack(src: "")
        for (key, value) in members {
            let at = path + "." + key
            switch key {
            case "src":
                guard let src = string(value, at: at) else { break }
                soundtrack.src = src
                if let reason = Self.srcProblem(src) ?? checkFile(src) { error(at, reason) }
            case "volume": soundtrack.volume = fraction(value, at: at) ?? soundtrack.volume
            case "itemSound":
                guard let text = string(value, at: at) else { break }
                if let mode = Soundtrack.ItemSound(rawValue: text) { soundtrack.itemSound = mode } else {
                    error(at, "unknown itemSound \"\(text)\" (expected duck, pause or mix)")
                }
            case "duckVolume": soundtrack.duckVolume = fraction(value, at: at) ?? soundtrack.duckVolume
            case "fade":
                guard let fade = nonNegative(value, at: at) else { break }
                if fade.value > Soundtrack.maximumFade { error(at, "must be at most 10 seconds (found \(fade))") } else {
                    soundtrack.fade = fade.value
                }
            case "size": soundtrack.size = integer(value, at: at, minimum: 0)
            case "sha256": soundtrack.sha256 = sha256(value, at: at)
            default: unknownField(key, at: path)
            }
        }
        require(["src"], in: members, at: path)
        if field("duckVolume", members) != nil {
            if soundtrack.itemSound != .duck {
                warning(path + ".duckVolume", "only used when itemSound is duck (it is \(soundtrack.itemSound.rawValue))")
            } else if soundtrack.duckVolume >= soundtrack.volume {
                warning(path + ".duckVolume", "\(soundtrack.duckVolume) is not below volume \(soundtrack.volume): "
                        + "the soundtrack is not lowered under items with sound")
            }
        }
        return soundtrack
    }

    // MARK: Typed readers: each returns the value, or records why not and returns nil.

    mutating func object(_ value: JSONValue, at path: String) -> Members? {
        if case let .object(members) = value { return members }
        return mismatch("an object", value, at: path)
    }

    mutating func array(_ value: JSONValue, at path: String) -> [JSONValue]? {
        if case let .array(elements) = value { return elements }
        return mismatch("an array", value, at: path)
    }

    mutating func string(_ value: JSONValue, at path: String) -> String? {
        if case let .string(text) = value { return text }
        return mismatch("a string", value, at: path)
    }

    mutating func nonEmptyString(_ value: JSONValue, at path: String) -> String? {
        guard let text = string(value, at: path) else { return nil }
        if text.isEmpty { error(path, "must not be empty"); return nil }
        return text
    }

    mutating func bool(_ value: JSONValue, at path: String) -> Bool? {
        if case let .bool(flag) = value { return flag }
        return mismatch("a boolean", value, at: path)
    }

    mutating func number(_ value: JSONValue, at path: String) -> JSONNumber? {
        if case let .number(number) = value { return number }
        return mismatch("a number", value, at: path)
    }

    /// An integral number (`3` or `3.0`, as JSON Schema's "integer") that fits an `Int`, and is ≥ `minimum`.
    mutating func integer(_ value: JSONValue, at path: String, minimum: Int?) -> Int? {
        guard case let .number(number) = value else { return mismatch("an integer", value, at: path) }
        guard number.isIntegral else { error(path, "expected an integer, found \(number)"); return nil }
        guard let int = number.intValue else { error(path, "integer out of range: \(number)"); return nil }
        if let minimum, int < minimum { error(path, "must be at least \(minimum) (found \(number))"); return nil }
        return int
    }

    /// The longest time the manifest may state, in seconds: one year. Longer values are typos, and
    /// the player counts time in audio frames, where they would overflow.
    static let maximumSeconds = 31_536_000.0

    mutating func nonNegative(_ value: JSONValue, at path: String) -> JSONNumber? {
        guard let number = number(value, at: path) else { return nil }
        if number.value < 0 { error(path, "must not be negative (found \(number))"); return nil }
        if number.value > Self.maximumSeconds { error(path, "must be at most 31536000 seconds (one year) (found \(number))"); return nil }
        return number
    }

    mutating func positive(_ value: JSONValue, at path: String) -> JSONNumber? {
        guard let number = number(value, at: path) else { return nil }
        if number.value <= 0 { error(path, "must be greater than 0 (found \(number))"); return nil }
        if number.value > Self.maximumSeconds { error(path, "must be at most 31536000 seconds (one year) (found \(number))"); return nil }
        return number
    }

    /// A number in 0…1, such as a volume.
    mutating func fraction(_ value: JSONValue, at path: String) -> Double? {
        guard let number = number(value, at: path) else { return nil }
        if !(0...1).contains(number.value) { error(path, "must be between 0 and 1 (found \(number))"); return nil }
        return number.value
    }

    // MARK: Recording

    func field(_ key: String, _ members: Members) -> JSONValue? { members.first { $0.key == key }?.value }

    mutating func require(_ keys: [String], in members: Members, at path: String) {
        for key in keys where field(key, members) == nil { error(path.isEmpty ? key : path + "." + key, "required") }
    }

    mutating func unknownField(_ key: String, at path: String) {
        error(JSONPath.member(path, key), "unknown field \(JSONPath.quoted(key))")
    }

    mutating func mismatch<T>(_ expected: String, _ value: JSONValue, at path: String) -> T? {
        error(path, "expected \(expected), found \(value.typeDescription)")
        return nil
    }

    mutating func error(_ path: String, _ reason: String) {
        problems.append(ManifestProblem(path: path, reason: reason, severity: .error))
    }

    mutating func warning(_ path: String, _ reason: String) {
        problems.append(ManifestProblem(path: path, reason: reason, severity: .warning))
    }
}
