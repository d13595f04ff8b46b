// `vitrine validate`: a manifest, its media files, and a USB stick's sizes and hashes.

import Foundation
import Crypto
import Vitrine
import VitrineCore

func commandValidate(_ argv: [String]) throws -> Exit {
    let args = try Arguments(argv, valued: ["config"], flags: [])
    if args.wantsHelp { say(validateHelp); return .ok }
    guard args.positional.count == 1 else { throw UsageError(description: "validate needs exactly one MANIFEST") }
    let target = try ValidationTarget(args.positional[0])
    let configPath = args.options["config"]
    if let configPath { try ConfigValidation.checkReadable(configPath) }
    let report = CatalogValidation(target).run()
    for p in report.problems { say("\(target.manifestPath): \(p.severity == .warning ? "warning: " : "")\(p)") }
    let errors = report.problems.filter { $0.severity == .error }
    let catalogValid = errors.isEmpty ? report.manifest : nil
    let catalogLine = catalogValid.map { "\(target.manifestPath): valid: \($0.allItems.count) item(s), version \($0.version)"
        + (target.isStick ? ", a USB stick (sizes and hashes checked)" : "") } ?? "\(target.manifestPath): invalid: \(errors.count) error(s)"
    guard let configPath else {
        say(catalogLine)
        return catalogValid == nil ? .dataError : .ok
    }
    let config = ConfigValidation(path: configPath, catalog: report.draft, manifestErrors: errors.map(\.path))
    for p in config.problems { say("\(configPath): \(p)") }
    if catalogValid != nil, config.problems.isEmpty, config.unchecked == nil {
        say(catalogLine + "; config \(configPath): \(config.screens) screen(s)")
        return .ok
    }
    say(catalogLine)
    say("\(configPath): " + (config.problems.isEmpty ? "valid: \(config.screens) screen(s)" : "invalid: \(config.problems.count) error(s)")
        + (config.unchecked.map { "; \($0)" } ?? ""))
    return .dataError
}

/// `vitrine validate MANIFEST --config FILE`: the appliance config parsed (`PlayerConfig`), then its
/// screens against the catalog, as `ApplianceSupervisor` and `Player` will put them together: each
/// output's `playlist` one of the catalog's `playlists` (else that screen plays the catalog's own
/// playlist, with an error in the log), and each screen's video wall (the output's `wall` key by key
/// over the config's `wall`, and that over the catalog's `display.wall`: `VideoWall.merge`) a whole
/// one (else that screen shows the slate). The connectors themselves are the box's: `vitrine probe`
/// lists them.
struct ConfigValidation {
    /// Each problem as `path: reason`, the path in the config's terms (`outputs[1].playlist`).
    var problems: [String] = []
    /// The screens the config drives: its `outputs`, else one.
    var screens = 1
    /// Why the screens were not checked against the catalog, when they were not.
    var unchecked: String?

    /// Throws `InputError` (exit 66) when `path` is missing, not a regular file (a folder, a FIFO:
    /// never opened, it would block) or not readable (`access(2)`).
    static func checkReadable(_ path: String) throws {
        switch MediaFileStatus.onDisk(path) {
        case .missing: throw InputError(description: "validate: config not found: \(path)")
        case .notRegularFile: throw InputError(description: "validate: config \(path) is not a regular file (a folder, device or pipe)")
        case .empty, .regularFile:
            guard FileManager.default.isReadableFile(atPath: path) else {
                throw InputError(description: "validate: config \(path) cannot be read: permission denied")
            }
        }
    }

    /// - Parameters:
    ///   - catalog: the manifest as far as it could be read (`ManifestResult.draft`), also when some
    ///     of its fields are in error; nil when it is not a JSON object.
    ///   - manifestErrors: the JSON paths of the manifest's errors: a check that reads a field in
    ///     error (`playlists`, `display.wall`) is left out, as the manifest's line says what is wrong.
    init(path: String, catalog: Manifest?, manifestErrors: [String]) {
        guard let data = FileManager.default.contents(atPath: path) else {
            problems = ["cannot be read"]; return
        }
        let config: PlayerConfig
        do { config = try PlayerConfig(json: [UInt8](data)) } catch {
            problems = error.problems
            unchecked = "its screens are checked against the catalog once these are fixed"
            return
        }
        screens = max(1, config.outputs.count)
        guard let catalog else { unchecked = "not checked against the catalog: its manifest could not be read"; return }
        func inError(_ field: String) -> Bool { manifestErrors.contains { CatalogValidation.related($0, field) } }
        let wallKnown = !inError("display.wall")
        guard !config.outputs.isEmpty else {
            if wallKnown { problems = VideoWall.merge(catalog: catalog.display.wall, config: config.wall).problems }
            return
        }
        let names = catalog.playlistNames.map(JSONPath.quoted)
        for (i, output) in config.outputs.enumerated() {
            let at = "outputs[\(i)]", connector = JSONPath.quoted(output.connector)
            if let name = output.playlist, !inError(JSONPath.member("playlists", name)), catalog.playlists[name]?.isEmpty ?? true {
                problems.append("\(at).playlist: \(JSONPath.quoted(name)) is not one of the catalog's playlists ("
                                + (names.isEmpty ? "it has none" : "it has " + names.joined(separator: ", "))
                                + "); \(connector) would play the catalog's own playlist, as without \"playlist\"")
            }
            guard wallKnown else { continue }
            // A key in the output's own wall, or in neither, is the output's to give; else the config's wall's.
            func key(_ k: String) -> String { output.wall?[k] != nil || config.wall?[k] == nil ? "\(at).wall.\(k)" : "wall.\(k)" }
            for p in VideoWall.merge(catalog: catalog.display.wall, config: output.wall(over: config.wall), configKey: key).problems {
                problems.append("\(p); \(connector) would show the slate")
            }
        }
    }
}

