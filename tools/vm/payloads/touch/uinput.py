"""Virtual input devices through /dev/uinput: a multi-touch touchscreen and a mouse with keys.

Used by scenarios.py in the test VM (python3 comes from the host's /usr). Only the standard
library: the ioctl numbers are computed here, the structs packed with `struct`.
"""
import fcntl
import glob
import os
import struct
import time

# linux/input-event-codes.h
EV_SYN, EV_KEY, EV_REL, EV_ABS = 0x00, 0x01, 0x02, 0x03
SYN_REPORT = 0
KEY_ESC = 1
BTN_LEFT, BTN_RIGHT, BTN_TOUCH = 0x110, 0x111, 0x14A
REL_X, REL_Y = 0x00, 0x01
ABS_X, ABS_Y = 0x00, 0x01
ABS_MT_SLOT, ABS_MT_POSITION_X, ABS_MT_POSITION_Y, ABS_MT_TRACKING_ID = 0x2F, 0x35, 0x36, 0x39
INPUT_PROP_DIRECT = 0x01
BUS_VIRTUAL = 0x06


def _ioc(direction, nr, size):  # asm-generic/ioctl.h, type 'U' (UINPUT_IOCTL_BASE)
    return (direction << 30) | (size << 16) | (ord("U") << 8) | nr


_NONE, _WRITE, _READ = 0, 1, 2
UI_DEV_CREATE = _ioc(_NONE, 1, 0)
UI_DEV_DESTROY = _ioc(_NONE, 2, 0)
UI_DEV_SETUP = _ioc(_WRITE, 3, 92)      # struct uinput_setup: input_id (4 x u16), name[80], u32
UI_ABS_SETUP = _ioc(_WRITE, 4, 28)      # struct uinput_abs_setup: u16 code, pad, input_absinfo (6 x s32)
UI_SET_EVBIT = _ioc(_WRITE, 100, 4)
UI_SET_KEYBIT = _ioc(_WRITE, 101, 4)
UI_SET_RELBIT = _ioc(_WRITE, 102, 4)
UI_SET_ABSBIT = _ioc(_WRITE, 103, 4)
UI_SET_PROPBIT = _ioc(_WRITE, 110, 4)


def UI_GET_SYSNAME(length):
    return _ioc(_READ, 44, length)


class Device:
    """One uinput device; `close()` (or the end of the process) removes it."""

    def __init__(self, name, events, props=(), abs_axes=(), vendor=0x1209, product=0x7001):
        self.fd = os.open("/dev/uinput", os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        for ev_type, codes in events.items():
            fcntl.ioctl(self.fd, UI_SET_EVBIT, ev_type)
            bit = {EV_KEY: UI_SET_KEYBIT, EV_REL: UI_SET_RELBIT, EV_ABS: UI_SET_ABSBIT}.get(ev_type)
            for code in codes:
                fcntl.ioctl(self.fd, bit, code)
        for prop in props:
            fcntl.ioctl(self.fd, UI_SET_PROPBIT, prop)
        for code, minimum, maximum, resolution in abs_axes:
            fcntl.ioctl(self.fd, UI_ABS_SETUP, struct.pack("Hxxiiiiii", code, 0, minimum, maximum, 0, 0, resolution))
        fcntl.ioctl(self.fd, UI_DEV_SETUP, struct.pack("HHHH80sI", BUS_VIRTUAL, vendor, product, 1, name.encode(), 0))
        fcntl.ioctl(self.fd, UI_DEV_CREATE)
        self.created = time.monotonic()
        self.name = name
        buf = bytearray(64)
        fcntl.ioctl(self.fd, UI_GET_SYSNAME(len(buf)), buf)
        self.sysname = buf.split(b"\0", 1)[0].decode()        # input7
        self.node = None                                       # /dev/input/event3 (devtmpfs makes it)
        deadline = time.monotonic() + 5
        while self.node is None and time.monotonic() < deadline:
            found = glob.glob(f"/sys/devices/virtual/input/{self.sysname}/event*")
            if found and os.path.exists("/dev/input/" + os.path.basename(found[0])):
                self.node = "/dev/input/" + os.path.basename(found[0])
            else:
                time.sleep(0.01)

    def emit(self, *events):
        """Writes (type, code, value) triples, then SYN_REPORT. Returns the monotonic time."""
        data = b"".join(struct.pack("qqHHi", 0, 0, t, c, v) for t, c, v in events)
        data += struct.pack("qqHHi", 0, 0, EV_SYN, SYN_REPORT, 0)
        os.write(self.fd, data)
        return time.monotonic()

    def close(self):
        if self.fd is not None:
            fcntl.ioctl(self.fd, UI_DEV_DESTROY)
            os.close(self.fd)
            self.fd = None
            return time.monotonic()


class Touchscreen(Device):
    """A direct-touch multi-touch screen (protocol B, 10 slots), `width` x `height` units at
    `resolution` units per mm, so libinput_device_get_size reports (max - min) / resolution mm."""

    def __init__(self, name, width=3201, height=1801, resolution=10):
        self.width, self.height = width, height
        super().__init__(
            name,
            {EV_KEY: [BTN_TOUCH], EV_ABS: [ABS_X, ABS_Y, ABS_MT_SLOT, ABS_MT_POSITION_X, ABS_MT_POSITION_Y, ABS_MT_TRACKING_ID]},
            props=[INPUT_PROP_DIRECT],
            abs_axes=[(ABS_X, 0, width - 1, resolution), (ABS_Y, 0, height - 1, resolution),
                      (ABS_MT_SLOT, 0, 9, 0), (ABS_MT_TRACKING_ID, 0, 65535, 0),
                      (ABS_MT_POSITION_X, 0, width - 1, resolution), (ABS_MT_POSITION_Y, 0, height - 1, resolution)])
        self.tracking = 0

    def down(self, x, y, slot=0):
        self.tracking += 1
        return self.emit((EV_ABS, ABS_MT_SLOT, slot), (EV_ABS, ABS_MT_TRACKING_ID, self.tracking),
                         (EV_ABS, ABS_MT_POSITION_X, x), (EV_ABS, ABS_MT_POSITION_Y, y),
                         (EV_KEY, BTN_TOUCH, 1), (EV_ABS, ABS_X, x), (EV_ABS, ABS_Y, y))

    def move(self, x, y, slot=0):
        return self.emit((EV_ABS, ABS_MT_SLOT, slot), (EV_ABS, ABS_MT_POSITION_X, x), (EV_ABS, ABS_MT_POSITION_Y, y),
                         (EV_ABS, ABS_X, x), (EV_ABS, ABS_Y, y))

    def up(self, slot=0):
        return self.emit((EV_ABS, ABS_MT_SLOT, slot), (EV_ABS, ABS_MT_TRACKING_ID, -1), (EV_KEY, BTN_TOUCH, 0))


class Mouse(Device):
    """A relative mouse with two buttons."""

    def __init__(self, name):
        super().__init__(name, {EV_KEY: [BTN_LEFT, BTN_RIGHT], EV_REL: [REL_X, REL_Y]}, product=0x7002)


class Keyboard(Device):
    """A keyboard: key codes 1-31 (Esc, the digit row, Q to D), which udev's input_id calls a full keyboard."""

    def __init__(self, name):
        super().__init__(name, {EV_KEY: list(range(1, 32))}, product=0x7003)
