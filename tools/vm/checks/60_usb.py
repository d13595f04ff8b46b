"""usb-import, usb-switch, usb-remove: a USB stick hot-plugged into the running appliance.

prepare() makes the stick (cached by the hash of the scripts that make it):
tools/make-vm-catalog --stick --version 2 --colours blue,green, with display fit "cover" (the
image's catalog says "contain") and a 48 MiB file in the manifest's `files` (copied and hashed like
media, so the import lasts long enough for screendumps to catch its progress bar), in a FAT32
image by tools/make-stick (sfdisk + mtools). The check plugs a copy with QMP blockdev-add +
device_add usb-storage on the xHCI bus, and later pulls it with device_del.

  usb-import   the guest's udev rule (80-vitrine-usb.rules) mounts it read-only under
               /run/vitrine/media/sda1; the player's status banner is in a screendump; its
               journal says "Updated to version 2: 2 items"
  usb-switch   the stick's first item (blue) on screen within 90 s of the plug; its fit "cover"
               restarts the display, so a later blue screendump without the banner has under 1 %
               black (no letterbox; 10 % before)
  usb-remove   the mount is gone within 15 s of the pull and the new catalog keeps playing (the
               watchdog and crash checks then find it again after each restart: it is the
               library's `current`)

The banner may be on screen from the plug to 12 s after the check (vm.windows["banner"]: the
result banner stays 10 s).
"""
import hashlib
import os
import shutil
import time

from lib.sticks import cached_stick

NAMES = ("usb-import", "usb-switch", "usb-remove")
PHASE = "live"
NEEDS = ("first-frame", "agent")
TIMEOUT = 90.0  # plug -> new catalog on screen (the import, then the end of the item playing)
FILLER_MIB = 48
MOUNT = "/run/vitrine/media/sda1"
STICK = None


def prepare():
    global STICK

    def edit(folder, m):
        filler = os.path.join(folder, "vitrine", "media", "filler.bin")
        h = hashlib.sha256()
        with open(filler, "wb") as f:
            block = hashlib.sha256(b"vitrine").digest() * (1 << 15)  # 1 MiB, the same every run
            for i in range(FILLER_MIB):
                chunk = bytes([i & 0xFF]) + block[1:]
                f.write(chunk)
                h.update(chunk)
        m["files"] = [{"path": "media/filler.bin", "size": FILLER_MIB << 20, "sha256": h.hexdigest()}]
        m["display"]["fit"] = "cover"  # other display settings than the image's: the player restarts its display
    STICK = cached_stick("stick", f"filler {FILLER_MIB} MiB, fit cover v2",
                         ["--version", "2", "--colours", "blue,green"], edit)


def run(vm):
    if vm.dev_9p:
        vm.info("usb: not run with --dev-9p (no udev, no systemd-mount in the harness)")
        return
    with vm.window("banner"):
        plug(vm)


def plug(vm):
    img = os.path.join(vm.out, "stick.img")
    shutil.copyfile(STICK, img)  # QEMU may write to it; the cached one stays pristine
    vm.q.plug_stick(img)
    t_plug = vm.now()
    vm.note("USB stick plugged (QMP device_add usb-storage)")
    banner = vm.shots.wait(lambda s: s.cls == "banner", t_plug, TIMEOUT)
    blue = vm.shots.wait(lambda s: s.colour == "blue", t_plug, TIMEOUT)
    vm.shots.keep(banner, blue)
    seen = [s for s in vm.shots.all() if s.cls == "banner" and s.t >= t_plug]
    progress = [s for s in seen if s.info.get("banner") == "progress"]
    styles = ", ".join(f"{s.t - t_plug:.1f} s {s.info.get('banner') or 'spinner'}" for s in seen[:8])
    vm.info(f"usb banner screendumps after the plug: {styles or 'none'}")
    vm.shots.keep(*progress[:2])
    out = vm.journal("-o", "cat")
    lines = [line for line in out.splitlines() if "import" in line and ("/run/vitrine/media" in line or "catalog" in line)]
    done = next((line for line in lines if "Updated to version 2" in line), None)
    for line in lines[-4:]:
        vm.info("usb journal: " + line.strip()[:200])
    _, mounts, _ = vm.gexec(["findmnt", "-rn", "-o", "TARGET,FSTYPE,OPTIONS", "-T", MOUNT])
    vm.info(f"usb mount: {mounts.strip() or '(none)'}")
    shown = banner.info.get("banner") if banner else None
    bar = (f"; progress bar at {progress[0].t - t_plug:.1f} s ({progress[0].png})"
           if progress else "; no screendump caught the progress bar")
    vm.result(NAMES[0], bool(banner and done),
              (f"banner ({shown}) on screen {banner.t - t_plug:.1f} s after the plug ({banner.png}){bar}; "
               f"journal: {done.strip()[:160]}") if banner and done else
              f"banner: {'seen' if banner else 'never seen'}; journal: "
              f"{(lines[-1].strip()[:200] if lines else 'no import line')}")
    # The stick's catalog asks for fit "cover" (the image's says "contain"): the player restarts
    # the display with it, so the 640x360 clip fills the 640x400 screen with no letterbox.
    full = vm.shots.wait(lambda s: s.colour == "blue" and s.cls == "catalog", blue.t, 30) if blue else None
    black = full.info.get("frac", {}).get("black", 1.0) if full else 1.0
    vm.shots.keep(full)
    restart = next((line for line in out.splitlines() if "restarting the display" in line), None)
    if restart:
        vm.info("usb display: " + restart.strip()[:200])
    vm.result(NAMES[1], blue is not None and full is not None and black < 0.01,
              f"blue (the stick's first item) on screen {blue.t - t_plug:.1f} s after the plug "
              f"({blue.png}; limit {TIMEOUT:g} s); the stick's fit cover applied: {100 * black:.1f} % black at "
              f"{full.t - t_plug:.1f} s ({full.png}; the image's fit contain leaves 10 % letterbox)"
              if blue and full else
              f"no blue picture within {TIMEOUT:g} s of the plug" if not blue else
              "no blue catalog picture (without banner) within 30 s of the first blue one")
    vm.q.unplug_stick()
    t_pull = vm.now()
    vm.note("USB stick pulled (QMP device_del)")
    gone = None
    while vm.now() - t_pull < 15:
        code, out, _ = vm.gexec(["findmnt", "-rn", MOUNT], quiet=True)
        if code != 0 and not out.strip():
            gone = vm.now() - t_pull
            break
        time.sleep(0.5)
    after = vm.shots.wait(lambda s: s.colour in ("blue", "green") and s.cls.startswith("catalog"), vm.now(), 10)
    vm.result(NAMES[2], gone is not None and after is not None,
              f"unmounted {gone:.1f} s after the pull; the new catalog plays on ({after.colour} at "
              f"+{after.t - t_pull:.1f} s)" if gone is not None and after else
              ("still mounted 15 s after the pull" if gone is None else "no catalog picture after the pull"))
    vm.q.forget_stick()  # the device may still hold it briefly: then it stays until QEMU quits
