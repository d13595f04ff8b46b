#ifndef VITRINE_CALSA_SHIM_H
#define VITRINE_CALSA_SHIM_H
#include <alsa/asoundlib.h>
#endif
