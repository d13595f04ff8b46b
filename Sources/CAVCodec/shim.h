#ifndef VITRINE_CAVCODEC_SHIM_H
#define VITRINE_CAVCODEC_SHIM_H
#include <libavcodec/avcodec.h>
#endif
