"""The host's two control channels into a QEMU run (stdlib only): QMP (the machine: screendump,
input-send-event, blockdev-add/device_add/device_del, cont, quit) and qemu-guest-agent (the guest:
guest-exec, guest-file-open/write/read/close).

Both speak one JSON object per line over a unix socket that QEMU serves (`server=on,wait=off`).
References: QEMU's docs/interop/qmp-spec.rst and qga/qapi-schema.json.
"""
import base64
import json
import os
import select
import socket
import threading
import time


class QMPError(RuntimeError):
    pass


class QMP:
    """A QMP client. One command at a time, from any thread (a lock serialises them: the
    screendump thread and the checks share one connection). Asynchronous events that arrive
    while a command waits are kept in .events."""

    def __init__(self, path, deadline, alive):
        """Connects to the socket at `path` (retrying until the monotonic `deadline`, while
        alive() says QEMU still runs), reads the greeting and negotiates capabilities."""
        while True:
            try:
                self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self.sock.connect(path)
                break
            except OSError:
                self.sock.close()
                if time.monotonic() > deadline or not alive():
                    raise
                time.sleep(0.02)
        self.sock.settimeout(60)
        self.buf = b""
        self.events = []
        self.lock = threading.Lock()
        self._read()  # greeting
        self.cmd("qmp_capabilities")

    def _read(self):
        while b"\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError("QMP closed")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def cmd(self, name, /, **args):
        """Runs one command; returns its "return" value; raises QMPError with QEMU's "desc".
        `name` is positional only, so an argument may be called name too (set_link's is)."""
        msg = {"execute": name}
        if args:
            msg["arguments"] = args
        with self.lock:
            self.sock.sendall(json.dumps(msg).encode() + b"\n")
            while True:
                r = self._read()
                if "event" in r:
                    self.events.append(r)
                    continue
                if "error" in r:
                    raise QMPError(f"QMP {name}: {r['error'].get('desc', r['error'])}")
                return r.get("return")

    def screendump(self, path, device=None, head=None):
        """The guest's screen as a P6 PPM file at `path` (QEMU writes it); with `device` (a display
        device's QOM id, lib/qemu.py names the GPU "gpu0") and `head`, that head's console."""
        args = {"filename": path}
        if device is not None:
            args["device"] = device
        if head is not None:
            args["head"] = head
        self.cmd("screendump", **args)

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


class GuestAgentError(Exception):
    pass


class GuestAgent:
    """qemu-guest-agent over the unix socket of a QEMU chardev that is wired to the virtio-serial
    port org.qemu.guest_agent.0.

    Before the agent runs in the guest, QEMU accepts the connection but nothing answers, so
    sync() retries guest-sync-delimited; the 0xFF delimiter and the random id skip any stale
    replies."""

    CHUNK = 1 << 16  # guest-file-write / guest-file-read piece, in bytes

    def __init__(self, path):
        self.path = path
        self.sock = None
        self.buf = b""
        self.next_id = int.from_bytes(os.urandom(3), "big")

    def _connect(self):
        self.close()
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(self.path)
        self.sock, self.buf = s, b""

    def close(self):
        if self.sock:
            try:
                self.sock.close()
            except OSError:
                pass
        self.sock = None

    def _send(self, name, **args):
        msg = {"execute": name}
        if args:
            msg["arguments"] = args
        self.sock.sendall(json.dumps(msg).encode() + b"\n")

    def _line(self, deadline):
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no answer from the guest agent")
            r, _, _ = select.select([self.sock], [], [], left)
            if not r:
                continue
            chunk = self.sock.recv(65536)
            if not chunk:
                raise GuestAgentError("guest agent socket closed")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line

    def sync(self, timeout, attempt=2.0):
        """Waits until the agent answers; False after timeout seconds."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                if self.sock is None:
                    self._connect()
                self.next_id = (self.next_id + 1) % 2**31
                sid = self.next_id
                self.sock.sendall(b"\xff")  # resets the agent's parser
                self._send("guest-sync-delimited", id=sid)
                d = min(end, time.monotonic() + attempt)
                while True:
                    line = self._line(d)
                    if b"\xff" in line:
                        line = line[line.rindex(b"\xff") + 1:]
                    try:
                        r = json.loads(line)
                    except ValueError:
                        continue
                    if r.get("return") == sid:
                        return True
            except TimeoutError:
                continue
            except (OSError, GuestAgentError):
                self.close()
                time.sleep(0.5)
        return False

    def cmd(self, name, timeout=30, **args):
        """Runs one agent command; returns its "return" value; raises GuestAgentError or TimeoutError."""
        self._send(name, **args)
        d = time.monotonic() + timeout
        while True:
            line = self._line(d).lstrip(b"\xff")
            if not line.strip():
                continue
            r = json.loads(line)
            if "error" in r:
                raise GuestAgentError(f"{name}: {r['error'].get('desc', r['error'])}")
            if "return" in r:
                return r["return"]

    def spawn(self, argv):
        """Starts argv in the guest without waiting (guest-exec); returns its guest pid."""
        return self.cmd("guest-exec", path=argv[0], arg=list(argv[1:]))["pid"]

    def exec(self, argv, timeout=60, poll=0.2):
        """Runs argv in the guest; returns (exit code, stdout, stderr). Raises TimeoutError."""
        pid = self.cmd("guest-exec", path=argv[0], arg=list(argv[1:]), **{"capture-output": True})["pid"]
        end = time.monotonic() + timeout
        while True:
            st = self.cmd("guest-exec-status", pid=pid)
            if st.get("exited"):
                out = base64.b64decode(st.get("out-data", "")).decode("utf-8", "replace")
                err = base64.b64decode(st.get("err-data", "")).decode("utf-8", "replace")
                code = st.get("exitcode", 128 + st.get("signal", 0))
                return code, out, err
            if time.monotonic() > end:
                raise TimeoutError(f"guest-exec {' '.join(argv)}: still running after {timeout:g} s")
            time.sleep(poll)

    def write_file(self, path, data):
        """Writes `data` (bytes) to the guest file `path` (guest-file-open "w", guest-file-write in
        64 KiB pieces, guest-file-close): no process is started in the guest."""
        h = self.cmd("guest-file-open", path=path, mode="w")
        try:
            for i in range(0, len(data), self.CHUNK):
                self.cmd("guest-file-write", handle=h, **{"buf-b64": base64.b64encode(data[i:i + self.CHUNK]).decode()})
        finally:
            self.cmd("guest-file-close", handle=h)

    def read_file(self, path, limit=1 << 20):
        """The first `limit` bytes of the guest file `path` (guest-file-open "r", guest-file-read,
        guest-file-close)."""
        h = self.cmd("guest-file-open", path=path, mode="r")
        data = b""
        try:
            while len(data) < limit:
                r = self.cmd("guest-file-read", handle=h, count=min(self.CHUNK, limit - len(data)))
                data += base64.b64decode(r.get("buf-b64", ""))
                if r.get("eof") or not r.get("count"):
                    break
        finally:
            self.cmd("guest-file-close", handle=h)
        return data
