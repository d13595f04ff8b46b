import Foundation
import KMS
import Hotplug
import PCM

/// `vitrine probe`: what this machine offers for output, and what is missing.
public enum Probe {
    public static func report() -> String {
        var out = "== DRM/KMS ==\n" + KMSProbe.report() + hotplugLine() + "\n== ALSA ==\n"
        let cards = PCMDevice.cards()
        if cards.isEmpty {
            out += "no sound cards (/proc/asound): ALSA output only through software PCMs (null, file)\n"
        } else {
            for c in cards { out += "card \(c.index): \(c.name)\n" }
        }
        let pcms = PCMDevice.availablePCMs()
        out += "PCMs:\n"
        for p in pcms { out += "  \(p.name)\(p.description.isEmpty ? "" : " — " + p.description.replacingOccurrences(of: "\n", with: " "))\n" }
        if pcms.isEmpty { out += "  (none)\n" }
        out += "\n== Headless ==\nalways available (--output headless)\n"
        return out
    }

    /// `hot-plug: udev monitor on drm (change, HOTPLUG=1)`, after creating one (and releasing
    /// it) to show it can be; the error instead when it cannot, and a note without udevd.
    static func hotplugLine() -> String {
        var line = "hot-plug: \(DRMHotplugMonitor.summary)"
        do {
            _ = try DRMHotplugMonitor()
            if !FileManager.default.fileExists(atPath: "/run/udev/control") {
                line += "; udevd is not running (no /run/udev/control): no event will arrive"
            }
        } catch {
            line += "; cannot be created here: \(error)"
        }
        return line + "\n"
    }
}
