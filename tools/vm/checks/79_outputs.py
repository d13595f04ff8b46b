"""outputs-two, outputs-replug: two screens on one card (issue #15), on virtio-gpu with two heads
(lib/qemu.py: max_outputs=2, the default; VITRINE_VM_GPU_HEADS=1 turns it off, then these are
reported as not run).

prepare() makes a folder (the catalog cached): tools/make-vm-catalog --colours red,blue, with the
playlist [red] and a named playlist "side": [blue], and no popups; and a config (written each time)
with a control socket in the folder and
"outputs": [{"connector": "Virtual-1"}, {"connector": "Virtual-2", "playlist": "side", "mode": "640x480@60"}]
(a forced head has no EDID: the kernel's modes up to 8192 wide, none preferred, so the mode is set).

run() stops vitrine.service, forces the second head connected (QEMU enables only the first until a
UI turns another on: `echo on > /sys/class/drm/card0-Virtual-2/status`), and starts `vitrine run
--catalog … --config … --output drm --vblank-log …` in the background in the guest (the unit's own
binary): the first output plays the catalog's playlist on a DRM lease of Virtual-1, the second
its "side" playlist on a lease of Virtual-2, each on its own thread and vblanks.

  outputs-probe   `vitrine probe` in the guest before and after Virtual-2 is forced connected: each
                  connector's state and the mode the player would pick (Virtual-2 `disconnected`,
                  `player mode none (not connected)`, then `connected` with a mode), and the line
                  `hot-plug: udev monitor on drm (change, HOTPLUG=1)` with nothing after it (the
                  monitor created, udevd running).
  outputs-two     QMP `screendump` of each head (`device` gpu0, `head` 0 and 1): head 0 red and
                  head 1 blue within START_S of the start.
  outputs-replug  `echo off` on Virtual-2 (and the HOTPLUG uevent a real unplug sends): head 1
                  without a picture, while head 0 goes on flipping: the first output's vblank log
                  (one line per vblank, CLOCK_MONOTONIC) has at least 80 % of the vblanks of the
                  OFF_S seconds (less half a second each end) at the refresh the run logged for
                  Virtual-1, none more than 0.25 s apart, and head 0 stays red; `vitrine ctl status`
                  has Virtual-2 `disconnected` in its `outputs`. Then `echo on` and the uevent:
                  head 1 blue again within BACK_S, measured on the host from the guest-exec call
                  that writes `on` to the first blue screendump of head 1, and `connected` again.
Afterwards the run is stopped (SIGTERM), Virtual-2 goes back to `detect`, and the service starts.
"""
import json
import os
import re
import shutil
import subprocess
import time

from lib import screen, service
from lib.image import CACHE, ROOT

NAMES = ("outputs-probe", "outputs-two", "outputs-replug")
PHASE = "live"
NEEDS = ("first-frame", "agent")
FOLDER = None
REMOTE = "/var/lib/vitrine-outputs-test"
START_S = 40.0   # both heads showing their playlists after the run starts (a whole start under TCG)
OFF_S = 6.0      # the second head unplugged this long
BACK_S = 2.0     # its picture back after the replug
SECOND = "card0-Virtual-2"


def prepare():
    global FOLDER
    FOLDER = os.path.join(CACHE, "outputs-catalog")
    if not os.path.exists(os.path.join(FOLDER, "manifest.json")):
        make_catalog()
    with open(os.path.join(FOLDER, "config.json"), "w") as f:
        json.dump({"output": "drm", "control": {"path": REMOTE + "/control.sock"},
                   "outputs": [{"connector": "Virtual-1"}, {"connector": "Virtual-2", "playlist": "side", "mode": "640x480@60"}]},
                  f, indent=1)


def make_catalog():
    tmp = FOLDER + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    subprocess.run([os.path.join(ROOT, "tools", "make-vm-catalog"), tmp, "--colours", "red,blue"], check=True,
                   stdout=subprocess.DEVNULL)
    mpath = os.path.join(tmp, "manifest.json")
    m = json.load(open(mpath))
    m.pop("overlays", None)
    m.pop("tap", None)
    items = {i["id"]: i for i in m["playlist"]}
    red = next(i for i in m["playlist"] if "red" in i["src"])
    blue = next(i for i in m["playlist"] if "blue" in i["src"])
    assert len(items) == 2
    m["playlist"] = [red]
    m["playlists"] = {"side": [blue]}
    m["loop"] = True
    with open(mpath, "w") as f:
        json.dump(m, f, indent=1)
    shutil.rmtree(FOLDER, ignore_errors=True)
    os.replace(tmp, FOLDER)


def head(vm, n, tag):
    """(colour or None, the image) of a screendump of head n."""
    path = os.path.join(vm.out, "shots", f"outputs-{tag}-head{n}.ppm")
    try:
        vm.q.qmp.screendump(path, device="gpu0", head=n)
        img = screen.read_ppm(path)
    except Exception as e:  # noqa: BLE001
        return None, str(e)
    return screen.picture_colour(img), img


