#ifndef VITRINE_CAVUTIL_SHIM_H
#define VITRINE_CAVUTIL_SHIM_H
#include <libavutil/avutil.h>
#include <libavutil/error.h>
#include <libavutil/frame.h>
#include <libavutil/imgutils.h>
#include <libavutil/channel_layout.h>
#include <libavutil/samplefmt.h>
#include <libavutil/opt.h>
#include <libavutil/mathematics.h>
#include <libavutil/pixdesc.h>
#include <libavutil/display.h>
#include <errno.h>

/// AVERROR(e): FFmpeg's negated errno. Swift cannot import the function-like macro.
static inline int vt_averror(int e) { return AVERROR(e); }
/// AVERROR_EOF, built with FFERRTAG, which Swift cannot import.
static inline int vt_averror_eof(void) { return AVERROR_EOF; }
/// AVERROR(EAGAIN).
static inline int vt_averror_eagain(void) { return AVERROR(EAGAIN); }
/// AV_NOPTS_VALUE, an INT64_C() macro Swift cannot import.
static inline int64_t vt_nopts_value(void) { return AV_NOPTS_VALUE; }
/// AV_TIME_BASE_Q, a compound literal Swift cannot import.
static inline AVRational vt_time_base_q(void) { AVRational q = {1, AV_TIME_BASE}; return q; }
/// av_err2str is a macro around a compound literal; this writes into a caller buffer instead.
static inline void vt_strerror(int err, char *buf, size_t size) { av_strerror(err, buf, size); }
/// Enumerators Swift does not import from these headers' enums.
static inline enum AVPixelFormat vt_pix_fmt_bgra(void) { return AV_PIX_FMT_BGRA; }
static inline enum AVPixelFormat vt_pix_fmt_yuv420p(void) { return AV_PIX_FMT_YUV420P; }
static inline enum AVPixelFormat vt_pix_fmt_rgb24(void) { return AV_PIX_FMT_RGB24; }
static inline enum AVSampleFormat vt_sample_fmt_s16(void) { return AV_SAMPLE_FMT_S16; }
static inline int vt_channel_order_is_unspec(const AVChannelLayout *l) { return l->order == AV_CHANNEL_ORDER_UNSPEC; }
#endif
