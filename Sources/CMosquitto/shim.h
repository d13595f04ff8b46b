#ifndef VITRINE_CMOSQUITTO_SHIM_H
#define VITRINE_CMOSQUITTO_SHIM_H
// libmosquitto's client API (pkg-config "libmosquitto": -lmosquitto; Debian's libmosquitto-dev,
// 2.0.11 on Debian 12). The MQTT module is the only one that imports this.
#include <stdbool.h>
#include <mosquitto.h>
#endif
