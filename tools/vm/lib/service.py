"""vitrine.service in the guest, as systemd sees it: its state (`systemctl show`), its
WatchdogSec, and the kill-and-recover test that the watchdog and crash checks share.
"""
import glob
import os
import re
import time

from .image import ROOT

RESTART_SLACK = 5.0  # a restart must come within WatchdogSec + this
CATALOG_COLOURS = ("red", "green", "blue")  # the image's catalog, then the stick's (usb-* checks)
PROPERTIES = ("MainPID,NRestarts,ActiveState,SubState,WatchdogUSec,Result,"
              "ExecMainStartTimestampMonotonic,ActiveEnterTimestampMonotonic")


def systemd_seconds(v):
    """'10', '10s', '1min 30s', '500ms' -> seconds (systemd.time(7) spans)."""
    units = {"us": 1e-6, "usec": 1e-6, "ms": 1e-3, "msec": 1e-3, "s": 1, "sec": 1, "second": 1,
             "seconds": 1, "m": 60, "min": 60, "minute": 60, "minutes": 60, "h": 3600, "hr": 3600}
    total, found = 0.0, False
    for num, unit in re.findall(r"([\d.]+)\s*([a-z]*)", v.strip().lower()):
        total += float(num) * units.get(unit or "s", 1)
        found = True
    if not found:
        raise ValueError(f"not a time span: {v!r}")
    return total


def watchdog_from_rootfs():
    """(seconds, path) of WatchdogSec= in rootfs/**/vitrine.service, or (None, None)."""
    for path in sorted(glob.glob(os.path.join(ROOT, "rootfs", "**", "vitrine.service"), recursive=True)):
        for line in open(path, errors="replace"):
            m = re.match(r"\s*WatchdogSec\s*=\s*(\S.*?)\s*$", line)
            if m:
                return systemd_seconds(m.group(1)), os.path.relpath(path, ROOT)
    return None, None


def show(vm):
    """`systemctl show vitrine` as a dict; MainPID and NRestarts as ints."""
    _, out, _ = vm.gexec(["systemctl", "show", "vitrine", "-p", PROPERTIES])
    d = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
    d["MainPID"] = int(d.get("MainPID", "0") or 0)
    d["NRestarts"] = int(d.get("NRestarts", "0") or 0)
    return d


def wait_active(vm, timeout=120):
    """The service's state once it is active with a main process (or after timeout seconds)."""
    end = time.monotonic() + timeout
    while True:
        st = show(vm)
        if st.get("ActiveState") == "active" and st["MainPID"]:
            return st
        if time.monotonic() > end:
            return st
        time.sleep(1)


def kill_and_recover(vm, name, sig):
    """kill -<sig> the player; systemd must start a new main process within WatchdogSec + 5 s,
    and the catalog must play on screen again. The restart delay is measured in the guest's
    clock: /proc/uptime when the signal is sent, and the new process's
    ExecMainStartTimestampMonotonic (ActiveEnterTimestampMonotonic: READY=1). Records the signal
    in vm.signals (the restarts check) and the time it was back in vm.ready_host."""
    limit = vm.watchdog_s + RESTART_SLACK
    st = wait_active(vm)
    if st.get("ActiveState") != "active":
        vm.result(name, False, f"vitrine.service is not active before the test: {st}")
        return False
    pid0, n0 = st["MainPID"], st["NRestarts"]
    if name == "watchdog" and n0:
        vm.info(f"watchdog: the service had already restarted {n0} time(s) before the test "
                "(see journal-vitrine.txt)")
    # The guest's uptime right after the signal, read by the shell's builtin `read` (no
    # exec): guest-exec itself can take seconds under TCG, pkill alone 0.5-6 s.
    script = 'read b _ < /proc/uptime; {}; rc=$?; read a _ < /proc/uptime; echo "$b $a"; exit $rc'
    how = f"pkill -{sig} -x vitrine"
    code, out, err = vm.gexec(["sh", "-c", script.format(how)])
    if code != 0:
        vm.note(f"{how}: exit {code} {err.strip()}; falling back to kill -{sig} {pid0}")
        how = f"kill -{sig} {pid0}"
        code, out, err = vm.gexec(["sh", "-c", script.format(how)])
    t_sig = vm.now()
    g_before, g_sig = (float(v) for v in out.split()[:2])
    vm.signals.append((name, g_sig, limit))
    vm.note(f"{how} (MainPID {pid0}, NRestarts {n0}): sent between guest uptime {g_before:.2f} "
            f"and {g_sig:.2f} s; times below count from {g_sig:.2f} s")
    seen, st1, restart, ready = [], st, None, None
    end = time.monotonic() + limit + 60
    while time.monotonic() < end and vm.alive():
        st1 = show(vm)
        key = (st1.get("ActiveState"), st1.get("SubState"), st1["MainPID"])
        if not seen or seen[-1][1] != key:
            seen.append((round(vm.now() - t_sig, 1), key))
        if st1["MainPID"] not in (0, pid0) and restart is None:
            us = int(st1.get("ExecMainStartTimestampMonotonic", "0") or 0)
            restart = us / 1e6 - g_sig if us else vm.now() - t_sig
        if restart is not None and st1.get("ActiveState") == "active":
            us = int(st1.get("ActiveEnterTimestampMonotonic", "0") or 0)
            ready = us / 1e6 - g_sig if us else vm.now() - t_sig
            vm.ready_host = vm.now()
            break
        time.sleep(0.5)
    t_back = vm.now()
    trail = ", ".join(f"+{t}s {a}/{s} pid {p}" for t, (a, s, p) in seen)
    vm.info(f"{name}: service states seen after the signal (host clock): {trail}")
    if restart is None:
        vm.result(name, False, f"no new main process within {limit + 60:g} s of {how} "
                               f"(limit WatchdogSec+5 = {limit:g} s); states: {trail}")
        return False
    if ready is None:
        vm.result(name, False, f"restarted {restart:.1f} s after SIG{sig} but not active (READY=1) "
                               f"within {limit + 60:g} s; states: {trail}")
        return False
    # The screen: the catalog again, and playing (its colour changes), not a frozen frame.
    s1 = vm.shots.wait(lambda s: s.colour in CATALOG_COLOURS and s.cls.startswith("catalog"), t_back, 60)
    s2 = s1 and vm.shots.wait(lambda s: s.colour in CATALOG_COLOURS and s.colour != s1.colour, s1.t, 30)
    vm.shots.keep(s1)
    ok = restart <= limit and bool(s2)
    screen = (f"catalog on screen at +{s1.t - t_sig:.1f} s ({s1.colour}), playing "
              f"({s2.colour} at +{s2.t - t_sig:.1f} s)" if s2 else
              f"catalog {'shown at +%.1f s but not advancing' % (s1.t - t_sig) if s1 else 'not back on screen'}")
    vm.result(name, ok, f"restarted {restart:.1f} s after SIG{sig} (limit WatchdogSec+5 = {limit:g} s), "
                        f"ready (READY=1) at +{ready:.1f} s, {screen}; MainPID {pid0}->{st1['MainPID']}, "
                        f"NRestarts {n0}->{st1['NRestarts']}")
    return ok
