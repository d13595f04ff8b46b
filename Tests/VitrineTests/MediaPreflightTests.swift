import Foundation
import Testing
@testable import Vitrine
import VitrineTestSupport

@Suite("Media preflight")
struct MediaPreflightTests {
    @Test("missing, dangling, empty, folder, FIFO and link-loop paths are named without opening them; a regular file or a link to one passes")
    func problems() throws {
        let dir = try Harness.newFolder("preflight")
        let clip = dir + "/media/clip.mp4"
        try Data([0, 0, 0, 0x20]).write(to: URL(fileURLWithPath: clip))
        FileManager.default.createFile(atPath: dir + "/media/empty.mp4", contents: Data())
        try FileManager.default.createSymbolicLink(atPath: dir + "/media/link.mp4", withDestinationPath: clip)
        try FileManager.default.createSymbolicLink(atPath: dir + "/media/dangling.mp4", withDestinationPath: dir + "/media/gone.mp4")
        try FileManager.default.createSymbolicLink(atPath: dir + "/media/loop-a.mp4", withDestinationPath: dir + "/media/loop-b.mp4")
        try FileManager.default.createSymbolicLink(atPath: dir + "/media/loop-b.mp4", withDestinationPath: dir + "/media/loop-a.mp4")
        try #require(try Subprocess.run("/usr/bin/mkfifo", [dir + "/media/fifo.mp4"]).code == 0)

        #expect(MediaPreflight.problem(at: clip) == nil)
        #expect(MediaPreflight.problem(at: dir + "/media/link.mp4") == nil)
        #expect(MediaPreflight.problem(at: dir + "/media/missing.mp4") == "file not found")
        #expect(MediaPreflight.problem(at: clip + "/inside.mp4") == "file not found", "a path through a file (ENOTDIR)")
        #expect(MediaPreflight.problem(at: dir + "/media/dangling.mp4") == "file not found")
        #expect(MediaPreflight.problem(at: dir + "/media/empty.mp4") == "file is empty")
        #expect(MediaPreflight.problem(at: dir + "/media") == "not a regular file")
        // A FIFO is refused by its type: nothing opens it, so nothing blocks waiting for a writer.
        #expect(MediaPreflight.problem(at: dir + "/media/fifo.mp4") == "not a regular file")
        #expect(MediaPreflight.problem(at: "/dev/null") == "not a regular file")
        #expect(MediaPreflight.problem(at: dir + "/media/loop-a.mp4") == "cannot read: Too many levels of symbolic links (ELOOP)")
    }
}
