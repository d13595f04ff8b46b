#ifndef VITRINE_CCEC_SHIM_H
#define VITRINE_CCEC_SHIM_H
// libcec's C API (pkg-config "libcec": -I/usr/include/libcec, -lcec). cecc.h includes cectypes.h,
// whose structs (libcec_configuration, cec_adapter_descriptor) are plain C outside C++; the
// version constant LIBCEC_VERSION_CURRENT is an enum member, so Swift imports it without help.
#include <stdint.h>
#include <stddef.h>
#include <string.h>
#include <libcec/cecc.h>
#endif
