// The one atomic-write helper: a reader sees the old file or the new one, never a part, even
// after a power cut.

extension FileSystem {
    /// The temporary file `writeAtomically(_:to:)` writes first: `.<name>.tmp` beside `path`
    /// (`/var/lib/vitrine/state.json` → `/var/lib/vitrine/.state.json.tmp`). A leftover one (from
    /// a crash between the steps) is removed by the next write, or by whoever cleans the folder.
    public static func atomicWriteTemporary(for path: String) -> String {
        let folder = parentPath(path)
        let name = folder.isEmpty ? path : String(path.dropFirst(folder == "/" ? 1 : folder.count + 1))
        return (folder.isEmpty ? "" : folder == "/" ? "/" : folder + "/") + "." + name + ".tmp"
    }

    /// Replaces (or creates) the file `path` with `bytes`, atomically and durably: writes a
    /// temporary file in the same folder (`atomicWriteTemporary(for:)`), fsyncs it, renames it over
    /// `path`, then fsyncs the folder, so that after a crash at any moment `path` holds either its
    /// old bytes or all the new ones.
    ///
    /// On a failure the temporary file is removed (when it can be) and `path` is unchanged,
    /// unless only the last step (the folder's fsync) failed: then `path` has the new bytes, but
    /// a power cut could still undo the rename.
    ///
    /// - Parameters:
    ///   - bytes: the whole new content.
    ///   - path: the file to replace; its folder must exist. A symbolic link at `path` is replaced
    ///     by the file, not followed.
    ///   - permissions: the mode of the new file (before the umask).
    /// - Throws: `FileError` from `open` (`EACCES`, `EROFS`), `write` (`ENOSPC`, `EIO`), `fsync`
    ///   (`EIO`), `close`, `rename`, or the folder's `open`/`fsync`.
    /// The corresponding C functions are `open(O_CREAT | O_EXCL | O_NOFOLLOW)`, `write`, `fsync`,
    /// `close`, `rename` and `fsync` of the folder.
    public static func writeAtomically(_ bytes: [UInt8], to path: String, permissions: UInt32 = 0o644) throws(FileError) {
        let temporary = atomicWriteTemporary(for: path)
        try removeTree(temporary)
        let fd = try FileDescriptor(opening: temporary, .writeOnly, options: [.create, .exclusive, .noFollow],
                                    permissions: permissions)
        do {
            try fd.write(bytes, count: bytes.count)
            try fd.sync()
            try fd.close()
            try rename(temporary, to: path)
        } catch {
            try? unlink(temporary)
            throw error
        }
        let folder = parentPath(path)
        try syncDirectory(folder.isEmpty ? "." : folder)
    }
}
