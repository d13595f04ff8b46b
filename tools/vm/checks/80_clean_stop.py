"""clean-stop: `systemctl stop vitrine`, then 3 screendumps 2-4 s later: black, no scanout, or
anything but a frame seen while playing (never the frozen last frame).

It runs last among the live checks: the player has played at least STEADY_S seconds since its
last restart first, because the sound check analyses the end of the wav, which is this stop."""
import time

from lib import service

NAMES = ("clean-stop",)
PHASE = "live"
NEEDS = ("first-frame", "agent")
STEADY_S = 10.0


def run(vm):
    st = service.wait_active(vm)
    wait = STEADY_S - (vm.now() - (vm.ready_host if vm.ready_host is not None else -1e9))
    if wait > 0:
        vm.note(f"letting the player run {wait:.1f} s more before the stop ({STEADY_S:g} s of steady playback)")
        time.sleep(wait)
    before = vm.shots.wait(lambda s: s.colour in service.CATALOG_COLOURS, vm.now(), 30)
    if not before or st.get("ActiveState") != "active":
        vm.result("clean-stop", False, f"the catalog is not playing before the stop ({st.get('ActiveState')})")
        return
    vm.shots.keep(before)
    frames = {s.digest for s in vm.shots.all() if s.colour in service.CATALOG_COLOURS}
    vm.final_nrestarts = st["NRestarts"]
    t = vm.now()
    code, out, err = vm.gexec(["sh", "-c", 'read b _ < /proc/uptime; echo "$b"; exec systemctl stop vitrine'],
                              timeout=150)
    t_stop = vm.now()
    try:
        vm.g_stop = float(out.split()[0])
    except (IndexError, ValueError):
        pass
    st = service.show(vm)
    vm.note(f"systemctl stop vitrine: exit {code} after {t_stop - t:.1f} s; "
            f"{st.get('ActiveState')}/{st.get('SubState')} Result={st.get('Result')}")
    time.sleep(2)
    after = []
    for _ in range(3):
        after.append(vm.shots.take("after-stop"))
        time.sleep(0.7)
    vm.shots.keep(*after)
    s = after[-1]
    black = s.cls in ("black", "inactive")
    frozen = s.colour in service.CATALOG_COLOURS or s.digest in frames
    same = sum(1 for x in after if x.digest in frames)
    desc = {"black": "black", "inactive": "no scanout (QEMU: display not active)"}.get(
        s.cls, f"{s.cls}, centre {s.info.get('centre')}")
    ok = code == 0 and st.get("ActiveState") in ("inactive", "failed") and (black or not frozen)
    vm.result("clean-stop", ok,
              f"stop took {t_stop - t:.1f} s (exit {code}, {st.get('ActiveState')}); "
              f"{s.t - t_stop:.1f} s after it the screen is {desc}"
              f"{'' if not frozen else ' = the frozen last frame'}; "
              f"{same}/{len(after)} post-stop screendumps equal a catalog frame "
              f"(wanted: black or the console's previous state, never a frozen frame)")
