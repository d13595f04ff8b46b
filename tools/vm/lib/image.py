"""What a VM test boots, made ready on the host: the disk image of tools/mkimage and the kernel
files next to it (hard-linked, so a concurrent mkimage cannot delete them under a running test),
the uncompressed kernel for a PVH boot, the Debian packages the test itself needs, and the
catalog of the --dev-9p harness.
"""
import glob
import hashlib
import json
import lzma
import os
import shutil
import signal
import subprocess
import time

VM = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(os.path.dirname(VM))
CACHE = os.path.join(VM, "cache", "vm-test")
OVMF_CODE = ["/usr/share/OVMF/OVMF_CODE_4M.fd", "/usr/share/OVMF/OVMF_CODE.fd"]


class SetupError(Exception):
    """The test cannot run (exit status 2): no image, a missing tool, a failed build."""


def ensure_packages(pkgs, say):
    """apt-get install the Debian packages the test needs, when one is missing."""
    missing = []
    for p in pkgs:
        r = subprocess.run(["dpkg-query", "-W", "-f=${Status}", p], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True)
        if "install ok installed" not in r.stdout:
            missing.append(p)
    if missing:
        say(f"tools/vm-test: installing {' '.join(missing)}")
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
        subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends"] + missing,
                       check=True, env=env, stdout=subprocess.DEVNULL)


class Image:
    """The disk image and the files mkimage writes next to it: vmlinuz, initrd.img, cmdline.txt
    and, when it ships one, vmlinux. name is the image's path for the report."""

    def __init__(self, path, mkimage_s=None):
        if not os.path.isfile(path):
            raise SetupError(f"{path}: no such image")
        d = os.path.dirname(path)
        self.path, self.mkimage_s = path, mkimage_s
        self.vmlinuz, self.initrd, cmdline = (os.path.join(d, n) for n in ("vmlinuz", "initrd.img", "cmdline.txt"))
        for f in (self.vmlinuz, self.initrd, cmdline):
            if not os.path.isfile(f):
                raise SetupError(f"{f} is missing (tools/mkimage writes it next to the image)")
        self.cmdline = " ".join(open(cmdline).read().split())
        vmlinux = os.path.join(d, "vmlinux")
        self.vmlinux = vmlinux if os.path.isfile(vmlinux) else None
        name = os.path.realpath(path)
        self.name = os.path.relpath(name, ROOT) if name.startswith(ROOT + os.sep) else name
        self.pin_dir = None

    @classmethod
    def build(cls):
        """Runs tools/mkimage (cached; it prints the image path last) in its own process group, so
        that Ctrl-C here stops the whole build it started."""
        tool = os.path.join(ROOT, "tools", "mkimage")
        if not os.access(tool, os.X_OK):
            raise SetupError("tools/mkimage does not exist yet, so there is no image to "
                             "boot (tools/vm-test --dev-9p tests the harness without it)")
        t = time.monotonic()
        p = subprocess.Popen([tool], stdout=subprocess.PIPE, text=True, start_new_session=True)
        try:
            stdout, _ = p.communicate()
        except BaseException:
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            p.wait()
            raise
        lines = [line.strip() for line in stdout.splitlines() if line.strip()]
        if p.returncode != 0 or not lines:
            raise SetupError(f"tools/mkimage failed (exit {p.returncode})")
        image = os.path.abspath(os.path.join(ROOT, lines[-1]))
        if not os.path.isfile(image):
            raise SetupError(f"tools/mkimage printed {lines[-1]!r}, which is not a file")
        return cls(image, round(time.monotonic() - t, 1))

    def pin(self):
        """Hard links of the image and its kernel files in cache/vm-test/pinned-PID/: a concurrent
        tools/mkimage may replace the image (and delete the old one) while the test runs.
        Folders left by killed runs are removed."""
        for old in glob.glob(os.path.join(CACHE, "pinned-*")):
            try:
                os.kill(int(old.rsplit("-", 1)[1]), 0)
            except (ValueError, ProcessLookupError):
                shutil.rmtree(old, ignore_errors=True)
            except PermissionError:
                pass
        self.pin_dir = os.path.join(CACHE, f"pinned-{os.getpid()}")
        os.makedirs(self.pin_dir, exist_ok=True)

        def pinned(f):
            if f is None:
                return None
            dst = os.path.join(self.pin_dir, os.path.basename(f))
            try:
                os.link(os.path.realpath(f), dst)
                return dst
            except OSError:
                return f
        self.path, self.vmlinuz, self.initrd, self.vmlinux = (
            pinned(f) for f in (self.path, self.vmlinuz, self.initrd, self.vmlinux))

    def unpin(self):
        if self.pin_dir:
            shutil.rmtree(self.pin_dir, ignore_errors=True)

    def pvh_kernel(self):
        """The uncompressed ELF vmlinux: the one mkimage ships, or extracted from the Debian bzImage
        (xz) and cached. QEMU boots it through the PVH entry point, which skips 6-8 s of
        decompression under TCG (tools/vm/README.md, pitfall 1). None when it cannot be extracted."""
        if self.vmlinux:
            return self.vmlinux
        st = os.stat(self.vmlinuz)
        key = hashlib.sha256(f"{os.path.realpath(self.vmlinuz)} {st.st_size} {st.st_mtime_ns}".encode()).hexdigest()[:16]
        out = os.path.join(CACHE, f"vmlinux-{key}")
        if os.path.exists(out):
            return out
        data = open(self.vmlinuz, "rb").read()
        i = data.find(b"\xfd7zXZ\x00")
        if i < 0:
            return None
        try:
            elf = lzma.LZMADecompressor(format=lzma.FORMAT_XZ).decompress(data[i:])
        except lzma.LZMAError:
            return None
        if elf[:4] != b"\x7fELF":
            return None
        os.makedirs(CACHE, exist_ok=True)
        for old in glob.glob(os.path.join(CACHE, "vmlinux-*")):
            os.remove(old)
        with open(out + ".tmp", "wb") as f:
            f.write(elf)
        os.rename(out + ".tmp", out)
        return out


