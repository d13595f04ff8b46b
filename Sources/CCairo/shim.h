#ifndef VITRINE_CCAIRO_SHIM_H
#define VITRINE_CCAIRO_SHIM_H
#include <cairo.h>
#include <pango/pangocairo.h>
#endif
