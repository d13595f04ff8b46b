"""net-nowait, net-listen, ctl-socket, net-update, net-304, ctl-screenshot: the appliance on a
network. The guest has a virtio-net NIC on QEMU's restricted user network (lib/qemu.py): DHCP
from QEMU, and one reachable address, https://10.0.2.100:8443/, relayed to the test's nginx on
the host's loopback (lib/guestfwd.py, lib/webserver.py). Nothing else: not the host, not the internet, no DNS. The
NIC's link is down from boot (lib/appliance.py) until this check.

prepare() makes a catalog of another colour (cached): tools/make-vm-catalog --stick --version 4
--colours blue (one still blue item, looping: above the usb and schedule checks' versions 2 and 3,
and a picture that does not change, so two captures of it must be equal), its clip remuxed with a
title (ffmpeg -c copy) into media/blue-net.mkv: other bytes than the blue.mkv that the usb and
schedule catalogs already put in the library, which the player would hard-link instead of
downloading. Signed with the VM tests' minisign key (lib/sticks.py test_key, tools/sign-manifest).
Then the web server's throwaway CA and certificate (for IP:10.0.2.100), made now so the guest's
clock is well past their start.

  net-nowait      QMP set_link up; systemd-networkd's journal says the NIC got its DHCPv4 address
                  within 60 s; its carrier came only now, after the player's first frame
                  (systemd's first "Started vitrine.service", i.e. READY=1) had been on screen for
                  minutes: playback did not wait; and vitrine.service is ordered after neither
                  network-online.target nor systemd-networkd-wait-online.service
                  (`systemctl list-dependencies --after --all`)
  net-listen      clients only, at run time, once the player runs with its update config (the
                  last thing the check does): in /proc/net/{tcp,tcp6,udp,udp6} no socket listens
                  (TCP) or is bound (UDP) on an address other than loopback, but the DHCP
                  client's UDP port 68 (systemd-resolved's stub is on 127.0.0.53 and .54)
  ctl-socket      with the guest's config given `update` (url https://10.0.2.100:8443/catalog/,
                  caFile /etc/vitrine/update-ca.pem, requireSignature) and the key in
                  import.trustedKeys, and `systemctl restart vitrine`: /run/vitrine/control.sock is
                  a socket of mode 0660, group vitrine-admin; `vitrine ctl status` prints JSON (as
                  root, through the guest agent); run as nobody (setpriv) it is refused
  net-update      nginx started (the player's start-up poll, if any, found nothing there);
                  `vitrine ctl sync-now`; within 120 s the blue catalog is on screen and stays
                  (8 s, two lengths of the old catalog's items); nginx served manifest.json,
                  manifest.json.minisig and media/blue-net.mkv in full (200 or 206); `vitrine ctl
                  status` says catalog version 4 (docs/control.md). The time from
                  sync-now to the picture is reported
  net-304         a second `vitrine ctl sync-now`: one conditional GET of manifest.json answered
                  304 with no body (If-None-Match sent) within 30 s, and nothing else fetched
  ctl-screenshot  `vitrine ctl screenshot --out /tmp/vitrine-ctl-screenshot.png` between two QMP
                  screendumps: the PNG (copied out with guest-file-read, kept as
                  ctl-screenshot.png) has the screendumps' size, shows the blue catalog, and
                  differs from the closer of the two by a mean of at most 2 (0-255) per channel,
                  with at most 1 % of pixels off by more than 16

The check leaves the blue catalog playing with the update config in place (the clean-stop check
that follows needs a playing catalog), and stops nginx: later polls fail, which the player only
logs. Its restart of the player is recorded for the restarts check (vm.signals), and the banner
may be up from its start to 12 s after it.
"""
import atexit
import hashlib
import json
import os
import re
import subprocess
import time

from lib import screen, service, sticks, webserver

