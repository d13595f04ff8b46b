"""animation: the player's journal reports every popup animation of the touch check (one
`popup animation ...` line per show or hide: the video frames presented and dropped under it,
each drop put down to the decoder, the run loop, the display, an item's end or a skip, and the
drawing time per redraw), and one `played ...` line per item with the same counts.

The emulated CPU drops a few per cent of frames with no popup at all, so the animations are
judged against the items played in the same run with no popup (the first after start-up left
out): FAIL when that drop rate makes the animations' drops less likely than 1 in 1000 (binomial
tail, baseline rate (d+1)/(n+2)). With no steady playback to compare, any drop fails."""
import time

from lib import journal

NAMES = ("animation",)
PHASE = "live"
NEEDS = ("first-frame", "agent")
P_MIN = 0.001


def read(vm):
    return journal.video(vm.journal("-o", "short-monotonic"))


def run(vm):
    if vm.dev_9p:
        return  # no touch check there, so no popup
    try:
        animations, items = read(vm)
        if animations:
            # Wait for a steady item after the last animation, so the baseline has one from each side.
            pid, last = animations[-1]["pid"], animations[-1]["t"]
            end = time.monotonic() + 12
            while (not any(i["start"] > last for i in journal.steady_items(animations, items, pid))
                   and time.monotonic() < end):
                time.sleep(1)
                animations, items = read(vm)
    except Exception as e:  # noqa: BLE001
        vm.result("animation", False, f"no journal: {e}")
        return
    if not animations:
        vm.result("animation", False, "the player reported no popup animation (or an unknown line format)")
        return
    rows = animations
    total = {k: sum(r[k] for r in rows) for k in ("vblanks", "missed", "presented", "dropped")}
    causes = [sum(r["causes"][i] for r in rows) for i in range(len(journal.DROP_CAUSES))]
    vm.info("animation: " + "; ".join(
        f"{r['phases']} {r['seconds']:.2f} s: {r['vblanks']} vblanks, {r['missed']} missed, {r['presented']} frames "
        f"presented, {r['dropped']} dropped (decoder/run loop/display/item end/skipped {'/'.join(map(str, r['causes']))}; "
        f"longest wait {r['wait']:.0f} ms), drawing {r['draw_mean']:.1f}/{r['draw_max']:.1f} ms mean/max, "
        f"{r['yielded']} popup steps left to the video"
        for r in rows))
    base = journal.steady_items(animations, items, rows[-1]["pid"])
    vm.info("animation baseline (steady playback, no popup): " + (", ".join(
        f"{i['id']} {i['dropped']} of {i['presented'] + i['dropped']}" for i in base) or "none"))
    n_base = sum(i["presented"] + i["dropped"] for i in base)
    d_base = sum(i["dropped"] for i in base)
    n, k = total["presented"] + total["dropped"], total["dropped"]
    draw = (f"drawing {max(r['draw_mean'] for r in rows):.1f} ms mean at most, {max(r['draw_max'] for r in rows):.1f} ms "
            f"max (period {rows[0]['period']:.1f} ms)")
    what = (f"{len(rows)} popup animations: {k} of {n} video frames dropped ("
            + ", ".join(f"{c} {v}" for c, v in zip(journal.DROP_CAUSES, causes)) + f"); {draw}")
    if n_base < 100:
        vm.result("animation", k <= 0, f"{what}; no steady playback to compare with ({n_base} frames): "
                                       "target 0 dropped")
        return
    p0 = (d_base + 1) / (n_base + 2)  # steady playback's drop rate (Laplace: never 0)
    tail = journal.binomial_tail(k, n, p0)
    vm.result("animation", tail >= P_MIN,
              f"{what}; steady playback in this run: {d_base} of {n_base} dropped ({100 * d_base / n_base:.1f} %), "
              f"so P(>= {k} dropped without the popups) = {tail:.3f} (fails below {P_MIN}: "
              f"the popups would be dropping frames)")
