"""The one QEMU launcher of the test VM: a q35 machine under TCG (KVM is not usable on our
machines, see docs/testing.md section 2) with the devices a run asks for, its QMP socket and,
when asked, its guest agent.

    q = QEMU(out, gpu="bochs", res="640x400", usb=True, agent=True, net=True)
    q.kernel(vmlinux, initrd, cmdline)        # or q.disk(image) [+ q.uefi(code, vars)]
    q.share("/usr", "hostusr")                # 9p, read-only unless readonly=False
    q.guestfwd("10.0.2.100", 8443, [python3, "lib/guestfwd.py", port_file, log])  # net: a host service
    q.start(paused=True)                      # -S: QMP answers, the CPUs wait for q.qmp.cmd("cont")
    q.qmp.screendump(path); q.agent.exec([...]); q.plug_stick(img); q.unplug_stick()
    q.set_link(False)                         # the NIC's cable out (QMP set_link), and back in
    q.quit()                                  # QMP quit: the wav header is finalised

The network (net=True) is QEMU's user-mode stack (libslirp) with restrict=on: the guest gets
10.0.2.15/24 from its DHCP server (10.0.2.2; restricted, it offers no gateway and no DNS server)
and reaches nothing at all (not the host at 10.0.2.2, not the outside, not the DNS proxy at
10.0.2.3), except the guestfwd addresses: each TCP connection to one runs a host program with
the connection as its stdin/stdout (lib/guestfwd.py relays it to a port on the host's loopback).
IPv6 is off. The NIC is virtio-net-pci (id nic0; the guest kernel's virtio_net module) without
its option ROM: nothing to load at boot, no PXE. tools/vm/net-test proves all of it.

Files in `out`: serial.log (the guest console, -serial file:), audio.wav (-audiodev wav, 48 kHz
s16 stereo: what the guest played), qemu.log (QEMU's stderr), qemu-cmd.txt (the command).
The sockets live in a short /tmp folder: unix socket paths are limited to 108 bytes.
Only the QEMU process this object started is ever killed, by its PID.
"""
import os
import shutil
import subprocess
import tempfile
import time

from . import qmp as qmp_client

GPU_DEVICE = {"virtio": "virtio-gpu-pci", "bochs": "bochs-display"}
NIC_ID = "nic0"
AUDIO_DEVICES = {"hda": ["-device", "intel-hda", "-device", "hda-output,audiodev=snd0"],
                 "ac97": ["-device", "AC97,audiodev=snd0"]}



def dbus_display_wanted(gpu):
    """Whether a run on `gpu` gets QEMU's D-Bus display: virtio-gpu, unless VITRINE_VM_DISPLAY_DBUS=0
    (the host then needs dbus-daemon and gdbus: Debian's dbus-daemon and libglib2.0-bin)."""
    return gpu == "virtio" and os.environ.get("VITRINE_VM_DISPLAY_DBUS", "1") not in ("", "0")