NAMES = ("net-nowait", "net-listen", "ctl-socket", "net-update", "net-304", "ctl-screenshot")
PHASE = "live"
NEEDS = ("first-frame", "agent")
VERSION = 4
COLOUR = "blue"
MEDIA = "blue-net.mkv"  # the catalog's one file, below media/
DHCP_TIMEOUT = 60.0     # link up -> DHCPv4 address
CTL_TIMEOUT = 30.0      # restart -> `vitrine ctl status` answers
UPDATE_TIMEOUT = 120.0  # sync-now -> the new catalog on screen
STEADY_S = 8.0          # the new colour stays this long (the old catalogs change every 4 s)
POLL_TIMEOUT = 30.0     # second sync-now -> its 304 in nginx's log
MAE_LIMIT = 2.0         # ctl screenshot vs screendump: mean absolute difference per channel
OFF_LIMIT = 0.01        # ... and the fraction of pixels off by more than OFF_TOL
OFF_TOL = 16
CONFIG = "/etc/vitrine/config.json"
CA_PATH = "/etc/vitrine/update-ca.pem"
CONTROL = "/run/vitrine/control.sock"
ADMIN_GROUP = "vitrine-admin"
GUEST_SHOT = "/tmp/vitrine-ctl-screenshot.png"
WAITERS = ("network-online.target", "systemd-networkd-wait-online.service")
FOLDER = PUB = WEB = None
SOCKET = CONTROL  # the config's control.path, once configure() has read it

# systemd-networkd 252's lines (journalctl -o short-monotonic: "[  12.345678] host unit[pid]: ...").
LEASE = re.compile(r"^\[\s*([\d.]+)\].*?: (\S+): DHCPv4 address (\S+?)(?:, gateway (\S+))? acquired from (\S+)", re.M)
CARRIER = r"^\[\s*([\d.]+)\].*?: {}: Gained carrier"  # lo has one too, at boot
STARTED = re.compile(r"^\[\s*([\d.]+)\]\s+\S+\s+systemd\[1\]: Started (?:vitrine\.service|Vitrine signage player)", re.M)


def prepare():
    global FOLDER, PUB, WEB
    why = webserver.available()
    if why:
        raise RuntimeError(f"the network check's web server: {why}")

    def edit(folder, m):
        media = os.path.join(folder, "vitrine", "media")
        subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-nostdin", "-y", "-i",
                        os.path.join(media, f"{COLOUR}.mkv"), "-map", "0", "-c", "copy", "-metadata",
                        "title=Vitrine VM network catalog", "-fflags", "+bitexact", os.path.join(media, MEDIA)], check=True)
        os.remove(os.path.join(media, f"{COLOUR}.mkv"))
        data = open(os.path.join(media, MEDIA), "rb").read()
        m["title"] = "Vitrine VM network catalog"
        m["playlist"] = [dict(m["playlist"][0], id=MEDIA[:-4], src=f"media/{MEDIA}", size=len(data),
                              sha256=hashlib.sha256(data).hexdigest())]
    FOLDER = sticks.cached_folder("net-catalog", f"v{VERSION} {COLOUR} as {MEDIA}, signed",
                                  ["--version", str(VERSION), "--colours", COLOUR], edit)
    _, _, PUB = sticks.test_key()
    WEB = webserver.NginxServer(names=(f"IP:{webserver.GUEST_IP}",))
    WEB.serve(FOLDER)
    atexit.register(WEB.close)


def uptime(vm):
    """The guest's uptime (s), the clock of its journal's short-monotonic times."""
    _, out, _ = vm.gexec(["cat", "/proc/uptime"], quiet=True)
    return float(out.split()[0])


def ctl(vm, *args, timeout=60):
    return vm.gexec(["vitrine", "ctl", "--socket", SOCKET, *args], timeout=timeout)


def requests(since, path=None):
    """nginx's log entries from index `since` on (optionally only those for `path` below /catalog/)."""
    entries = WEB.access_log()[since:]
    return [e for e in entries if path is None or e["path"] == "/catalog/" + path]


def fail_rest(vm, names, why):
    for n in names:
        if not vm.has_result(n):
            vm.result(n, False, why)


def run(vm):
    if vm.dev_9p:
        vm.info("network: not run with --dev-9p (no NIC, no systemd-networkd in the harness)")
        return
    with vm.window("banner"):
        try:
            network(vm)
        finally:
            WEB.stop()