def wait_colour(vm, n, colour, timeout, tag):
    """Host seconds until head n shows `colour` (screendumps back to back), or None."""
    t0 = vm.now()
    while vm.now() - t0 < timeout:
        c, _ = head(vm, n, tag)
        if c == colour:
            return vm.now() - t0
        time.sleep(0.05)
    return None


def outputs_status(vm):
    """[(connector, connection, item)] from `vitrine ctl status`'s `outputs`, or the error text."""
    rc, out, err = vm.gexec(["/usr/bin/vitrine", "ctl", "--socket", REMOTE + "/control.sock", "status"], quiet=True)
    try:
        return [(o.get("connector"), o.get("connection"), o.get("item")) for o in json.loads(out)["outputs"]]
    except Exception:  # noqa: BLE001
        return f"ctl status: exit {rc}: {(out + err).strip()[:200]}"


HOTPLUG_LINE = "hot-plug: udev monitor on drm (change, HOTPLUG=1)"


def probe(vm):
    """(exit code, {connector: its probe line after the colon}, the hot-plug line) of `vitrine probe`."""
    rc, out, _ = vm.gexec(["/usr/bin/vitrine", "probe"], quiet=True)
    found = {m.group(1): m.group(2).strip() for m in re.finditer(r"^\s+(Virtual-\d+) \(id \d+\): (.*)$", out, re.M)}
    hot = re.search(r"^hot-plug: .*$", out, re.M)
    return rc, found, hot.group(0) if hot else None


def force(vm, what):
    """`what` (on, off, detect) into Virtual-2's status, then the HOTPLUG uevent a real (un)plug sends."""
    t0 = vm.now()
    vm.gexec(["sh", "-c", f'echo {what} > /sys/class/drm/{SECOND}/status; '
                          'echo "change 7a6f6c3e-0000-4000-8000-000000000015 HOTPLUG=1" > /sys/class/drm/card0/uevent'],
             quiet=True)
    return t0


