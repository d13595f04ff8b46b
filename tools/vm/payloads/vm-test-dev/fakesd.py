#!/usr/bin/env python3
"""A small stand-in for systemd's service manager, for tools/vm-test --dev-9p only.

    fakesd.py serve WATCHDOG_SEC -- CMD ARGS...

Mimics what vitrine.service relies on: Type=notify (READY=1 makes it active), WatchdogSec
(no WATCHDOG=1 within the interval: SIGABRT + SIGCONT, then SIGKILL after 5 s), and
Restart=always with RestartSec=100ms. NOTIFY_SOCKET and WATCHDOG_USEC are set as systemd
sets them. State goes to /run/fakesd/state in `systemctl show` format; the child's output
and the supervisor's events go to /run/fakesd/journal; `stop`/`start` requests are read
from /run/fakesd/cmd (see bin/systemctl). It is not systemd: the real test is the image.
"""
import os
import signal
import socket
import subprocess
import sys
import time

D = "/run/fakesd"


def main():
    wsec = float(sys.argv[2])
    argv = sys.argv[sys.argv.index("--") + 1:]
    os.makedirs(D, exist_ok=True)
    journal = open(os.path.join(D, "journal"), "ab", buffering=0)

    def log(msg):
        with open("/proc/uptime") as f:
            up = f.read().split()[0]
        journal.write(f"[{float(up):10.3f}] fakesd: {msg}\n".encode())

    nsock_path = os.path.join(D, "notify")
    try:
        os.unlink(nsock_path)
    except FileNotFoundError:
        pass
    ns = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    ns.bind(nsock_path)
    ns.settimeout(0.1)

    st = {"MainPID": 0, "NRestarts": 0, "ActiveState": "inactive", "SubState": "dead",
          "WatchdogUSec": int(wsec * 1e6), "Result": "success",
          "ExecMainStartTimestampMonotonic": 0, "ActiveEnterTimestampMonotonic": 0}

    def mono_us():
        return int(time.clock_gettime(time.CLOCK_MONOTONIC) * 1e6)
    proc = None
    last_ping = 0.0
    kill_at = None
    restart_at = None
    wanted = True
    stopping = False

    def write_state():
        tmp = os.path.join(D, "state.tmp")
        with open(tmp, "w") as f:
            for k, v in st.items():
                f.write(f"{k}={v}\n")
        os.rename(tmp, os.path.join(D, "state"))

    def start():
        nonlocal proc, last_ping, stopping
        env = dict(os.environ, NOTIFY_SOCKET=nsock_path, WATCHDOG_USEC=str(int(wsec * 1e6)))
        proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=journal,
                                stderr=subprocess.STDOUT)
        st.update(MainPID=proc.pid, ActiveState="activating", SubState="start",
                  ExecMainStartTimestampMonotonic=mono_us())
        last_ping = time.monotonic()
        stopping = False
        log(f"started {argv[0]} pid {proc.pid}")
        write_state()

    start()
    while True:
        try:
            msg, _ = ns.recvfrom(4096)
            for line in msg.decode(errors="replace").splitlines():
                if line == "READY=1" and st["ActiveState"] == "activating":
                    last_ping = time.monotonic()
                    st.update(ActiveState="active", SubState="running",
                              ActiveEnterTimestampMonotonic=mono_us())
                    log("READY=1: active")
                    write_state()
                elif line == "WATCHDOG=1":
                    last_ping = time.monotonic()
                elif line.startswith("STATUS="):
                    log(line)
        except socket.timeout:
            pass
        now = time.monotonic()
        cmdf = os.path.join(D, "cmd")
        if os.path.exists(cmdf):
            cmd = open(cmdf).read().strip()
            os.remove(cmdf)
            log(f"request: {cmd}")
            if cmd in ("stop", "restart") and proc and proc.poll() is None:
                wanted = cmd == "restart"
                stopping = True
                st.update(ActiveState="deactivating", SubState="stop-sigterm")
                proc.send_signal(signal.SIGTERM)
                kill_at = now + 10
                write_state()
            elif cmd == "start" and (proc is None or proc.poll() is not None):
                wanted = True
                start()
        # systemd arms the watchdog once start-up is complete (READY=1)
        if proc and proc.poll() is None and st["ActiveState"] == "active" and now - last_ping > wsec:
            log(f"Watchdog timeout (limit {wsec:g}s)! Killing process {proc.pid} with SIGABRT.")
            st.update(ActiveState="deactivating", SubState="stop-watchdog", Result="watchdog")
            proc.send_signal(signal.SIGABRT)
            proc.send_signal(signal.SIGCONT)
            kill_at = now + 5
            write_state()
        if proc and proc.poll() is None and kill_at and now > kill_at:
            log(f"timed out, killing {proc.pid} with SIGKILL")
            proc.kill()
            kill_at = None
        if proc and proc.poll() is not None and restart_at is None and st["MainPID"]:
            rc = proc.returncode
            log(f"main process exited, {'signal ' + str(-rc) if rc < 0 else 'status ' + str(rc)}")
            kill_at = None
            st.update(MainPID=0)
            if stopping and not wanted:
                st.update(ActiveState="inactive", SubState="dead")
                log("stopped")
            else:
                st.update(ActiveState="activating", SubState="auto-restart")
                restart_at = now + 0.1
            write_state()
        if restart_at and now >= restart_at:
            restart_at = None
            st["NRestarts"] += 1
            log(f"scheduled restart job, restart counter is at {st['NRestarts']}")
            start()


if __name__ == "__main__":
    main()
