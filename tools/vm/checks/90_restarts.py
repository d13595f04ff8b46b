"""restarts: every exit of the player's main process must be one the test caused (the watchdog
and crash checks' signals, within their windows, or the clean stop). The evidence is systemd's
own lines in journal-vitrine.txt; the player's error lines are reported as info."""
from lib import journal

NAMES = ("restarts",)
PHASE = "after"
NEEDS = ("journal",)


def run(vm):
    events, errors = journal.service_events(vm.saved_journal())
    exits = [(t, m) for t, m in events if m.startswith("Main process exited")]

    def cause(t):  # the latest of the test's actions before t, if t is within its window
        if vm.g_stop is not None and t >= vm.g_stop - 1:
            return "stop"
        for name, g, limit in reversed(vm.signals):
            if g - 1 <= t:
                return name if t <= g + limit + 5 else None
        return None

    unexpected = [(t, m) for t, m in exits if cause(t) is None]
    ours = ", ".join(f"{cause(t)} at {t:.1f} s ({m.split(', ', 1)[-1]})" for t, m in exits if cause(t))
    if errors:
        seen = []
        for t, m in errors:
            if m not in [x for _, x in seen]:
                seen.append((t, m))
        vm.info("player errors in the journal: " + "; ".join(f"[{t:.1f}] {m}" for t, m in seen[:5])
                + (f" (+{len(seen) - 5} more)" if len(seen) > 5 else ""))
    if unexpected:
        ev = [f"[{t:.1f}] {m}" for t, m in events if any(abs(t - u) < 3 for u, _ in unexpected)]
        vm.result("restarts", False, f"{len(unexpected)} exit(s) of the player that the test did not cause: "
                                     + "; ".join(ev) + f" (guest uptime; the test's: {ours or 'none'}; "
                                     "journal-vitrine.txt)")
    else:
        restarts = vm.final_nrestarts if vm.final_nrestarts is not None else "?"
        vm.result("restarts", True, f"no restart but the test's: {ours or 'none'} (NRestarts {restarts} before the stop)")