def network(vm):
    nowait(vm)
    try:
        update(vm)
    finally:
        listening(vm)  # last: the player runs with its update config (and its clients) by then


def update(vm):
    code, _, err = vm.gexec(["vitrine", "ctl", "--help"], quiet=True)
    if code != 0:
        fail_rest(vm, NAMES[2:], f"not run: the image's vitrine has no `ctl` command (vitrine ctl --help: exit {code}"
                                 f"{': ' + err.strip().splitlines()[-1][:120] if err.strip() else ''})")
        return
    if not configure(vm):
        return
    if sync_and_show(vm) is None:
        fail_rest(vm, NAMES[4:], "not run: the network update did not reach the screen (net-update)")
        return
    second_poll(vm)
    screenshot(vm)


# ------------------------------------------------------------------ net-nowait
def nowait(vm):
    g_link = uptime(vm)
    vm.set_link(True)
    t_link = vm.now()
    lease = None
    while vm.now() - t_link < DHCP_TIMEOUT and lease is None:
        _, out, _ = vm.gexec(["journalctl", "-b", "-u", "systemd-networkd", "-o", "short-monotonic", "--no-pager"], quiet=True)
        lease = LEASE.search(out)
        if lease is None:
            time.sleep(1)
    t_lease = vm.now() - t_link
    carrier = re.search(CARRIER.format(re.escape(lease.group(2))), out, re.M) if lease else None
    _, vj, _ = vm.gexec(["journalctl", "-b", "-u", "vitrine", "-o", "short-monotonic", "--no-pager"], quiet=True)
    started = STARTED.search(vj)
    _, deps, _ = vm.gexec(["systemctl", "list-dependencies", "--after", "--all", "--plain", "--no-legend",
                           "--no-pager", "vitrine.service"], quiet=True)
    names = {line.strip().lstrip("●○ ").split()[0] for line in deps.splitlines() if line.strip()}
    waits = sorted(n for n in WAITERS if n in names)
    _, wo, _ = vm.gexec(["systemctl", "show", "-p", "LoadState,ActiveState", "systemd-networkd-wait-online.service"], quiet=True)
    _, links, _ = vm.gexec(["networkctl", "list", "--no-pager", "--no-legend"], quiet=True)
    _, resolv, _ = vm.gexec(["readlink", "/etc/resolv.conf"], quiet=True)
    vm.info("network: networkctl: " + "; ".join(" ".join(line.split()) for line in links.splitlines() if line.strip())
            + f"; systemd-networkd-wait-online.service {' '.join(wo.split())}; /etc/resolv.conf -> {resolv.strip() or '?'}; "
            f"{len(names)} units ordered before vitrine.service")
    if not lease:
        tail = " | ".join(line.split(": ", 1)[-1] for line in out.splitlines()[-4:])
        vm.result(NAMES[0], False, f"no DHCPv4 address in systemd-networkd's journal within {DHCP_TIMEOUT:g} s of the link "
                                   f"coming up (its last lines: {tail[:240] or 'none'})")
        return
    t_carrier = float(carrier.group(1)) if carrier else float(lease.group(1))
    t_ready = float(started.group(1)) if started else None
    ok = started is not None and t_ready < t_carrier and t_carrier >= g_link - 0.5 and not waits
    vm.result(NAMES[0], ok,
              f"{lease.group(2)}: {lease.group(3)} (gateway {lease.group(4) or 'none'}) by DHCP from systemd-networkd "
              f"{t_lease:.1f} s after QMP set_link up (carrier at {t_carrier:.1f} s uptime); the player's first "
              + (f"READY=1 (its first frame) was at {t_ready:.1f} s, {t_carrier - t_ready:.0f} s before the carrier"
                 if started else "READY=1 (\"Started vitrine.service\") is not in the journal")
              + ("; but vitrine.service is ordered after " + ", ".join(waits) if waits else
                 "; playback did not wait: vitrine.service is not ordered after network-online.target or "
                 "systemd-networkd-wait-online.service")
              + ("" if t_carrier >= g_link - 0.5 else f"; but the carrier came before the link was set up ({g_link:.1f} s)"))


