"""touch-open, touch-button, touch-dismiss: a uinput touchscreen in the guest goes through the
guest's udev and libinput into the player.

tools/vm/uinput-touch.c, compiled on the host (cc -static) by prepare(), is copied in through the
guest agent (guest-file-write) and started by guest-exec after `modprobe uinput`: a touchscreen
(INPUT_PROP_DIRECT, MT protocol B) that the player's libinput seat adds ("input device added" in
its journal). Each tap is a line written to its FIFO with guest-file-write: no process starts in
the guest for a tap (a shell per tap loaded the emulated CPU just as the popup animations began).

  touch-open     a tap on the video opens the popup "menu": its panel (#F4F6F8) and its button
                 (#1F6FEB) in a screendump within 10 s (the manifest's `tap` action)
  touch-button   a tap on the centre of that button stacks "info": a narrower panel on top
  touch-dismiss  a tap on the dimming closes "info" (the menu's panel again), another closes
                 "menu" (the catalog alone); each within 10 s

Popups may be on screen from the first tap to 2 s after the last (vm.windows["popup"]).
"""
import hashlib
import os
import shutil
import subprocess
import time

from lib.image import CACHE, VM

NAMES = ("touch-open", "touch-button", "touch-dismiss")
PHASE = "live"
NEEDS = ("first-frame", "agent")
TIMEOUT = 10.0  # a tap's effect must be on screen within this
GUEST_TOOLS = "/var/tmp/vitrine-test"  # /run is noexec on the image
INJECTOR = None


