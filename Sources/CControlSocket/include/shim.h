#ifndef VITRINE_CCONTROLSOCKET_SHIM_H
#define VITRINE_CCONTROLSOCKET_SHIM_H
// The Unix-socket calls of the control socket (shim.c). Each returns as the C call does: -1 with
// errno set, except where its comment says otherwise.
#include <stddef.h>

/// The longest path a struct sockaddr_un holds, without its NUL: 107 bytes on Linux.
int vt_unix_path_capacity(void);
/// socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0).
int vt_unix_stream_socket(void);
/// bind(fd, {AF_UNIX, path}); -1 with ENAMETOOLONG when the path does not fit sun_path.
int vt_unix_bind(int fd, const char *path);
/// connect(fd, {AF_UNIX, path}). On a non-blocking socket a full backlog gives EAGAIN.
int vt_unix_connect(int fd, const char *path);
/// accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC).
int vt_accept(int fd);
/// getsockopt(fd, SOL_SOCKET, SO_PEERCRED): the peer's pid, uid and gid at connect time.
int vt_peer_credentials(int fd, int *pid, unsigned *uid, unsigned *gid);
/// send(fd, bytes, count, MSG_NOSIGNAL | MSG_DONTWAIT): a peer that went away gives EPIPE, never SIGPIPE.
long vt_send(int fd, const void *bytes, size_t count);
/// recv(fd, bytes, count, MSG_DONTWAIT).
long vt_receive(int fd, void *bytes, size_t count);
/// shutdown(fd, SHUT_WR): the peer reads the end of the stream; this side can still read.
int vt_shutdown_write(int fd);
/// poll on one descriptor; returns poll's result and the ready events in *ready.
int vt_poll_one(int fd, short events, int timeout_ms, short *ready);
short vt_poll_in(void);
short vt_poll_out(void);
/// lstat(path): 1 and the file's device and inode when it is a socket, 2 when it is something
/// else, -1 with errno (ENOENT: nothing there).
int vt_socket_file(const char *path, unsigned long long *device, unsigned long long *inode);
/// The id of the group `name` through getgrnam_r (thread-safe, unlike getgrnam): 0 and *gid when
/// it exists, 1 when there is no such group, a negative errno when the lookup failed.
int vt_group_id(const char *name, unsigned *gid);
#endif