# ------------------------------------------------------------------ net-listen
DHCP_CLIENT_PORTS = (68, 546)


def sockets(text, udp):
    """(address, port) of the listening (TCP state 0A) or bound (UDP) sockets in the lines of a
    /proc/net/{tcp,tcp6,udp,udp6} file: addresses as the kernel writes them, in hex, little-endian
    per 32-bit word."""
    out = []
    for line in text.splitlines()[1:]:
        f = line.split()
        if len(f) < 4 or ":" not in f[1]:
            continue
        if not udp and f[3] != "0A":
            continue
        addr, port = f[1].split(":")
        words = [bytes.fromhex(addr[i:i + 8])[::-1] for i in range(0, len(addr), 8)]
        raw = b"".join(words)
        if len(raw) == 4:
            text_addr = ".".join(str(b) for b in raw)
        else:
            text_addr = ":".join(raw[i:i + 2].hex() for i in range(0, 16, 2))
        out.append((text_addr, int(port, 16)))
    return out


def loopback(addr):
    return addr.startswith("127.") or addr == "0000:0000:0000:0000:0000:0000:0000:0001" \
        or addr.startswith("0000:0000:0000:0000:0000:ffff:7f")


def listening(vm):
    found = {}
    for name in ("tcp", "tcp6", "udp", "udp6"):
        _, text, _ = vm.gexec(["cat", f"/proc/net/{name}"], quiet=True)
        found[name] = sockets(text, name.startswith("udp"))
    open_ = [(n, a, p) for n, socks in found.items() for a, p in socks
             if not loopback(a) and not (n.startswith("udp") and p in DHCP_CLIENT_PORTS)]
    shown = "; ".join(f"{n} " + (", ".join(f"{a}:{p}" for a, p in socks) or "none") for n, socks in found.items())
    vm.result(NAMES[1], not open_,
              ("no socket on a non-loopback address but the DHCP client's: " if not open_ else
               "listening beyond loopback: " + ", ".join(f"{n} {a}:{p}" for n, a, p in open_) + "; all: ") + shown)


# ------------------------------------------------------------------ ctl-socket
def configure(vm):
    """The update config, the CA and a restart; then the socket's checks. False when the player did
    not come back (the image's config is then put back)."""
    _, cur, _ = vm.gexec(["cat", CONFIG], quiet=True)
    try:
        cfg = json.loads(cur) if cur.strip() else {}
    except ValueError as e:
        fail_rest(vm, NAMES[2:], f"the guest's {CONFIG} is not JSON ({e})")
        return False
    new = dict(cfg)
    imp = dict(new.get("import") or {})
    keys = [k for k in imp.get("trustedKeys") or [] if k != PUB]
    imp["trustedKeys"] = keys[:1] + [PUB]  # at most two keys
    new["import"] = imp
    new["update"] = {"url": WEB.url(), "interval": 300, "jitter": 0.1, "caFile": CA_PATH,
                     "allowPlainHTTP": False, "requireSignature": True}
    new.setdefault("control", {"enabled": True, "path": CONTROL, "group": ADMIN_GROUP})
    global SOCKET
    SOCKET = new["control"].get("path") or CONTROL
    vm.gexec(["cp", "-p", CONFIG, CONFIG + ".before-network"])
    vm.write_file(CA_PATH, WEB.ca_pem, log="the test CA\n")
    vm.write_file(CONFIG, (json.dumps(new, indent=2) + "\n").encode(), log=json.dumps(new) + "\n")
    vm.gexec(["chmod", "0644", CA_PATH, CONFIG])
    vm.info(f"network: {CONFIG}: update {json.dumps(new['update'])}; control {json.dumps(new['control'])}; "
            f"import.trustedKeys {len(imp['trustedKeys'])} key(s), the test key last")
    if not restart(vm):
        # At once: Restart=always would start it again every second, and more than 10 starts in
        # 5 minutes reboot the box (StartLimitBurst); reset-failed clears that count.
        vm.gexec(["cp", "-p", CONFIG + ".before-network", CONFIG])
        vm.gexec(["systemctl", "reset-failed", "vitrine"])
        journal = vm.journal("-o", "cat", "-n", "40")
        why = next((line for line in reversed(journal.splitlines()) if re.search(r"config|error|unknown", line)), "")
        back = restart(vm)
        fail_rest(vm, NAMES[2:], f"the player did not come back with the update config (journal: {why.strip()[:200] or '-'}); "
                                 f"the image's config put back, the player {'plays again' if back else 'is still down'}")
        return False
    t = vm.now()
    status = None
    while vm.now() - t < CTL_TIMEOUT:
        code, out, err = ctl(vm, "status")
        if code == 0:
            try:
                status = json.loads(out)
                break
            except ValueError:
                pass
        time.sleep(1)
    _, st, _ = vm.gexec(["stat", "-c", "%F %a %G %U", SOCKET], quiet=True)
    kind_mode = " ".join(st.split()[:3])  # type, mode, group; the owner is reported only
    owner = (st.split()[3:4] or ["?"])[0]
    code_n, _, err_n = vm.gexec(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
                                 "vitrine", "ctl", "--socket", SOCKET, "status"], quiet=True)
    refused = code_n != 0
    want = f"socket 660 {ADMIN_GROUP}"
    if status is not None:
        vm.info("network: vitrine ctl status: " + json.dumps(status)[:400])
    vm.result(NAMES[2], status is not None and kind_mode == want and refused,
              f"{SOCKET}: {kind_mode or 'missing'} (wanted {want}; owner {owner}); `vitrine ctl status` "
              + (f"answered JSON ({len(json.dumps(status))} bytes, keys {', '.join(list(status)[:8]) if isinstance(status, dict) else type(status).__name__})"
                 if status is not None else f"gave no JSON within {CTL_TIMEOUT:g} s (exit {code}: {(err or out).strip()[:120]})")
              + f"; as nobody: {'refused (exit %d)' % code_n if refused else 'answered: not refused'}"
              + (f" ({err_n.strip().splitlines()[-1][:80]})" if refused and err_n.strip() else ""))
    if status is None:
        fail_rest(vm, NAMES[3:], "not run: `vitrine ctl status` never answered")
        return False
    return True


