#ifndef VITRINE_CRUNLOOP_SHIM_H
#define VITRINE_CRUNLOOP_SHIM_H
// The Linux event calls Swift's Glibc module does not import: epoll(7), timerfd_create(2),
// eventfd(2) and signalfd(2). All are plain functions and constants; no macro needs wrapping.
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#endif
