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
import os
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True  # no __pycache__ in the tree
from lib import screen, wav  # noqa: E402


# ---------------------------------------------------------------- images
def read_ppm(path):
    """(width, height, RGB bytes) of a P6 screendump; exits with the reason if it is not one."""
    try:
        return screen.read_ppm(path)
    except ValueError as e:
        raise SystemExit(str(e))


def hexc(c):
    return "%02x%02x%02x" % tuple(c)


def cmd_info(a):
    img = read_ppm(a.file)
    w, h, _ = img
    frac, colours, n = screen.colour_stats(img)
    top = sorted(colours.items(), key=lambda kv: -kv[1])[:8]
    print(f"{a.file}: {w}x{h} non-black={frac:.3f} colours={len(colours)}")
    print("  top colours: " + " ".join(f"{hexc(c)}:{k / n:.3f}" for c, k in top))
    print("  corners: " + " ".join(hexc(screen.pixel(img, x, y)) for x, y in
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
    got = screen.pixel(img, a.x, a.y)
    exp = bytes.fromhex(a.expect.lstrip("#"))
    ok = all(abs(g - e) <= a.tol for g, e in zip(got, exp))
    print(f"{'ok' if ok else 'FAIL'}: pixel ({a.x},{a.y}) = {hexc(got)}, expected {a.expect} +-{a.tol}")
    return 0 if ok else 1


def cmd_not_black(a):
    frac, _, _ = screen.colour_stats(read_ppm(a.file), step=2)
    ok = frac > a.min_frac
    print(f"{'ok' if ok else 'FAIL'}: {a.file} non-black share {frac:.3f} (min {a.min_frac})")
    return 0 if ok else 1


def cmd_not_console(a):
    """The text console is mostly black with grey/white glyphs from the 16-colour VGA
    palette; QEMU's 'Display output is not active.' page is black with a little white."""
    img = read_ppm(a.file)
    frac, colours, _ = screen.colour_stats(img, step=2)
    vga = {bytes.fromhex(c) for c in (
        "000000 0000aa 00aa00 00aaaa aa0000 aa00aa aa5500 aaaaaa 555555 5555ff 55ff55 55ffff "
        "ff5555 ff55ff ffff55 ffffff").split()}
    palette_only = all(c in vga for c in colours)
    console = palette_only and frac < 0.5
    print(f"{'FAIL' if console else 'ok'}: {a.file} non-black={frac:.3f} colours={len(colours)} "
          f"{'looks like a text console or an inactive display' if console else 'not a console'}")
    return 1 if console else 0


def cmd_topng(a):
    screen.write_png(read_ppm(a.file), a.out)
    return 0


# ---------------------------------------------------------------- audio
def cmd_tone(a):
    r = wav.tone(a.file, a.freq, a.tol, a.max_gap_ms, a.window, a.channel, a.silence, a.min_seconds)
    print(r.text)
    return 0 if r.ok else 1


def cmd_gen_tone(a):
    wav.write_tone(a.file, a.freq, a.seconds, a.rate, a.channels, a.amplitude)
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
