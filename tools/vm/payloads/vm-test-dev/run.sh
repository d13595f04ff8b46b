#!/bin/sh
# Development stand-in for the Vitrine disk image (tools/vm-test --dev-9p): the busybox/9p
# harness with the host's release binary, qemu-ga on the virtio-serial port, and fakesd.py,
# a small supervisor that mimics systemd's Type=notify + WatchdogSec + Restart=always for
# vitrine.service. bin/systemctl and bin/journalctl are shims that talk to it.
# tools/vm-test copies the binary to ./vitrine and the catalog to ./catalog, and writes the
# watchdog interval to ./watchdog-sec. It never ends: vm-test stops QEMU with QMP quit.
export PATH=/payload/bin:$PATH
amixer -q -c 0 sset Master 100% unmute 2>/dev/null
port=""
for d in /sys/class/virtio-ports/*; do
    [ "$(cat "$d/name" 2>/dev/null)" = org.qemu.guest_agent.0 ] && port=/dev/$(basename "$d")
done
[ -n "$port" ] || { echo "run.sh: no virtio-serial port org.qemu.guest_agent.0"; exit 1; }
mkdir -p /run/fakesd /var/run
qemu-ga -m virtio-serial -p "$port" -t /run > /run/fakesd/qemu-ga.log 2>&1 &
exec python3 /payload/fakesd.py serve "$(cat /payload/watchdog-sec)" -- \
    /payload/vitrine run --catalog /payload/catalog --output drm
