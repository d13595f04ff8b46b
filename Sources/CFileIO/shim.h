#ifndef VITRINE_CFILEIO_SHIM_H
#define VITRINE_CFILEIO_SHIM_H
// Linux file calls that Swift's Glibc module hides (they need _GNU_SOURCE) or imports ambiguously
// (a function and a struct with one name).
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

/// sync_file_range(fd, offset, length, SYNC_FILE_RANGE_WRITE): start writeback, do not wait.
static inline int vt_start_writeback(int fd, long long offset, long long length) {
    return sync_file_range(fd, offset, length, SYNC_FILE_RANGE_WRITE);
}

/// flock(fd, LOCK_EX | LOCK_NB).
static inline int vt_flock_exclusive_nonblocking(int fd) { return flock(fd, LOCK_EX | LOCK_NB); }

/// flock(fd, LOCK_UN).
static inline int vt_flock_unlock(int fd) { return flock(fd, LOCK_UN); }

/// stat(2) when follow is non-zero, else lstat(2).
static inline int vt_stat(const char *path, struct stat *st, int follow) {
    return follow ? stat(path, st) : lstat(path, st);
}

/// statvfs(2).
static inline int vt_statvfs(const char *path, struct statvfs *st) { return statvfs(path, st); }
#endif
