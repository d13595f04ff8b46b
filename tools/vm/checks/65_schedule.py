"""schedule-edge, display-off, display-on, schedule-watchdog: a catalog with a schedule and a
display power grid, driven by stepping the guest's clock with `date -s` (CLOCK_REALTIME steps,
which the player sees through its cancel-on-set timerfd).

prepare() makes a stick (cached): tools/make-vm-catalog --stick --version 3 --colours green,blue,red,
with the default playlist green then red, a named playlist "special" (blue), timezone UTC, and:
  schedule       "special" on 2030-01-01 from 03:00:00 to 03:01:00, switch immediate
  display.power  off on 2030-01-01 from 03:01:30 to 03:02:00

  schedule-edge      the stick's catalog (red) on screen; `date -s 2030-01-01T02:59:55Z`; blue
                     on screen within 5 s of the 03:00 edge (the value: seconds from the edge, as
                     the guest's clock reads, to the first blue screendump, at 2 a second)
  display-off        `date -s 03:01:25Z`; from the 03:01:30 edge the screendumps show the display
                     off: virtio-gpu QEMU's "Display output is not active" page, bochs a black
                     frame; the journal says "display off by schedule"
  display-on         at 03:02:00 the catalog (green, red) is back on screen; the journal says "display on
                     by schedule"; the event log has both displayPower events
  schedule-watchdog  over the 30 s off (WatchdogSec is 10 s) the player's main PID and NRestarts
                     are unchanged

The guest's clock is set back to the host's time afterwards, so later checks see the catalog.
"""
import os
import shutil
import time

from lib import service
from lib.sticks import cached_stick

NAMES = ("schedule-edge", "display-off", "display-on", "schedule-watchdog")
PHASE = "live"
NEEDS = ("first-frame", "agent")
STICK = None
DAY = "2030-01-01"


def prepare():
    global STICK

    def edit(folder, m):
        default = [i for i in m["playlist"] if "blue" not in i["src"]]  # green, red: it advances
        blue = [i for i in m["playlist"] if "blue" in i["src"]]
        m["playlist"] = default
        m["playlists"] = {"special": blue}
        m["timezone"] = "UTC"
        m["schedule"] = [{"id": "special", "playlist": "special", "dates": {"from": DAY, "to": DAY},
                          "time": {"from": "03:00", "to": "03:01"}, "switch": "immediate"}]
        m["display"]["power"] = {"off": [{"dates": {"from": DAY, "to": DAY}, "time": {"from": "03:01:30", "to": "03:02"}}]}
    STICK = cached_stick("stick-schedule", "schedule v3 green,red blue special 03:00 power 03:01:30",
                         ["--version", "3", "--colours", "green,blue,red"], edit)


def guest_clock(vm):
    """The guest's CLOCK_REALTIME, seconds since 1970."""
    _, out, _ = vm.gexec(["date", "-u", "+%s.%N"], quiet=True)
    return float(out.strip())


def set_clock(vm, when):
    """`date -u -s WHEN` in the guest; returns (host time just after, guest seconds it was set to)."""
    vm.gexec(["date", "-u", "-s", when])
    t = vm.now()
    return t, guest_clock(vm)


def cpu_seconds(vm, pid):
    """utime + stime of `pid` in the guest (/proc/PID/stat, clock ticks of 1/100 s)."""
    _, out, _ = vm.gexec(["cat", f"/proc/{pid}/stat"], quiet=True)
    fields = out.rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / 100.0


def run(vm):
    if vm.dev_9p:
        vm.info("schedule: not run with --dev-9p (no udev, no systemd-mount in the harness)")
        return
    with vm.window("banner"):
        try:
            schedule(vm)
        finally:
            vm.q.unplug_stick(id="stick2")
        # Back to the host's time: the later checks see the catalog's default playlist.
        vm.gexec(["date", "-u", "-s", "@%d" % int(time.time())])


