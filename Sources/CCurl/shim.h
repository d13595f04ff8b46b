#ifndef VITRINE_CCURL_SHIM_H
#define VITRINE_CCURL_SHIM_H
// libcurl's easy interface (Debian's libcurl4-openssl-dev: TLS through OpenSSL).
// curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot call: one static inline
// function per argument type instead. Each returns the CURLcode of the call.
#define CURL_DISABLE_TYPECHECK 1
#include <curl/curl.h>
#include <sys/types.h>

/// The write and header callbacks (CURLOPT_WRITEFUNCTION, CURLOPT_HEADERFUNCTION): return `size * nmemb`
/// to go on, anything else to abort the transfer.
typedef size_t (*vitrine_curl_data_callback)(char *data, size_t size, size_t nmemb, void *userdata);
/// The progress callback (CURLOPT_XFERINFOFUNCTION): return 0 to go on, non-zero to abort the transfer.
typedef int (*vitrine_curl_xferinfo_callback)(void *userdata, curl_off_t dltotal, curl_off_t dlnow,
                                              curl_off_t ultotal, curl_off_t ulnow);

/// curl_easy_setopt with a long argument (CURLOPTTYPE_LONG options).
static inline CURLcode vitrine_curl_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

/// curl_easy_setopt with a pointer argument (CURLOPTTYPE_OBJECTPOINT, CURLOPTTYPE_SLISTPOINT, CURLOPTTYPE_CBPOINT).
static inline CURLcode vitrine_curl_setopt_ptr(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

/// curl_easy_setopt with a curl_off_t argument (CURLOPTTYPE_OFF_T options, e.g. CURLOPT_MAX_RECV_SPEED_LARGE).
static inline CURLcode vitrine_curl_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

/// curl_easy_setopt with a C string argument (CURLOPTTYPE_STRINGPOINT: libcurl copies it); NULL resets it.
static inline CURLcode vitrine_curl_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

/// curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, callback).
static inline CURLcode vitrine_curl_setopt_writefunction(CURL *handle, vitrine_curl_data_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, callback);
}

/// curl_easy_setopt(handle, CURLOPT_HEADERFUNCTION, callback).
static inline CURLcode vitrine_curl_setopt_headerfunction(CURL *handle, vitrine_curl_data_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_HEADERFUNCTION, callback);
}

/// curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, callback).
static inline CURLcode vitrine_curl_setopt_xferinfo(CURL *handle, vitrine_curl_xferinfo_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, callback);
}

/// curl_easy_getinfo with a long result (CURLINFO_LONG, e.g. CURLINFO_RESPONSE_CODE, CURLINFO_HEADER_SIZE).
static inline CURLcode vitrine_curl_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

/// curl_easy_getinfo with a curl_off_t result (CURLINFO_OFF_T, e.g. CURLINFO_SIZE_DOWNLOAD_T).
static inline CURLcode vitrine_curl_getinfo_off_t(CURL *handle, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(handle, info, value);
}

/// The size of the buffer CURLOPT_ERRORBUFFER needs (CURL_ERROR_SIZE, a macro).
static inline size_t vitrine_curl_error_size(void) { return CURL_ERROR_SIZE; }
#endif