def ovmf():
    """OVMF's code file, or SetupError."""
    code = next((c for c in OVMF_CODE if os.path.exists(c)), None)
    if not code:
        raise SetupError("--uefi needs OVMF (apt-get install ovmf)")
    return code


def dev_catalog():
    """The image's demo catalog, for --dev-9p: red 4 s + 440 Hz, green 4 s + 440 Hz, 640x360
    (tools/make-vm-catalog when it exists)."""
    d = os.path.join(CACHE, "catalog-dev")
    tool = os.path.join(ROOT, "tools", "make-vm-catalog")
    if os.access(tool, os.X_OK):
        d = os.path.join(CACHE, "catalog-vm")
        subprocess.run([tool, d], check=True, stdout=subprocess.DEVNULL)
        return d
    if os.path.exists(os.path.join(d, ".done")):
        return d
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, "media"))
    for name, colour in (("red", "0xFF0000"), ("green", "0x00FF00")):
        subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-y",
                        "-f", "lavfi", "-i", f"color=c={colour}:s=640x360:r=30:d=4",
                        "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=4",
                        "-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p",
                        "-c:a", "aac", "-b:a", "128k", "-shortest",
                        os.path.join(d, "media", f"{name}.mp4")], check=True)
    manifest = {"schema": "vitrine.manifest/1", "version": 1, "title": "vm-test demo",
                "display": {"mode": "preferred", "rotation": 0, "fit": "contain", "background": "#000000"},
                "audio": {"device": "default", "volume": 1.0}, "loop": True,
                "playlist": [{"id": "red", "type": "video", "src": "media/red.mp4"},
                             {"id": "green", "type": "video", "src": "media/green.mp4"}]}
    with open(os.path.join(d, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    open(os.path.join(d, ".done"), "w").close()
    return d
