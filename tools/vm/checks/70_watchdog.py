"""watchdog: `pkill -STOP -x vitrine` freezes the player; systemd's watchdog must start a new main
process within WatchdogSec + 5 s (WatchdogSec from rootfs/**/vitrine.service), and the catalog
must play on screen again (lib/service.py: kill_and_recover)."""
from lib import service

NAMES = ("watchdog",)
PHASE = "live"
NEEDS = ("first-frame", "agent")


def run(vm):
    service.kill_and_recover(vm, "watchdog", "STOP")
