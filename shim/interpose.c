/* interpose.c — the exported symbols: each calls the real function, then reports what happened to the tracking layer. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <unistd.h>

#include "envfix.h"
#include "lifecycle.h"
#include "probe.h"
#include "real.h"
#include "track.h"

#define EXPORT __attribute__((visibility("default")))

extern char **environ;

/* ---- sockets ---- */

EXPORT int socket(int domain, int type, int protocol) {
  int fd = libc_socket(domain, type, protocol);
  if (fd >= 0) sobas_track_socket(fd, domain, type, protocol);
  return fd;
}

EXPORT int socketpair(int domain, int type, int protocol, int sv[2]) {
  int r = libc_socketpair(domain, type, protocol, sv);
  if (r == 0) sobas_track_socketpair(sv);
  return r;
}

EXPORT int connect(int fd, const struct sockaddr *addr, socklen_t len) {
  int r = libc_connect(fd, addr, len);
  if (r == 0 || errno == EINPROGRESS) sobas_track_connect(fd, addr, len);
  return r;
}

EXPORT int accept(int fd, struct sockaddr *addr, socklen_t *len) {
  int r = libc_accept(fd, addr, len);
  if (r >= 0) sobas_track_accept(fd, r, addr, len);
  return r;
}

EXPORT int accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags) {
  int r = libc_accept4(fd, addr, len, flags);
  if (r >= 0) sobas_track_accept(fd, r, addr, len);
  return r;
}

/* bind, listen and getsockopt carry nothing the measurement needs; they are interposed so that the
 * enforcement layer has one place to act before a listener's window scale is fixed. */
EXPORT int bind(int fd, const struct sockaddr *addr, socklen_t len) { return libc_bind(fd, addr, len); }
EXPORT int listen(int fd, int backlog) { return libc_listen(fd, backlog); }
EXPORT int getsockopt(int fd, int level, int name, void *val, socklen_t *len) {
  return libc_getsockopt(fd, level, name, val, len);
}

EXPORT int setsockopt(int fd, int level, int name, const void *val, socklen_t len) {
  int r = libc_setsockopt(fd, level, name, val, len);
  if (r == 0) sobas_track_setsockopt(fd, level, name);
  return r;
}

EXPORT int shutdown(int fd, int how) {
  int r = libc_shutdown(fd, how);
  if (r == 0) sobas_track_shutdown(fd, how);
  return r;
}

/* ---- bytes in (hot: the real call is inlined, see SOBAS_REAL) ---- */

EXPORT ssize_t read(int fd, void *buf, size_t n) {
  ssize_t r = SOBAS_REAL(read, fd, buf, n);
  sobas_track_io(fd, SOBAS_RX, r);
  return r;
}

EXPORT ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen) {
  ssize_t r = SOBAS_REAL(__read_chk, fd, buf, n, buflen);
  sobas_track_io(fd, SOBAS_RX, r);
  return r;
}

EXPORT ssize_t readv(int fd, const struct iovec *iov, int cnt) {
  ssize_t r = SOBAS_REAL(readv, fd, iov, cnt);
  sobas_track_io(fd, SOBAS_RX, r);
  return r;
}

EXPORT ssize_t recv(int fd, void *buf, size_t n, int flags) {
  ssize_t r = SOBAS_REAL(recv, fd, buf, n, flags);
  if (!(flags & MSG_PEEK)) sobas_track_io(fd, SOBAS_RX, r);
  return r;
}

EXPORT ssize_t __recv_chk(int fd, void *buf, size_t n, size_t buflen, int flags) {
  ssize_t r = SOBAS_REAL(__recv_chk, fd, buf, n, buflen, flags);
  if (!(flags & MSG_PEEK)) sobas_track_io(fd, SOBAS_RX, r);
  return r;
}

EXPORT ssize_t recvfrom(int fd, void *buf, size_t n, int flags, struct sockaddr *addr, socklen_t *len) {
  ssize_t r = SOBAS_REAL(recvfrom, fd, buf, n, flags, addr, len);
  if (!(flags & MSG_PEEK)) sobas_track_io(fd, SOBAS_RX, r);
  return r;
}

