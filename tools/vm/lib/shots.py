"""The screen over a whole run: a thread takes a QMP screendump every `period` seconds and
classifies it (lib/screen.py), and the checks wait for the first one that shows what they
expect. Every screendump is kept in order, with its time since QEMU start, so a check can also
judge all of them afterwards (no-console).
"""
import hashlib
import json
import os
import threading
import time

from . import screen


class Shot:
    """One screendump: i (its index), t (seconds since QEMU start), path, tag, cls (screen.classify's
    class, or "error"), colour (screen.picture_colour), size, digest (sha1 of the pixels), info
    (classify's details plus "centre", the centre pixel), err."""

    def __init__(self, i, tag, path):
        self.i, self.tag, self.path = i, tag, path
        self.t = self.cls = self.colour = self.size = self.digest = self.err = None
        self.info = {}

    @property
    def png(self):
        """The name of its PNG copy (written by Screendumps.tidy for the kept ones)."""
        return os.path.basename(self.path)[:-4] + ".png"


class Screendumps:
    def __init__(self, qemu, folder):
        self.qemu, self.folder = qemu, folder
        self.shots, self.kept = [], set()
        self.cv = threading.Condition()
        self.stopping = threading.Event()
        self.period = 0.5
        self.inactive_ref = None
        self.thread = None

    def reference(self):
        """QEMU's own page for a display the guest has not set up ("Display output is not active"),
        taken while the CPUs are still stopped (-S): later identical dumps mean "no scanout"."""
        ref = os.path.join(self.folder, "inactive-ref.ppm")
        self.qemu.qmp.screendump(ref)
        self.inactive_ref = screen.read_ppm(ref)

    def take(self, tag="p"):
        """Takes a screendump now and classifies it; returns its Shot."""
        with self.cv:
            i = len(self.shots)
            s = Shot(i, tag, os.path.join(self.folder, f"{i:04d}-{tag}.ppm"))
            self.shots.append(s)
        t, size, cls, colour, info, digest, err = None, None, "error", None, {}, None, None
        try:
            self.qemu.qmp.screendump(s.path)
            t = self.qemu.now()
            img = screen.read_ppm(s.path)
            size = img[:2]
            cls, info = screen.classify(img, self.inactive_ref)
            colour = screen.picture_colour(img) if cls != "inactive" else None
            digest = hashlib.sha1(img[2]).digest()
            info["centre"] = screen.hexc(screen.pixel(img, img[0] // 2, img[1] // 2))
        except Exception as e:  # noqa: BLE001
            t, err = t or self.qemu.now(), str(e)
        with self.cv:  # all at once: wait() reads shots whose cls is set
            s.t, s.size, s.colour, s.info, s.digest, s.err = t, size, colour, info, digest, err
            s.cls = cls
            self.cv.notify_all()
        return s

    def _loop(self):
        while not self.stopping.is_set():
            t = time.monotonic()
            if not self.qemu.alive():
                break
            self.take()
            self.stopping.wait(max(0.05, self.period - (time.monotonic() - t)))
        with self.cv:
            self.cv.notify_all()

    def start(self):
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def stop(self):
        self.stopping.set()
        if self.thread:
            self.thread.join(10)

    def wait(self, pred, after, timeout):
        """The first shot taken at or after `after` (s since QEMU start) that satisfies pred, or
        None after `timeout` seconds (or when QEMU is gone)."""
        end = time.monotonic() + timeout
        seen = 0
        with self.cv:
            while True:
                for s in self.shots[seen:]:
                    if s.cls is None:
                        break
                    seen += 1
                    if s.t >= after and pred(s):
                        return s
                left = end - time.monotonic()
                if left <= 0 or not self.qemu.alive():
                    return None
                self.cv.wait(min(left, 1.0))

    def all(self):
        """The classified shots so far, in order."""
        with self.cv:
            return [s for s in self.shots if s.cls]

    def keep(self, *shots):
        """Marks shots worth a PNG in the output (evidence of a check)."""
        self.kept.update(s.i for s in shots if s is not None)

    def tidy(self, keep_ppm=False):
        """PNG copies of the kept shots; drops the PPMs unless keep_ppm; writes index.txt (every
        screendump: time, tag, class, colour, details)."""
        for s in self.shots:
            if not s.path or not os.path.exists(s.path):
                continue
            if s.i in self.kept:
                try:
                    screen.write_png(screen.read_ppm(s.path), s.path[:-4] + ".png")
                except Exception:  # noqa: BLE001 -- a truncated dump: the index still lists it
                    pass
            if not keep_ppm:
                os.remove(s.path)
        with open(os.path.join(self.folder, "index.txt"), "w") as f:
            for s in self.shots:
                f.write(f"{s.i:04d} {s.t if s.t is not None else -1:7.2f}s {s.tag:10} {s.cls or '-':18} "
                        f"{s.colour or '-':6} {json.dumps(s.info or {})}{' ' + s.err if s.err else ''}\n")
