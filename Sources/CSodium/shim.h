#ifndef VITRINE_CSODIUM_SHIM_H
#define VITRINE_CSODIUM_SHIM_H
#include <sodium.h>
#endif
