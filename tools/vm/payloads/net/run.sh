#!/bin/sh
# Guest payload of tools/vm/net-test: QEMU's restricted user network with stock tools. Loads
# virtio_net (from the kernel's modules, shared as /kmods), finds no carrier while the host holds
# the link down, asks for it (.vm/link-up-req), then gets an address with busybox udhcpc,
# then fetches from the test's nginx through the guestfwd address with curl and the test CA, and
# tries the host's loopback port directly (10.0.2.2), which restrict=on must refuse. It writes
# key=value lines to /payload/results.txt; tools/vm/net-test judges them.
. /payload/net.env   # HOST_PORT, URL (https://10.0.2.100:8443/catalog/), SHA256 of media/blob.bin
R=/payload/results.txt
: > $R
say() { v=$(printf '%s' "$2" | tr '\n' ' '); echo "$1=$v" >> $R; echo "$1=$v"; }
up() { read -r u _ < /proc/uptime; echo "$u"; }

for m in net/core/failover.ko drivers/net/net_failover.ko drivers/net/virtio_net.ko; do
    insmod /kmods/$m || { say insmod "failed:$m"; exit 2; }
done
say insmod ok
i=0
while [ ! -e /sys/class/net/eth0 ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
[ -e /sys/class/net/eth0 ] || { say nic none; exit 2; }
say nic "$(cat /sys/class/net/eth0/address)"
ip link set eth0 up
# The host set the link down (QMP set_link) before the driver loaded: no carrier, no lease.
sleep 1
say carrier_down "$(cat /sys/class/net/eth0/carrier 2>&1)"
busybox udhcpc -i eth0 -f -q -n -t 2 -T 1 -s /payload/udhcpc.script > /payload/udhcpc-down.log 2>&1
say dhcp_down_exit $?
# Ask the host for the cable (it answers by creating .vm/link-up-done), then wait for the carrier.
: > /payload/.vm/.link-up-req.$$ && mv /payload/.vm/.link-up-req.$$ /payload/.vm/link-up-req
i=0
while [ ! -e /payload/.vm/link-up-done ] && [ $i -lt 100 ]; do sleep 0.2; i=$((i + 1)); done
i=0
while [ "$(cat /sys/class/net/eth0/carrier 2>/dev/null)" != 1 ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
say carrier_up "$(cat /sys/class/net/eth0/carrier 2>&1)"
t0=$(up)
busybox udhcpc -i eth0 -f -q -n -t 10 -T 1 -s /payload/udhcpc.script > /payload/udhcpc.log 2>&1
say dhcp_exit $?
say dhcp_s "$(echo "$(up) $t0" | awk '{printf "%.2f", $1 - $2}')"
[ -f /tmp/lease ] && cat /tmp/lease >> $R
say addr "$(ip -4 -o addr show dev eth0 | awk '{print $4}')"
say route "$(ip -4 route show default | head -n 1)"

# HTTPS through the guestfwd relay, verified with the test CA (the certificate is for IP 10.0.2.100).
say manifest "$(curl -sS --max-time 20 --cacert /payload/ca.pem -o /tmp/manifest.json -w '%{http_code} %{size_download}' "${URL}manifest.json" 2>&1)"
say blob "$(curl -sS --max-time 60 --cacert /payload/ca.pem -o /tmp/blob.bin -w '%{http_code} %{size_download}' "${URL}media/blob.bin" 2>&1)"
say blob_sha256_ok "$([ "$(sha256sum /tmp/blob.bin | cut -d' ' -f1)" = "$SHA256" ] && echo yes || echo no)"
etag=$(curl -sS --max-time 20 --cacert /payload/ca.pem -o /dev/null -w '%header{etag}' "${URL}manifest.json")
say conditional "$(curl -sS --max-time 20 --cacert /payload/ca.pem -H "If-None-Match: $etag" -o /dev/null -w '%{http_code} %{size_download}' "${URL}manifest.json" 2>&1)"
# Three connections at once: the relay runs once per connection.
for n in 1 2 3; do
    curl -sS --max-time 60 --cacert /payload/ca.pem -o /tmp/p$n -w '%{http_code}' "${URL}media/blob.bin" > /tmp/p$n.code 2>&1 &
done
wait
say parallel "$(cat /tmp/p1.code) $(cat /tmp/p2.code) $(cat /tmp/p3.code)"
# A wrong name for the certificate: refused by curl's verification (exit 60), not by the network.
say wrong_name "$(curl -sS --max-time 20 --cacert /payload/ca.pem --resolve vitrine.invalid:8443:10.0.2.100 -o /dev/null "https://vitrine.invalid:8443/catalog/manifest.json" 2>&1; echo "exit $?")"
# restrict=on: the host itself (10.0.2.2 is the host's loopback in QEMU's user network) is not reachable.
say host_direct "$(curl -sS --max-time 10 -k -o /dev/null "https://10.0.2.2:$HOST_PORT/catalog/manifest.json" 2>&1; echo "exit $?")"
say done yes
