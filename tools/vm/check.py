#!/usr/bin/env python3
"""Checks on what the test VM produced (stdlib only). Exit 0 = pass, 1 = fail, 2 = usage.

  check.py info FILE.ppm                       size, non-black share, colours, corners
  check.py size FILE.ppm WxH                   screendump has this size
  check.py pixel FILE.ppm X Y --expect RRGGBB [--tol N]
                                               each channel within N (default 8)
  check.py not-black FILE.ppm [--min-frac F]   more than F (default 0.05) non-black pixels
  check.py not-console FILE.ppm                heuristics: not the text console and not
                                               QEMU's 'Display output is not active' page
  check.py topng FILE.ppm FILE.png             to look at it
  check.py tone FILE.wav [--freq 440] [--tol 2] [--max-gap-ms 20] [--window START:END]
               [--channel N|mix] [--silence N] [--min-seconds S]
                                               a tone of FREQ +-TOL Hz; the longest run of
                                               silence inside the window is <= max-gap-ms.
                                               The window is in seconds of the file
                                               (END empty: to the end; negative: from the
                                               end); default: first to last sound.
  check.py gen-tone FILE.wav [--freq 440] [--seconds 2] [--rate 48000] [--channels 2]
               [--amplitude 0.5]               write a sine (for payloads to play)
"""
import argparse
import math
import signal
import struct
import sys
import wave
import zlib

import vmlib  # beside this file: the screendump reader shared with tools/vm-test


# ---------------------------------------------------------------- images
def read_ppm(path):
    """(width, height, RGB bytes) of a P6 screendump; exits with the reason if it is not one."""
    try:
        return vmlib.read_ppm(path)
    except ValueError as e:
        raise SystemExit(str(e))


def px(img, x, y):
    w, _, pix = img
    i = (y * w + x) * 3
    return pix[i], pix[i + 1], pix[i + 2]


def stats(img, step=1):
    w, h, pix = img
    nonblack, colours, n = 0, {}, 0
    for y in range(0, h, step):
        row = pix[y * w * 3:(y + 1) * w * 3]
        for x in range(0, w, step):
            c = row[x * 3:x * 3 + 3]
            n += 1
            if c != b"\0\0\0":
                nonblack += 1
            colours[c] = colours.get(c, 0) + 1
    return nonblack / max(n, 1), colours, n


def hexc(c):
    return "%02x%02x%02x" % tuple(c)


