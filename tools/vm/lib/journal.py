"""Reading the guest's journal (`journalctl -o short-monotonic`: "[  45.508461] host vitrine[328]:
info [vitrine] <message>", times in guest uptime seconds): the player's own lines that the checks
judge (Sources/Vitrine/Playback/PlayerEvent.swift writes them) and systemd's lines about vitrine.service.
"""
import math
import re

# One line of `journalctl -o short-monotonic`: uptime, host, process[pid], message.
LINE = re.compile(r"^\[\s*([\d.]+)\]\s+\S+\s+\S+?\[(\d+)\]:\s+(.*)$")
# The same, where the process may have no pid (systemd's own lines).
ANY_LINE = re.compile(r"\[\s*([\d.]+)\]\s+\S+\s+(\S+?)(?:\[\d+\])?:\s+(.*)")
DROPS = r"(\d+) dropped \(decoder (\d+), run loop (\d+), display (\d+), item end (\d+), skipped (\d+)\)"
ANIMATION = re.compile(r"popup animation (.*?): ([\d.]+) s, (\d+) vblanks, (\d+) missed, (\d+) video frames "
                       r"presented, " + DROPS + r"; longest wait ([\d.]+) ms; drawing ([\d.]+) ms mean, "
                       r"([\d.]+) ms max \(period ([\d.]+) ms\); (\d+) popup steps left to the video")
PLAYED = re.compile(r"played (\S+): (\d+) video frames presented, " + DROPS)
DROP_CAUSES = ("decoder", "run loop", "display", "item end", "skipped")


def video(text):
    """The player's popup animations and the items it played: (animations, items), each item with
    its pid, id, start and end (guest uptime), first (the first item of its process), presented
    and dropped counts; each animation with its phases, length, vblanks, counts and drop causes."""
    animations, items, started = [], [], {}
    for line in text.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        t, pid, msg = float(m.group(1)), int(m.group(2)), m.group(3)
        if (a := ANIMATION.search(msg)):
            g = a.groups()
            animations.append(dict(t=t, pid=pid, phases=g[0], seconds=float(g[1]), vblanks=int(g[2]),
                                   missed=int(g[3]), presented=int(g[4]), dropped=int(g[5]),
                                   causes=tuple(map(int, g[6:11])), wait=float(g[11]), draw_mean=float(g[12]),
                                   draw_max=float(g[13]), period=float(g[14]), yielded=int(g[15])))
        elif re.search(r"now playing (\S+) ", msg):
            started.setdefault(pid, []).append(t)
        elif (p := PLAYED.search(msg)):
            starts = started.get(pid, [])
            items.append(dict(pid=pid, id=p.group(1), start=starts[-1] if starts else None, end=t,
                              first=len(starts) <= 1, presented=int(p.group(2)), dropped=int(p.group(3))))
    return animations, items


def steady_items(animations, items, pid):
    """Items of `pid` with no popup animation in them, less the first after start-up (which
    shares the machine with the boot): steady playback, the baseline for the animations."""
    spans = [(a["t"] - a["seconds"] - 0.1, a["t"]) for a in animations if a["pid"] == pid]
    return [i for i in items if i["pid"] == pid and not i["first"] and i["start"] is not None
            and not any(s < i["end"] and e > i["start"] for s, e in spans)]


def binomial_tail(k, n, p):
    """P(X >= k) for X ~ Binomial(n, p)."""
    if k <= 0:
        return 1.0
    if p <= 0:
        return 0.0
    below = sum(math.comb(n, i) * p ** i * (1 - p) ** (n - i) for i in range(min(k, n + 1)))
    return max(0.0, 1.0 - below)


def first_run_audio(text):
    """What the player's first process logged as its audio output ("ALSA default: ..." or
    "no device; ..."), or None."""
    first_pid = None
    for line in text.splitlines():
        m = re.search(r"vitrine\[(\d+)\]: (.*)", line)
        if not m:
            continue
        first_pid = first_pid or m.group(1)
        if m.group(1) != first_pid:
            break
        a = re.search(r"\baudio: (.*)", m.group(2))
        if a:
            return a.group(1).strip()
    return None


def service_events(text):
    """(events, errors): systemd's lines about vitrine.service (watchdog timeouts, main process
    exits, failures) and the player's own error lines, each as (guest uptime, message)."""
    events, errors = [], []
    for line in text.splitlines():
        m = re.match(ANY_LINE, line)
        if not m:
            continue
        t, who, msg = float(m.group(1)), m.group(2), m.group(3).strip()
        if who == "systemd" and re.search(r"vitrine\.service: (Watchdog timeout|Main process exited|"
                                           r"Failed with result|Start request repeated)", msg):
            events.append((t, msg.split("vitrine.service: ", 1)[-1]))
        elif who == "vitrine" and re.match(r"(error|fatal|critical)\b", msg):
            errors.append((t, msg))
    return events, errors


def lines_since(vm, guest_uptime, text):
    """The player's journal lines (short-monotonic) after guest_uptime that contain text."""
    lines = []
    for line in vm.journal("-o", "short-monotonic").splitlines():
        try:
            t = float(line.split("]", 1)[0].strip("[ "))
        except ValueError:
            continue
        if t >= guest_uptime - 0.5 and text in line:
            lines.append(line)
    return lines
