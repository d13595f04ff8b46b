import Foundation
#if FUZZING
internal import CFuzzer
#endif

/// The entry point every fuzz target shares, and its replay driver.
///
/// Built with `-sanitize=fuzzer,address -D FUZZING` (`tools/fuzz`), a target is a libFuzzer binary:
/// `main` hands the command line to `LLVMFuzzerRunDriver`, which calls the target with each input.
/// Built normally (`swift build`), the same target is a replay tool: `fuzz-media FILE|DIR…` runs every
/// file through the target once and prints one line per file, so a saved crash input is reproduced
/// without the sanitizer build.
public enum FuzzInput {
    nonisolated(unsafe) fileprivate static var target: ([UInt8]) -> Void = { _ in }

    /// Runs the program: libFuzzer in a FUZZING build, else the replay driver. Never returns.
    public static func main(name: String, _ target: @escaping ([UInt8]) -> Void) -> Never {
        #if FUZZING
        Self.target = target
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv, fuzzTestOneInput))
        #else
        exit(replay(Array(CommandLine.arguments.dropFirst()), name: name, target))
        #endif
    }

    /// Copies libFuzzer's `(data, size)` into an array (a null `data` is the empty input).
    static func bytes(_ data: UnsafePointer<UInt8>?, _ size: Int) -> [UInt8] {
        guard let data, size > 0 else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: size))
    }

    /// The replay driver: runs `target` on every file named in `arguments` (folders are walked, sorted by
    /// name), printing `ok <path> (<n> bytes)` after each. Returns the exit status: 0, 64 for no
    /// arguments, 66 for a path that cannot be read.
    static func replay(_ arguments: [String], name: String, _ target: ([UInt8]) -> Void) -> Int32 {
        guard !arguments.isEmpty, !arguments.contains(where: { $0 == "-h" || $0 == "--help" }) else {
            print("usage: \(name) FILE|DIR…\nRuns each input through the fuzz target once (the libFuzzer build: tools/fuzz).")
            return arguments.isEmpty ? 64 : 0
        }
        var files: [String] = []
        for a in arguments {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: a, isDirectory: &isDirectory) else {
                FileHandle.standardError.write(Data("\(name): no such file: \(a)\n".utf8))
                return 66
            }
            if isDirectory.boolValue {
                let names = (try? FileManager.default.contentsOfDirectory(atPath: a)) ?? []
                files += names.sorted().map { a + "/" + $0 }
            } else {
                files.append(a)
            }
        }
        for f in files {
            guard let data = FileManager.default.contents(atPath: f) else {
                FileHandle.standardError.write(Data("\(name): cannot read \(f)\n".utf8))
                return 66
            }
            target([UInt8](data))
            print("ok \(f) (\(data.count) bytes)")
        }
        return 0
    }
}

#if FUZZING
/// libFuzzer's entry point. `main` passes it to `LLVMFuzzerRunDriver`; it is also exported under its
/// standard name, which the fuzzer runtime's own (unused) `main` refers to.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    FuzzInput.target(FuzzInput.bytes(data, size))
    return 0
}
#endif
