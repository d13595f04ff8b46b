#ifndef VITRINE_CTIMEX_SHIM_H
#define VITRINE_CTIMEX_SHIM_H
// The kernel's NTP state, read through adjtimex(2) with modes 0 (no change: no privilege needed).
// Swift's Glibc module does not import <sys/timex.h>, and struct timex ends in anonymous bit-fields:
// the shim copies the fields the player reports into a plain struct.
#include <string.h>
#include <sys/timex.h>

/// The fields of struct timex that ClockSync reads, as adjtimex(2) returned them.
struct vt_timex_reading {
    int state;      // the return value: TIME_OK, TIME_INS, TIME_DEL, TIME_OOP, TIME_WAIT or TIME_ERROR
    int status;     // STA_* bits
    long offset;    // µs, or ns when STA_NANO is set
    long freq;      // ppm with a 16-bit fraction (65536 = 1 ppm)
    long maxerror;  // µs
    long esterror;  // µs
    long constant;  // the PLL time constant
    long tick;      // µs per clock tick
};

/// adjtimex(2) with modes 0: fills *out and returns the clock state, or -1 with errno set.
static inline int vt_adjtimex_read(struct vt_timex_reading *out) {
    struct timex tx;
    memset(&tx, 0, sizeof tx);
    int state = adjtimex(&tx);
    if (state == -1) return -1;
    out->state = state;
    out->status = tx.status;
    out->offset = tx.offset;
    out->freq = tx.freq;
    out->maxerror = tx.maxerror;
    out->esterror = tx.esterror;
    out->constant = tx.constant;
    out->tick = tx.tick;
    return state;
}

static const int vt_sta_unsync = STA_UNSYNC;
static const int vt_sta_nano = STA_NANO;
static const int vt_time_error = TIME_ERROR;
#endif
