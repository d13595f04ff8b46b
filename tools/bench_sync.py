"""Synchronised screens for tools/bench (`--only sync`, and in the full run).

Four `vitrine run` players (headless, vblanks paced in real time, not recording) play one catalog
with `sync.epoch` (a: 3 s, b: 2.5 s, 640x360 30 fps testsrc2 with sines, on a 640x360@60 screen:
a 5.5 s cycle) for 20 s, and a fifth starts 7 s after them and plays 10 s. Each writes
`--vblank-log`: per vblank its wall-clock time, the item and the PTS of the frame on screen.

Prints:
  offset between players   when each player first showed each frame (pass, item, PTS) against
                           player 1: mean and max in ms; and at the same vblank instants, the largest
                           difference in frames (30 fps).
  wall-clock error         each shown frame's first vblank against the frame's due time
                           (epoch + pass + slot + PTS): mean |error| and max in ms (the nearest
                           vblank: within half a period, 8.3 ms, by design).
  late joiner              seconds from its start to its first vblank in step with player 1 (same
                           item and PTS at the same instant, and at every vblank after).
Targets: offset max <= 1 frame, mean < 2 ms; late joiner in step within 1 s.
"""
import json
import os
import shutil
import subprocess
import time

EPOCH = 1767225600.0  # 2026-01-01T00:00:00Z
SLOTS = [("a", 0.0, 3.0), ("b", 3.0, 2.5)]
CYCLE = 5.5
FPS = 30.0


class SyncBenchError(Exception):
    pass


def make_catalog(out):
    cat = os.path.join(out, "sync-catalog")
    media = os.path.join(cat, "media")
    os.makedirs(media, exist_ok=True)
    for name, seconds, tone in (("a", 3, 440), ("b", 2.5, 660)):
        path = os.path.join(media, name + ".mp4")
        if not os.path.exists(path):
            subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-y",
                            "-f", "lavfi", "-i", f"testsrc2=size=640x360:rate=30:duration={seconds}",
                            "-f", "lavfi", "-i", f"sine=frequency={tone}:sample_rate=48000:duration={seconds}",
                            "-c:v", "libx264", "-preset", "veryfast", "-g", "30", "-pix_fmt", "yuv420p",
                            "-c:a", "aac", "-shortest", path + ".part.mp4"], check=True)
            os.rename(path + ".part.mp4", path)
    manifest = {"schema": "vitrine.manifest/1", "version": 1, "title": "sync bench",
                "display": {"mode": "640x360@60"}, "sync": {"epoch": "2026-01-01T00:00:00Z"},
                "playlist": [{"id": "a", "type": "video", "src": "media/a.mp4"},
                             {"id": "b", "type": "video", "src": "media/b.mp4"}]}
    with open(os.path.join(cat, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    return cat


def read_log(path):
    lines = []
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) < 3:
                continue
            lines.append((float(p[0]), None if p[1] == "-" else p[1], None if p[2] == "-" else float(p[2])))
    return lines


def due(pass_, item, pts):
    start = next(s for i, s, _ in SLOTS if i == item)
    return EPOCH + pass_ * CYCLE + start + pts


def first_shown(lines):
    out = {}
    for wall, item, pts in lines:
        if item is None:
            continue
        pass_ = int((wall - EPOCH) // CYCLE)
        key = (pass_, item, round(pts * FPS))
        out.setdefault(key, (wall, pts))
    return out


def measure(binary, out, timeout):
    """Returns (lines, missed)."""
    cat = make_catalog(out)
    logs = [os.path.join(out, f"sync-vblanks-{i}.log") for i in range(5)]
    procs = []

    def start(log, duration):
        return subprocess.Popen([binary, "run", "--catalog", cat, "--output", "headless", "--realtime",
                                 "--audio-device", "none", "--duration", str(duration), "--vblank-log", log,
                                 "--log-file", log + ".txt"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for i in range(4):
            procs.append(start(logs[i], 20))
        time.sleep(7)
        joiner_start = time.time()
        procs.append(start(logs[4], 10))
        for p in procs:
            if p.wait(timeout=timeout) != 0:
                raise SyncBenchError(f"a player exited with {p.returncode}; see {logs[procs.index(p)]}.txt")
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    runs = [read_log(p) for p in logs]
    ref = {round(w * 1000): (i, t) for w, i, t in runs[0]}
    shown = [first_shown(r) for r in runs]
    start0 = runs[0][0][0] + 1
    ms, frames, errors = [], [], []
    for k, r in enumerate(runs[1:], start=1):
        since = joiner_start + 1 if k == 4 else 0
        for key, (t, _) in shown[k].items():
            if t >= since and key in shown[0] and shown[0][key][0] > start0:
                ms.append(abs(t - shown[0][key][0]) * 1000)
        for w, i, t in r:
            if w < since or i is None:
                continue
            other = ref.get(round(w * 1000))
            if other and other[0] == i and other[1] is not None:
                frames.append(abs(t - other[1]) * FPS)
            elif other and other[0] is not None and other[0] != i:
                frames.append(99)
    for s in shown:
        for (pass_, item, _), (t, pts) in s.items():
            errors.append((t - due(pass_, item, pts)) * 1000)
    # The late joiner.
    joiner = runs[4]
    converged = None
    for n in range(len(joiner)):
        if joiner[n][1] is None:
            continue
        if all(ref.get(round(w * 1000), (i, t)) == (i, t) for w, i, t in joiner[n:]):
            converged = joiner[n][0] - joiner_start
            break
    if not ms or converged is None:
        raise SyncBenchError("sync: the players' logs have no frames in common")
    mean, worst, worst_frames = sum(ms) / len(ms), max(ms), max(frames)
    ok = worst_frames <= 1 and mean < 2 and converged <= 1
    abs_err = [abs(e) for e in errors]
    lines = [
        f"sync (5 players, headless 640x360@60 in real time, 30 fps clips, 5.5 s cycle): offset between players "
        f"mean {mean:.3f} ms, max {worst:.3f} ms ({len(ms)} frames), max {worst_frames:.0f} frames at the same vblank; "
        f"late joiner (started 7 s late) in step {converged:.3f} s after its start  target <= 1 frame, mean < 2 ms, "
        f"<= 1 s " + ("ok" if ok else "MISSED"),
        f"  wall-clock error of each frame's first vblank against its due time: mean |error| "
        f"{sum(abs_err) / len(abs_err):.3f} ms, range {min(errors):+.3f} … {max(errors):+.3f} ms "
        f"(the nearest vblank: within ±8.3 ms at 60 Hz)",
        f"  load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores",
    ]
    return lines, not ok
