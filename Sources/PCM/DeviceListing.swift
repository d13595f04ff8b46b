internal import CALSA
internal import Glibc

/// A playback PCM name alsa-lib advertises, with its human description.
public struct PCMHint: Hashable, Sendable {
    /// The name to pass to `PCMDevice.init(name:requested:)`, such as `"null"` or `"hw:CARD=PCH,DEV=0"`.
    public var name: String
    /// alsa-lib's description; may span several lines (card, then device).
    public var description: String

    public init(name: String, description: String) {
        self.name = name
        self.description = description
    }
}

/// A sound card the kernel registered.
public struct SoundCard: Hashable, Sendable {
    /// The card number, as in `hw:<index>,0`.
    public var index: Int
    /// The short name, such as `"HDA Intel PCH"`.
    public var name: String

    public init(index: Int, name: String) {
        self.index = index
        self.name = name
    }
}

extension PCMDevice {
    /// The PCM names usable for playback, from the ALSA configuration and the cards present.
    ///
    /// Capture-only entries are left out. Returns an empty list when alsa-lib cannot list hints.
    ///
    /// The corresponding C functions are `snd_device_name_hint` and `snd_device_name_free_hint`.
    public static func availablePCMs() -> [PCMHint] {
        var hints: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
        guard snd_device_name_hint(-1, "pcm", &hints) >= 0, let hints else { return [] }
        defer { snd_device_name_free_hint(hints) }

        var result: [PCMHint] = []
        var cursor = hints
        while let hint = cursor.pointee {
            cursor += 1
            guard let name = hintField(hint, "NAME") else { continue }
            if hintField(hint, "IOID") == "Input" { continue }
            result.append(PCMHint(name: name, description: hintField(hint, "DESC") ?? ""))
        }
        return result
    }

    /// The sound cards present, in index order; empty when there are none.
    ///
    /// The corresponding C functions are `snd_card_next` and `snd_card_get_name`.
    public static func cards() -> [SoundCard] {
        var result: [SoundCard] = []
        var index: Int32 = -1
        while snd_card_next(&index) >= 0, index >= 0 {
            var name: UnsafeMutablePointer<CChar>?
            guard snd_card_get_name(index, &name) >= 0, let name else {
                result.append(SoundCard(index: Int(index), name: "card \(index)"))
                continue
            }
            result.append(SoundCard(index: Int(index), name: String(cString: name)))
            free(name)
        }
        return result
    }

    /// One field of a name hint; alsa-lib allocates the string, this frees it.
    private static func hintField(_ hint: UnsafeMutableRawPointer, _ field: String) -> String? {
        guard let value = snd_device_name_get_hint(hint, field) else { return nil }
        defer { free(value) }
        return String(cString: value)
    }
}
