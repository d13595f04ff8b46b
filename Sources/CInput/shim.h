#ifndef VITRINE_CINPUT_SHIM_H
#define VITRINE_CINPUT_SHIM_H
// libinput (pkg-config "libinput", linked by Package.swift) and libudev (linked by the module map:
// libinput.pc names it only in Requires.private). Both are plain C; no macros need wrapping.
#include <libinput.h>
#include <libudev.h>
#endif
