#ifndef VITRINE_CUDEV_SHIM_H
#define VITRINE_CUDEV_SHIM_H
// libudev (pkg-config "libudev", Debian libudev-dev): the udev monitor that DRMHotplugMonitor
// reads DRM uevents from. Plain C; no macros need wrapping.
#include <libudev.h>
#endif