class QEMU:
    def __init__(self, out, gpu="virtio", res=None, audio="hda", mem="1024", smp="2",
                 usb=False, tablet=False, stick=None, agent=False, net=False, extra=()):
        """gpu: virtio | bochs | none; res: the preferred mode "WxH" (the device's xres/yres) or
        None for its default; audio: hda | ac97 | none; usb: a qemu-xhci controller (id xhci);
        tablet: QEMU's usb-tablet on it; stick: a raw image attached as a usb-storage stick at
        boot (hot-plug: plug_stick); agent: a virtio-serial port for qemu-guest-agent; net: a
        virtio-net NIC on QEMU's restricted user network (see the module's docstring; guestfwd()
        adds what the guest may reach)."""
        if gpu not in GPU_DEVICE and gpu != "none":
            raise ValueError(f"unknown gpu {gpu!r}")
        if audio not in AUDIO_DEVICES and audio != "none":
            raise ValueError(f"unknown audio {audio!r}")
        self.out, self.gpu, self.res, self.audio = out, gpu, res, audio
        self.mem, self.smp = str(mem), str(smp)
        self.usb, self.tablet, self.stick, self.agent_port = usb or tablet or bool(stick), tablet, stick, agent
        self.net, self.forwards = net, []
        self.extra = list(extra)
        self.boot, self.drive, self.shares, self.firmware = [], [], [], None
        self.serial = os.path.join(out, "serial.log")
        self.wav = os.path.join(out, "audio.wav")
        self.proc = self.qmp = self.agent = self.tmp = None
        self.dbus = self.dbus_address = None
        self.t0 = None
        self._log = None

    # ------------------------------------------------------------ how it boots
    def kernel(self, kernel, initrd, append):
        """Direct kernel boot: an ELF vmlinux boots through the PVH entry point, a bzImage as is."""
        self.boot = ["-kernel", kernel, "-initrd", initrd, "-append", append]

    def disk(self, image):
        """The disk image as a virtio disk, snapshot=on: the image stays pristine."""
        self.drive = ["-drive", f"file={image},if=virtio,format=raw,snapshot=on"]

    def uefi(self, code, vars_copy):
        """Firmware from OVMF (its code read-only, a writable copy of its variables) instead of -kernel."""
        self.firmware = ["-drive", f"if=pflash,format=raw,unit=0,readonly=on,file={code}",
                         "-drive", f"if=pflash,format=raw,unit=1,file={vars_copy}"]

    def share(self, host, tag, readonly=True):
        """A 9p share of the host folder `host` with mount tag `tag`."""
        self.shares += ["-virtfs", f"local,path={os.path.abspath(host)},mount_tag={tag},security_model=none"
                        + (",readonly=on" if readonly else "")]

    def guestfwd(self, ip, port, argv):
        """With net=True: each TCP connection the guest opens to ip:port (an address in 10.0.2.0/24
        that is not 10.0.2.2 or .3) runs argv on the host, its stdin/stdout (and stderr) being that
        connection (-netdev user,guestfwd=tcp:IP:PORT-cmd:ARGV). libslirp splits the command at
        spaces and QEMU's option parser at commas, so no argument may hold either."""
        for a in argv:
            if not a or " " in a or "," in a:
                raise ValueError(f"guestfwd: argument {a!r} is empty or holds a space or a comma")
        self.forwards.append((ip, int(port), list(argv)))

    # ------------------------------------------------------------ the command
    def command(self, sockets):
        q = ["qemu-system-x86_64", "-nodefaults", "-no-user-config", "-machine", "q35",
             "-accel", "tcg", "-cpu", "max", "-m", self.mem, "-smp", self.smp]
        q += self.drive + (self.firmware or self.boot) + self.shares
        q += ["-vga", "none"]
        if self.gpu != "none":
            dev = GPU_DEVICE[self.gpu] + ",id=gpu0"  # the id QMP's screendump names a head by
            if self.res:
                w, h = self.res.lower().split("x")
                dev += f",xres={int(w)},yres={int(h)}"
            heads = os.environ.get("VITRINE_VM_GPU_HEADS", "2")
            if self.gpu == "virtio" and heads:
                # virtio-gpu's heads (connectors Virtual-1 … Virtual-N; two by default, for the
                # two-output checks); QEMU enables only the first until a UI turns another on, so
                # the others read disconnected until forced (checks/79_hotplug.py, 79_outputs.py).
                dev += f",max_outputs={int(heads)}"
            if self.gpu == "bochs" and self.firmware is None:
                # Without its option ROM: SeaBIOS would print its banner on the screen, which is
                # firmware, not the guest's console (direct kernel boot needs no video BIOS).
                dev += ",romfile="
            q += ["-device", dev]
        if self.audio != "none":
            q += ["-audiodev", f"wav,id=snd0,path={self.wav},out.frequency=48000"] + AUDIO_DEVICES[self.audio]
        if self.usb:
            q += ["-device", "qemu-xhci,id=xhci"]
        if self.tablet:
            q += ["-device", "usb-tablet,bus=xhci.0"]
        if self.stick:
            q += ["-drive", f"if=none,id=stick,file={os.path.abspath(self.stick)},format=raw",
                  "-device", "usb-storage,bus=xhci.0,drive=stick,removable=on"]
        if self.net:
            netdev = ["user", "id=net0", "restrict=on", "ipv6=off"]
            netdev += [f"guestfwd=tcp:{ip}:{port}-cmd:{' '.join(argv)}" for ip, port, argv in self.forwards]
            q += ["-netdev", ",".join(netdev), "-device", f"virtio-net-pci,netdev=net0,id={NIC_ID},romfile="]
        if self.agent_port:
            q += ["-chardev", f"socket,id=qga0,path={sockets}/qga.sock,server=on,wait=off",
                  "-device", "virtio-serial-pci",
                  "-device", "virtserialport,chardev=qga0,name=org.qemu.guest_agent.0"]
        q += ["-qmp", f"unix:{sockets}/qmp.sock,server=on,wait=off",
              "-serial", f"file:{self.serial}", "-monitor", "none", "-display", self.display(sockets), "-no-reboot"]
        return q + self.extra

    def display(self, sockets):
        """On virtio-gpu, QEMU's D-Bus display on a private bus in `sockets` (`dbus_address`), so a
        check can play the monitor: `set_ui_info` (a size of 0 turns a virtio-gpu head off, as a TV
        switched off; the guest sees a real hot-plug). `none` on other GPUs, and with
        VITRINE_VM_DISPLAY_DBUS=0."""
        if not dbus_display_wanted(self.gpu):
            return "none"
        self.dbus_address = f"unix:path={sockets}/dbus.sock"
        return f"dbus,addr={self.dbus_address}"

    def set_ui_info(self, width, height, console=0):
        """org.qemu.Display1.Console.SetUIInfo on the D-Bus display (width_mm 160, height_mm 90,
        xoff 0, yoff 0, width, height): the monitor's size, as a UI window's; 0x0 disables a
        virtio-gpu head.
        Returns gdbus's (exit code, output)."""
        if not self.dbus_address:
            raise RuntimeError("no D-Bus display (virtio-gpu only; VITRINE_VM_DISPLAY_DBUS=0 turns it off)")
        argv = ["gdbus", "call", "--address", self.dbus_address, "--dest", "org.qemu",
                "--object-path", f"/org/qemu/Display1/Console_{console}",
                "--method", "org.qemu.Display1.Console.SetUIInfo",
                # Nonzero millimetres: QEMU ignores a UI info equal to the one it holds, and the
                # one it starts with is all zeros (so a first 0x0 would change nothing).
                "160", "90", "0", "0", str(int(width)), str(int(height))]
        r = subprocess.run(argv, capture_output=True, text=True, timeout=20)
        return r.returncode, (r.stdout + r.stderr).strip()

    # ------------------------------------------------------------ the process
    def start(self, paused=False):
        """Starts QEMU (with -S when paused) and connects QMP within 30 s; the guest agent's client
        is ready (its sync() waits for the agent in the guest). Returns the command."""
        os.makedirs(self.out, exist_ok=True)
        self.tmp = tempfile.mkdtemp(prefix="vitrine-vm-")
        q = self.command(self.tmp) + (["-S"] if paused else [])
        if self.dbus_address:
            # A private bus for the D-Bus display (QEMU connects to it as a client at start).
            self.dbus = subprocess.Popen(["dbus-daemon", "--session", "--nofork", "--nopidfile",
                                          f"--address={self.dbus_address}"],
                                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            end = time.monotonic() + 10
            while not os.path.exists(self.dbus_address.split("=", 1)[1]) and time.monotonic() < end:
                time.sleep(0.05)
        with open(os.path.join(self.out, "qemu-cmd.txt"), "w") as f:
            f.write(" ".join(q) + "\n")
        self._log = open(os.path.join(self.out, "qemu.log"), "wb")
        self.t0 = time.monotonic()
        self.proc = subprocess.Popen(q, stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT)
        self.qmp = qmp_client.QMP(f"{self.tmp}/qmp.sock", time.monotonic() + 30, self.alive)
        if self.agent_port:
            self.agent = qmp_client.GuestAgent(f"{self.tmp}/qga.sock")
        return q

    def now(self):
        """Seconds since QEMU started."""
        return time.monotonic() - self.t0

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def wait(self, timeout):
        """Waits for QEMU to exit by itself; True when it did."""
        try:
            self.proc.wait(timeout)
            return True
        except subprocess.TimeoutExpired:
            return False

    def quit(self, timeout=20):
        """QMP quit (a clean exit finalises the wav header), then waits; kills QEMU if it hangs.
        Returns False when it had to be killed."""
        clean = True
        if self.agent:
            self.agent.close()
        if self.alive():
            try:
                self.qmp.cmd("quit")
            except Exception:  # noqa: BLE001 -- QEMU may be exiting already
                pass
            if not self.wait(timeout):
                clean = False
                self.kill()
        self.close()
        return clean

    def kill(self):
        """SIGKILL to the QEMU this object started (by its PID), if it still runs."""
        if self.alive():
            self.proc.kill()
            self.wait(5)

    def close(self):
        """Closes the sockets and removes their folder (QEMU should be gone); ends the D-Bus display's
        bus daemon this object started, by its PID."""
        if self.dbus is not None and self.dbus.poll() is None:
            self.dbus.terminate()
            try:
                self.dbus.wait(5)
            except subprocess.TimeoutExpired:
                self.dbus.kill()
        if self.qmp:
            self.qmp.close()
        if self.agent:
            self.agent.close()
        if self._log:
            self._log.close()
            self._log = None
        if self.tmp:
            shutil.rmtree(self.tmp, ignore_errors=True)
            self.tmp = None

    # ------------------------------------------------------------ devices at run time
    def plug_stick(self, image, id="stick"):
        """Hot-plugs `image` (raw) as a usb-storage stick on the xHCI bus: QMP blockdev-add +
        device_add. It appears in the guest as /dev/sdX."""
        self.qmp.cmd("blockdev-add", **{"driver": "raw", "node-name": f"{id}0",
                                        "file": {"driver": "file", "filename": image}})
        self.qmp.cmd("device_add", driver="usb-storage", id=id, drive=f"{id}0", bus="xhci.0", removable=True)

    def unplug_stick(self, id="stick"):
        """Pulls the stick: QMP device_del (the guest sees the unplug at once)."""
        self.qmp.cmd("device_del", id=id)

    def forget_stick(self, id="stick"):
        """Drops the stick's block node after the unplug; False while the device still holds it."""
        try:
            self.qmp.cmd("blockdev-del", **{"node-name": f"{id}0"})
            return True
        except qmp_client.QMPError:
            return False

    def set_link(self, up):
        """The NIC's link (QMP set_link): down is a cable pulled (the guest sees no carrier), up
        plugged in again. Works while the CPUs are stopped (-S), so a boot can start without one."""
        self.qmp.cmd("set_link", name=NIC_ID, up=bool(up))

    def tablet_tap(self, x, y, hold=0.08):
        """A tap on QEMU's usb-tablet at the normalized point (x, y): QMP input-send-event with
        absolute axes (0-32767) and the left button down, then up after `hold` seconds."""
        pos = [{"type": "abs", "data": {"axis": axis, "value": int(v * 32767)}} for axis, v in (("x", x), ("y", y))]
        self.qmp.cmd("input-send-event", events=pos + [{"type": "btn", "data": {"down": True, "button": "left"}}])
        time.sleep(hold)
        self.qmp.cmd("input-send-event", events=[{"type": "btn", "data": {"down": False, "button": "left"}}])
