"""first-frame: a screendump shows the catalog's first item, solid red at the 5 content points,
with black letterbox bars (fit contain on the 640x400 screen); the time from QEMU start.

Then the recorder slows from 2 to 1 screendump a second: the boot is what needed the detail."""
import os
import re

from lib import screen

NAMES = ("first-frame",)
PHASE = "boot"
NEEDS = ()
TIMEOUT = 300  # seconds from QEMU start


def serial_evidence(vm, limit=8):
    """The guest console's lines about the player, a reboot or a panic, as one info line."""
    try:
        text = open(os.path.join(vm.out, "serial.log"), errors="replace").read()
    except OSError:
        return
    seen, picked = set(), []
    for line in text.splitlines():
        if not (re.search(r"vitrine(\.service|\[|-)", line) and
                re.search(r"error|[Ff]ail|exited|[Ww]atchdog|Start request repeated|[Rr]eboot", line)) \
                and not re.search(r"Rebooting|reboot:|Restarting system|Kernel panic", line):
            continue
        key = re.sub(r"^\[\s*[\d.]+\]\s*|\[\d+\]|\d+", "", line)
        if key in seen or "run-credentials" in line:
            continue
        seen.add(key)
        picked.append(line.strip())
    if picked:
        more = f" (+{len(picked) - limit} more in serial.log)" if len(picked) > limit else ""
        vm.info("serial.log: " + " | ".join(picked[:limit]) + more)


def run(vm):
    s = vm.shots.wait(lambda s: s.colour == "red", 0, TIMEOUT)
    if not s:
        shots = vm.shots.all()
        last = shots[-1] if shots else None
        why = (f"no red picture within {TIMEOUT} s of QEMU start" if vm.alive() else
               f"QEMU exited at {vm.now():.1f} s (status {vm.q.proc.returncode}) before any red picture: "
               "the guest rebooted or powered off (-no-reboot)")
        vm.result("first-frame", False, why + (f"; last screendump: {last.cls}, centre "
                                               f"{last.info.get('centre')}" if last else ""))
        serial_evidence(vm)
        return
    vm.shots.keep(s)
    w, h = s.size
    bars, bars_ok = "", True
    box = screen.letterbox(screen.read_ppm(s.path))
    if box:
        where, bar, cols, bars_ok = box
        bars = f", letterbox {where} {bar} px {'black' if bars_ok else ' '.join(screen.hexc(c) for c in cols)}"
    prev = [p for p in vm.shots.all() if p.i < s.i]
    before = f"; the screendump before, at {prev[-1].t:.1f} s, was {prev[-1].cls}" if prev else ""
    vm.timings["first_frame_s"] = round(s.t, 1)
    vm.first_frame = s
    vm.result("first-frame", bars_ok,
              f"centre {s.info['centre']} (red, all 5 content points within 40) at {s.t:.1f} s after QEMU "
              f"start, {w}x{h}{bars}, {s.cls}{before} (limit {TIMEOUT} s)")
    vm.shots.period = 1.0
