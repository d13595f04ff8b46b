// The test seam of the importer: fail one file operation as the kernel would, or act between files.
import FileIO

/// Faults a test injects into one import. Production code passes `.none`.
///
/// `fail` is asked before each operation with the file's path relative to the stick's `vitrine/`
/// folder (or `catalog.json`, `state.json`, `current`, `previous`, `.` for a folder) and returns the
/// `errno` to fail it with, or nil to let it run. `beforeFile` runs before file `index` of the copy
/// is opened (a test can delete it from the stick there: the stick was pulled), on the copy thread.
struct ImportFaults: Sendable {
    enum Operation: String, Sendable { case open, read, write, sync, rename, symlink }

    var fail: (@Sendable (Operation, String) -> Errno?)?
    var beforeFile: (@Sendable (Int, String) -> Void)?
    /// Replaces the free space `statvfs` reports for the library, in bytes.
    var availableSpace: Int64?

    static let none = ImportFaults()

    /// Throws the injected error for `operation` on `file`, if any; `path` is the real path for the message.
    func check(_ operation: Operation, _ file: String, _ path: String) throws(FileError) {
        guard let fail, let errno = fail(operation, file) else { return }
        let name: String
        switch operation {
        case .sync: name = "fsync"
        default: name = operation.rawValue
        }
        throw FileError(operation: name, path: path, errno: errno)
    }
}
