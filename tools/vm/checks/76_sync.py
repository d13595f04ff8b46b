"""sync-drm: a catalog with `sync.epoch` on the real DRM/KMS output and ALSA device, in the guest.

prepare() makes a folder (cached): tools/make-vm-catalog --colours red,green,blue (4 s clips, a 12 s
cycle), with "sync": {"epoch": "2026-01-01T00:00:00Z"} and no popups.

run() stops vitrine.service (its exit is recorded for the restarts check), uploads the catalog to
/var/lib/vitrine-sync-test in the guest, and runs `vitrine run --catalog … --output drm --duration
14 --vblank-log …` there (the unit's own binary, the card and the sound device), then starts the
service again and waits for its catalog to be back on screen.

  sync-drm  every vblank of the log after the join shows the colour the guest's wall clock says,
            `(t − epoch) mod 12 s` (the vblanks within one frame of an item boundary aside); the
            frame's PTS is within one frame of its due time at 99 % of the vblanks (TCG is slow); the screendumps taken
            meanwhile show that colour too (those within 0.4 s of a boundary aside: a screendump's
            own time is only known to QMP's latency); the sound's offset from the picture (the
            log's fourth column, from snd_pcm_delay) is reported.
"""
import json
import os
import shutil
import subprocess
import time

from lib import service
from lib.image import CACHE, ROOT

NAMES = ("sync-drm",)
PHASE = "live"
NEEDS = ("first-frame", "agent")
FOLDER = None
EPOCH = 1767225600.0  # 2026-01-01T00:00:00Z
ORDER = ("red", "green", "blue")
CYCLE = 12.0
REMOTE = "/var/lib/vitrine-sync-test"


def prepare():
    global FOLDER
    FOLDER = os.path.join(CACHE, "sync-catalog")
    if os.path.exists(os.path.join(FOLDER, "manifest.json")):
        return
    tmp = FOLDER + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    subprocess.run([os.path.join(ROOT, "tools", "make-vm-catalog"), tmp, "--colours", ",".join(ORDER)], check=True,
                   stdout=subprocess.DEVNULL)
    mpath = os.path.join(tmp, "manifest.json")
    m = json.load(open(mpath))
    m.pop("overlays", None)
    m.pop("tap", None)
    m["sync"] = {"epoch": "2026-01-01T00:00:00Z"}
    with open(mpath, "w") as f:
        json.dump(m, f, indent=1)
    shutil.rmtree(FOLDER, ignore_errors=True)
    os.replace(tmp, FOLDER)


def due(wall):
    """(colour, seconds into its item, seconds to the nearest boundary) the wall clock says at `wall`."""
    p = (wall - EPOCH) % CYCLE
    i = int(p // 4)
    t = p - 4 * i
    return ORDER[i], t, min(t, 4 - t)


def run(vm):
    if vm.dev_9p:
        vm.info("sync-drm: not run with --dev-9p")
        return
    st = service.wait_active(vm)
    if st.get("ActiveState") != "active":
        vm.result(NAMES[0], False, f"vitrine.service is not active before the test: {st}")
        return
    vm.gexec(["mkdir", "-p", REMOTE + "/media"])
    for name in ["manifest.json"] + [f"media/{c}.mkv" for c in ORDER]:
        vm.upload(os.path.join(FOLDER, name), f"{REMOTE}/{name}", mode="0644")
    _, out, _ = vm.gexec(["sh", "-c", "read u _ < /proc/uptime; echo $u"], quiet=True)
    vm.signals.append(("sync-drm", float(out.strip()), 60))
    vm.gexec(["systemctl", "stop", "vitrine.service"])
    vm.note("vitrine.service stopped for the sync-drm run")
    # Guest wall clock against the harness's clock, to place screendumps on the guest's time line.
    # `date` runs somewhere inside guest-exec's round trip (up to seconds under TCG): the midpoint,
    # and half the round trip as the uncertainty.
    h0 = vm.now()
    _, g, _ = vm.gexec(["date", "-u", "+%s.%N"], quiet=True)
    h1 = vm.now()
    offset, slack = float(g.strip()) - (h0 + h1) / 2, (h1 - h0) / 2
    t0 = vm.now()
    code, out, err = vm.gexec(["/usr/bin/vitrine", "run", "--catalog", REMOTE, "--output", "drm", "--duration", "14",
                               "--vblank-log", REMOTE + "/vblanks.log", "--log-file", REMOTE + "/run.log"], timeout=90)
    t1 = vm.now()
    log = vm.read_file(REMOTE + "/vblanks.log").decode(errors="replace")
    runlog = vm.read_file(REMOTE + "/run.log").decode(errors="replace")
    vm.gexec(["systemctl", "start", "vitrine.service"])
    back = vm.shots.wait(lambda s: s.cls == "catalog", vm.now(), 60)
    vm.note(f"vitrine.service started again; catalog on screen {'at %.1f s' % back.t if back else 'not seen'}")
    if code != 0:
        vm.result(NAMES[0], False, f"vitrine run exited {code}: {err.strip()[-300:]} {runlog[-600:]}")
        return
    lines = [line.split() for line in log.splitlines() if len(line.split()) >= 3]
    framed = [(float(w), i, float(p), float(h[0]) if h else None) for w, i, p, *h in lines if i != "-"]
    if not framed:
        vm.result(NAMES[0], False, f"no frame in the vblank log ({len(lines)} vblanks): {runlog[-600:]}")
        return
    joined = framed[0][0]
    wrong, late, checked, heard = [], [], 0, []
    for w, item, pts, h in framed:
        colour, t, edge = due(w)
        if edge < 1 / 30:
            continue
        checked += 1
        if item != colour:
            wrong.append((w, item, colour))
        elif abs(pts - t) > 1 / 30 + 0.002:
            late.append((w, pts, t))
        if h is not None and w > joined + 2:
            heard.append(h)
    shots = [s for s in vm.shots.all() if t0 <= s.t <= t1 and s.cls == "catalog" and s.colour in ORDER]
    shot_checked = [s for s in shots if due(s.t + offset)[2] > 0.4 + slack]
    shot_wrong = [s for s in shot_checked if s.colour != due(s.t + offset)[0]]
    vm.shots.keep(*shot_wrong[:3])
    # Under TCG the guest runs several times slower than a box: a frame now and then comes a vblank
    # late (the decoder or the loop behind). At most 1 % of them; none of another item.
    ok = not wrong and len(late) <= checked // 100 and checked > 300 and (shot_checked or slack > 1.5) and not shot_wrong
    sound = (f"; sound heard minus picture {min(heard):+.1f} … {max(heard):+.1f} ms" if heard else "; no sound device")
    vm.result(NAMES[0], ok,
              f"{checked} vblanks after the join ({joined - (t0 + offset):.1f} s after the run started): "
              f"{len(wrong)} of another colour than the wall clock's, {len(late)} more than a frame off their due time; "
              f"screendumps {len(shot_checked) - len(shot_wrong)} of {len(shot_checked)} the wall clock's colour "
              f"(placed to ±{slack:.2f} s)"
              + sound + (f"; first wrong {wrong[0]}" if wrong else "") + (f"; first late {late[0]}" if late else ""))
