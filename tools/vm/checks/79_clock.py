"""clock-chrony, clock-status: the box's clock (docs/sync.md, "Clocks").

  clock-chrony    vitrine-chrony-config.service ran (active, Result=success) and wrote
                  /run/vitrine-chrony/vitrine.conf from the image's config, which has no `clock`:
                  Debian's `pool 2.debian.pool.ntp.org iburst`, no `allow`; chrony.service is
                  active with a running chronyd (its MainPID is a process named chronyd), started
                  after the oneshot (systemctl list-dependencies --after)
  clock-status    `vitrine ctl status` has a `clock` object read with adjtimex: `source`
                  "adjtimex", `synchronized` true or false (null would mean the read failed:
                  vitrine.service's seccomp filter refused it), maxErrorMs >= 0 and <= 16000 (the
                  kernel's bound). The guest has no NTP server to reach (no internet, no DNS), so
                  it is normally unsynchronized: the player then logged "the clock is not
                  synchronized" (its journal since boot), and plays on

Runs after the network check (which may restart the player with its update config) and before
clean-stop; it changes nothing in the guest.
"""
import json

NAMES = ("clock-chrony", "clock-status")
PHASE = "live"
NEEDS = ("first-frame", "agent")
FRAGMENT = "/run/vitrine-chrony/vitrine.conf"
POOL = "pool 2.debian.pool.ntp.org iburst"
MAX_ERROR_MS = 16000.0  # the kernel's NTP_PHASE_LIMIT


def props(vm, unit, names):
    _, out, _ = vm.gexec(["systemctl", "show", "-p", ",".join(names), unit], quiet=True)
    return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)


def run(vm):
    chrony(vm)
    status(vm)


def chrony(vm):
    oneshot = props(vm, "vitrine-chrony-config.service", ["ActiveState", "Result"])
    unit = props(vm, "chrony.service", ["ActiveState", "SubState", "MainPID"])
    code, fragment, _ = vm.gexec(["cat", FRAGMENT], quiet=True)
    lines = [x for x in fragment.splitlines() if x.strip() and not x.startswith("#")]
    pid = unit.get("MainPID", "0")
    _, comm, _ = vm.gexec(["cat", f"/proc/{pid}/comm"], quiet=True)
    _, after, _ = vm.gexec(["systemctl", "list-dependencies", "--after", "--plain", "--no-legend", "chrony.service"], quiet=True)
    ordered = "vitrine-chrony-config.service" in after
    vm.info(f"clock: {FRAGMENT}: {lines}; vitrine-chrony-config {oneshot}; chrony {unit} ({comm.strip()})")
    ok = (oneshot.get("ActiveState") == "active" and oneshot.get("Result") == "success" and code == 0
          and lines == [POOL] and unit.get("ActiveState") == "active" and comm.strip() == "chronyd" and ordered)
    vm.result(NAMES[0], ok,
              f"{FRAGMENT} holds {lines} (expected [{POOL!r}]); vitrine-chrony-config.service "
              f"{oneshot.get('ActiveState')}/{oneshot.get('Result')}; chrony.service {unit.get('ActiveState')}/"
              f"{unit.get('SubState')}, MainPID {pid} ({comm.strip() or 'no process'}); "
              f"ordered after the oneshot: {ordered}")


def status(vm):
    code, out, err = vm.gexec(["vitrine", "ctl", "--timeout", "30", "status"], timeout=60, quiet=True)
    try:
        clock = json.loads(out).get("clock") if code == 0 else None
    except ValueError:
        clock = None
    if not isinstance(clock, dict):
        vm.result(NAMES[1], False, f"vitrine ctl status: exit {code}, no clock object: {(out or err)[:300]}")
        return
    synced = clock.get("synchronized")
    max_error = clock.get("maxErrorMs")
    _, journal, _ = vm.gexec(["journalctl", "-b", "-u", "vitrine", "--no-pager", "-o", "cat"], quiet=True)
    warned = "the clock is not synchronized" in journal
    ok = (clock.get("source") == "adjtimex" and isinstance(synced, bool)
          and isinstance(max_error, (int, float)) and 0 <= max_error <= MAX_ERROR_MS
          and (synced or warned))
    vm.result(NAMES[1], ok,
              f"status clock {json.dumps(clock)}; "
              + ("the player logged that the clock is not synchronized" if warned else "no unsynchronized warning in the journal"))