def cmd_info(a):
    img = read_ppm(a.file)
    w, h, _ = img
    frac, colours, n = stats(img)
    top = sorted(colours.items(), key=lambda kv: -kv[1])[:8]
    print(f"{a.file}: {w}x{h} non-black={frac:.3f} colours={len(colours)}")
    print("  top colours: " + " ".join(f"{hexc(c)}:{k / n:.3f}" for c, k in top))
    print("  corners: " + " ".join(hexc(px(img, x, y)) for x, y in
                                    [(0, 0), (w - 1, 0), (0, h - 1), (w - 1, h - 1), (w // 2, h // 2)]))
    return 0


def cmd_size(a):
    w, h, _ = read_ppm(a.file)
    ew, eh = (int(v) for v in a.size.lower().split("x"))
    ok = (w, h) == (ew, eh)
    print(f"{'ok' if ok else 'FAIL'}: {a.file} is {w}x{h}, expected {ew}x{eh}")
    return 0 if ok else 1


def cmd_pixel(a):
    img = read_ppm(a.file)
    w, h, _ = img
    if not (0 <= a.x < w and 0 <= a.y < h):
        print(f"FAIL: ({a.x},{a.y}) outside {w}x{h}")
        return 1
    got = px(img, a.x, a.y)
    exp = bytes.fromhex(a.expect.lstrip("#"))
    ok = all(abs(g - e) <= a.tol for g, e in zip(got, exp))
    print(f"{'ok' if ok else 'FAIL'}: pixel ({a.x},{a.y}) = {hexc(got)}, expected {a.expect} +-{a.tol}")
    return 0 if ok else 1


def cmd_not_black(a):
    frac, _, _ = stats(read_ppm(a.file), step=2)
    ok = frac > a.min_frac
    print(f"{'ok' if ok else 'FAIL'}: {a.file} non-black share {frac:.3f} (min {a.min_frac})")
    return 0 if ok else 1


def cmd_not_console(a):
    """The text console is mostly black with grey/white glyphs from the 16-colour VGA
    palette; QEMU's 'Display output is not active.' page is black with a little white."""
    img = read_ppm(a.file)
    frac, colours, _ = stats(img, step=2)
    vga = {bytes.fromhex(c) for c in (
        "000000 0000aa 00aa00 00aaaa aa0000 aa00aa aa5500 aaaaaa 555555 5555ff 55ff55 55ffff "
        "ff5555 ff55ff ffff55 ffffff").split()}
    palette_only = all(c in vga for c in colours)
    console = palette_only and frac < 0.5
    print(f"{'FAIL' if console else 'ok'}: {a.file} non-black={frac:.3f} colours={len(colours)} "
          f"{'looks like a text console or an inactive display' if console else 'not a console'}")
    return 1 if console else 0


def cmd_topng(a):
    w, h, pix = read_ppm(a.file)
    raw = b"".join(b"\0" + pix[y * w * 3:(y + 1) * w * 3] for y in range(h))

    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)

    with open(a.out, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))
    return 0


# ---------------------------------------------------------------- audio
def read_wav(path):
    with wave.open(path, "rb") as wf:
        ch, width, rate, n = wf.getnchannels(), wf.getsampwidth(), wf.getframerate(), wf.getnframes()
        data = wf.readframes(n)
    if width != 2:
        raise SystemExit(f"{path}: {8 * width}-bit samples; only 16-bit is handled")
    n = len(data) // (2 * ch)  # a header QEMU did not finalise says 0 frames: trust the data
    samples = struct.unpack(f"<{n * ch}h", data[:n * ch * 2])
    return rate, ch, samples


def cmd_tone(a):
    try:
        rate, ch, s = read_wav(a.file)
    except (wave.Error, EOFError) as e:
        print(f"FAIL: {a.file}: {e}")
        return 1
    n = len(s) // ch
    if a.channel == "mix":
        x = [sum(s[i * ch:(i + 1) * ch]) / ch for i in range(n)] if ch > 1 else list(s)
    else:
        c = int(a.channel)
        x = list(s[c::ch])
    loud = [i for i, v in enumerate(x) if abs(v) > a.silence]
    if not loud:
        print(f"FAIL: {a.file}: {n / rate:.2f} s of silence ({rate} Hz, {ch} ch)")
        return 1
    if a.window:
        st, _, en = a.window.partition(":")
        dur = n / rate
        st = float(st) if st else 0.0
        en = float(en) if en else dur
        st, en = (st + dur if st < 0 else st), (en + dur if en < 0 else en)
        i0, i1 = max(0, int(st * rate)), min(n, int(en * rate))
    else:
        i0, i1 = loud[0], loud[-1] + 1
    w = x[i0:i1]
    if len(w) < rate // 10:
        print(f"FAIL: window {i0 / rate:.3f}-{i1 / rate:.3f} s is too short")
        return 1
    # frequency: rising zero crossings (linearly interpolated); the median period sorts out
    # gaps, and the mean of the periods near the median gives the precision.
    xs = []
    for i in range(1, len(w)):
        if w[i - 1] < 0 <= w[i]:
            xs.append(i - 1 + (-w[i - 1]) / (w[i] - w[i - 1]))
    periods = [b - a_ for a_, b in zip(xs, xs[1:])]
    if len(periods) < 10:
        print(f"FAIL: only {len(xs)} zero crossings in the window")
        return 1
    med = sorted(periods)[len(periods) // 2]
    good = [p for p in periods if abs(p - med) < 0.1 * med]
    freq = rate / (sum(good) / len(good))
    # the longest run of silence inside the window
    gap = run = 0
    for v in w:
        if abs(v) <= a.silence:
            run += 1
            gap = max(gap, run)
        else:
            run = 0
    gap_ms = 1000.0 * gap / rate
    rms = math.sqrt(sum(v * v for v in w) / len(w))
    dur = len(w) / rate
    glitches = len(periods) - len(good)
    ok_f = abs(freq - a.freq) <= a.tol
    ok_g = a.max_gap_ms is None or gap_ms <= a.max_gap_ms
    ok_d = dur >= a.min_seconds
    ok = ok_f and ok_g and ok_d
    print(f"{'ok' if ok else 'FAIL'}: {a.file}: {rate} Hz {ch} ch {n / rate:.3f} s; window "
          f"{i0 / rate:.3f}-{i1 / rate:.3f} s ({dur:.3f} s); tone {freq:.2f} Hz "
          f"(expected {a.freq:g} +-{a.tol:g}); longest silence {gap_ms:.1f} ms"
          f"{'' if a.max_gap_ms is None else f' (max {a.max_gap_ms:g})'}; rms {rms:.0f}; "
          f"irregular periods {glitches}/{len(periods)}")
    if not ok_d:
        print(f"FAIL: window shorter than {a.min_seconds:g} s")
    return 0 if ok else 1


def cmd_gen_tone(a):
    n = int(a.seconds * a.rate)
    amp = int(32767 * a.amplitude)
    frames = bytearray()
    for i in range(n):
        v = int(amp * math.sin(2 * math.pi * a.freq * i / a.rate))
        frames += struct.pack("<h", v) * a.channels
    with wave.open(a.file, "wb") as wf:
        wf.setnchannels(a.channels)
        wf.setsampwidth(2)
        wf.setframerate(a.rate)
        wf.writeframes(bytes(frames))
    return 0


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("info"); p.add_argument("file"); p.set_defaults(fn=cmd_info)
    p = sub.add_parser("size"); p.add_argument("file"); p.add_argument("size"); p.set_defaults(fn=cmd_size)
    p = sub.add_parser("pixel")
    p.add_argument("file"); p.add_argument("x", type=int); p.add_argument("y", type=int)
    p.add_argument("--expect", required=True); p.add_argument("--tol", type=int, default=8)
    p.set_defaults(fn=cmd_pixel)
    p = sub.add_parser("not-black"); p.add_argument("file")
    p.add_argument("--min-frac", type=float, default=0.05); p.set_defaults(fn=cmd_not_black)
    p = sub.add_parser("not-console"); p.add_argument("file"); p.set_defaults(fn=cmd_not_console)
    p = sub.add_parser("topng"); p.add_argument("file"); p.add_argument("out"); p.set_defaults(fn=cmd_topng)
    p = sub.add_parser("tone"); p.add_argument("file")
    p.add_argument("--freq", type=float, default=440); p.add_argument("--tol", type=float, default=2)
    p.add_argument("--max-gap-ms", type=float, default=None)
    p.add_argument("--window"); p.add_argument("--channel", default="mix")
    p.add_argument("--silence", type=int, default=64, help="|sample| <= N is silence (default 64)")
    p.add_argument("--min-seconds", type=float, default=0.0)
    p.set_defaults(fn=cmd_tone)
    p = sub.add_parser("gen-tone"); p.add_argument("file")
    p.add_argument("--freq", type=float, default=440); p.add_argument("--seconds", type=float, default=2)
    p.add_argument("--rate", type=int, default=48000); p.add_argument("--channels", type=int, default=2)
    p.add_argument("--amplitude", type=float, default=0.5)
    p.set_defaults(fn=cmd_gen_tone)
    a = ap.parse_args()
    sys.exit(a.fn(a))


if __name__ == "__main__":
    main()