EXPORT ssize_t __recvfrom_chk(int fd, void *buf, size_t n, size_t buflen, int flags, struct sockaddr *addr,
                              socklen_t *len) {
  ssize_t r = SOBAS_REAL(__recvfrom_chk, fd, buf, n, buflen, flags, addr, len);
  if (!(flags & MSG_PEEK)) sobas_track_io(fd, SOBAS_RX, r);
  return r;
}

EXPORT ssize_t recvmsg(int fd, struct msghdr *msg, int flags) {
  ssize_t r = SOBAS_REAL(recvmsg, fd, msg, flags);
  if (r >= 0 && msg->msg_controllen) sobas_track_received_fds(msg);
  if (!(flags & MSG_PEEK)) sobas_track_io(fd, SOBAS_RX, r);
  return r;
}

EXPORT int recvmmsg(int fd, struct mmsghdr *vec, unsigned int n, int flags, struct timespec *timeout) {
  int r = SOBAS_REAL(recvmmsg, fd, vec, n, flags, timeout);
  ssize_t bytes = 0;
  for (int i = 0; i < r; i++) {
    if (vec[i].msg_hdr.msg_controllen) sobas_track_received_fds(&vec[i].msg_hdr);
    bytes += vec[i].msg_len;
  }
  if (!(flags & MSG_PEEK)) sobas_track_io(fd, SOBAS_RX, bytes);
  return r;
}

/* ---- bytes out ---- */

EXPORT ssize_t write(int fd, const void *buf, size_t n) {
  ssize_t r = SOBAS_REAL(write, fd, buf, n);
  sobas_track_io(fd, SOBAS_TX, r);
  return r;
}

EXPORT ssize_t writev(int fd, const struct iovec *iov, int cnt) {
  ssize_t r = SOBAS_REAL(writev, fd, iov, cnt);
  sobas_track_io(fd, SOBAS_TX, r);
  return r;
}

EXPORT ssize_t send(int fd, const void *buf, size_t n, int flags) {
  ssize_t r = SOBAS_REAL(send, fd, buf, n, flags);
  sobas_track_io(fd, SOBAS_TX, r);
  return r;
}

EXPORT ssize_t sendto(int fd, const void *buf, size_t n, int flags, const struct sockaddr *addr, socklen_t len) {
  ssize_t r = SOBAS_REAL(sendto, fd, buf, n, flags, addr, len);
  sobas_track_io(fd, SOBAS_TX, r);
  return r;
}

EXPORT ssize_t sendmsg(int fd, const struct msghdr *msg, int flags) {
  ssize_t r = SOBAS_REAL(sendmsg, fd, msg, flags);
  sobas_track_io(fd, SOBAS_TX, r);
  return r;
}

EXPORT int sendmmsg(int fd, struct mmsghdr *vec, unsigned int n, int flags) {
  int r = SOBAS_REAL(sendmmsg, fd, vec, n, flags);
  ssize_t bytes = 0;
  for (int i = 0; i < r; i++) bytes += vec[i].msg_len;
  sobas_track_io(fd, SOBAS_TX, bytes);
  return r;
}

EXPORT ssize_t sendfile(int out, int in, off_t *off, size_t n) {
  ssize_t r = SOBAS_REAL(sendfile, out, in, off, n);
  sobas_track_io(out, SOBAS_TX, r);
  return r;
}

EXPORT ssize_t sendfile64(int out, int in, off64_t *off, size_t n) {
  ssize_t r = SOBAS_REAL(sendfile64, out, in, off, n);
  sobas_track_io(out, SOBAS_TX, r);
  return r;
}

EXPORT ssize_t splice(int in, loff_t *off_in, int out, loff_t *off_out, size_t n, unsigned int flags) {
  ssize_t r = SOBAS_REAL(splice, in, off_in, out, off_out, n, flags);
  sobas_track_io(in, SOBAS_RX, r);
  sobas_track_io(out, SOBAS_TX, r);
  return r;
}

/* ---- fd lifecycle ---- */

/* The probe helper's own sockets are invisible to the host: to it their numbers are free, so closing
 * or duplicating one is EBADF, a range close goes around them, and a dup onto one moves ours away. */
