"""sound-gone: the sound card going away under the playing service and coming back, as HDMI audio
does with its screen (issue #15: HDMI audio that vanished with the screen is reopened). The VM's
sound card is HDA analog and stays when the screen goes, so the check takes the card away itself:
the guest's driver is unbound from the card's PCI device (sysfs `unbind`: the kernel's
snd_card_disconnect, after which every write to an open PCM fails, as an HDMI PCM's does when its
sink goes: EIO through alsa-lib's default PCM here, ENODEV on a hw PCM), and GONE_S later bound again (`bind`: a new card 0, probed anew).

  sound-gone   while unbound: the player logs "audio write failed" and "sound device lost", the
               same MainPID plays on (no restart, NRestarts unchanged) and the screen shows the
               catalog; after the bind: "audio device opened" within REOPEN_S of it (the player
               tries every 5 s; the HDA probe under TCG takes a few seconds), and the card's PCM
               substream RUNNING with the player as its owner (/proc/asound/card0/pcm0p/sub0/status).
               Then SETTLE_S for the sound check, which reads the last 3 s before the clean stop.
"""
import time

from lib import service
from lib.journal import lines_since

NAMES = ("sound-gone",)
PHASE = "live"
NEEDS = ("first-frame", "agent")
GONE_S = 8.0      # the card away this long
REOPEN_S = 15.0   # "audio device opened" after the bind
SETTLE_S = 8.0


def uptime(vm):
    _, out, _ = vm.gexec(["cat", "/proc/uptime"], quiet=True)
    return float(out.split()[0])


def monotonic(line):
    return float(line.split("]", 1)[0].strip("[ "))


def run(vm):
    if vm.dev_9p:
        vm.info("sound-gone: not run with --dev-9p")
        return
    st0 = service.wait_active(vm)
    if st0.get("ActiveState") != "active":
        vm.result("sound-gone", False, f"vitrine.service is not active before the test: {st0}")
        return
    _, out, _ = vm.gexec(["sh", "-c", "d=$(readlink -f /sys/class/sound/card0/device); "
                                      'echo "${d##*/} $(basename $(readlink -f $d/driver))"'], quiet=True)
    try:
        device, driver = out.split()
    except ValueError:
        vm.result("sound-gone", False, f"no sound card 0 with a driver in the guest: {out.strip()!r}")
        return
    sysfs = f"/sys/bus/pci/drivers/{driver}"
    g0 = uptime(vm)
    code, _, err = vm.gexec(["sh", "-c", f"echo {device} > {sysfs}/unbind"])
    if code != 0:
        vm.result("sound-gone", False, f"echo {device} > {sysfs}/unbind: exit {code} {err.strip()}")
        return
    vm.note(f"sound-gone: {driver} unbound from {device}")
    try:
        time.sleep(GONE_S)
        failed = lines_since(vm, g0, "audio write failed")
        lost = lines_since(vm, g0, "sound device lost")
        st1 = service.show(vm)
        shot = vm.shots.take("sound-gone")
        cards = vm.gexec(["cat", "/proc/asound/cards"], quiet=True)[1].strip()
    finally:
        g1 = uptime(vm)
        code, _, err = vm.gexec(["sh", "-c", f"echo {device} > {sysfs}/bind"])
        vm.note(f"sound-gone: {driver} bound to {device} again (exit {code} {err.strip()})")
    opened = []
    end = time.monotonic() + REOPEN_S + 5
    while time.monotonic() < end and not opened:
        opened = lines_since(vm, g1, "audio device opened")
        if not opened:
            time.sleep(0.5)
    reopen_s = monotonic(opened[0]) - g1 if opened else None
    _, pcm, _ = vm.gexec(["sh", "-c", "cat /proc/asound/card0/pcm0p/sub0/status 2>&1"], quiet=True)
    st2 = service.show(vm)
    fields = {k.strip(): v.strip() for k, v in (line.split(":", 1) for line in pcm.splitlines() if ":" in line)}
    state, owner = fields.get("state", ""), fields.get("owner_pid", "")
    steady = st1["MainPID"] == st0["MainPID"] == st2["MainPID"] and st1["NRestarts"] == st0["NRestarts"] == st2["NRestarts"]
    on_screen = shot.colour in service.CATALOG_COLOURS and shot.cls.startswith("catalog")
    ok = (bool(failed) and bool(lost) and steady and on_screen and reopen_s is not None and reopen_s <= REOPEN_S
          and state == "RUNNING" and owner == str(st2["MainPID"]))
    said = (failed[0].split("] ", 1)[-1] if failed else "no 'audio write failed' line")
    vm.result("sound-gone", ok,
              f"{driver} unbound from {device} for {g1 - g0:.1f} s (/proc/asound/cards then: {cards[:60]!r}): "
              f"{said[:160]!r}; {'sound device lost logged' if lost else 'no sound device lost line'}; "
              f"MainPID {st0['MainPID']}->{st1['MainPID']}->{st2['MainPID']}, NRestarts {st0['NRestarts']}->{st2['NRestarts']}, "
              f"screen {shot.cls} {shot.colour}; bound again: "
              + (f"'audio device opened' {reopen_s:.1f} s after the bind (limit {REOPEN_S:g} s)" if opened
                 else f"no 'audio device opened' within {REOPEN_S + 5:g} s")
              + f"; card0 pcm0p sub0 state {state or pcm.strip()[:60]!r}, owner_pid {owner or '-'}")
    time.sleep(SETTLE_S)
