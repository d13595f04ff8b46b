import Foundation

extension Harness {
    /// Runs `/usr/bin/<program>` (ffmpeg, ffprobe) with `args` and returns its standard output;
    /// throws if it exits non-zero. The references the pixel and sample tests compare against.
    static func output(_ program: String, _ args: [String]) throws -> Data {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/" + program)
        p.arguments = args
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else {
            throw HarnessError(description: "\(program) \(args.joined(separator: " ")) exited \(p.terminationStatus)")
        }
        return data
    }
}
