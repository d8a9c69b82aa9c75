/* real.c — libc_X(): the real functions, resolved once; raw syscalls until then (never a faked result). */
#include "real.h"

#include <dlfcn.h>
#include <errno.h>
#include <sys/syscall.h>

#if !defined(__x86_64__)
#error "sobas's raw-syscall fallback is written for x86-64 Linux"
#endif

#define SOBAS_POINTER(ret, name, params) ret(*sobas_real_##name) params;
SOBAS_REAL_FUNCS(SOBAS_POINTER)
SOBAS_REAL_VARIADIC(SOBAS_POINTER)
#undef SOBAS_POINTER

void sobas_real_resolve(void) {
  /* Relaxed stores are enough: the constructor runs before any thread of the program exists, and a
   * pointer read as NULL by a racing early thread only means the raw-syscall path is taken once more. */
#define SOBAS_RESOLVE(ret, name, params) \
  __atomic_store_n(&sobas_real_##name, (ret(*) params)dlsym(RTLD_NEXT, #name), __ATOMIC_RELAXED);
  SOBAS_REAL_FUNCS(SOBAS_RESOLVE)
  SOBAS_REAL_VARIADIC(SOBAS_RESOLVE)
#undef SOBAS_RESOLVE
}

/* The kernel's calling convention, without glibc's syscall(): that symbol is itself interposed. */
static long raw6(long nr, long a, long b, long c, long d, long e, long f) {
  register long r10 __asm__("r10") = d;
  register long r8 __asm__("r8") = e;
  register long r9 __asm__("r9") = f;
  long ret;
  __asm__ volatile("syscall"
                   : "=a"(ret)
                   : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                   : "rcx", "r11", "memory");
  if (ret < 0 && ret > -4096) {
    errno = (int)-ret;
    return -1;
  }
  return ret;
}
#define RAW(nr, ...) raw_n(nr, __VA_ARGS__, 0, 0, 0, 0, 0, 0)
#define raw_n(nr, a, b, c, d, e, f, ...) raw6(nr, (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), (long)(f))

/* Real function when resolved, else the kernel. */
#define CALL_OR_RAW(name, nr, ...) \
  (__atomic_load_n(&sobas_real_##name, __ATOMIC_RELAXED) ? sobas_real_##name(__VA_ARGS__) : RAW(nr, __VA_ARGS__))

/* Real function, resolving it now if a constructor that ran before ours needed it: these have no
 * single-syscall equivalent (exec must go through glibc's path search, daemon forks). */
#define CALL_RESOLVED(name, ...)                                                           \
  do {                                                                                     \
    if (!__atomic_load_n(&sobas_real_##name, __ATOMIC_RELAXED))                                  \
      __atomic_store_n(&sobas_real_##name, (__typeof__(sobas_real_##name))dlsym(RTLD_NEXT, #name), __ATOMIC_RELAXED); \
  } while (0)

int libc_socket(int d, int t, int p) { return (int)CALL_OR_RAW(socket, SYS_socket, d, t, p); }
int libc_socketpair(int d, int t, int p, int *sv) { return (int)CALL_OR_RAW(socketpair, SYS_socketpair, d, t, p, sv); }
int libc_connect(int fd, const struct sockaddr *a, socklen_t l) { return (int)CALL_OR_RAW(connect, SYS_connect, fd, a, l); }
int libc_accept(int fd, struct sockaddr *a, socklen_t *l) { return (int)CALL_OR_RAW(accept, SYS_accept, fd, a, l); }
int libc_accept4(int fd, struct sockaddr *a, socklen_t *l, int fl) {
  return (int)CALL_OR_RAW(accept4, SYS_accept4, fd, a, l, fl);
}
int libc_bind(int fd, const struct sockaddr *a, socklen_t l) { return (int)CALL_OR_RAW(bind, SYS_bind, fd, a, l); }
int libc_listen(int fd, int b) { return (int)CALL_OR_RAW(listen, SYS_listen, fd, b); }
int libc_setsockopt(int fd, int lv, int n, const void *v, socklen_t l) {
  return (int)CALL_OR_RAW(setsockopt, SYS_setsockopt, fd, lv, n, v, l);
}
int libc_getsockopt(int fd, int lv, int n, void *v, socklen_t *l) {
  return (int)CALL_OR_RAW(getsockopt, SYS_getsockopt, fd, lv, n, v, l);
}
int libc_shutdown(int fd, int how) { return (int)CALL_OR_RAW(shutdown, SYS_shutdown, fd, how); }
ssize_t libc_read(int fd, void *b, size_t n) { return CALL_OR_RAW(read, SYS_read, fd, b, n); }
ssize_t libc___read_chk(int fd, void *b, size_t n, size_t bl) {
  return sobas_real___read_chk ? sobas_real___read_chk(fd, b, n, bl) : RAW(SYS_read, fd, b, n);
}
ssize_t libc_readv(int fd, const struct iovec *v, int c) { return CALL_OR_RAW(readv, SYS_readv, fd, v, c); }
ssize_t libc_recv(int fd, void *b, size_t n, int fl) {
  return sobas_real_recv ? sobas_real_recv(fd, b, n, fl) : RAW(SYS_recvfrom, fd, b, n, fl, 0, 0);
}
ssize_t libc___recv_chk(int fd, void *b, size_t n, size_t bl, int fl) {
  return sobas_real___recv_chk ? sobas_real___recv_chk(fd, b, n, bl, fl) : RAW(SYS_recvfrom, fd, b, n, fl, 0, 0);
}
ssize_t libc_recvfrom(int fd, void *b, size_t n, int fl, struct sockaddr *a, socklen_t *l) {
  return CALL_OR_RAW(recvfrom, SYS_recvfrom, fd, b, n, fl, a, l);
}
ssize_t libc___recvfrom_chk(int fd, void *b, size_t n, size_t bl, int fl, struct sockaddr *a, socklen_t *l) {
  return sobas_real___recvfrom_chk ? sobas_real___recvfrom_chk(fd, b, n, bl, fl, a, l) : RAW(SYS_recvfrom, fd, b, n, fl, a, l);
}
ssize_t libc_recvmsg(int fd, struct msghdr *m, int fl) { return CALL_OR_RAW(recvmsg, SYS_recvmsg, fd, m, fl); }
int libc_recvmmsg(int fd, struct mmsghdr *v, unsigned int n, int fl, struct timespec *t) {
  return (int)CALL_OR_RAW(recvmmsg, SYS_recvmmsg, fd, v, n, fl, t);
}
ssize_t libc_write(int fd, const void *b, size_t n) { return CALL_OR_RAW(write, SYS_write, fd, b, n); }
ssize_t libc_writev(int fd, const struct iovec *v, int c) { return CALL_OR_RAW(writev, SYS_writev, fd, v, c); }
ssize_t libc_send(int fd, const void *b, size_t n, int fl) {
  return sobas_real_send ? sobas_real_send(fd, b, n, fl) : RAW(SYS_sendto, fd, b, n, fl, 0, 0);
}
ssize_t libc_sendto(int fd, const void *b, size_t n, int fl, const struct sockaddr *a, socklen_t l) {
  return CALL_OR_RAW(sendto, SYS_sendto, fd, b, n, fl, a, l);
}
ssize_t libc_sendmsg(int fd, const struct msghdr *m, int fl) { return CALL_OR_RAW(sendmsg, SYS_sendmsg, fd, m, fl); }
int libc_sendmmsg(int fd, struct mmsghdr *v, unsigned int n, int fl) {
  return (int)CALL_OR_RAW(sendmmsg, SYS_sendmmsg, fd, v, n, fl);
}
ssize_t libc_sendfile(int o, int i, off_t *off, size_t n) { return CALL_OR_RAW(sendfile, SYS_sendfile, o, i, off, n); }
ssize_t libc_sendfile64(int o, int i, off64_t *off, size_t n) {
  return CALL_OR_RAW(sendfile64, SYS_sendfile, o, i, off, n);
}
ssize_t libc_splice(int i, loff_t *oi, int o, loff_t *oo, size_t n, unsigned int fl) {
  return CALL_OR_RAW(splice, SYS_splice, i, oi, o, oo, n, fl);
}
int libc_close(int fd) { return (int)CALL_OR_RAW(close, SYS_close, fd); }
int libc_close_range(unsigned int lo, unsigned int hi, int fl) {
  return (int)CALL_OR_RAW(close_range, SYS_close_range, lo, hi, fl);
}
void libc_closefrom(int lo) {
  CALL_RESOLVED(closefrom);
  sobas_real_closefrom(lo);
}
int libc_dup(int fd) { return (int)CALL_OR_RAW(dup, SYS_dup, fd); }
int libc_dup2(int o, int n) { return (int)CALL_OR_RAW(dup2, SYS_dup2, o, n); }
int libc_dup3(int o, int n, int fl) { return (int)CALL_OR_RAW(dup3, SYS_dup3, o, n, fl); }
int libc_fcntl(int fd, int cmd, long arg) { return (int)CALL_OR_RAW(fcntl, SYS_fcntl, fd, cmd, arg); }
int libc_fcntl64(int fd, int cmd, long arg) { return (int)CALL_OR_RAW(fcntl64, SYS_fcntl, fd, cmd, arg); }
void libc__exit(int status) {
  if (sobas_real__exit) sobas_real__exit(status);
  RAW(SYS_exit_group, status);
  __builtin_unreachable();
}
int libc_daemon(int nochdir, int noclose) {
  CALL_RESOLVED(daemon);
  return sobas_real_daemon(nochdir, noclose);
}
int libc_execve(const char *p, char *const *argv, char *const *envp) {
  CALL_RESOLVED(execve);
  return sobas_real_execve(p, argv, envp);
}
int libc_execvpe(const char *f, char *const *argv, char *const *envp) {
  CALL_RESOLVED(execvpe);
  return sobas_real_execvpe(f, argv, envp);
}
int libc_fexecve(int fd, char *const *argv, char *const *envp) {
  CALL_RESOLVED(fexecve);
  return sobas_real_fexecve(fd, argv, envp);
}
int libc_posix_spawn(pid_t *pid, const char *p, const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *at,
                     char *const *argv, char *const *envp) {
  CALL_RESOLVED(posix_spawn);
  return sobas_real_posix_spawn(pid, p, fa, at, argv, envp);
}
int libc_posix_spawnp(pid_t *pid, const char *f, const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *at,
                      char *const *argv, char *const *envp) {
  CALL_RESOLVED(posix_spawnp);
  return sobas_real_posix_spawnp(pid, f, fa, at, argv, envp);
}
int libc_prctl(int op, unsigned long a, unsigned long b, unsigned long c, unsigned long d) {
  return (int)CALL_OR_RAW(prctl, SYS_prctl, op, a, b, c, d);
}
long libc_syscall(long nr, long a, long b, long c, long d, long e, long f) {
  return sobas_real_syscall ? sobas_real_syscall(nr, a, b, c, d, e, f) : raw6(nr, a, b, c, d, e, f);
}