/// What `vitrine validate PATH` checks: the manifest file, the folder its paths are relative to, and
/// whether it is a USB stick's (the stick rules apply: sizes and hashes required).
struct ValidationTarget {
    var manifestPath: String
    var folder: String
    var isStick: Bool

    /// PATH may be a manifest file, a catalog folder holding one, a stick's mount point (holding
    /// `vitrine/manifest.json`) or a stick's `vitrine/` folder.
    /// - Throws: `InputError` (exit 66) when PATH does not exist.
    init(_ path: String) throws {
        var path = path
        while path.count > 1, path.hasSuffix("/") { path.removeLast() }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw InputError(description: "validate: not found: \(path)")
        }
        let fm = FileManager.default
        if isDirectory.boolValue {
            if fm.fileExists(atPath: path + "/vitrine/manifest.json") {
                (manifestPath, folder, isStick) = (path + "/vitrine/manifest.json", path + "/vitrine", true)
            } else if (path as NSString).lastPathComponent == "vitrine", fm.fileExists(atPath: path + "/manifest.json") {
                (manifestPath, folder, isStick) = (path + "/manifest.json", path, true)
            } else {
                (manifestPath, folder, isStick) = (vitrine.manifestPath(inCatalog: path), path, false)
            }
        } else {
            let parent = (path as NSString).deletingLastPathComponent
            folder = parent.isEmpty ? "." : parent
            manifestPath = path
            isStick = (path as NSString).lastPathComponent == "manifest.json" && (folder as NSString).lastPathComponent == "vitrine"
        }
    }
}

/// One pass over a catalog: the manifest's own problems (`ManifestParser`), then on a stick the
/// stick rules (`StickManifest`), then every declared size and SHA-256 against the file, then each
/// media file opened and decoded (`MediaCheck`), and cue points past the end of their item.
struct CatalogValidation {
    let target: ValidationTarget

    init(_ target: ValidationTarget) { self.target = target }

    struct Report {
        var problems: [ManifestProblem]
        /// The manifest when its own structure is valid (media problems aside).
        var manifest: Manifest?
        /// The manifest as far as it could be read (`ManifestResult.draft`), errors or not; nil when it
        /// is not a JSON object. For `--config`'s checks, never for playing.
        var draft: Manifest?
    }

    func run() -> Report {
        let parsed = ManifestParser.load(path: target.manifestPath)
        var problems = parsed.problems
        guard let draft = parsed.draft else { return Report(problems: problems, manifest: nil, draft: nil) }
        if target.isStick {
            let errorFields = parsed.errors.map(\.path)
            for p in StickManifest.files(of: draft).problems where !errorFields.contains(where: { Self.related($0, p.field) }) {
                problems.append(ManifestProblem(path: p.field, reason: (p.file.map { "\($0): " } ?? "") + p.reason))
            }
        }
        problems += checksums(draft)
        problems += media(draft, known: problems)
        return Report(problems: problems, manifest: parsed.manifest ?? (parsed.errors.isEmpty ? draft : nil), draft: draft)
    }

    /// Two JSON paths where one is the other or inside it.
    static func related(_ a: String, _ b: String) -> Bool {
        a == b || b.hasPrefix(a + ".") || b.hasPrefix(a + "[") || a.hasPrefix(b + ".") || a.hasPrefix(b + "[")
    }

    /// The file `relative` names below the catalog folder, as spelled on disk (NFC or NFD), when it
    /// is a regular file there; nil when it is missing or not an acceptable relative path (the
    /// manifest's own problems say so).
    private func file(_ relative: String) -> String? {
        guard !relative.isEmpty, !relative.hasPrefix("/"), !relative.utf8.contains(0),
              !relative.split(separator: "/").contains("..") else { return nil }
        let path = FileNames.path(relative, in: target.folder)
        return MediaFileStatus.onDisk(path) == .missing ? nil : path
    }

    // MARK: Sizes and hashes

