"""The guest side of tools/vm/touch-test: starts udev, makes uinput devices, drives touch-probe.

Runs in the test VM (see run.sh). It does not judge: it records every line touch-probe printed,
when it arrived, and when each uinput event was written, in /payload/results.json, and the host
checks them. All times are CLOCK_MONOTONIC seconds, the clock of libinput's event times.

Scenarios:
  a-udev-tap          a touchscreen made before the probe starts (udev backend, cold-plug); tap
  b-udev-hotplug      the probe first, then the touchscreen (hot-plug), a tap, then unplug
  c-path-tap          the path backend on the touchscreen's /dev/input/eventN; tap
  d-path-calibrated   the same with the upside-down calibration matrix -1 0 1 0 -1 1; tap
  e-udev-mouse-keys   a uinput mouse and keyboard (udev backend): motion, a click, Esc
"""
import json
import os
import select
import subprocess
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import uinput  # noqa: E402

PROBE = "/payload/touch-probe"
# The guest runs the payload in a chroot: without this, udevadm trigger and settle print
# "Running in chroot, ignoring request." and do nothing.
SYSTEMD_ENV = dict(os.environ, SYSTEMD_IGNORE_CHROOT="1")
T0 = time.monotonic()
results = {"t0": T0, "steps": {}, "scenarios": {}, "errors": []}


def log(message):
    print(f"touch [{time.monotonic() - T0:7.3f}] {message}", flush=True)


def step(name, *command):
    """Runs a command; records its duration."""
    start = time.monotonic()
    r = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=SYSTEMD_ENV)
    took = time.monotonic() - start
    results["steps"].setdefault(name, []).append(round(took, 3))
    log(f"{name}: {' '.join(command)} -> {r.returncode} in {took:.3f} s {r.stdout.strip()[:300]}")
    return r.returncode


