#!/usr/bin/env python3
"""One guest TCP connection to a host port on loopback: the program that QEMU's user network runs
for each connection the guest opens to a `guestfwd=tcp:IP:PORT-cmd:...` address (lib/qemu.py).

    guestfwd.py PORT_FILE LOG_FILE

libslirp starts it with the guest's connection as its stdin, stdout and stderr (one socket, from
g_spawn_async_with_fds), so it never prints: what it has to say goes to LOG_FILE, one line per
connection. It reads the host port from PORT_FILE (a decimal number, written by the test's web
server once it listens: lib/webserver.py) when the connection arrives, connects to
127.0.0.1:PORT, and copies bytes both ways until both sides have closed (a half-close is passed
on with shutdown). No PORT_FILE, or nothing listening: it closes the guest's connection at once,
which the guest sees as a connection reset or an empty reply, as from a server that is down.
Python standard library only.
"""
import os
import selectors
import socket
import sys
import time

BUFFER = 1 << 16


def log(path, text):
    try:
        with open(path, "a") as f:
            f.write(f"{time.time():.3f} pid {os.getpid()} {text}\n")
    except OSError:
        pass


def relay(guest, host):
    """Copies guest <-> host until both directions are closed; returns (bytes up, bytes down)."""
    sel = selectors.DefaultSelector()
    peer = {guest: host, host: guest}
    counts = {guest: 0, host: 0}
    for s in (guest, host):
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ)
    open_reads = 2
    while open_reads:
        events = sel.select(timeout=600)
        if not events:  # 10 minutes without a byte either way: give up on it
            break
        for key, _ in events:
            src = key.fileobj
            try:
                data = src.recv(BUFFER)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                data = b""
            if not data:
                sel.unregister(src)
                open_reads -= 1
                try:
                    peer[src].shutdown(socket.SHUT_WR)
                except OSError:
                    pass
                continue
            counts[src] += len(data)
            dst = peer[src]
            dst.setblocking(True)
            try:
                dst.sendall(data)
            except OSError:
                return counts[guest], counts[host]
            finally:
                dst.setblocking(False)
    return counts[guest], counts[host]


def main():
    if len(sys.argv) != 3:
        return 64
    port_file, log_file = sys.argv[1], sys.argv[2]
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)  # stderr is the guest's connection: a traceback must never reach it
    sys.stderr = open(devnull, "w", closefd=False)
    guest = socket.socket(fileno=os.dup(0))
    t0 = time.monotonic()
    try:
        port = int(open(port_file).read().strip())
    except (OSError, ValueError) as e:
        log(log_file, f"no host port ({type(e).__name__}: {e}); closing the guest's connection")
        guest.close()
        return 1
    try:
        host = socket.create_connection(("127.0.0.1", port), timeout=10)
    except OSError as e:
        log(log_file, f"127.0.0.1:{port}: {e}; closing the guest's connection")
        guest.close()
        return 1
    host.settimeout(None)
    up, down = relay(guest, host)
    log(log_file, f"127.0.0.1:{port}: {up} bytes from the guest, {down} to it, {time.monotonic() - t0:.2f} s")
    for s in (guest, host):
        s.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
