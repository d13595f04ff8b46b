"""sound: QEMU's wav, after QEMU quit. The wav holds only what the guest played, so its end is
the clean stop: the checked window is the last 3 s of the last player run (steady playback,
the boot long finished; clean-stop lets it play >= 10 s first), ending 0.5 s before its last
sound: 440 Hz +-2, no silence over 20 ms. And the player's first run must have had a sound
device: a box that boots into a silent catalog would otherwise pass on the later runs' sound.
The first run's start is reported for information."""
import os
import wave

from lib import journal, wav

NAMES = ("sound",)
PHASE = "after"
NEEDS = ()
TONE_HZ, TONE_TOL, MAX_GAP_MS, WINDOW = 440.0, 2.0, 20.0, 3.0


def tone(clip, window, strict=True):
    return wav.tone(clip, TONE_HZ, TONE_TOL, MAX_GAP_MS, window, min_seconds=WINDOW - 0.01 if strict else 0.0)


def run(vm):
    try:
        rec = wav.Recording(vm.q.wav)
    except (OSError, wave.Error, EOFError) as e:
        vm.result("sound", False, f"no usable wav: {e}")
        return
    try:
        judge(vm, rec)
    finally:
        rec.close()


def judge(vm, rec):
    rate = rec.rate
    last = rec.last_sound(15)
    if last is None:
        vm.result("sound", False, "the wav is empty: the guest played nothing" if rec.frames == 0 else
                  f"{rec.seconds:.1f} s of wav, and its last 15 s are silent (no sound at the stop; "
                  "is HDA Master muted?)")
        return
    clip = os.path.join(vm.out, "sound-steady.wav")
    start = max(0, last - int(rate * (WINDOW + 1.5)))
    rec.clip(clip, start, last - start)
    t_end = (last - start) / rate - 0.5
    r = tone(clip, f"{t_end - WINDOW:.3f}:{t_end:.3f}")
    vm.info(f"sound: check.py tone (steady window): {r.text}")
    # The player logs its audio output once per start ("audio: ALSA default: ..." or
    # "audio: no device; ...").
    text = vm.saved_journal()
    first_audio = journal.first_run_audio(text) if text is not None else None
    first_ok = first_audio is None or first_audio.startswith("ALSA")
    first_txt = ("" if first_audio is None else
                 f"; first run's audio: {first_audio}" if first_ok else
                 f"; but the FIRST RUN HAD NO SOUND: '{first_audio}' (journal-vitrine.txt)")
    if r.freq is None:
        vm.result("sound", False, (r.text or "the tone check failed") + first_txt)
    else:
        vm.result("sound", r.ok and first_ok,
                  f"{r.freq:.1f} Hz, longest gap {r.gap_ms:.0f} ms over {r.seconds:.1f} s "
                  f"(the last 3 s before the clean stop; rms {r.rms}; irregular periods {r.irregular}; "
                  f"{rec.seconds:.1f} s recorded){first_txt} (440 +-{TONE_TOL:g} Hz, gap <= {MAX_GAP_MS:g} ms)")
    # Information: the first run, from its first sound (the boot still settling).
    first = rec.first_sound()
    if first is None:
        return
    clip = os.path.join(vm.out, "sound-first.wav")
    rec.clip(clip, first, min(int(rate * 9), rec.frames - first))
    r1, r2 = tone(clip, "0.5:3.5", strict=False), tone(clip, "2.5:5.5", strict=False)
    if r1.freq is not None:
        vm.info(f"sound: first run, 0.5-3.5 s after its first sound ({first / rate:.1f} s into "
                f"the wav): {r1.freq:.1f} Hz, longest gap {r1.gap_ms:.0f} ms, irregular periods {r1.irregular}")
    if r2.freq is not None:
        vm.info(f"sound: first run, across the red->green boundary (2.5-5.5 s): "
                f"longest gap {r2.gap_ms:.0f} ms, irregular periods {r2.irregular}")
