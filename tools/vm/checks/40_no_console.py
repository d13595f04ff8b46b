"""no-console: every screendump of the run (2 a second until the first frame, then 1 a second)
is the catalog, the slate, black, or QEMU's "no scanout" page (inactive). Before the first frame
a firmware logo (splash: OVMF's, with --uefi) is allowed too; the player's popups only while a
check said they may be up (vm.windows["popup"]), its status banner likewise ("banner"). Grey or
white glyphs anywhere else are a text console, and fail."""
NAMES = ("no-console",)
PHASE = "after"
NEEDS = ()


def run(vm):
    shots = vm.shots.all()
    t_first = vm.first_frame.t if vm.first_frame else None
    counts = {}
    for s in shots:
        counts[s.cls] = counts.get(s.cls, 0) + 1

    def in_popup(s):
        return vm.in_window("popup", s.t)

    def in_banner(s):
        return vm.in_window("banner", s.t)
    # A popup fading or scaling (not yet its exact colour) shows as grey/white pixels: allowed in
    # the popup window when they all lie inside the largest panel seen there.
    panels = [s.info["panel"] for s in shots if s.cls == "popup" and in_popup(s) and s.info.get("panel")]
    outer = max(panels, key=lambda b: (b[2] - b[0]) * (b[3] - b[1])) if panels else None

    def popup_in_motion(s):
        g = s.info.get("grey_box")
        return (outer is not None and in_popup(s) and s.cls == "console" and g is not None
                and g[0] >= outer[0] - 4 and g[1] >= outer[1] - 4 and g[2] <= outer[2] + 4 and g[3] <= outer[3] + 4)

    def banner_without_accent(s):
        # The status banner while its spinner's segments are faint: text in the bottom third only.
        g, size = s.info.get("grey_box"), s.size
        return in_banner(s) and s.cls == "console" and g is not None and size is not None and g[1] >= size[1] * 2 // 3
    for s in shots:
        for test, cls in ((popup_in_motion, "popup-moving"), (banner_without_accent, "banner")):
            if test(s):
                s.cls = cls
                counts[cls] = counts.get(cls, 0) + 1
                counts["console"] -= 1
                break
    counts = {k: v for k, v in counts.items() if v}
    bad = [s for s in shots if s.cls in ("console", "other", "error")
           or (s.cls == "popup" and not in_popup(s))
           or (s.cls == "banner" and not in_banner(s))
           or (s.cls == "splash" and (t_first is None or s.t >= t_first))]
    vm.shots.keep(*bad)
    splash = [s for s in shots if s.cls == "splash"]
    if splash:
        vm.shots.keep(splash[0])
        vm.info(f"no-console: a firmware splash (a logo centred on black) from {splash[0].t:.1f} s "
                f"to {splash[-1].t:.1f} s ({splash[0].png})")
    summary = ", ".join(f"{v} {k}" for k, v in sorted(counts.items(), key=lambda kv: -kv[1]))
    span = f"{shots[0].t:.0f}-{shots[-1].t:.0f} s" if shots else "-"
    if bad:
        first = bad[0]
        vm.result("no-console", False, f"{len(bad)} of {len(shots)} screendumps are not catalog/slate "
                  f"(first at {first.t:.1f} s: {first.cls}, {first.info.get('grey_px', '?')} grey/white px "
                  f"in {first.info.get('bbox')}, centre {first.info.get('centre')}, {first.png}); all: {summary}")
    else:
        vm.result("no-console", True, f"{len(shots)} screendumps over {span}, no text console: {summary} "
                  "(inactive = QEMU's 'Display output is not active', no scanout)")
