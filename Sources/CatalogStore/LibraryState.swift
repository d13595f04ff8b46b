// state.json: the last accepted catalog version, kept across restarts and written atomically.
import FileIO
import VitrineCore

/// `<library>/state.json`: `{"schema": "vitrine.library/1", "version": 42, "generation": 7}`: the last
/// accepted manifest `version` and the generation folder it went to.
struct LibraryState: Sendable, Equatable {
    static let schema = "vitrine.library/1"
    var version: Int
    var generation: Int

    /// Reads `path`; nil when it is missing or unreadable (then the versions of the generations on disk decide).
    static func read(_ path: String) -> LibraryState? {
        guard let bytes = try? LibraryFiles.readSmallFile(path, limit: 4096),
              let root = try? JSONValue(parsing: bytes),
              case .string(schema)? = root["schema"],
              case let .number(version)? = root["version"], let v = version.intValue, v >= 0,
              case let .number(generation)? = root["generation"], let g = generation.intValue, g >= 0
        else { return nil }
        return LibraryState(version: v, generation: g)
    }

    /// The file's text.
    var json: String { "{\"schema\": \"\(Self.schema)\", \"version\": \(version), \"generation\": \(generation)}\n" }

    /// Writes `path` atomically: a temporary file in the same folder, fsync, rename over `path`, fsync the folder.
    func write(_ path: String) throws(FileError) {
        try FileSystem.writeAtomically(Array(json.utf8), to: path)
    }
}

/// Small-file helpers shared by the library and the importer.
enum LibraryFiles {
    /// Reads at most `limit` bytes of the regular file `path`, and one byte more to tell that it is larger.
    static func readSmallFile(_ path: String, limit: Int) throws(FileError) -> [UInt8] {
        let fd = try FileDescriptor(opening: path, .readOnly)
        var buffer = [UInt8](repeating: 0, count: limit + 1)
        let n = try fd.read(into: &buffer, count: limit + 1)
        try fd.close()
        return Array(buffer[0..<n])
    }
}
