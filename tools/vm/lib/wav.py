"""What the guest played: QEMU's wav audiodev (16-bit PCM, 48 kHz stereo here) and its analysis.

The wav holds only what was played: sample 0 is the first sample a stream played, and the file
ends where the last stream stopped. QEMU finalises the header only on a clean exit (QMP quit or
the guest's poweroff with -no-reboot); a header that says 0 frames is read from its data.
"""
import array
import math
import struct
import wave

SILENCE = 64  # |sample| <= this is silence


class ToneResult:
    """One tone check: ok, freq (Hz), gap_ms (the longest silence), seconds (the window), rms,
    irregular ("n/m" periods off the median by 10 % or more), and text, the line check.py prints.
    freq is None when there was nothing to measure."""

    def __init__(self, ok, text, freq=None, gap_ms=None, seconds=None, rms=None, irregular=None):
        self.ok, self.text, self.freq, self.gap_ms, self.seconds = ok, text, freq, gap_ms, seconds
        self.rms, self.irregular = rms, irregular


def read_wav(path):
    """(rate, channels, samples interleaved) of a 16-bit wav; ValueError for another width."""
    with wave.open(path, "rb") as wf:
        ch, width, rate, n = wf.getnchannels(), wf.getsampwidth(), wf.getframerate(), wf.getnframes()
        data = wf.readframes(n)
    if width != 2:
        raise ValueError(f"{path}: {8 * width}-bit samples; only 16-bit is handled")
    n = len(data) // (2 * ch)  # a header QEMU did not finalise says 0 frames: trust the data
    samples = struct.unpack(f"<{n * ch}h", data[:n * ch * 2])
    return rate, ch, samples


def tone(path, freq=440.0, tol=2.0, max_gap_ms=None, window=None, channel="mix", silence=SILENCE, min_seconds=0.0):
    """A tone of freq +-tol Hz in the wav at `path`, with no run of silence over max_gap_ms inside
    the window ("START:END" seconds of the file; END empty: to the end; negative: from the end;
    None: first to last sound) and the window at least min_seconds long.
    The frequency comes from the rising zero crossings (linearly interpolated): the median period
    sorts out gaps, and the mean of the periods near the median gives the precision."""
    try:
        rate, ch, s = read_wav(path)
    except (wave.Error, EOFError, ValueError) as e:
        return ToneResult(False, f"FAIL: {path}: {e}")
    n = len(s) // ch
    if channel == "mix":
        x = [sum(s[i * ch:(i + 1) * ch]) / ch for i in range(n)] if ch > 1 else list(s)
    else:
        x = list(s[int(channel)::ch])
    loud = [i for i, v in enumerate(x) if abs(v) > silence]
    if not loud:
        return ToneResult(False, f"FAIL: {path}: {n / rate:.2f} s of silence ({rate} Hz, {ch} ch)")
    if window:
        st, _, en = window.partition(":")
        dur = n / rate
        st = float(st) if st else 0.0
        en = float(en) if en else dur
        st, en = (st + dur if st < 0 else st), (en + dur if en < 0 else en)
        i0, i1 = max(0, int(st * rate)), min(n, int(en * rate))
    else:
        i0, i1 = loud[0], loud[-1] + 1
    w = x[i0:i1]
    if len(w) < rate // 10:
        return ToneResult(False, f"FAIL: window {i0 / rate:.3f}-{i1 / rate:.3f} s is too short")
    xs = []
    for i in range(1, len(w)):
        if w[i - 1] < 0 <= w[i]:
            xs.append(i - 1 + (-w[i - 1]) / (w[i] - w[i - 1]))
    periods = [b - a for a, b in zip(xs, xs[1:])]
    if len(periods) < 10:
        return ToneResult(False, f"FAIL: only {len(xs)} zero crossings in the window")
    med = sorted(periods)[len(periods) // 2]
    good = [p for p in periods if abs(p - med) < 0.1 * med]
    f = rate / (sum(good) / len(good))
    gap = run = 0
    for v in w:
        if abs(v) <= silence:
            run += 1
            gap = max(gap, run)
        else:
            run = 0
    gap_ms = 1000.0 * gap / rate
    rms = math.sqrt(sum(v * v for v in w) / len(w))
    secs = len(w) / rate
    irregular = f"{len(periods) - len(good)}/{len(periods)}"
    ok_d = secs >= min_seconds
    ok = abs(f - freq) <= tol and (max_gap_ms is None or gap_ms <= max_gap_ms) and ok_d
    text = (f"{'ok' if ok else 'FAIL'}: {path}: {rate} Hz {ch} ch {n / rate:.3f} s; window "
            f"{i0 / rate:.3f}-{i1 / rate:.3f} s ({secs:.3f} s); tone {f:.2f} Hz "
            f"(expected {freq:g} +-{tol:g}); longest silence {gap_ms:.1f} ms"
            f"{'' if max_gap_ms is None else f' (max {max_gap_ms:g})'}; rms {rms:.0f}; "
            f"irregular periods {irregular}")
    if not ok_d:
        text += f"\nFAIL: window shorter than {min_seconds:g} s"
    return ToneResult(ok, text, round(f, 2), round(gap_ms, 1), round(secs, 3), f"{rms:.0f}", irregular)


def write_tone(path, freq=440.0, seconds=2.0, rate=48000, channels=2, amplitude=0.5):
    """A sine of freq Hz, 16-bit, for payloads to play."""
    amp = int(32767 * amplitude)
    frames = bytearray()
    for i in range(int(seconds * rate)):
        frames += struct.pack("<h", int(amp * math.sin(2 * math.pi * freq * i / rate))) * channels
    with wave.open(path, "wb") as wf:
        wf.setnchannels(channels)
        wf.setsampwidth(2)
        wf.setframerate(rate)
        wf.writeframes(bytes(frames))


class Recording:
    """QEMU's wav, read in pieces (a run records a minute or more): where the sound starts and
    ends, and clips of it for tone()."""

    def __init__(self, path):
        self.wf = wave.open(path, "rb")
        self.rate, self.ch, self.width = self.wf.getframerate(), self.wf.getnchannels(), self.wf.getsampwidth()
        self.frames = self.wf.getnframes()
        self.seconds = self.frames / self.rate

    def close(self):
        self.wf.close()

    def _loud(self, data):
        """Frame indexes in `data` whose channel mean is louder than SILENCE."""
        a, ch = array.array("h", data), self.ch
        return [i // ch for i in range(0, len(a), ch) if abs(sum(a[i:i + ch]) / ch) > SILENCE]

    def last_sound(self, within):
        """The frame of the last sound in the last `within` seconds, or None."""
        start = max(0, self.frames - int(self.rate * within))
        self.wf.setpos(start)
        loud = self._loud(self.wf.readframes(self.frames - start))
        return start + loud[-1] if loud else None

    def first_sound(self):
        """The frame of the first sound, or None (read 0.1 s at a time)."""
        pos = 0
        self.wf.setpos(0)
        while pos < self.frames:
            data = self.wf.readframes(self.rate // 10)
            if not data:
                break
            loud = self._loud(data)
            if loud:
                return pos + loud[0]
            pos += len(data) // (self.ch * self.width)
        return None

    def clip(self, path, start, frames):
        """Writes `frames` frames from frame `start` to a wav at `path`."""
        self.wf.setpos(start)
        with wave.open(path, "wb") as w:
            w.setnchannels(self.ch)
            w.setsampwidth(self.width)
            w.setframerate(self.rate)
            w.writeframes(self.wf.readframes(frames))
