"""crash: `pkill -SEGV -x vitrine` kills the player; systemd must start a new main process within
WatchdogSec + 5 s, and the catalog must play on screen again (lib/service.py: kill_and_recover)."""
from lib import service

NAMES = ("crash",)
PHASE = "live"
NEEDS = ("first-frame", "agent")


def run(vm):
    service.kill_and_recover(vm, "crash", "SEGV")
