#ifndef VITRINE_COPENSSL_SHIM_H
#define VITRINE_COPENSSL_SHIM_H
// OpenSSL's libcrypto: only its message digests (SHA-256 for catalog files), which use the CPU's
// SHA instructions (x86 SHA-NI, ARMv8 SHA2) when it has them.
#include <openssl/evp.h>
#endif
