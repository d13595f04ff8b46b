internal import CALSA
internal import Glibc

/// A private alsa-lib configuration tree: the global configuration with caller-supplied text on top.
///
/// Used by `PCMDevice.init(name:requested:configText:)` to define PCMs inline (a `file` capture
/// PCM in tests, a fixed route on a kiosk) without touching `ALSA_CONFIG_PATH`, `~/.asoundrc` or
/// the process-wide cache that `snd_config_update` keeps.
final class LocalConfiguration {
    /// The `snd_config_t` root, owned: deleted in `deinit`.
    let root: OpaquePointer

    /// Copies the global configuration and loads `text` (ALSA configuration syntax) into the copy.
    ///
    /// Definitions in `text` merge with the global ones; `pcm.!name { … }` replaces one.
    ///
    /// - Throws: `ALSAError` with operation `snd_config_update_ref` when the global configuration
    ///   cannot be read, `snd_config_copy` on allocation failure, `snd_input_buffer_open`, or
    ///   `snd_config_load` (usually `-EINVAL`) when `text` does not parse.
    init(loading text: String) throws(ALSAError) {
        var global: OpaquePointer?
        try check("snd_config_update_ref") { snd_config_update_ref(&global) }
        defer { snd_config_unref(global) }

        var copy: OpaquePointer?
        try check("snd_config_copy") { snd_config_copy(&copy, global) }
        guard let copy else { throw ALSAError(operation: "snd_config_copy", code: -ENOMEM) }

        let failure: ALSAError? = text.withCString { chars in
            var input: OpaquePointer?
            let opened = snd_input_buffer_open(&input, chars, -1)
            guard opened >= 0 else { return ALSAError(operation: "snd_input_buffer_open", code: opened) }
            defer { snd_input_close(input) }
            let loaded = snd_config_load(copy, input)
            return loaded < 0 ? ALSAError(operation: "snd_config_load", code: loaded) : nil
        }
        if let failure {
            snd_config_delete(copy)
            throw failure
        }
        root = copy
    }

    deinit { snd_config_delete(root) }
}
