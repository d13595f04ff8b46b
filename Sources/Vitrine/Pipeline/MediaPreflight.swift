import FileIO

/// The check a playlist item's file gets before a decoder thread is started for it: a file that is
/// not there, empty, or not a regular file is known to be unplayable without opening it, so the
/// item can be skipped at once and the next one scheduled in the same vblank.
enum MediaPreflight {
    /// Why `path` cannot be played, found with one `stat` (links followed); nil when a decoder may try.
    ///
    /// - `"file not found"`: nothing there (`ENOENT`, or `ENOTDIR` for a path through a file), or a
    ///   dangling link;
    /// - `"not a regular file"`: a folder, FIFO or device node (opening a FIFO blocks until a writer comes);
    /// - `"file is empty"`: 0 bytes;
    /// - `"cannot read: …"`: any other `stat` error, with its errno (`EACCES`, `EIO`, `ELOOP`).
    ///
    /// The corresponding C function is `stat`, through `FileSystem.status(_:followLinks:)`.
    static func problem(at path: String) -> String? {
        let status: FileStatus?
        do { status = try FileSystem.status(path, followLinks: true) } catch { return "cannot read: \(error.errno)" }
        guard let status else { return "file not found" }
        guard status.kind == .regular else { return "not a regular file" }
        return status.size == 0 ? "file is empty" : nil
    }
}
