// The Unix-socket calls of the control socket that Swift's Glibc module hides (accept4 and
// struct ucred need _GNU_SOURCE) or that need a cast Swift spells badly (struct sockaddr_un as a
// struct sockaddr, S_ISSOCK, the getgrnam_r buffer). Compiled here, with _GNU_SOURCE, so that the
// header Swift imports declares plain C types only and never redefines glibc's (fd_set and others
// would clash with SwiftGlibc's in a module that imports both).
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>
#include <unistd.h>
#include "shim.h"

/// The longest path a struct sockaddr_un holds, without its NUL: 107 bytes on Linux.
int vt_unix_path_capacity(void) {
    return (int)sizeof(((struct sockaddr_un *)0)->sun_path) - 1;
}

/// socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0).
int vt_unix_stream_socket(void) {
    return socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
}

/// Fills `address` for `path`; -1 with ENAMETOOLONG when the path does not fit sun_path.
static int vt_unix_address(struct sockaddr_un *address, const char *path) {
    size_t length = strlen(path);
    memset(address, 0, sizeof *address);
    address->sun_family = AF_UNIX;
    if (length == 0 || length >= sizeof address->sun_path) { errno = ENAMETOOLONG; return -1; }
    memcpy(address->sun_path, path, length);
    return 0;
}

/// bind(fd, {AF_UNIX, path}).
int vt_unix_bind(int fd, const char *path) {
    struct sockaddr_un address;
    if (vt_unix_address(&address, path) < 0) return -1;
    return bind(fd, (const struct sockaddr *)&address, sizeof address);
}

/// connect(fd, {AF_UNIX, path}). On a non-blocking socket a full backlog gives EAGAIN.
int vt_unix_connect(int fd, const char *path) {
    struct sockaddr_un address;
    if (vt_unix_address(&address, path) < 0) return -1;
    return connect(fd, (const struct sockaddr *)&address, sizeof address);
}

/// accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC).
int vt_accept(int fd) { return accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC); }

/// getsockopt(fd, SOL_SOCKET, SO_PEERCRED): the peer's pid, uid and gid at connect time.
int vt_peer_credentials(int fd, int *pid, unsigned *uid, unsigned *gid) {
    struct ucred credentials;
    socklen_t size = sizeof credentials;
    int result = getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &size);
    if (result == 0) { *pid = credentials.pid; *uid = credentials.uid; *gid = credentials.gid; }
    return result;
}

/// send(fd, bytes, count, MSG_NOSIGNAL | MSG_DONTWAIT): a peer that went away gives EPIPE, never SIGPIPE.
long vt_send(int fd, const void *bytes, size_t count) {
    return (long)send(fd, bytes, count, MSG_NOSIGNAL | MSG_DONTWAIT);
}

/// recv(fd, bytes, count, MSG_DONTWAIT).
long vt_receive(int fd, void *bytes, size_t count) {
    return (long)recv(fd, bytes, count, MSG_DONTWAIT);
}

/// shutdown(fd, SHUT_WR): the peer reads the end of the stream; this side can still read.
int vt_shutdown_write(int fd) { return shutdown(fd, SHUT_WR); }

/// poll on one descriptor; returns poll's result and the ready events in *ready.
int vt_poll_one(int fd, short events, int timeout_ms, short *ready) {
    struct pollfd entry = { .fd = fd, .events = events, .revents = 0 };
    int result = poll(&entry, 1, timeout_ms);
    *ready = entry.revents;
    return result;
}

short vt_poll_in(void) { return POLLIN; }
short vt_poll_out(void) { return POLLOUT; }

/// lstat(path): 1 and the file's device and inode when it is a socket, 2 when it is something
/// else, -1 with errno (ENOENT: nothing there).
int vt_socket_file(const char *path, unsigned long long *device, unsigned long long *inode) {
    struct stat status;
    if (lstat(path, &status) < 0) return -1;
    *device = (unsigned long long)status.st_dev;
    *inode = (unsigned long long)status.st_ino;
    return S_ISSOCK(status.st_mode) ? 1 : 2;
}

/// The id of the group `name` through getgrnam_r (thread-safe, unlike getgrnam): 0 and *gid when
/// it exists, 1 when there is no such group, a negative errno when the lookup failed.
int vt_group_id(const char *name, unsigned *gid) {
    size_t size = 1024;
    for (;;) {
        char *buffer = malloc(size);
        if (buffer == NULL) return -ENOMEM;
        struct group entry, *found = NULL;
        int result = getgrnam_r(name, &entry, buffer, size, &found);
        if (result == 0 && found != NULL) *gid = (unsigned)found->gr_gid;
        free(buffer);
        if (result == ERANGE && size < (1u << 20)) { size *= 4; continue; }
        if (result == ENOENT || result == ESRCH || (result == 0 && found == NULL)) return 1;
        return result == 0 ? 0 : -result;
    }
}