def prepare():
    """Compiles tools/vm/uinput-touch.c (static, so it runs on the image whatever its libc) into the
    cache, keyed by its hash. The Swift toolchain's clang is enough."""
    global INJECTOR
    src = os.path.join(VM, "uinput-touch.c")
    os.makedirs(CACHE, exist_ok=True)
    out = os.path.join(CACHE, f"uinput-touch-{hashlib.sha256(open(src, 'rb').read()).hexdigest()[:16]}")
    if os.access(out, os.X_OK):
        INJECTOR = out
        return
    errors = []
    for cc in ("cc", "clang", "gcc"):
        if not shutil.which(cc):
            continue
        for static in (["-static"], []):
            r = subprocess.run([cc, "-O2", "-Wall", *static, "-o", out + ".tmp", src],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            if r.returncode == 0:
                os.replace(out + ".tmp", out)
                INJECTOR = out
                return
            errors.append(f"{cc} {' '.join(static)}: {r.stdout.strip()[-300:]}")
    raise RuntimeError("cannot compile tools/vm/uinput-touch.c: " + ("; ".join(errors) or "no C compiler"))


def tap(vm, x, y, what):
    """One tap at the normalized point (x, y) through uinput-touch's FIFO; returns when it was sent."""
    t = vm.now()
    line = f"tap {x:.4f} {y:.4f} 80\n"
    vm.write_file(f"{GUEST_TOOLS}/touch.fifo", line.encode(), log=line)
    vm.note(f"tap at ({x:.3f}, {y:.3f}): {what}")
    return t


def start_touchscreen(vm):
    """Uploads and starts uinput-touch; returns the player's "input device added" line once its
    libinput seat has the device (udev has initialised it)."""
    start = vm.now()
    vm.gexec(["mkdir", "-p", GUEST_TOOLS])
    code, _, err = vm.gexec(["modprobe", "uinput"])
    if code != 0:
        raise RuntimeError(f"modprobe uinput: {err.strip()}")
    vm.upload(INJECTOR, f"{GUEST_TOOLS}/uinput-touch")
    vm.q.agent.spawn([f"{GUEST_TOOLS}/uinput-touch", f"{GUEST_TOOLS}/touch.fifo", f"{GUEST_TOOLS}/touch.log"])
    end = time.monotonic() + 30
    while time.monotonic() < end:
        lines = [line for line in vm.journal("-o", "cat", "-n", "200").splitlines()
                 if "input device added" in line and "Vitrine test touchscreen" in line]
        if lines:
            vm.info(f"touch: {lines[-1].strip()} ({vm.now() - start:.1f} s after the upload began)")
            return
        time.sleep(0.5)
    try:
        log = vm.q.agent.read_file(f"{GUEST_TOOLS}/touch.log").decode("utf-8", "replace")
    except Exception as e:  # noqa: BLE001 -- the reason above matters more
        log = f"(no log: {e})"
    raise RuntimeError("the player never reported the uinput touchscreen (30 s); "
                       f"uinput-touch: {log.strip()[-200:]}")


def width(box):
    return box[2] - box[0] + 1


def run(vm):
    if vm.dev_9p:
        vm.info("touch: not run with --dev-9p (the harness has no udev and no journal; "
                "tools/vm/touch-test covers libinput there)")
        return
    start = vm.now()
    vm.windows["popup"] = (start, None)
    try:
        start_touchscreen(vm)
        steps(vm)
    finally:
        try:
            vm.gexec(["sh", "-c", f"echo quit > {GUEST_TOOLS}/touch.fifo"], timeout=10)
        except Exception:  # noqa: BLE001
            pass
        vm.windows["popup"] = (start, vm.now() + 2)


def popup(pred):
    return lambda s: s.cls == "popup" and s.info.get("panel") and pred(s.info)


def settled(vm, t_tap, pred):
    """The first matching shot after the tap, then one 1.5 s later (the animation over)."""
    s = vm.shots.wait(pred, t_tap, TIMEOUT)
    if not s:
        return None, None
    s2 = vm.shots.wait(pred, s.t + 1.5, TIMEOUT) or s
    vm.shots.keep(s, s2)
    return s, s2


def steps(vm):
    # 1. A tap on the video opens the menu (the manifest's tap action).
    t = tap(vm, 0.5, 0.5, "the video")
    first, menu = settled(vm, t, popup(lambda i: i.get("button")))
    if not menu:
        vm.result(NAMES[0], False, f"no popup panel with a button within {TIMEOUT:g} s of the tap "
                                   f"(last shot: {vm.shots.all()[-1].cls})")
        return
    m_box, b_box = menu.info["panel"], menu.info["button"]
    vm.result(NAMES[0], True, f"tap at (0.50, 0.50) -> menu panel {m_box} with button {b_box} on screen "
                              f"{first.t - t:.1f} s later ({menu.png}; <= {TIMEOUT:g} s)")
    # 2. A tap on its button stacks "info": a narrower panel on top of the dimmed menu.
    w, h = menu.size
    bx, by = (b_box[0] + b_box[2]) / 2 / w, (b_box[1] + b_box[3]) / 2 / h
    t = tap(vm, bx, by, "the menu's button")
    first, info = settled(vm, t, popup(lambda i: width(i["panel"]) < width(m_box) - 20))
    if not info:
        vm.result(NAMES[1], False, f"no narrower panel within {TIMEOUT:g} s of the tap on the button")
        return
    vm.result(NAMES[1], True, f"tap on the button at ({bx:.2f}, {by:.2f}) -> info panel {info.info['panel']} "
                              f"(width {width(info.info['panel'])} < menu {width(m_box)}) {first.t - t:.1f} s "
                              f"later ({info.png})")
    # 3. Taps on the dimming close the top popup, then the menu.
    t = tap(vm, 0.03, 0.5, "the dimming (closes info)")
    first, back = settled(vm, t, popup(lambda i: i.get("button") and abs(width(i["panel"]) - width(m_box)) <= 4))
    t2 = tap(vm, 0.03, 0.5, "the dimming (closes menu)") if back else None
    gone = vm.shots.wait(lambda s: s.cls in ("catalog", "catalog-transition"), t2, TIMEOUT) if back else None
    vm.shots.keep(gone)
    ok = bool(back and gone)
    vm.result(NAMES[2], ok,
              (f"tap on the dimming -> info closed, menu panel {back.info['panel']} again {first.t - t:.1f} s later "
               f"({back.png}); tap on the dimming -> no popup, {gone.cls} {gone.t - t2:.1f} s later ({gone.png})")
              if ok else
              ("the menu did not come back after a tap on the dimming" if not back else
               f"the menu was still on screen {TIMEOUT:g} s after the second tap on the dimming"))
