#ifndef VITRINE_CAVFORMAT_SHIM_H
#define VITRINE_CAVFORMAT_SHIM_H
#include <libavformat/avformat.h>
#include <libavformat/avio.h>
#endif
