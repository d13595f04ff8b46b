"""One boot of the appliance for tools/vm-test's checks: the disk image (or, with --dev-9p, the
busybox harness with the host's release binary under fakesd.py) in QEMU with a GPU, intel-hda
into the wav audiodev, qemu-xhci for the USB checks, the guest agent and (image only) a
virtio-net NIC on QEMU's restricted user network, whose one reachable address,
10.0.2.100:8443, is relayed to the port in net_port_file on the host's loopback (lib/qemu.py,
lib/guestfwd.py). The NIC boots with its link down: playback must not wait for it. The
screendump recorder runs from the first instant; the guest commands are logged; the checks'
results.

A check gets this object as `vm`:
  vm.now()                         seconds since QEMU start
  vm.result(name, ok, text)        its PASS/FAIL line;  vm.info(text): an "info" line
  vm.note(text)                    a progress line (stderr and guest.log)
  vm.shots                         lib/shots.Screendumps: .wait(pred, after, timeout), .take(tag), .keep(shot)
  vm.gexec(argv)                   (exit code, stdout, stderr) of a guest command (guest-exec)
  vm.journal(*args)                journalctl -u vitrine ARGS, through the agent
  vm.q                             lib/qemu.QEMU: .qmp, .agent, .plug_stick(), .unplug_stick(), .set_link()
  vm.read_file(path)               a guest file's bytes (guest-file-read)
  vm.net_port_file                 where a host server writes its port for the guest's
                                   https://10.0.2.100:8443/ (lib/webserver.py), None with --dev-9p
  vm.link_up                       whether the NIC has its link: False from boot until a check
                                   calls vm.set_link(True) (the network check)
  vm.first_frame                   the first-frame Shot (None until found)
  vm.windows                       {kind: (start, end) or a list of them}: when popups or the banner may be on screen
  with vm.window("banner"):        the banner may be on screen from now to 12 s after the block
  vm.out                           this GPU's output folder
"""
import contextlib
import os
import shutil
import sys

from . import harness, image as image_lib, service, webserver
from .qemu import GPU_DEVICE, QEMU
from .shots import Screendumps

VM = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(os.path.dirname(VM))


def say(msg):
    print(msg, file=sys.stderr, flush=True)