def restart(vm):
    """`systemctl restart vitrine` (recorded in vm.signals for the restarts check), which returns once
    the player is ready (READY=1: its first frame) or has failed to start; True when it is active."""
    code, out, _ = vm.gexec(["sh", "-c", 'read b _ < /proc/uptime; echo "$b"; exec systemctl restart vitrine'], timeout=150)
    try:
        vm.signals.append(("network", float(out.split()[0]), 30.0))
    except (IndexError, ValueError):
        pass
    st = service.show(vm)
    if code != 0 or st.get("ActiveState") != "active":
        vm.note(f"systemctl restart vitrine: exit {code}; {st.get('ActiveState')}/{st.get('SubState')}")
        return False
    vm.ready_host = vm.now()
    return True


# ------------------------------------------------------------------ net-update
def steady_colour(vm, after, deadline):
    """(the first screendump from `after` on that shows COLOUR and whose next STEADY_S seconds of
    screendumps all do, None) before `deadline` (vm.now() seconds); else (the last such start seen
    or None, the screendumps that broke it). A catalog that only passes through blue (the usb
    check's blue, green) never qualifies."""
    first, broke = None, None
    while vm.now() < deadline:
        s = vm.shots.wait(lambda x: x.colour == COLOUR, after, max(0.0, deadline - vm.now()))
        if s is None:
            break
        first = s
        time.sleep(max(0.0, s.t + STEADY_S + 0.5 - vm.now()))
        span = [x for x in vm.shots.all() if s.t <= x.t <= s.t + STEADY_S]
        bad = [x for x in span if x.colour != COLOUR]
        if span and len(span) >= STEADY_S / 2 and not bad:
            return s, None
        broke = bad or span
        after = (bad[-1].t if bad else s.t) + 0.01
    return first, broke


