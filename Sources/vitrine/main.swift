// vitrine: the signage player's command line. See `vitrine --help` and `man vitrine`.
import Foundation
import Vitrine
import VitrineCore

/// sysexits(3) codes.
enum Exit: Int32 {
    case ok = 0, failure = 1, usage = 64, dataError = 65, noInput = 66, unavailable = 69
}

/// An input that does not exist (exit 66, EX_NOINPUT), with the message to print.
struct InputError: Error, CustomStringConvertible { var description: String }

let version = "0.1.0"

/// Prints one line on standard output; a closed pipe loses it (see `StandardStreams`).
func say(_ line: String) { StandardStreams.out(line + "\n") }

func commandProbe(_ argv: [String]) throws -> Exit {
    let args = try Arguments(argv, valued: [], flags: [])
    if args.wantsHelp { say(probeHelp); return .ok }
    guard args.positional.isEmpty else { throw UsageError(description: "unexpected argument \(args.positional[0])") }
    say(Probe.report())
    return .ok
}

func commandBench(_ argv: [String]) throws -> Exit {
    let args = try Arguments(argv, valued: ["mode"], flags: [])
    if args.wantsHelp { say(benchHelp); return .ok }
    guard args.positional.count == 1 else { throw UsageError(description: "bench needs exactly one FILE") }
    var w: Int? = nil, h: Int? = nil
    if let m = args.options["mode"] {
        let parts = m.split(separator: "x").compactMap { Int($0) }
        guard parts.count == 2 else { throw UsageError(description: "--mode: expected WxH") }
        w = parts[0]; h = parts[1]
    }
    let log = Logger(label: "vitrine", sink: .standardError(minimumLevel: .warning))
    do {
        let r = try UntimedPlayback.run(path: args.positional[0], width: w, height: h, log: log)
        say("frames \(r.frames) seconds \(String(format: "%.3f", r.seconds)) fps \(String(format: "%.1f", r.framesPerSecond))")
        return .ok
    } catch {
        StandardStreams.err("vitrine bench: \(error)\n")
        return .dataError
    }
}

func main() -> Int32 {
    var argv = Array(CommandLine.arguments.dropFirst())
    // First, before any thread starts: a player's SIGINT, SIGTERM and SIGHUP go to its run loop's
    // signalfd (the other commands keep the default actions).
    if argv.first == "run" || argv.first == "play" { Player.installSignalHandlers() }
    // A reader that goes away (`vitrine run … | head`) must not end the player: EPIPE, not SIGPIPE.
    StandardStreams.ignoreBrokenPipes()
    MediaLog.quiet()
    guard let command = argv.first else {
        StandardStreams.err(topHelp + "\n")
        return Exit.usage.rawValue
    }
    argv.removeFirst()
    do {
        let code: Exit
        switch command {
        case "--help", "-h": say(topHelp); code = .ok
        case "help":
            // `vitrine help run` is `vitrine run --help`.
            if let name = argv.first {
                guard let c = commands.first(where: { $0.name == name }) else { throw unknownCommand(name) }
                say(c.help)
            } else {
                say(topHelp)
            }
            code = .ok
        case "--version": say("vitrine \(version)"); code = .ok
        case MediaCheck.command: code = MediaCheck.runChild(argv)
        default:
            guard let c = commands.first(where: { $0.name == command }) else { throw unknownCommand(command) }
            code = try c.run(argv)
        }
        return code.rawValue
    } catch let e as UsageError {
        StandardStreams.err("vitrine: \(e)\nRun `vitrine --help` for usage.\n")
        return Exit.usage.rawValue
    } catch let e as InputError {
        StandardStreams.err("vitrine: \(e)\n")
        return Exit.noInput.rawValue
    } catch {
        StandardStreams.err("vitrine: \(error)\n")
        return Exit.failure.rawValue
    }
}

func unknownCommand(_ name: String) -> UsageError {
    let hint = Spelling.suggestion(for: name, among: commands.map(\.name)).map { " (did you mean \($0)?)" } ?? ""
    return UsageError(description: "unknown command \(name)" + hint)
}

exit(main())
