#!/bin/sh
# Guest payload of tools/vm/touch-test: starts udev, makes uinput touch, mouse and keyboard
# devices, and records what touch-probe (copied here as ./touch-probe) prints. scenarios.py says
# how; the host checks /payload/results.json.
[ -x /payload/touch-probe ] || { echo "run.sh: no /payload/touch-probe"; exit 2; }
[ -e /dev/uinput ] || { echo "run.sh: no /dev/uinput (is the uinput module loaded?)"; exit 2; }
exec /usr/bin/python3 -u /payload/scenarios.py