def run(vm):
    if vm.gpu != "virtio" or os.environ.get("VITRINE_VM_GPU_HEADS", "2") in ("", "1"):
        for n in NAMES:
            vm.info(f"{n}: not run (needs virtio-gpu with two heads; this run: {vm.gpu}, "
                    f"VITRINE_VM_GPU_HEADS={os.environ.get('VITRINE_VM_GPU_HEADS', '2')})")
        return
    if vm.dev_9p:
        vm.info("outputs: not run with --dev-9p")
        return
    _, out, _ = vm.gexec(["sh", "-c", f"cat /sys/class/drm/{SECOND}/status 2>&1"], quiet=True)
    if "connected" not in out:
        vm.result(NAMES[0], False, f"no {SECOND} in the guest: {out.strip()}")
        return
    st = service.wait_active(vm)
    if st.get("ActiveState") != "active":
        vm.result(NAMES[0], False, f"vitrine.service is not active before the test: {st}")
        return
    vm.gexec(["mkdir", "-p", REMOTE + "/media"])
    for name in ["manifest.json", "config.json", "media/red.mkv", "media/blue.mkv"]:
        vm.upload(os.path.join(FOLDER, name), f"{REMOTE}/{name}", mode="0644")
    _, up, _ = vm.gexec(["sh", "-c", "read u _ < /proc/uptime; echo $u"], quiet=True)
    vm.signals.append(("outputs", float(up.strip()), 120))
    vm.gexec(["systemctl", "stop", "vitrine.service"])
    vm.note("vitrine.service stopped for the two-output run")
    rc_before, before, hot = probe(vm)
    force(vm, "on")
    time.sleep(0.5)
    rc_after, after, _ = probe(vm)
    mode = re.compile(r"player mode \d+x\d+@[\d.]+")
    ok = (rc_before == 0 and rc_after == 0 and hot == HOTPLUG_LINE
          and before.get("Virtual-1", "").startswith("connected") and mode.search(before.get("Virtual-1", ""))
          and before.get("Virtual-2", "").startswith("disconnected") and "player mode none (not connected)" in before.get("Virtual-2", "")
          and after.get("Virtual-2", "").startswith("connected") and mode.search(after.get("Virtual-2", "")))
    vm.result(NAMES[0], bool(ok),
              f"vitrine probe (exit {rc_before}): Virtual-1 {before.get('Virtual-1', 'not listed')!r}, "
              f"Virtual-2 {before.get('Virtual-2', 'not listed')!r}; forced on (exit {rc_after}): "
              f"Virtual-2 {after.get('Virtual-2', 'not listed')!r}; {hot or 'no hot-plug line'!r}")
    t0 = vm.now()
    vm.gexec(["sh", "-c", f"setsid /usr/bin/vitrine run --catalog {REMOTE} --config {REMOTE}/config.json --output drm "
                          f"--vblank-log {REMOTE}/vblanks.log --log-file {REMOTE}/run.log "
                          f"> {REMOTE}/out.txt 2>&1 < /dev/null & echo $! > {REMOTE}/pid"], quiet=True)
    try:
        first = wait_colour(vm, 0, "red", START_S, "start")
        second = wait_colour(vm, 1, "blue", max(1.0, START_S - (vm.now() - t0)), "start")
        c0, _ = head(vm, 0, "both")
        c1, _ = head(vm, 1, "both")
        ok = first is not None and second is not None and c0 == "red" and c1 == "blue"
        vm.result(NAMES[1], ok,
                  f"head 0 (Virtual-1, the catalog's playlist) {c0}, head 1 (Virtual-2, playlist \"side\") {c1}; "
                  f"red on head 0 {('%.1f s' % first) if first is not None else 'not seen'} and blue on head 1 "
                  f"{('%.1f s' % (vm.now() - t0)) if second is not None else 'not seen'} after the start "
                  f"(limit {START_S:.0f} s)")
        if not ok:
            return
        # Unplug the second head: it loses its picture, the first goes on flipping.
        _, guest_before, _ = vm.gexec(["sh", "-c", "cat /proc/uptime"], quiet=True)
        force(vm, "off")
        time.sleep(OFF_S)
        _, guest_after, _ = vm.gexec(["sh", "-c", "cat /proc/uptime"], quiet=True)
        status_off = outputs_status(vm)
        c0_off, _ = head(vm, 0, "off")
        c1_off, _ = head(vm, 1, "off")
        g0, g1 = float(guest_before.split()[0]), float(guest_after.split()[0])
        log = vm.read_file(REMOTE + "/vblanks.log").decode(errors="replace")
        times = [float(line.split()[0]) for line in log.splitlines() if line.split()]
        _, mono, _ = vm.gexec(["sh", "-c", "awk '{print $1}' /proc/uptime; date -u +%s.%N"], quiet=True)
        up_now, wall_now = (float(x) for x in mono.split()[:2])
        # The vblank log's first column is the wall clock; /proc/uptime is (close to) CLOCK_MONOTONIC+suspend.
        w0, w1 = wall_now - (up_now - g0), wall_now - (up_now - g1)
        in_window = [t for t in times if w0 + 0.5 <= t <= w1 - 0.5]
        gap = max((b - a for a, b in zip(in_window, in_window[1:])), default=float("inf"))
        found = re.search(r"Virtual-1 \d+x\d+ @ ([\d.]+) Hz", vm.read_file(REMOTE + "/run.log").decode(errors="replace"))
        hz = float(found.group(1)) if found else 60.0
        expected = (w1 - w0 - 1.0) * hz
        t_on = force(vm, "on")
        returned = vm.now() - t_on  # the guest-exec that wrote `on` and sent the uevent
        waited = wait_colour(vm, 1, "blue", 15.0, "back")
        back = None if waited is None else returned + waited
        time.sleep(0.5)  # the second output's status entry is written four times a second
        status_back = outputs_status(vm)
        runlog = vm.read_file(REMOTE + "/run.log").decode(errors="replace")
        lost_logged = "screen lost: Virtual-2" in runlog
        status_ok = (status_off == [("Virtual-1", "connected", "red"), ("Virtual-2", "disconnected", "blue")]
                     and status_back == [("Virtual-1", "connected", "red"), ("Virtual-2", "connected", "blue")])
        ok = (c0_off == "red" and c1_off != "blue" and len(in_window) >= 0.8 * expected and gap < 0.25
              and back is not None and back <= BACK_S and lost_logged and status_ok)
        vm.result(NAMES[2], ok,
                  f"Virtual-2 unplugged {g1 - g0:.1f} s: head 1 {c1_off or 'no picture'}, head 0 {c0_off} with "
                  f"{len(in_window)} vblank-log lines of the first output in {w1 - w0 - 1.0:.1f} s ({len(in_window) / max(expected, 1) * 100:.0f} % of "
                  f"its {hz:.2f} Hz), the longest gap {gap * 1000:.0f} ms; \"screen lost: Virtual-2\" {'logged' if lost_logged else 'not logged'}; "
                  f"replugged: head 1 blue again {('%.2f s' % back) if back is not None else 'not within 15 s'} "
                  f"after the guest-exec that wrote `on` was sent (it returned after {returned:.2f} s; limit {BACK_S:.0f} s); ctl status outputs (connector, connection, item) "
                  f"unplugged {status_off}, replugged {status_back}")
    finally:
        vm.gexec(["sh", "-c", f"kill -TERM $(cat {REMOTE}/pid) 2>/dev/null; for i in $(seq 50); do "
                              f"kill -0 $(cat {REMOTE}/pid) 2>/dev/null || break; sleep 0.2; done"], quiet=True, timeout=30)
        runlog = vm.read_file(REMOTE + "/run.log").decode(errors="replace")
        with open(os.path.join(vm.out, "outputs-run.log"), "w") as f:
            f.write(runlog)
        vm.gexec(["sh", "-c", f"echo detect > /sys/class/drm/{SECOND}/status"], quiet=True)
        vm.gexec(["systemctl", "start", "vitrine.service"])
        again = vm.shots.wait(lambda s: s.cls == "catalog", vm.now(), 60)
        vm.note(f"vitrine.service started again; catalog on screen {'at %.1f s' % again.t if again else 'not seen'}")
        # The sound check reads the last seconds before the clean stop, which comes next: let the
        # restarted service's sound settle first.
        time.sleep(8)
