import Foundation
import Testing
@testable import CatalogStore
import Crypto
import FileIO
import VitrineCore
import VitrineTestSupport

/// `vitrine import` killed with SIGKILL at random moments. Set VITRINE_KILL_SEED to repeat a run and
/// VITRINE_KILLS to change the count (default 200).
@Suite("Import: kill -9", .enabled(if: VitrineBinary.available, VitrineBinary.absent))
struct ImportKillTests {
    /// Starts `vitrine import` on `stick`, and kills it after `delay` seconds if it still runs (nil: never).
    /// - Returns: whether the kill landed while it ran, and its exit status otherwise.
    func importAndKill(_ stick: TestStick, library: CatalogLibrary, after delay: Double?) throws -> (killed: Bool, status: Int32) {
        let p = try VitrineBinary.start(["import", stick.mount, "--library", library.path, "--quiet"],
                                        standardOutput: .discard, standardError: .discard)
        // An import that outlives `delay` (counted from its start) is killed there with SIGKILL.
        let ended = delay.map { p.wait(timeout: .seconds($0 - p.elapsed)) } ?? p.wait()
        return (ended.signaled && ended.status == SIGKILL, ended.status)
    }

    @Test("200 SIGKILLs at random moments: current is always whole, the old or the new catalog, never a mix; cleanup leaves no staging; the next import switches")
    func killNine() throws {
        let environment = ProcessInfo.processInfo.environment
        let seed = environment["VITRINE_KILL_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 1...999_999)
        let rounds = environment["VITRINE_KILLS"].flatMap { Int($0) } ?? 200
        var random = SplitMix64(seed: seed)
        print("kill -9 test: seed \(seed) (VITRINE_KILL_SEED=\(seed) repeats it), \(rounds) rounds")

        // Two sticks with the same names and different bytes: 3 files of 3.5 MB.
        var sticks = [try TestStick(files: 3, size: 3_500_000, seed: 100, version: 1).write(),
                      try TestStick(files: 3, size: 3_500_000, seed: 200, version: 1).write()]
        let hashes = sticks.map { stick in Dictionary(uniqueKeysWithValues: stick.media.map { ($0.path, SHA256.hash($0.bytes).hex) }) }
        let library = newLibrary()

        // Calibrate: a whole import by the binary, start to exit (the median of five).
        var version = 1, durations: [Double] = []
        for _ in 0..<5 {
            sticks[0].version = version
            try sticks[0].writeManifest()
            let started = Date()
            let (_, status) = try importAndKill(sticks[0], library: library, after: nil)
            durations.append(Date().timeIntervalSince(started))
            #expect(status == 0)
            version += 1
        }
        version -= 1  // current: sticks[0] at `version`
        let duration = durations.sorted()[2]
        print("kill -9 test: a whole import takes \(Int(duration * 1000)) ms (median of 5); kills spread over 0…\(Int(duration * 1100)) ms")

        var killedWhileRunning = 0, finishedFirst = 0, foundOld = 0, foundNew = 0, followUps = 0
        var failures: [String] = []
        for round in 0..<rounds {
            let old = round % 2, new = 1 - old  // content now current, and content being imported
            sticks[new].version = version + 1
            try sticks[new].writeManifest()
            let delay = Double.random(in: 0...(duration * 1.1), using: &random)
            let (killed, _) = try importAndKill(sticks[new], library: library, after: delay)
            if killed { killedWhileRunning += 1 } else { finishedFirst += 1 }

            // Restart: the cleanup the player runs at start-up, then what it would play, every hash checked.
            _ = try library.cleanUp()
            let resolution = library.resolve(verifyHashes: true)
            guard let current = resolution.catalog, current.slot == .current else {
                failures.append("round \(round) (delay \(delay)): current not whole: \(resolution.skipped)")
                break
            }
            let content: Int
            if current.manifest.version == version { content = old; foundOld += 1 }
            else if current.manifest.version == version + 1 { content = new; foundNew += 1 }
            else { failures.append("round \(round): current has version \(current.manifest.version)"); break }
            // Every file is the bytes of that one stick (resolve checked them against catalog.json).
            if current.files.contains(where: { hashes[content][$0.path] != $0.sha256 }) || current.files.count != 3 {
                failures.append("round \(round): current mixes catalogs")
                break
            }
            let leftovers = library.entries.filter {
                $0.hasPrefix("staging.") || $0.hasSuffix(".tmp")
                    || ($0.hasPrefix("gen.") && $0 != library.currentTarget && $0 != library.previousTarget)
            }
            if !leftovers.isEmpty { failures.append("round \(round): left after cleanup: \(leftovers)"); break }

            // The follow-up import of the new content, one version up, runs to the end.
            version += 1
            sticks[new].version = version + 1
            try sticks[new].writeManifest()
            let (_, status) = try importAndKill(sticks[new], library: library, after: nil)
            version += 1
            if status == 0, library.resolve().catalog?.manifest.version == version { followUps += 1 } else {
                failures.append("round \(round): follow-up import exited \(status)")
                break
            }
        }
        print("kill -9 test: seed \(seed): \(rounds) kills sent (\(killedWhileRunning) while running, \(finishedFirst) after it ended); "
              + "current found old \(foundOld), new \(foundNew); follow-up imports switched \(followUps)")
        #expect(failures == [])
        #expect(killedWhileRunning + finishedFirst == rounds)
        #expect(foundOld + foundNew == rounds)
        #expect(followUps == rounds)
        #expect(killedWhileRunning >= rounds / 2)
    }
}
