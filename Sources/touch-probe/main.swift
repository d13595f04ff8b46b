// touch-probe: opens libinput (udev seat or event nodes) and prints every InputEvent as one line,
// for a number of seconds or until a given event. tools/vm/touch-test reads its output.
//
//   touch-probe [--udev] [--seat SEAT] [--path NODE]... [--calibrate M] [--seconds S] [--until NAME[:COUNT]] [--debug]
//
// Output, one line each, written unbuffered:
//   ready backend=udev seat=seat0 elapsed=0.012
//   event elapsed=0.503 now=123.456789 deviceAdded sysname=event3 name="..." touch=1 ... size=320.0x180.0mm
//   event elapsed=1.201 now=124.154321 touchDown slot=0 x=0.2500 y=0.7500 time=124.150000
//   log error: event3: kernel bug: ...        (libinput's own messages)
//   done events=5 elapsed=1.305 reason=until
// `elapsed` counts seconds from the probe's start, `now` is CLOCK_MONOTONIC (the clock of `time=`),
// so `now - time` is the delivery latency. Exit 0, 1 on an InputError, 64 on a usage error.
import Glibc
import Touch

let usage = """
    usage: touch-probe [--udev] [--seat SEAT] [--path NODE]... [--calibrate M] [--seconds S] [--until NAME[:COUNT]] [--debug]
      --udev           the udev backend (the default): every device of the seat, hot-plug included
      --seat SEAT      the udev seat (default seat0)
      --path NODE      the path backend with this event node, e.g. /dev/input/event3 (repeatable)
      --calibrate M    six numbers "a b c d e f" set on every touch device as it is added
      --seconds S      stop after S seconds (default 10)
      --until N[:C]    stop after the C-th event named N (default C = 1), e.g. touchUp or deviceAdded:2
      --debug          print libinput's debug messages too (default: errors only)
      --help           this text
    """

/// Writes `line` to stdout whole, through the gateway (EINTR retried there); gives up when stdout fails.
func say(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    var offset = 0
    while offset < bytes.count {
        let written = valueOrErrno(SystemCall("write", "stdout")) {
            bytes.withUnsafeBytes { write(1, $0.baseAddress! + offset, $0.count - offset) }
        }
        guard case .success(let n) = written, n > 0 else { return }
        offset += n
    }
}

func fail(_ message: String, status: Int32) -> Never {
    var text = Array("touch-probe: \(message)\n".utf8)
    _ = text.withUnsafeMutableBytes { write(2, $0.baseAddress, $0.count) }
    exit(status)
}

/// Now on CLOCK_MONOTONIC, in seconds: the clock of libinput's event times.
func monotonic() -> Double { MonotonicClock.seconds() }

/// Three decimals, for the probe's own times.
func ms(_ value: Double) -> String {
    let thousandths = Int((value * 1000).rounded())
    let fraction = String(abs(thousandths) % 1000)
    return "\(thousandths / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)"
}

// MARK: - Arguments

var paths: [String] = []
var seat = "seat0"
var seconds = 10.0
var until: (name: String, count: Int)?
var calibration: [Float]?
var logPriority = InputLogPriority.error
var arguments = CommandLine.arguments.dropFirst()
@MainActor func value(_ option: String) -> String {
    guard let v = arguments.popFirst() else { fail("\(option) needs a value\n\(usage)", status: 64) }
    return v
}
while let argument = arguments.popFirst() {
    switch argument {
    case "--udev": break
    case "--seat": seat = value(argument)
    case "--path": paths.append(value(argument))
    case "--seconds":
        guard let s = Double(value(argument)), s > 0 else { fail("--seconds needs a positive number", status: 64) }
        seconds = s
    case "--until":
        let spec = value(argument).split(separator: ":", maxSplits: 1).map(String.init)
        guard let name = spec.first, !name.isEmpty, let count = spec.count > 1 ? Int(spec[1]) : 1, count > 0 else {
            fail("--until needs NAME or NAME:COUNT", status: 64)
        }
        until = (name, count)
    case "--calibrate":
        let numbers = value(argument).split(separator: " ").compactMap { Float($0) }
        guard numbers.count == 6 else { fail("--calibrate needs six numbers", status: 64) }
        calibration = numbers
    case "--debug": logPriority = .debug
    case "--help", "-h":
        say(usage)
        exit(0)
    default:
        fail("unknown argument \(argument)\n\(usage)", status: 64)
    }
}

// MARK: - Run

let start = monotonic()
let context: InputContext
do throws(InputError) {
    let log: InputLogHandler = { priority, message in say("log \(priority): \(message)") }
    context = paths.isEmpty ? try .udev(seat: seat, log: log, logPriority: logPriority)
                            : try .path(paths, log: log, logPriority: logPriority)
} catch {
    fail("\(error)", status: 1)
}
say(paths.isEmpty ? "ready backend=udev seat=\(seat) elapsed=\(ms(monotonic() - start))"
                  : "ready backend=path devices=\(paths.count) elapsed=\(ms(monotonic() - start))")

var count = 0
var matched = 0
var reason = "timeout"
loop: while true {
    let events: [InputEvent]
    do throws(InputError) {
        events = try context.dispatch()
    } catch {
        fail("\(error)", status: 1)
    }
    for event in events {
        count += 1
        let now = monotonic()
        say("event elapsed=\(ms(now - start)) now=\(ms(now)) \(event)")
        if case .deviceAdded(let device) = event, device.hasTouch, let calibration {
            do throws(InputError) {
                try context.setCalibration(calibration, sysname: device.sysname)
                say("calibrated sysname=\(device.sysname) matrix=\(calibration.map { "\($0)" }.joined(separator: ","))")
            } catch {
                say("calibration failed: \(error)")
            }
        }
        if let until, event.name == until.name {
            matched += 1
            if matched >= until.count { reason = "until"; break loop }
        }
    }
    let remaining = seconds - (monotonic() - start)
    if remaining <= 0 { break }
    var descriptor = pollfd(fd: context.fileDescriptor, events: Int16(POLLIN), revents: 0)
    _ = poll(&descriptor, 1, Int32(min(remaining, 1) * 1000) + 1)
}
say("done events=\(count) elapsed=\(ms(monotonic() - start)) reason=\(reason)")