class ApplianceVM:
    def __init__(self, gpu, options, out, image):
        """options: tools/vm-test's arguments (res, uefi, bzimage, dev_9p, keep); image: a pinned
        lib/image.Image, or None with --dev-9p. The watchdog limit comes from rootfs/ (10 s when
        it has no vitrine.service)."""
        self.gpu, self.opts, self.out, self.image = gpu, options, out, image
        self.dev_9p = options.dev_9p
        wd, src = service.watchdog_from_rootfs()
        self.watchdog_from_default = wd is None
        self.watchdog_s = 10.0 if wd is None else wd
        self.watchdog_src = src or "(default 10 s: no rootfs/**/vitrine.service yet)"
        self.results, self.infos, self.timings = [], [], {}
        self.first_frame = None
        self.windows = {}
        self.signals = []         # (check, guest uptime of the signal, limit): see lib/service.py
        self.g_stop = None        # guest uptime when `systemctl stop` was sent
        self.ready_host = None    # when the service was last back after a restart (s since QEMU start)
        self.final_nrestarts = None
        self.q = self.shots = self.glog = None
        self.boot = ""
        self.net_port_file = None
        self.link_up = None       # None: no NIC (--dev-9p)

    # ------------------------------------------------------------ bookkeeping
    def now(self):
        return self.q.now() if self.q and self.q.t0 is not None else 0.0

    def alive(self):
        return self.q is not None and self.q.alive()

    def result(self, name, ok, text):
        self.results.append((name, ok, text))
        say(f"  [{self.now():6.1f}s] {'PASS' if ok else 'FAIL'} {name}: {text}")

    def has_result(self, name):
        return any(n == name for n, _, _ in self.results)

    def info(self, text):
        self.infos.append(text)

    def note(self, msg):
        say(f"  [{self.now():6.1f}s] {msg}")
        if self.glog:
            self.glog.write(f"[{self.now():7.2f}] {msg}\n")
            self.glog.flush()

    @contextlib.contextmanager
    def window(self, kind, linger=12):
        """`kind` (the banner) may be on screen from now until `linger` s after the block ends,
        added to the windows earlier checks opened."""
        before = self.windows.get(kind)
        earlier = before if isinstance(before, list) else [before] if before else []
        start = self.now()
        self.windows[kind] = earlier + [(start, None)]
        try:
            yield
        finally:
            self.windows[kind] = earlier + [(start, self.now() + linger)]

    def in_window(self, kind, t):
        """Whether a check said that `kind` (popup, banner) may be on screen at t."""
        w = self.windows.get(kind)
        spans = w if isinstance(w, list) else [w] if w is not None else []
        return any(t >= s[0] and (s[1] is None or t <= s[1]) for s in spans)

    # ------------------------------------------------------------ QEMU
    def _qemu(self):
        a = self.opts
        q = QEMU(self.out, gpu=self.gpu, res=a.res or None, audio="hda", usb=True, agent=True,
                 net=not self.dev_9p)
        if self.dev_9p:
            share = os.path.join(self.out, "payload")
            shutil.copytree(os.path.join(VM, "payloads", "vm-test-dev"), share, symlinks=True)
            shutil.copy2(os.path.join(ROOT, ".build", "release", "vitrine"), os.path.join(share, "vitrine"))
            shutil.copytree(image_lib.dev_catalog(), os.path.join(share, "catalog"))
            with open(os.path.join(share, "watchdog-sec"), "w") as f:
                f.write(f"{self.watchdog_s:g}\n")
            harness.boot(q, share, [("/opt", "/opt", "ro")])
            self.boot = "dev-9p (busybox initramfs, host /usr over 9p, fakesd.py)"
            return q
        q.disk(self.image.path)
        self._network(q)
        if a.uefi:
            code = image_lib.ovmf()
            vars_copy = os.path.join(self.out, "OVMF_VARS.fd")
            shutil.copyfile(code.replace("CODE", "VARS"), vars_copy)
            q.uefi(code, vars_copy)
            self.boot = f"UEFI ({os.path.basename(code)})"
        else:
            kernel = None if a.bzimage else self.image.pvh_kernel()
            q.kernel(kernel or self.image.vmlinuz, self.image.initrd, self.image.cmdline)
            self.boot = ("direct kernel boot, " + ("vmlinux via PVH" if kernel else "bzImage")
                         + f", cmdline: {self.image.cmdline}")
        return q

    def _network(self, q):
        """The guest's one network service: https://10.0.2.100:8443/ is relayed, one lib/guestfwd.py
        per connection, to 127.0.0.1 at the port a check's server writes to net_port_file
        (guestfwd.log has a line per connection)."""
        self.net_port_file = os.path.join(self.out, "webserver.port")
        relay = os.path.join(VM, "lib", "guestfwd.py")
        q.guestfwd(webserver.GUEST_IP, webserver.GUEST_PORT,
                   [sys.executable, relay, self.net_port_file, os.path.join(self.out, "guestfwd.log")])

    def set_link(self, up):
        """The NIC's link up (a cable plugged in) or down (QMP set_link)."""
        self.q.set_link(up)
        self.link_up = bool(up)
        self.note(f"NIC link {'up' if up else 'down'} (QMP set_link)")

    def start(self):
        """Boots with the CPUs stopped, takes the "no scanout" reference, then lets it run with the
        screendump recorder on (every 0.5 s; first-frame makes that 1 s)."""
        shutil.rmtree(self.out, ignore_errors=True)
        os.makedirs(os.path.join(self.out, "shots"))
        self.glog = open(os.path.join(self.out, "guest.log"), "w")
        self.q = self._qemu()
        self.q.start(paused=True)
        self.note(f"QEMU pid {self.q.proc.pid} started: {GPU_DEVICE[self.gpu]}, {self.boot}")
        self.shots = Screendumps(self.q, os.path.join(self.out, "shots"))
        self.shots.reference()
        if self.q.net:
            self.set_link(False)  # no cable at boot: the first frame must not wait for one
        self.q.qmp.cmd("cont")
        self.shots.start()

    def connect_agent(self, timeout):
        t = self.now()
        if not self.q.agent.sync(timeout):
            self.note(f"the guest agent did not answer within {timeout} s")
            return False
        self.note(f"guest agent answered after {self.now() - t:.1f} s")
        return True

    def read_unit(self):
        """The running unit's WatchdogUSec: it sets the watchdog limit when rootfs/ has no
        vitrine.service (watchdog_src is then the default's), and goes into an info line."""
        live = service.show(self).get("WatchdogUSec", "")
        live_s = service.systemd_seconds(live) if live and live not in ("0", "infinity") else None
        if self.watchdog_from_default and live_s:
            self.watchdog_s = live_s
        self.info(f"watchdog: WatchdogSec {self.watchdog_s:g} s from {self.watchdog_src}; "
                  f"the running unit says WatchdogUSec={live}")

    def stop(self):
        """Stops the recorder, then QMP quit (finalises the wav header); kills QEMU if it hangs."""
        if self.shots:
            self.shots.stop()
        if self.q and self.q.proc:
            pid = self.q.proc.pid
            if not self.q.quit(20):
                self.note(f"QEMU pid {pid} did not quit; killed it")

    def kill(self):
        if self.q:
            self.q.kill()
            self.q.close()

    # ------------------------------------------------------------ the guest
    def gexec(self, argv, timeout=120, quiet=False):
        """Runs argv in the guest through the agent; logs it (and, unless quiet, its output) to guest.log."""
        t = self.now()
        code, out, err = self.q.agent.exec(argv, timeout=timeout)
        if self.glog:
            self.glog.write(f"[{t:7.2f}] $ {' '.join(argv)}  -> exit {code} in {self.now() - t:.2f} s\n")
            if (out or err) and not quiet:
                self.glog.write("".join("    " + line + "\n" for line in (out + err).splitlines()))
            self.glog.flush()
        return code, out, err

    def write_file(self, path, data, log=None):
        """Writes bytes to a guest file with the agent's file calls (no process in the guest)."""
        self.q.agent.write_file(path, data)
        if self.glog and log:
            self.glog.write(f"[{self.now():7.2f}] guest-file-write {path}: {log}")
            self.glog.flush()

    def read_file(self, path, limit=64 << 20):
        """A guest file's first `limit` bytes (guest-file-open/read/close: no process in the guest)."""
        data = self.q.agent.read_file(path, limit)
        if self.glog:
            self.glog.write(f"[{self.now():7.2f}] guest-file-read {path}: {len(data)} bytes\n")
            self.glog.flush()
        return data

    def upload(self, local, remote, mode="0755"):
        """Copies a host file into the guest (guest-file-write), then chmods it."""
        with open(local, "rb") as f:
            self.q.agent.write_file(remote, f.read())
        self.gexec(["chmod", mode, remote])

    def journal(self, *args):
        """`journalctl -u vitrine --no-pager ARGS` in the guest: its text."""
        _, out, _ = self.gexec(["journalctl", "-u", "vitrine", *args, "--no-pager"], quiet=True)
        return out

    def fetch_journal(self):
        """journal.txt and journal-vitrine.txt (the whole boot) into the output, before QEMU quits."""
        for f, cmd in (("journal.txt", ["journalctl", "-b", "--no-pager", "-o", "short-monotonic"]),
                       ("journal-vitrine.txt", ["journalctl", "-b", "-u", "vitrine", "--no-pager",
                                                "-o", "short-monotonic"])):
            try:
                _, out, err = self.gexec(cmd, quiet=True)
            except Exception as e:  # noqa: BLE001
                self.note(f"{' '.join(cmd)}: {e}")
                return False
            with open(os.path.join(self.out, f), "w") as fh:
                fh.write(out + err)
        return True

    def saved_journal(self):
        """journal-vitrine.txt as fetched, or None."""
        path = os.path.join(self.out, "journal-vitrine.txt")
        return open(path, errors="replace").read() if os.path.exists(path) else None

    def tidy(self):
        if self.shots:
            self.shots.tidy(self.opts.keep)
        if self.glog:
            self.glog.close()
            self.glog = None

