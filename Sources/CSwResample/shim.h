#ifndef VITRINE_CSWRESAMPLE_SHIM_H
#define VITRINE_CSWRESAMPLE_SHIM_H
#include <libswresample/swresample.h>
#endif
