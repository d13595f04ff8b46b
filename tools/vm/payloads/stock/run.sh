#!/bin/sh
# Stock-tool payload: modetest sets the preferred mode with its test pattern on
# /dev/dri/card0 (virtio-gpu or bochs), the host takes a screendump; then aplay plays
# tone.wav (put there by tools/vm/selftest) on the first hardware card.
# Results: /payload/out/{drm.txt,alsa.txt,mode.txt}, screendump modetest.ppm (host side).
set -u
mkdir -p /payload/out
O=/payload/out
t() { read -r u _ < /proc/uptime; echo "[$u] $*"; }
fail=0

t "drm: $(cat /sys/class/drm/card0/device/uevent 2>/dev/null | grep DRIVER)"
modetest -D /dev/dri/card0 -c -e -p > $O/drm.txt 2>&1 || { t "modetest -c failed"; fail=1; }
# First connected connector, its preferred mode, the first CRTC.
conn=$(awk '$3 == "connected" { print $1; exit }' $O/drm.txt)
cname=$(awk '$3 == "connected" { print $4; exit }' $O/drm.txt)
mode=$(awk '/type: preferred/ { print $2; exit }' $O/drm.txt)
[ -n "$mode" ] || mode=$(awk '/^  #0 / { print $2; exit }' $O/drm.txt)
crtc=$(awk '/^CRTCs:/ { getline; getline; print $1; exit }' $O/drm.txt)
echo "connector=$conn name=$cname crtc=$crtc mode=$mode" > $O/mode.txt
t "$(cat $O/mode.txt)"
awk '/^  #[0-9]+ / { printf "%s@%s ", $2, $3 } END { print "" }' $O/drm.txt | head -c 600
echo

# modetest waits for Enter after the mode set; a pipe that stays open keeps it up.
sleep 60 | modetest -D /dev/dri/card0 -s "$conn@$crtc:$mode" > $O/modetest.log 2>&1 &
mt=$!
sleep 3
/vm/shot modetest || fail=1
t "screendump taken"
sleep ${HOLD:-0}
kill $mt 2>/dev/null
wait $mt 2>/dev/null
cat $O/modetest.log

# ALSA
{ aplay -l; echo; amixer -c 0 scontents; } > $O/alsa.txt 2>&1
grep '^card' $O/alsa.txt
amixer -q -c 0 sset Master 100% unmute 2>/dev/null
if [ -f tone.wav ]; then
    t "aplay start"
    aplay -D plughw:0,0 tone.wav || fail=1
    t "aplay end"
fi
exit $fail