static int not_yours(void) {
  errno = EBADF;
  return -1;
}

EXPORT int close(int fd) {
  if (sobas_probe_owns_fd(fd)) return not_yours();
  sobas_track_close(fd);
  return libc_close(fd);
}

/* close_range over [lo, hi] in pieces that skip the helper's fds (at most two). */
static int close_range_around_own(unsigned lo, unsigned hi, int flags) {
  int own[2], n = sobas_probe_own_fds(own);
  if (lo > hi) return libc_close_range(lo, hi, flags); /* the kernel's own EINVAL */
  for (int i = 0; i < n; i++) {
    unsigned fd = (unsigned)own[i];
    if (fd < lo || fd > hi) continue;
    if (fd > lo && libc_close_range(lo, fd - 1, flags) != 0) return -1;
    if (fd == hi) return 0;
    lo = fd + 1;
  }
  return libc_close_range(lo, hi, flags);
}

EXPORT int close_range(unsigned int lo, unsigned int hi, int flags) {
  sobas_track_close_range(lo, hi, flags);
  return close_range_around_own(lo, hi, flags);
}

EXPORT void closefrom(int lo) {
  if (lo < 0) {
    libc_closefrom(lo);
    return;
  }
  sobas_track_close_range((unsigned)lo, ~0u, 0);
  int own[2], n = sobas_probe_own_fds(own);
  if (n > 0 && own[n - 1] >= lo)
    (void)close_range_around_own((unsigned)lo, ~0u, 0);
  else
    libc_closefrom(lo);
}

EXPORT int dup(int fd) {
  if (sobas_probe_owns_fd(fd)) return not_yours();
  int r = libc_dup(fd);
  if (r >= 0) sobas_track_dup(fd, r);
  return r;
}

EXPORT int dup2(int ofd, int nfd) {
  if (sobas_probe_owns_fd(ofd)) return not_yours();
  if (sobas_probe_owns_fd(nfd)) sobas_probe_vacate_fd(nfd);
  if (ofd != nfd) sobas_track_before_replace(nfd);
  int r = libc_dup2(ofd, nfd);
  if (r >= 0) sobas_track_dup(ofd, r);
  return r;
}

EXPORT int dup3(int ofd, int nfd, int flags) {
  if (sobas_probe_owns_fd(ofd)) return not_yours();
  if (sobas_probe_owns_fd(nfd)) sobas_probe_vacate_fd(nfd);
  if (ofd != nfd) sobas_track_before_replace(nfd);
  int r = libc_dup3(ofd, nfd, flags);
  if (r >= 0) sobas_track_dup(ofd, r);
  return r;
}

static int fcntl_tail(int fd, int cmd, int r) {
  if (r >= 0 && (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC)) sobas_track_dup(fd, r);
  return r;
}

/* One pointer-sized argument is read for every command (see real.h); for commands without one it is
 * an unused register, as in glibc's own fcntl. */
EXPORT int fcntl(int fd, int cmd, ...) {
  va_list ap;
  va_start(ap, cmd);
  long arg = va_arg(ap, long);
  va_end(ap);
  return fcntl_tail(fd, cmd, libc_fcntl(fd, cmd, arg));
}

EXPORT int fcntl64(int fd, int cmd, ...) {
  va_list ap;
  va_start(ap, cmd);
  long arg = va_arg(ap, long);
  va_end(ap);
  return fcntl_tail(fd, cmd, libc_fcntl64(fd, cmd, arg));
}

/* ---- processes ---- */

EXPORT int daemon(int nochdir, int noclose) {
  int r = libc_daemon(nochdir, noclose);
  if (r == 0 && !noclose) sobas_track_stdio_replaced();
  return r;
}

/* exit() runs our destructor; programs that end with _exit (OpenSSH's cleanup_exit, forked children)
 * skip it, so their flows are recorded here. */
EXPORT __attribute__((noreturn)) void _exit(int status) {
  sobas_track_exit();
  libc__exit(status);
  __builtin_unreachable();
}

EXPORT __attribute__((noreturn)) void _Exit(int status) {
  sobas_track_exit();
  libc__exit(status);
  __builtin_unreachable();
}