def sync_and_show(vm):
    mark = len(WEB.access_log())
    WEB.start(vm.net_port_file)
    vm.note(f"nginx pid {WEB.proc.pid} on 127.0.0.1:{WEB.port}, the guest's {WEB.url()}")
    early = requests(mark)
    wall0, t0 = time.time(), vm.now()
    code, out, err = ctl(vm, "sync-now")
    t_ctl = vm.now() - t0
    new, span = steady_colour(vm, t0, t0 + UPDATE_TIMEOUT)
    steady = new is not None and span is None
    vm.shots.keep(new, *(span or ()))
    got = requests(mark)
    files = {p: [e for e in got if e["path"] == "/catalog/" + p] for p in ("manifest.json", "manifest.json.minisig")}
    media = [e for e in got if e["path"].startswith("/catalog/media/")]
    size = os.path.getsize(os.path.join(FOLDER, "media", MEDIA))
    media_bytes = sum(e["bytes"] for e in media if e["path"] == f"/catalog/media/{MEDIA}" and e["status"] in (200, 206))
    fetched = (any(e["status"] == 200 for e in files["manifest.json"]) and any(e["status"] == 200 for e in files["manifest.json.minisig"])
               and media_bytes >= size)
    lines = [line for line in vm.journal("-o", "cat", "-n", "200").splitlines() if f"version {VERSION}" in line]
    for line in lines[-2:]:
        vm.info("network journal: " + line.strip()[:200])
    log = "; ".join(f"+{e['t'] - wall0:.1f} s {e['status']} {e['path'][len('/catalog/'):]} {e['bytes']} B" for e in got[:8])
    vm.info(f"network: nginx log from the sync-now on (host clock): {log or 'nothing'}"
            + (f"; before it (the start-up poll): {len(early)} request(s)" if early else ""))
    if code != 0:
        vm.result(NAMES[3], False, f"`vitrine ctl sync-now` failed (exit {code}: {(err or out).strip()[:160]})")
        return None
    # The player's own word (docs/control.md: status has catalog.version and lastImport).
    scode, sout, _ = ctl(vm, "status")
    try:
        status = json.loads(sout) if scode == 0 else {}
    except ValueError:
        status = {}
    version = (status.get("catalog") or {}).get("version") if isinstance(status, dict) else None
    last = (status.get("lastImport") or {}) if isinstance(status, dict) else {}
    said = (f"; `vitrine ctl status`: catalog version {version}, last import {last.get('outcome', '-')} from "
            f"{last.get('source', '-')}" if status else f"; `vitrine ctl status`: exit {scode}, no JSON")
    ok = bool(new) and steady and fetched and version == VERSION
    vm.result(NAMES[3], ok,
              (f"{COLOUR} (version {VERSION}, from https://{webserver.GUEST_IP}:{webserver.GUEST_PORT}) on screen "
               f"{new.t - t0:.1f} s after `vitrine ctl sync-now` was sent (host clock; the command took {t_ctl:.1f} s; "
               f"limit {UPDATE_TIMEOUT:g} s; {new.png}), steady for {STEADY_S:g} s"
               if new and steady else
               f"{COLOUR} on screen at +{new.t - t0:.1f} s but not steady for {STEADY_S:g} s (then "
               f"{', '.join(str(s.colour or s.cls) for s in (span or [])[:6])})" if new else
               f"no {COLOUR} picture within {UPDATE_TIMEOUT:g} s of `vitrine ctl sync-now`")
              + f"; nginx served manifest.json {[e['status'] for e in files['manifest.json']]}, its .minisig "
                f"{[e['status'] for e in files['manifest.json.minisig']]}, media/{MEDIA} {media_bytes} of {size} B" + said)
    return new if ok else None


