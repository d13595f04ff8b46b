// `vitrine ctl`: one command to the running player through its control socket (docs/control.md).

import ControlSocket
import Foundation
import Vitrine
import VitrineCore

/// The environment variable that names the control socket when `--socket` does not.
let controlSocketVariable = "VITRINE_CONTROL_SOCKET"

/// What `vitrine ctl` was asked: its options and the command's words.
struct CtlArguments {
    var socket: String?
    var json = false
    var timeout = 10.0
    var out: String?
    var help = false
    /// The command's name, then its arguments, as typed.
    var words: [String] = []

    /// Options may come anywhere before `--`; a word that reads as a number (`-5`, `-0.25`) is an
    /// argument, not an option.
    /// - Throws: `UsageError` for an unknown option (with the nearest known one), a missing value,
    ///   a value given to `--json`, or a `--timeout` that is not a positive number of seconds.
    init(_ argv: [String]) throws {
        let valued: Set<String> = ["socket", "timeout", "out"], flags: Set<String> = ["json", "help"]
        var i = 0
        var optionsEnded = false
        while i < argv.count {
            let a = argv[i]
            i += 1
            if optionsEnded || !a.hasPrefix("-") || a == "-" || JSONNumber(literal: a) != nil { words.append(a); continue }
            if a == "--" { optionsEnded = true; continue }
            if a == "-h" { help = true; continue }
            guard a.hasPrefix("--") else {
                throw UsageError(description: "unknown option \(a)" + Arguments.hint(String(a.dropFirst()), valued.union(flags))
                                 + "; an argument that starts with \"-\" goes after --")
            }
            var name = String(a.dropFirst(2))
            var value: String?
            if let eq = name.firstIndex(of: "=") { value = String(name[name.index(after: eq)...]); name = String(name[..<eq]) }
            if valued.contains(name) {
                if value == nil {
                    guard i < argv.count else { throw UsageError(description: "--\(name) needs a value") }
                    value = argv[i]
                    i += 1
                }
                switch name {
                case "socket": socket = value
                case "out": out = value
                default:
                    guard let s = value, let d = Double(s), d > 0, d <= 3600 else {
                        throw UsageError(description: "--timeout: expected seconds (> 0), got \(value ?? "")")
                    }
                    timeout = d
                }
            } else if flags.contains(name) {
                if value != nil { throw UsageError(description: "--\(name) takes no value") }
                if name == "help" { help = true } else { json = true }
            } else {
                throw UsageError(description: "unknown option --\(name)" + Arguments.hint(name, valued.union(flags)))
            }
        }
    }

    /// `--socket`, else `VITRINE_CONTROL_SOCKET`, else `/run/vitrine/control.sock`.
    var socketPath: String {
        if let socket { return socket }
        if let env = ProcessInfo.processInfo.environment[controlSocketVariable], !env.isEmpty { return env }
        return ControlSettings.defaultPath
    }
}

/// A command-line word as a JSON value: a JSON number, `true` or `false` as that value, anything
/// else as a string (`jump 12` sends the number 12; the player reads a number as an id's text).
func ctlArgument(_ word: String) -> JSONValue {
    if let number = JSONNumber(literal: word) { return .number(number) }
    if word == "true" { return .bool(true) }
    if word == "false" { return .bool(false) }
    return .string(word)
}

func commandCtl(_ argv: [String]) throws -> Exit {
    let args = try CtlArguments(argv)
    if args.help { say(ctlHelp); return .ok }
    guard let name = args.words.first else { throw UsageError(description: "ctl needs a COMMAND (status, observe, screenshot…)") }
    if args.out != nil && name != "screenshot" { throw UsageError(description: "--out is for screenshot") }
    if name == "observe" && args.words.count > 1 { throw UsageError(description: "observe takes no arguments") }
    let path = args.socketPath
    let timeout = Duration.milliseconds(Int64((args.timeout * 1000).rounded(.up)))
    do {
        let client = try ControlClient(path: path, timeout: timeout)
        if name == "observe" { return try observe(client, args, timeout: timeout) }
        let reply = try client.request([.string(name)] + args.words.dropFirst().map(ctlArgument),
                                       requestID: .number(JSONNumber(literal: "1", value: 1)), timeout: timeout)
        if args.json { say(reply.line) }
        guard reply.isSuccess else {
            if !args.json { StandardStreams.err("vitrine ctl: \(name): \(reply.error)" + (reply.message.map { ": \($0)" } ?? "") + "\n") }
            return .failure
        }
        if name == "screenshot", let code = try screenshot(reply, args) { return code }
        if !args.json, let data = reply.data, data != .null { say(data.prettyText) }
        return .ok
    } catch let error as ControlSocketError {
        StandardStreams.err("vitrine ctl: \(error)\n")
        if case .noListener = error { return .unavailable }
        return .failure
    }
}

/// Prints the event lines as they come, until the player closes the connection (or stdout does).
private func observe(_ client: ControlClient, _ args: CtlArguments, timeout: Duration) throws -> Exit {
    var stdoutClosed = false
    let reply = try client.observe(timeout: timeout) { line in
        do { try FileHandle.standardOutput.write(contentsOf: Data((line + "\n").utf8)) } catch {
            stdoutClosed = true
            return false
        }
        return true
    }
    guard reply.isSuccess else {
        if args.json { say(reply.line) } else {
            StandardStreams.err("vitrine ctl: observe: \(reply.error)" + (reply.message.map { ": \($0)" } ?? "") + "\n")
        }
        return .failure
    }
    if !stdoutClosed { StandardStreams.err("vitrine ctl: observe: the player closed the connection\n") }
    return .ok
}

/// `{"png_base64": …}` is written to `--out FILE`; `{"path": …}` is printed. Returns the exit code
/// when the reply is handled here, nil to print the data as for any command.
private func screenshot(_ reply: ControlResponse, _ args: CtlArguments) throws -> Exit? {
    if case let .string(base64)? = reply.data?["png_base64"] {
        guard let out = args.out else {
            if args.json { return nil }  // the reply as it came, printed by the caller
            StandardStreams.err("vitrine ctl: screenshot: the player sent a PNG (\(base64.utf8.count) bytes of base64); "
                                + "give --out FILE to write it\n")
            return .usage
        }
        guard let bytes = Data(base64Encoded: base64) else {
            StandardStreams.err("vitrine ctl: screenshot: the reply's png_base64 is not base64\n")
            return .failure
        }
        do { try bytes.write(to: URL(fileURLWithPath: out), options: .atomic) } catch {
            StandardStreams.err("vitrine ctl: screenshot: cannot write \(out): \(error.localizedDescription)\n")
            return .failure
        }
        if !args.json { say("\(out): \(bytes.count) bytes") }
        return .ok
    }
    if case let .string(file)? = reply.data?["path"] {
        if !args.json { say(file) }
        return .ok
    }
    return nil
}