EXPORT int prctl(int op, ...) {
  va_list ap;
  va_start(ap, op);
  unsigned long a = va_arg(ap, unsigned long), b = va_arg(ap, unsigned long);
  unsigned long c = va_arg(ap, unsigned long), d = va_arg(ap, unsigned long);
  va_end(ap);
  sobas_note_prctl(op, a);
  return libc_prctl(op, a, b, c, d);
}

EXPORT long syscall(long nr, ...) {
  va_list ap;
  va_start(ap, nr);
  long a = va_arg(ap, long), b = va_arg(ap, long), c = va_arg(ap, long);
  long d = va_arg(ap, long), e = va_arg(ap, long), f = va_arg(ap, long);
  va_end(ap);
  sobas_note_syscall(nr, a);
  return libc_syscall(nr, a, b, c, d, e, f);
}

/* exec with an environment: the copy that keeps libsobas.so preloaded lives on this stack frame, so
 * nothing is allocated (exec may follow vfork, where the heap is the parent's). */
#define WITH_PRELOADED_ENV(envp, fixed, body)                                                  \
  do {                                                                                        \
    const char *lib_ = sobas_self_path();                                                     \
    char *const *fixed = (envp);                                                              \
    if (!lib_) { body; }                                                                      \
    size_t n_ = sobas_env_count(envp) + 2;                                                    \
    char *slots_[n_];                                                                         \
    char buf_[sobas_env_preload_len((envp), lib_)];                                          \
    fixed = sobas_env_with_preload((envp), lib_, slots_, buf_);                               \
    body;                                                                                     \
  } while (0)

EXPORT int execve(const char *path, char *const argv[], char *const envp[]) {
  WITH_PRELOADED_ENV(envp, env, return libc_execve(path, argv, env));
}

EXPORT int execvpe(const char *file, char *const argv[], char *const envp[]) {
  WITH_PRELOADED_ENV(envp, env, return libc_execvpe(file, argv, env));
}

EXPORT int fexecve(int fd, char *const argv[], char *const envp[]) {
  WITH_PRELOADED_ENV(envp, env, return libc_fexecve(fd, argv, env));
}

/* posix_spawn execs its child inside glibc, never through the execve above (python's os.posix_spawn
 * with an env), so its environment is kept preloaded here. */
EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *actions,
                       const posix_spawnattr_t *attr, char *const argv[], char *const envp[]) {
  WITH_PRELOADED_ENV(envp, env, return libc_posix_spawn(pid, path, actions, attr, argv, env));
}

EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *actions,
                        const posix_spawnattr_t *attr, char *const argv[], char *const envp[]) {
  WITH_PRELOADED_ENV(envp, env, return libc_posix_spawnp(pid, file, actions, attr, argv, env));
}

EXPORT int execv(const char *path, char *const argv[]) { return execve(path, argv, environ); }
EXPORT int execvp(const char *file, char *const argv[]) { return execvpe(file, argv, environ); }

/* execl* take their arguments as a NULL-terminated list: count, then copy onto the stack. */
#define COLLECT_ARGS(first, argv_name, after_null)                 \
  size_t argc_ = 1;                                                \
  va_list ap_;                                                     \
  va_start(ap_, first);                                            \
  while (va_arg(ap_, const char *)) argc_++;                       \
  va_end(ap_);                                                     \
  char *argv_name[argc_ + 1];                                      \
  argv_name[0] = (char *)(first);                                  \
  va_start(ap_, first);                                            \
  for (size_t i_ = 1; i_ <= argc_; i_++) argv_name[i_] = va_arg(ap_, char *); \
  after_null;                                                      \
  va_end(ap_)

EXPORT int execl(const char *path, const char *arg, ...) {
  COLLECT_ARGS(arg, argv, (void)0);
  return execve(path, argv, environ);
}

EXPORT int execlp(const char *file, const char *arg, ...) {
  COLLECT_ARGS(arg, argv, (void)0);
  return execvpe(file, argv, environ);
}

EXPORT int execle(const char *path, const char *arg, ...) {
  char *const *envp;
  COLLECT_ARGS(arg, argv, envp = va_arg(ap_, char *const *));
  return execve(path, argv, envp);
}
