#ifndef VITRINE_CDRM_SHIM_H
#define VITRINE_CDRM_SHIM_H
#include <stdint.h>
#include <xf86drm.h>
#include <xf86drmMode.h>
#include <drm_fourcc.h>
#include <sys/mman.h>
#include <sys/ioctl.h>

/// DRM_FORMAT_XRGB8888: fourcc_code() is a function-like macro Swift cannot import.
static inline uint32_t vt_drm_format_xrgb8888(void) { return DRM_FORMAT_XRGB8888; }
/// DRM_FORMAT_ARGB8888.
static inline uint32_t vt_drm_format_argb8888(void) { return DRM_FORMAT_ARGB8888; }
/// DRM_FORMAT_NV12.
static inline uint32_t vt_drm_format_nv12(void) { return DRM_FORMAT_NV12; }
/// DRM_IOCTL_MODE_CREATE_DUMB and friends are _IOWR() macros Swift cannot import.
static inline int vt_drm_create_dumb(int fd, struct drm_mode_create_dumb *req) { return drmIoctl(fd, DRM_IOCTL_MODE_CREATE_DUMB, req); }
static inline int vt_drm_map_dumb(int fd, struct drm_mode_map_dumb *req) { return drmIoctl(fd, DRM_IOCTL_MODE_MAP_DUMB, req); }
static inline int vt_drm_destroy_dumb(int fd, struct drm_mode_destroy_dumb *req) { return drmIoctl(fd, DRM_IOCTL_MODE_DESTROY_DUMB, req); }
#endif
