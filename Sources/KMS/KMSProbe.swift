// `vitrine probe`: a plain-text report of every DRM card and what is missing.
#if canImport(Glibc)
internal import Glibc
#endif

/// Describes the machine's display hardware for `vitrine probe`.
public enum KMSProbe {
    /// A multi-line, plain-text report of every `/dev/dri/card*`: driver, capabilities,
    /// connectors (name, state — connected, disconnected or unknown —, size in mm, modes count,
    /// the mode the player would pick, modes with `*` for preferred), CRTCs and planes
    /// (type, formats), followed by what is missing for DRM output and what that means.
    ///
    /// Never throws: a failure is reported in the text where it happened.
    public static func report() -> String {
        report(cardPaths: KMSDevice.cardPaths())
    }

    static func report(cardPaths: [String]) -> String {
        var lines: [String] = []
        var problems: [String] = []
        var notes: [String] = []
        var outputs: [String] = []

        if cardPaths.isEmpty {
            problems.append("no /dev/dri/card*: DRM output unavailable, headless only")
        }
        for path in cardPaths {
            let device: KMSDevice
            do {
                device = try KMSDevice(path: path)
            } catch {
                lines.append("\(path): cannot open: \(error)")
                if error.errno == EACCES || error.errno == EPERM {
                    problems.append("\(path): permission denied: add the user to the 'video' group")
                } else {
                    problems.append("\(path): cannot open (\(error.errno.symbol))")
                }
                continue
            }
            outputs += describe(device, into: &lines, problems: &problems, notes: &notes)
        }
        if !cardPaths.isEmpty && outputs.isEmpty {
            problems.append("no card has a connected display it can drive: DRM output unavailable, headless only")
        }

        lines.append("")
        lines.append(outputs.isEmpty ? "DRM output: unavailable, headless only"
                                     : "DRM output: available on \(outputs.joined(separator: ", "))")
        if !problems.isEmpty {
            lines.append("Missing:")
            lines.append(contentsOf: problems.map { "  - \($0)" })
        }
        if !notes.isEmpty {
            lines.append("Notes:")
            lines.append(contentsOf: notes.map { "  - \($0)" })
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Appends one card's section; `problems` get what prevents output, `notes` what degrades it.
    /// Returns the outputs the card can drive, e.g. `["/dev/dri/card0 Virtual-1"]`.
    private static func describe(_ device: KMSDevice, into lines: inout [String],
                                 problems: inout [String], notes: inout [String]) -> [String] {
        let caps = device.capabilities
        let name = device.path
        lines.append("\(name): driver \(device.driverName) (\(device.driverDescription))")
        lines.append("  capabilities: atomic \(yesNo(caps.atomic)), universal planes \(yesNo(caps.universalPlanes)), "
            + "dumb buffers \(yesNo(caps.dumbBuffer)), monotonic timestamps \(yesNo(caps.timestampMonotonic)), "
            + "preferred depth \(caps.preferredDepth), DRM master \(yesNo(device.isMaster))")

        let connectors: [Connector]
        do {
            connectors = try device.connectors()
        } catch {
            lines.append("  connectors: \(error)")
            if error.errno == EOPNOTSUPP || error.errno == EINVAL {
                lines.append("  (no display engine: a render-only GPU)")
            }
            return []
        }
        lines.append("  connectors (\(connectors.count)):")
        for connector in connectors {
            lines.append(connectorLine(connector))
            if !connector.modes.isEmpty {
                lines.append(contentsOf: wrap(connector.modes.map(\.description), prefix: "      modes: ", indent: "             "))
            }
        }

        do {
            let crtcs = try device.crtcs()
            lines.append("  CRTCs (\(crtcs.count)):")
            for crtc in crtcs {
                let state = crtc.mode.map { "\($0) on fb \(crtc.framebufferID)" } ?? "off"
                lines.append("    \(crtc.id) (index \(crtc.index)): \(state)")
            }
        } catch {
            lines.append("  CRTCs: \(error)")
        }

        var planes: [Plane] = []
        do {
            planes = try device.planes()
            lines.append("  planes (\(planes.count)):")
            for plane in planes {
                lines.append("    \(plane.id) \(plane.type), CRTCs 0x\(String(plane.possibleCRTCs, radix: 16))"
                    + (plane.crtcID != 0 ? ", on CRTC \(plane.crtcID)" : ""))
                lines.append(contentsOf: wrap(plane.formats.map(\.description), prefix: "      formats: ", indent: "               "))
            }
        } catch {
            lines.append("  planes: \(error)")
        }

        let connected = connectors.filter { $0.isConnected && !$0.modes.isEmpty }
        if connected.isEmpty {
            problems.append("\(device.path): no connected display")
        }
        if !caps.dumbBuffer {
            problems.append("\(device.path): no dumb buffers: this card cannot show frames drawn by the CPU")
        }
        if !caps.atomic {
            notes.append("\(device.path): no atomic modesetting: legacy drmModeSetCrtc/drmModePageFlip will be used")
        }
        if !caps.timestampMonotonic {
            notes.append("\(device.path): page-flip timestamps are not CLOCK_MONOTONIC: vblank timing will be estimated")
        }
        if caps.universalPlanes && !planes.contains(where: { $0.type == .overlay && $0.formats.contains(.argb8888) }) {
            notes.append("\(device.path): no ARGB8888 overlay plane: overlays will be blended in software")
        }
        if !device.isMaster {
            notes.append("\(device.path): not DRM master now: another process (a compositor, a running player) holds the display")
        }
        return caps.dumbBuffer ? connected.map { "\(device.path) \($0.name)" } : []
    }

    /// One connector's line: name, id, state, size in mm, the modes count and the mode the player
    /// would pick for it (`OutputPlanner`, `display.mode` `preferred`: the default), e.g.
    /// `    HDMI-A-1 (id 42): connected, 600x340 mm, 12 modes, player mode 1920x1080@60.00*` or
    /// `    DP-1 (id 43): disconnected, 0 modes, player mode none (not connected)`.
    static func connectorLine(_ connector: Connector, mode request: ModeRequest = .preferred) -> String {
        var line = "    \(connector.name) (id \(connector.id)): \(connector.connection)"
        if connector.physicalWidthMM > 0 || connector.physicalHeightMM > 0 {
            line += ", \(connector.physicalWidthMM)x\(connector.physicalHeightMM) mm"
        }
        line += ", \(connector.modes.count) mode\(connector.modes.count == 1 ? "" : "s")"
        let decision = OutputPlanner.decide(OutputRequest(connectorName: connector.name, mode: request),
                                            previous: .idle, connectors: [connector])
        if let mode = decision.action.mode {
            line += ", player mode \(mode)"
        } else {
            line += ", player mode none (\(connector.connection == .connected ? "no modes" : "not connected"))"
        }
        return line
    }

    private static func yesNo(_ value: Bool) -> String { value ? "yes" : "no" }

    /// Joins `items` with spaces into lines of at most about 100 characters.
    private static func wrap(_ items: [String], prefix: String, indent: String) -> [String] {
        var lines: [String] = []
        var current = prefix
        for item in items {
            if current.count + item.count + 1 > 100 && current != prefix && current != indent {
                lines.append(current)
                current = indent
            }
            current += (current == prefix || current == indent ? "" : " ") + item
        }
        lines.append(current)
        return lines
    }
}
