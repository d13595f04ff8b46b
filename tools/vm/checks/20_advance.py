"""advance: a later screendump shows the catalog's second item (green) within 3x item 1's 4 s:
a freeze followed by a watchdog restart takes longer."""

NAMES = ("advance",)
PHASE = "boot"
NEEDS = ("first-frame",)
TIMEOUT = 12  # seconds after the first red frame


def run(vm):
    first = vm.first_frame
    s = vm.shots.wait(lambda s: s.colour == "green", first.t, TIMEOUT)
    if not s:
        vm.result("advance", False, f"no green picture within {TIMEOUT} s of the first frame")
        return
    vm.shots.keep(s)
    vm.result("advance", True, f"green (centre {s.info['centre']}) at {s.t:.1f} s, "
                               f"{s.t - first.t:.1f} s after the first red frame (item 1 lasts 4 s; "
                               f"limit {TIMEOUT} s)")
