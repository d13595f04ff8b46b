"""Host-side pieces of the Vitrine test VM (Python standard library only), shared by
tools/vm/run, tools/vm/check.py, tools/vm-test and its checks (tools/vm/checks/):

  qemu.py       the one QEMU launcher: TCG q35, GPU, audio into the wav audiodev, xHCI, USB
                tablet and stick (also hot-plugged), 9p shares, serial, QMP, guest agent
  qmp.py        the QMP and qemu-guest-agent clients
  harness.py    the busybox/9p harness of tools/vm/prepare: boot it, run a payload (tools/vm/run)
  image.py      the disk image of tools/mkimage, pinned; its PVH kernel; OVMF; host packages
  appliance.py  one boot of the image for tools/vm-test's checks (the `vm` they get)
  shots.py      the screendump recorder: every screendump of a run, classified, waited on
  screen.py     screendumps: PPM/PNG, pixel probes, letterbox, the screen classifier
  wav.py        what the guest played: tone, gaps and clips of QEMU's wav
  journal.py    the guest journal's player and systemd lines
  service.py    vitrine.service in the guest: state, WatchdogSec, kill and recover
"""