class Probe:
    """touch-probe with its stdout on a pipe; lines are read as they come, with arrival times."""

    def __init__(self, scenario, args):
        self.record = {"args": args, "lines": [], "marks": {}, "started": time.monotonic()}
        results["scenarios"][scenario] = self.record
        self.scenario = scenario
        self.proc = subprocess.Popen([PROBE] + args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.fd = self.proc.stdout.fileno()
        self.buffer = b""
        self.read_index = 0
        self.eof = False
        log(f"{scenario}: touch-probe {' '.join(args)}")

    def mark(self, name, value=None):
        self.record["marks"][name] = time.monotonic() if value is None else value

    def _read(self, timeout):
        ready, _, _ = select.select([self.fd], [], [], max(timeout, 0))
        if not ready:
            return
        chunk = os.read(self.fd, 65536)
        if not chunk:
            self.eof = True
            return
        now = time.monotonic()
        self.buffer += chunk
        while b"\n" in self.buffer:
            line, self.buffer = self.buffer.split(b"\n", 1)
            text = line.decode(errors="replace")
            self.record["lines"].append([round(now, 6), text])
            log(f"{self.scenario}| {text}")

    def wait_for(self, predicate, timeout=30.0):
        """The first line not yet looked at that matches, or None at EOF or timeout."""
        deadline = time.monotonic() + timeout
        while True:
            lines = self.record["lines"]
            while self.read_index < len(lines):
                line = lines[self.read_index][1]
                self.read_index += 1
                if predicate(line):
                    return line
            if self.eof or time.monotonic() >= deadline:
                return None
            self._read(deadline - time.monotonic())

    def finish(self, timeout=30.0):
        """Reads to EOF and waits for the exit status (kills the probe after `timeout`)."""
        deadline = time.monotonic() + timeout
        while not self.eof and time.monotonic() < deadline:
            self._read(deadline - time.monotonic())
        try:
            self.record["exit"] = self.proc.wait(timeout=max(deadline - time.monotonic(), 1))
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.record["exit"] = "killed"
        self.record["ended"] = time.monotonic()
        log(f"{self.scenario}: exit {self.record['exit']}")


def added(name):
    return lambda line: " deviceAdded " in line and f'name="{name}"' in line


def tap(probe, device, x, y, dx=10, dy=5):
    """Down at (x, y), one move by (dx, dy), up; 50 ms apart. Records the write times."""
    probe.mark("down", device.down(x, y))
    time.sleep(0.05)
    probe.mark("move", device.move(x + dx, y + dy))
    time.sleep(0.05)
    probe.mark("up", device.up())
    probe.record["tap"] = {"x": x, "y": y, "x2": x + dx, "y2": y + dy, "width": device.width, "height": device.height}


def scenario_a():
    screen = uinput.Touchscreen("Vitrine touch A")
    step("settle", "udevadm", "settle", "--timeout=30")
    probe = Probe("a-udev-tap", ["--udev", "--until", "touchUp", "--seconds", "40"])
    probe.mark("created", screen.created)
    if probe.wait_for(added(screen.name)):
        probe.mark("added-seen")
        tap(probe, screen, 800, 1350)
    probe.finish()
    screen.close()


def scenario_b():
    probe = Probe("b-udev-hotplug", ["--udev", "--until", "deviceRemoved", "--seconds", "40"])
    if probe.wait_for(lambda line: line.startswith("ready")):
        time.sleep(0.2)  # let cold-plugged devices (the usb-tablet) come first
        screen = uinput.Touchscreen("Vitrine touch B")
        probe.mark("created", screen.created)
        if probe.wait_for(added(screen.name)):
            probe.mark("added-seen")
            tap(probe, screen, 1600, 900)
            probe.wait_for(lambda line: " touchUp " in line, timeout=10)
        probe.mark("closed", screen.close())
    probe.finish()


def scenario_c_d():
    screen = uinput.Touchscreen("Vitrine touch C")
    step("settle", "udevadm", "settle", "--timeout=30")
    results["path-node"] = screen.node
    for name, extra in (("c-path-tap", []), ("d-path-calibrated", ["--calibrate", "-1 0 1 0 -1 1"])):
        probe = Probe(name, ["--path", screen.node, "--until", "touchUp", "--seconds", "40"] + extra)
        probe.mark("created", screen.created)
        wanted = (lambda line: line.startswith("calibrat")) if extra else added(screen.name)
        if probe.wait_for(wanted):
            probe.mark("added-seen")
            tap(probe, screen, 2400, 450)
        probe.finish()
    screen.close()


def scenario_e():
    mouse = uinput.Mouse("Vitrine mouse E")
    keyboard = uinput.Keyboard("Vitrine keyboard E")
    step("settle", "udevadm", "settle", "--timeout=30")
    probe = Probe("e-udev-mouse-keys", ["--udev", "--until", "key:2", "--seconds", "40"])
    if probe.wait_for(added(mouse.name)) and probe.wait_for(added(keyboard.name)):
        probe.mark("added-seen")
        probe.mark("motion", mouse.emit((uinput.EV_REL, uinput.REL_X, 10), (uinput.EV_REL, uinput.REL_Y, 5)))
        time.sleep(0.05)
        probe.mark("press", mouse.emit((uinput.EV_KEY, uinput.BTN_LEFT, 1)))
        time.sleep(0.05)
        probe.mark("release", mouse.emit((uinput.EV_KEY, uinput.BTN_LEFT, 0)))
        time.sleep(0.05)
        probe.mark("esc-down", keyboard.emit((uinput.EV_KEY, uinput.KEY_ESC, 1)))
        time.sleep(0.05)
        probe.mark("esc-up", keyboard.emit((uinput.EV_KEY, uinput.KEY_ESC, 0)))
    probe.finish()
    mouse.close()
    keyboard.close()


def main():
    log(f"devices: {sorted(os.listdir('/dev/input')) if os.path.isdir('/dev/input') else 'no /dev/input'}")
    start = time.monotonic()
    step("udevd", "/usr/lib/systemd/systemd-udevd", "--daemon")
    step("trigger", "udevadm", "trigger", "--action=add", "--subsystem-match=input")
    step("settle", "udevadm", "settle", "--timeout=30")
    results["udev-ready"] = round(time.monotonic() - start, 3)
    for scenario in (scenario_a, scenario_b, scenario_c_d, scenario_e):
        start = time.monotonic()
        try:
            scenario()
        except Exception:
            results["errors"].append(f"{scenario.__name__}: {traceback.format_exc()}")
            log(traceback.format_exc())
        results["steps"].setdefault(scenario.__name__, []).append(round(time.monotonic() - start, 3))
    results["total"] = round(time.monotonic() - T0, 3)
    with open("/payload/results.json", "w") as f:
        json.dump(results, f, indent=1)
    log(f"done in {results['total']:.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