    private func checksums(_ m: Manifest) -> [ManifestProblem] {
        struct Declared { var path: String; var size: Int?; var sizeField: String; var sha256: String?; var hashField: String }
        var declared: [Declared] = []
        for (at, item) in m.allItemsWithPaths where item.size != nil || item.sha256 != nil {
            declared.append(Declared(path: item.src, size: item.size, sizeField: at + ".size",
                                     sha256: item.sha256, hashField: at + ".sha256"))
        }
        for (i, f) in m.files.enumerated() {
            declared.append(Declared(path: f.path, size: f.size, sizeField: "files[\(i)].size", sha256: f.sha256, hashField: "files[\(i)].sha256"))
        }
        var problems: [ManifestProblem] = []
        var hashes: [String: String] = [:], sizes: [String: Int64] = [:]
        for d in declared {
            guard let path = file(d.path) else { continue }
            if let size = d.size {
                let actual = sizes[path] ?? ((try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)??.int64Value ?? -1)
                sizes[path] = actual
                if actual != Int64(size) {
                    problems.append(ManifestProblem(path: d.sizeField, reason: "\(d.path): size mismatch (manifest \(size), file \(actual) bytes)"))
                }
            }
            if let sha = d.sha256 {
                let actual: String
                if let known = hashes[path] { actual = known } else {
                    guard let h = Self.sha256(of: path) else {
                        problems.append(ManifestProblem(path: d.hashField, reason: "\(d.path): cannot be read to check its sha256"))
                        continue
                    }
                    hashes[path] = h
                    actual = h
                }
                if actual != sha {
                    problems.append(ManifestProblem(path: d.hashField, reason: "\(d.path): hash mismatch (manifest \(sha.prefix(12))…, file \(actual.prefix(12))…)"))
                }
            }
        }
        return problems
    }

    /// SHA-256 of a file, read in 4 MiB blocks; nil when it cannot be read.
    static func sha256(of path: String) -> String? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        let hasher = SHA256()
        do {
            while let block = try handle.read(upToCount: 4 << 20), !block.isEmpty { hasher.update([UInt8](block)) }
        } catch {
            return nil
        }
        return hasher.finalize().hex
    }

    // MARK: Media

    /// Each item's file, the soundtrack's and each overlay image opened and decoded; cue points past the end of their
    /// item (the shorter of its `duration` and its file's) never fire.
    private func media(_ m: Manifest, known: [ManifestProblem]) -> [ManifestProblem] {
        var problems: [ManifestProblem] = []
        var probed: [String: Result<MediaProbe, MediaCheckFailure>] = [:]
        func probe(_ path: String, _ kind: PlaylistItem.Kind) -> Result<MediaProbe, MediaCheckFailure> {
            let key = "\(kind.rawValue):\(path)"
            if let r = probed[key] { return r }
            let r = MediaCheck.probe(path, kind: kind)
            probed[key] = r
            return r
        }
        let alreadyWarned = Set(known.filter { $0.severity == .warning }.map(\.path))
        // A file already reported (missing, empty, not a regular file) is not reported again.
        let alreadyWrong = Set(known.filter { $0.severity == .error }.map(\.path))
        for (itemPath, item) in m.allItemsWithPaths {
            guard !alreadyWrong.contains(itemPath + ".src"), let path = file(item.src) else { continue }
            switch probe(path, item.type) {
            case .failure(let why):
                problems.append(ManifestProblem(path: itemPath + ".src", reason: "\(item.src) cannot play: \(why)"))
            case .success(let found):
                guard item.type != .image, let fileLength = found.duration else { continue }
                let length = min(fileLength, item.duration ?? .infinity)
                for (j, cue) in item.cuePoints.enumerated() where cue.time > length + CuePointScheduler.endTolerance {
                    let at = "\(itemPath).cuePoints[\(j)].time"
                    guard !alreadyWarned.contains(at) else { continue }
                    let end = item.duration.map { $0 < fileLength ? "its duration (\(Self.seconds($0)))" : nil } ?? nil
                    problems.append(ManifestProblem(path: at, reason: "\(Self.seconds(cue.time)) is past the end of "
                        + (end ?? "\(item.src) (\(Self.seconds(fileLength)))") + ": it never fires", severity: .warning))
                }
            }
        }
        if let music = m.soundtrack, !alreadyWrong.contains("soundtrack.src"), let path = file(music.src),
           case .failure(let why) = probe(path, .audio) {
            problems.append(ManifestProblem(path: "soundtrack.src", reason: "\(music.src) cannot play: \(why)"))
        }
        for id in m.overlayIDs {
            guard let image = m.overlays[id]?.image, !alreadyWrong.contains(JSONPath.member("overlays", id) + ".image"),
                  let path = file(image) else { continue }
            if case .failure(let why) = probe(path, .image) {
                problems.append(ManifestProblem(path: JSONPath.member("overlays", id) + ".image", reason: "\(image) cannot be shown: \(why)"))
            }
        }
        return problems
    }

    /// `4 s`, `4.5 s`, `3.967 s`.
    static func seconds(_ t: Double) -> String {
        var s = String(format: "%.3f", t)
        while s.hasSuffix("0") { s.removeLast() }
        if s.hasSuffix(".") { s.removeLast() }
        return s + " s"
    }
}
