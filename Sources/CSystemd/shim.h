#ifndef VITRINE_CSYSTEMD_SHIM_H
#define VITRINE_CSYSTEMD_SHIM_H
#include <systemd/sd-daemon.h>
#endif
