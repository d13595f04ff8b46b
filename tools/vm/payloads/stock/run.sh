#!/bin/sh
# Stock-tool payload (tools/vm/selftest runs it): modetest sets the preferred mode with
# its SMPTE test pattern on card0 (virtio-gpu or bochs) and asks the host for a
# screendump (-> modetest.ppm); then aplay plays tone.wav (written by selftest) on card 0.
# Results: /payload/out/{drm.txt,mode.txt,modetest.log,alsa.txt}.
set -u
O=/payload/out
mkdir -p $O
t() { read -r u _ < /proc/uptime; echo "[$u] $*"; }
fail=0

# modetest -M <drm driver name>: without -M it tries ~16 other drivers first, ~1 s each
# under TCG. The names are the DRM driver names, not the module names.
case "${VITRINE_VM_GPU:-virtio}" in
    virtio) drv=virtio_gpu ;;
    bochs) drv=bochs-drm ;;
    *) drv="" ;;
esac
if [ -n "$drv" ]; then
    t "drm: card0 module $(basename "$(readlink /sys/class/drm/card0/device/driver/module)"), modetest -M $drv"
    modetest -M $drv -c -e -p > $O/drm.txt 2>&1 || { t "modetest -c failed"; fail=1; }
    # the first connected connector, its preferred mode (else its first), the first CRTC
    conn=$(awk '$3 == "connected" { print $1; exit }' $O/drm.txt)
    cname=$(awk '$3 == "connected" { print $4; exit }' $O/drm.txt)
    mode=$(awk '/type: preferred/ { print $2; exit }' $O/drm.txt)
    [ -n "$mode" ] || mode=$(awk '/^  #0 / { print $2; exit }' $O/drm.txt)
    crtc=$(awk '/^CRTCs:/ { getline; getline; print $1; exit }' $O/drm.txt)
    nmodes=$(awk '$3 == "connected" { print $6; exit }' $O/drm.txt)
    echo "connector=$conn name=$cname crtc=$crtc mode=$mode modes=$nmodes" > $O/mode.txt
    t "$(cat $O/mode.txt)"
    echo "modes: $(awk '/^  #[0-9]+ / && !seen[$0]++ { printf "%s@%s ", $2, $3 }' $O/drm.txt)" | cut -c1-400

    # modetest -s holds the mode until Enter: a fifo kept open for writing on fd 3.
    # stdbuf: its stdout is a file, so "setting mode" would otherwise come only at exit.
    mkfifo /tmp/modetest.in
    stdbuf -oL modetest -M $drv -s "$conn@$crtc:$mode" < /tmp/modetest.in > $O/modetest.log 2>&1 &
    mt=$!
    exec 3> /tmp/modetest.in
    # Every exec costs 0.1-0.2 s in the guest under TCG, so poll gently.
    i=0
    until grep -q "setting mode" $O/modetest.log || [ $i -ge 30 ] || ! kill -0 $mt 2>/dev/null; do
        sleep 0.3; i=$((i + 1))
    done
    sleep ${SETTLE:-1}
    t "mode set; screendump"
    /vm/shot modetest || fail=1
    sleep ${HOLD:-0}
    echo >&3
    exec 3>&-
    wait $mt || { t "modetest exit $?"; fail=1; }
    grep -v "^trying to open" $O/modetest.log
fi

if [ "${VITRINE_VM_AUDIO:-none}" != none ]; then
    { aplay -l; echo; amixer -c 0 scontents; } > $O/alsa.txt 2>&1
    grep '^card' $O/alsa.txt
    # The HDA codec's Master starts at 0 % and muted (nothing restores a mixer state here).
    amixer -q -c 0 sset Master 100% unmute 2>/dev/null
    amixer -q -c 0 sset PCM 100% unmute 2>/dev/null
    t "aplay start"
    aplay -D plughw:0,0 tone.wav || fail=1
    t "aplay end"
fi
exit $fail