def schedule(vm):
    img = os.path.join(vm.out, "stick-schedule.img")
    shutil.copyfile(STICK, img)
    vm.q.plug_stick(img, id="stick2")
    t_plug = vm.now()
    vm.note("USB stick with the schedule plugged (QMP device_add usb-storage)")
    deadline = t_plug + 120
    done = None
    while vm.now() < deadline and not done:
        out = vm.journal("-o", "cat")
        done = next((line for line in out.splitlines() if "Updated to version 3" in line), None)
        time.sleep(1)
    # Red: the stick's catalog (the image's is red, green; the usb check's stick blue, green).
    red = vm.shots.wait(lambda s: s.colour == "red" and s.cls == "catalog", t_plug, 120) if done else None
    if not (done and red):
        for name in NAMES:
            vm.result(name, False, f"the schedule stick's catalog never played (journal: {'updated' if done else 'no update'})")
        return
    time.sleep(12)  # the import's result banner goes after 10 s
    before = service.show(vm)

    # 1. The 03:00 edge: the clock stepped to 5 s before it.
    t_set, guest = set_clock(vm, f"{DAY}T02:59:55Z")
    edge_host = t_set + (1893466800 - guest)  # 2030-01-01T03:00:00Z
    vm.note(f"guest clock set to {DAY}T02:59:55Z; the edge is at {edge_host:.1f} s")
    blue = vm.shots.wait(lambda s: s.colour == "blue" and s.cls == "catalog", t_set, 20)
    vm.shots.keep(blue)
    late = blue.t - edge_host if blue else None
    early = [s for s in vm.shots.all() if s.colour == "blue" and t_set <= s.t < edge_host - 0.5]
    vm.result(NAMES[0], bool(blue) and late is not None and -0.5 <= late <= 5 and not early,
              f"blue (playlist special) {late:.1f} s after the 03:00 edge ({blue.png}); first screendump "
              f"period 0.5 s" if blue else "playlist special (blue) never on screen")

    # 2. The 03:01:30 power-off edge, the clock stepped past 03:01 (back to green first).
    t_set, guest = set_clock(vm, f"{DAY}T03:01:25Z")
    off_host = t_set + (1893466890 - guest)  # 03:01:30
    on_host = off_host + 30
    want_off = "inactive" if vm.gpu == "virtio" else "black"
    pid = before["MainPID"]
    cpu_playing = (cpu_seconds(vm, pid), vm.now())
    off = vm.shots.wait(lambda s: s.cls == want_off, off_host - 1, 15)
    vm.shots.keep(off)
    if off:
        time.sleep(max(0.0, off_host + 2 - vm.now()))
        c0, t0 = cpu_seconds(vm, pid), vm.now()
        playing_rate = (c0 - cpu_playing[0]) / max(1e-6, t0 - cpu_playing[1])
        time.sleep(max(0.0, on_host - 3 - vm.now()))
        c1, t1 = cpu_seconds(vm, pid), vm.now()
        vm.info(f"display-off: the player used {c1 - c0:.2f} CPU s in {t1 - t0:.1f} s off "
                f"({(c1 - c0) / max(1e-6, t1 - t0) * 100:.1f} % of a core; playing before: {playing_rate * 100:.1f} %)")
    out = vm.journal("-o", "cat")
    off_line = next((line for line in out.splitlines() if "display off by schedule" in line), None)
    vm.result(NAMES[1], bool(off and off_line),
              (f"{want_off} screendump {off.t - off_host:.1f} s after the 03:01:30 edge ({off.png}); journal: "
               f"{off_line.strip()[:120]}") if off and off_line else
              f"screendump {want_off}: {'seen' if off else 'never'}; journal: {off_line or 'no display off line'}")

    # 3. On again at 03:02:00.
    back = vm.shots.wait(lambda s: s.colour in ("green", "red") and s.cls == "catalog", on_host - 1, 25)
    vm.shots.keep(back)
    during = [s for s in vm.shots.all() if off and off.t <= s.t < (back.t if back else vm.now()) and s.cls == "catalog"]
    out = vm.journal("-o", "cat")
    on_line = next((line for line in out.splitlines() if "display on by schedule" in line), None)
    _, events, _ = vm.gexec(["grep", "-c", '"event":"displayPower"', "/var/lib/vitrine/events.jsonl"], quiet=True)
    n_events = int((events.strip() or "0").splitlines()[0])
    vm.result(NAMES[2], bool(back and on_line) and n_events >= 2 and not during,
              (f"catalog ({back.colour}) back {back.t - on_host:.1f} s after the 03:02 edge ({back.png}); "
               f"{n_events} displayPower events in the event log; no catalog screendump while off") if back and on_line else
              f"catalog back: {'yes' if back else 'no'}; journal: {on_line or 'no display on line'}; "
              f"{n_events} displayPower events; {len(during)} catalog screendumps while off")

    after = service.show(vm)
    same = after["MainPID"] == before["MainPID"] and after["NRestarts"] == before["NRestarts"]
    vm.result(NAMES[3], same,
              f"main PID {after['MainPID']} and NRestarts {after['NRestarts']} unchanged over 30 s off "
              f"(WatchdogSec {after.get('WatchdogUSec', '?')})" if same else
              f"the player restarted: PID {before['MainPID']} -> {after['MainPID']}, "
              f"NRestarts {before['NRestarts']} -> {after['NRestarts']}")