# ------------------------------------------------------------------ net-304
def second_poll(vm):
    mark = len(WEB.access_log())
    wall0 = time.time()
    code, out, err = ctl(vm, "sync-now")
    t0 = time.monotonic()
    got = []
    while time.monotonic() - t0 < POLL_TIMEOUT:
        got = requests(mark)
        if any(e["path"] == "/catalog/manifest.json" for e in got):
            break
        time.sleep(1)
    got = requests(mark)
    polls = [e for e in got if e["path"] == "/catalog/manifest.json"]
    other = [e for e in got if e["path"] != "/catalog/manifest.json"]
    ok = code == 0 and bool(polls) and all(e["status"] == 304 and e["bytes"] == 0 and e["inm"] not in ("", "-") for e in polls) and not other
    vm.result(NAMES[4], ok,
              (f"manifest.json: {', '.join('%d (%d B body, If-None-Match %s) at +%.1f s' % (e['status'], e['bytes'], e['inm'], e['t'] - wall0) for e in polls)}"
               if polls else f"no request for manifest.json within {POLL_TIMEOUT:g} s of the second sync-now")
              + (f"; also fetched: {', '.join(e['path'] + ' ' + str(e['status']) for e in other)}" if other else "; nothing else fetched")
              + ("" if code == 0 else f"; `vitrine ctl sync-now`: exit {code} {(err or out).strip()[:120]}"))


# ------------------------------------------------------------------ ctl-screenshot
def screenshot(vm):
    still = vm.shots.wait(lambda s: s.colour == COLOUR and s.cls == "catalog", vm.now(), 30)
    if not still:
        vm.result(NAMES[5], False, f"no {COLOUR} catalog picture without the banner to compare against within 30 s")
        return
    vm.gexec(["rm", "-f", GUEST_SHOT], quiet=True)
    before = vm.shots.take("ctl-before")
    t = vm.now()
    code, out, err = ctl(vm, "screenshot", "--out", GUEST_SHOT)
    t_ctl = vm.now() - t
    after = vm.shots.take("ctl-after")
    vm.shots.keep(before, after)
    if code != 0:
        vm.result(NAMES[5], False, f"`vitrine ctl screenshot --out {GUEST_SHOT}`: exit {code} {(err or out).strip()[:160]}")
        return
    # The client writes the PNG the player sends to --out; a player that wrote the file itself
    # names it instead (`vitrine ctl` prints that path).
    named = [line.strip() for line in out.splitlines() if line.strip().startswith("/")]
    data, where = None, GUEST_SHOT
    for path in [GUEST_SHOT] + named[-1:]:
        try:
            data, where = vm.read_file(path), path
            break
        except Exception as e:  # noqa: BLE001 -- the agent's error: no such file
            why = e
    if data is None:
        vm.result(NAMES[5], False, f"`vitrine ctl screenshot` exited 0 but {GUEST_SHOT} cannot be read: {why}"
                                   + (f" (it printed {named[-1]})" if named else ""))
        return
    local = os.path.join(vm.out, "ctl-screenshot.png")
    with open(local, "wb") as f:
        f.write(data)
    try:
        png = screen.read_png(data)
    except ValueError as e:
        vm.result(NAMES[5], False, f"{GUEST_SHOT} ({len(data)} bytes) is not a PNG this harness reads: {e}")
        return
    refs = []
    for s in (before, after):
        if s.err or not s.size:
            continue
        img = screen.read_ppm(s.path)
        if img[:2] != png[:2]:
            refs.append((s, None))
            continue
        refs.append((s, screen.difference(png, img, OFF_TOL)))
    sized = [(s, d) for s, d in refs if d is not None]
    colour = screen.picture_colour(png)
    if not sized:
        sizes = ", ".join(f"{s.size[0]}x{s.size[1]}" for s, _ in refs) or "none"
        vm.result(NAMES[5], False, f"the PNG is {png[0]}x{png[1]}, the screendumps {sizes}")
        return
    s, (mae, worst, off) = min(sized, key=lambda sd: sd[1][0])
    ok = colour == COLOUR and mae <= MAE_LIMIT and off <= OFF_LIMIT
    vm.result(NAMES[5], ok,
              f"{png[0]}x{png[1]} PNG ({len(data)} bytes in {where}, {t_ctl:.1f} s) shows {colour or 'no catalog colour'} "
              f"(centre {screen.hexc(screen.pixel(png, png[0] // 2, png[1] // 2))}); vs the QMP screendump "
              f"{'before' if s is before else 'after'} it ({s.png}): mean difference {mae:.3f} per channel (limit "
              f"{MAE_LIMIT:g}), largest {worst}, {100 * off:.2f} % of pixels off by more than {OFF_TOL} (limit "
              f"{100 * OFF_LIMIT:g} %); saved as ctl-screenshot.png")
