"""The busybox/9p harness: the Debian kernel and the initramfs of tools/vm/prepare, whose /init
(tools/vm/initramfs/init) chroots into the host's /usr (9p, read-only) and runs /payload/run.sh.

`boot(q, ...)` sets a QEMU (lib/qemu.py) up for it; `run_payload(...)` is tools/vm/run: one
payload from boot to power-off, with the screendumps it asks for.

The guest reads its settings from the kernel command line: vitrine.gpu, vitrine.audio,
vitrine.shares=tag:/guest/path:ro|rw,... and vitrine.wait=/dev/...,... (devices /init waits
for). It prints "VITRINE-VM: <mark> uptime=<s>" lines on the serial console.
"""
import os
import re
import shutil
import subprocess
import time

VM = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CACHE = os.path.join(VM, "cache")


def prepared(no_prepare=False):
    """(vmlinux, bzImage, initramfs) from tools/vm/prepare (it installs the host packages, fetches
    the kernel and builds the initramfs when one is missing), or the cache's symlinks as they are."""
    if no_prepare:
        return (os.path.join(CACHE, "vmlinux"), os.path.join(CACHE, "vmlinuz"),
                os.path.join(CACHE, "initramfs.cpio.gz"))
    out = subprocess.run([os.path.join(VM, "prepare"), "--print"], check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    kv = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
    return kv["VMLINUX"], kv["KERNEL"], kv["INITRD"]


def boot(q, payload, shares=(), append="", bzimage=False, no_prepare=False):
    """Boots `q` into the harness with the host folder `payload` as /payload (read-write) and
    `shares`, a list of (host folder, guest path, "ro"|"rw")."""
    vmlinux, bz, initrd = prepared(no_prepare)
    cmdline = ["console=ttyS0,115200", "quiet", "panic=-1", f"vitrine.gpu={q.gpu}", f"vitrine.audio={q.audio}"]
    q.share("/usr", "hostusr")
    q.share(payload, "payload", readonly=False)
    mounts = []
    for i, (host, guest, mode) in enumerate(shares):
        q.share(host, f"share{i}", readonly=(mode == "ro"))
        mounts.append(f"share{i}:{guest}:{mode}")
    if mounts:
        cmdline.append("vitrine.shares=" + ",".join(mounts))
    wait = (["/dev/snd/pcmC0D0p"] if q.audio != "none" else []) + (["/dev/dri/card0"] if q.gpu != "none" else [])
    if wait:
        cmdline.append("vitrine.wait=" + ",".join(wait))
    if append:
        cmdline.append(append)
    q.kernel(bz if bzimage else vmlinux, initrd, " ".join(cmdline))


def parse_share(spec):
    """HOST:GUEST[:rw] -> (host, guest, "ro"|"rw")."""
    parts = spec.split(":")
    return parts[0], parts[1] if len(parts) > 1 else parts[0], parts[2] if len(parts) > 2 else "ro"


class Marks:
    """The /init markers read from the serial console as it grows: name -> host time, guest uptime."""

    def __init__(self, path, stream=None):
        self.path, self.stream, self.pos, self.buf, self.marks = path, stream, 0, "", {}

    def read(self, now):
        try:
            with open(self.path, "rb") as f:
                f.seek(self.pos)
                data = f.read()
        except FileNotFoundError:
            return
        self.pos += len(data)
        text = data.decode("utf-8", "replace")
        if self.stream and text:
            self.stream.write(text)
        lines = (self.buf + text).split("\n")
        self.buf = lines.pop()
        for line in lines:
            m = re.search(r"VITRINE-VM: (.*) uptime=([\d.]+)", line)
            if m:
                key = re.sub(r"\s+\w+=\S*", "", m.group(1).split(":")[0]).strip()
                self.marks.setdefault(key, {"host_s": round(now, 2), "guest_uptime_s": float(m.group(2)),
                                            "text": m.group(1)})


def run_payload(out, q, shots=(), timeout=180, stream=None):
    """Runs the payload in out/payload (see fresh_out) in the harness on the QEMU `q`, set up
    with boot() (see tools/vm/run); `stream` gets the console as it comes. `shots` are (seconds after QEMU
    start, file) screendumps; the guest's /vm/shot NAME asks for one now (out/NAME.ppm).
    Returns (exit status, timings): the payload's status, 124 on timeout (QMP quit, so the wav is
    still finalised), 125 when the guest stopped before the payload ended, 3 when the payload
    passed but a screendump failed."""
    share = os.path.join(out, "payload")
    vmdir = os.path.join(share, ".vm")
    shots = sorted([float(t), f if os.path.isabs(f) else os.path.join(out, f), None] for t, f in shots)
    command = q.start()
    marks = Marks(q.serial, stream)
    errors, timed_out = [], False
    try:
        while True:
            now = q.now()
            marks.read(now)
            if not q.alive():
                break
            for s in shots:  # screendumps at fixed times
                if s[2] is None and now >= s[0]:
                    try:
                        q.qmp.screendump(s[1])
                        s[2] = round(q.now(), 2)
                    except Exception as e:  # noqa: BLE001
                        s[2] = f"error: {e}"
                        errors.append(f"screendump at {s[0]} s: {e}")
            for name in sorted(os.listdir(vmdir)) if os.path.isdir(vmdir) else ():  # /vm/shot NAME
                if not name.startswith("shot-req-"):
                    continue
                shot, res = name[len("shot-req-"):], "ok"
                try:
                    q.qmp.screendump(os.path.join(out, shot + ".ppm"))
                except Exception as e:  # noqa: BLE001
                    res = str(e)
                    errors.append(f"screendump {shot}: {e}")
                marks.marks.setdefault(f"shot {shot}", {"host_s": round(q.now(), 2)})
                os.remove(os.path.join(vmdir, name))
                done = os.path.join(vmdir, "shot-done-" + shot)
                with open(done + ".tmp", "w") as f:
                    f.write(res + "\n")
                os.rename(done + ".tmp", done)
            if now > timeout:
                timed_out = True
                q.quit(10)
                break
            time.sleep(0.02)
    except Exception as e:  # noqa: BLE001
        errors.append(f"harness: {e}")
    finally:
        if q.alive() and not q.wait(15):
            q.kill()
        q.close()
    total = q.now()
    for s in shots:
        if s[2] is None:
            errors.append(f"screendump at {s[0]} s not taken: QEMU exited at {total:.1f} s")
    status_file = os.path.join(vmdir, "exit-status")
    if timed_out:
        status = 124
        errors.append(f"timeout after {timeout:g} s")
    elif os.path.exists(status_file):
        status = int(open(status_file).read().strip() or 125)
    else:
        status = 125
        errors.append("the guest stopped before the payload finished")
    if status == 0 and errors:
        status = 3
    timings = {"qemu_total_s": round(total, 2), "qemu_rc": q.proc.returncode, "exit_status": status,
               "marks": marks.marks, "shots": [{"at": s[0], "file": s[1], "taken": s[2]} for s in shots],
               "errors": errors, "qemu_cmd": command}
    return status, timings


def fresh_out(out, payload):
    """Empties the last run's results from `out` and copies `payload` to out/payload."""
    os.makedirs(out, exist_ok=True)
    for name in os.listdir(out):
        p = os.path.join(out, name)
        if name == "payload" or name in ("serial.log", "audio.wav", "timings.json", "qemu.log", "qemu-cmd.txt") \
                or name.endswith(".ppm"):
            shutil.rmtree(p) if os.path.isdir(p) and not os.path.islink(p) else os.remove(p)
    share = os.path.join(out, "payload")
    shutil.copytree(payload, share, symlinks=True)
    os.makedirs(os.path.join(share, ".vm"), exist_ok=True)
    return share
