#ifndef VITRINE_CSWSCALE_SHIM_H
#define VITRINE_CSWSCALE_SHIM_H
#include <libswscale/swscale.h>
#endif
