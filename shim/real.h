/* real.h — libc_X(): the real glibc functions behind every symbol the shim interposes (the bottom layer). */
#ifndef SOBAS_REAL_H
#define SOBAS_REAL_H

#define _GNU_SOURCE 1
#include <spawn.h>
#include <stdarg.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>

/* Every interposed non-variadic function: X(return type, name, (parameters)). */
#define SOBAS_REAL_FUNCS(X)                                                                       \
  X(int, socket, (int, int, int))                                                                 \
  X(int, socketpair, (int, int, int, int *))                                                      \
  X(int, connect, (int, const struct sockaddr *, socklen_t))                                      \
  X(int, accept, (int, struct sockaddr *, socklen_t *))                                           \
  X(int, accept4, (int, struct sockaddr *, socklen_t *, int))                                     \
  X(int, bind, (int, const struct sockaddr *, socklen_t))                                         \
  X(int, listen, (int, int))                                                                      \
  X(int, setsockopt, (int, int, int, const void *, socklen_t))                                    \
  X(int, getsockopt, (int, int, int, void *, socklen_t *))                                        \
  X(int, shutdown, (int, int))                                                                    \
  X(ssize_t, read, (int, void *, size_t))                                                         \
  X(ssize_t, __read_chk, (int, void *, size_t, size_t))                                           \
  X(ssize_t, readv, (int, const struct iovec *, int))                                             \
  X(ssize_t, recv, (int, void *, size_t, int))                                                    \
  X(ssize_t, __recv_chk, (int, void *, size_t, size_t, int))                                      \
  X(ssize_t, recvfrom, (int, void *, size_t, int, struct sockaddr *, socklen_t *))                \
  X(ssize_t, __recvfrom_chk, (int, void *, size_t, size_t, int, struct sockaddr *, socklen_t *))  \
  X(ssize_t, recvmsg, (int, struct msghdr *, int))                                                \
  X(int, recvmmsg, (int, struct mmsghdr *, unsigned int, int, struct timespec *))                 \
  X(ssize_t, write, (int, const void *, size_t))                                                  \
  X(ssize_t, writev, (int, const struct iovec *, int))                                            \
  X(ssize_t, send, (int, const void *, size_t, int))                                              \
  X(ssize_t, sendto, (int, const void *, size_t, int, const struct sockaddr *, socklen_t))        \
  X(ssize_t, sendmsg, (int, const struct msghdr *, int))                                          \
  X(int, sendmmsg, (int, struct mmsghdr *, unsigned int, int))                                    \
  X(ssize_t, sendfile, (int, int, off_t *, size_t))                                               \
  X(ssize_t, sendfile64, (int, int, off64_t *, size_t))                                           \
  X(ssize_t, splice, (int, loff_t *, int, loff_t *, size_t, unsigned int))                        \
  X(int, close, (int))                                                                            \
  X(int, close_range, (unsigned int, unsigned int, int))                                          \
  X(void, closefrom, (int))                                                                       \
  X(int, dup, (int))                                                                              \
  X(int, dup2, (int, int))                                                                        \
  X(int, dup3, (int, int, int))                                                                   \
  X(void, _exit, (int))                                                                           \
  X(int, daemon, (int, int))                                                                      \
  X(int, execve, (const char *, char *const *, char *const *))                                    \
  X(int, execvpe, (const char *, char *const *, char *const *))                                   \
  X(int, fexecve, (int, char *const *, char *const *))                                            \
  X(int, posix_spawn, (pid_t *, const char *, const posix_spawn_file_actions_t *,                 \
                       const posix_spawnattr_t *, char *const *, char *const *))                  \
  X(int, posix_spawnp, (pid_t *, const char *, const posix_spawn_file_actions_t *,                \
                        const posix_spawnattr_t *, char *const *, char *const *))

/* Variadic ones keep their variadic type (the x86-64 ABI passes a vector-register count to them); their
 * libc_X takes the fixed arguments the shim forwards. */
#define SOBAS_REAL_VARIADIC(X)         \
  X(int, fcntl, (int, int, ...))       \
  X(int, fcntl64, (int, int, ...))     \
  X(int, prctl, (int, ...))            \
  X(long, syscall, (long, ...))

#define SOBAS_DECLARE_LIBC(ret, name, params) ret libc_##name params;
SOBAS_REAL_FUNCS(SOBAS_DECLARE_LIBC)
#undef SOBAS_DECLARE_LIBC
/* glibc's fcntl reads its third argument as a pointer-sized integer for every command, so forwarding
 * one `long` is exact for int and pointer arguments alike; the same holds for prctl and syscall. */
int libc_fcntl(int fd, int cmd, long arg);
int libc_fcntl64(int fd, int cmd, long arg);
int libc_prctl(int op, unsigned long a, unsigned long b, unsigned long c, unsigned long d);
long libc_syscall(long nr, long a, long b, long c, long d, long e, long f);

/* The resolved functions (NULL until the constructor ran). */
#define SOBAS_DECLARE_POINTER(ret, name, params) \
  extern ret(*sobas_real_##name) params __attribute__((visibility("hidden")));
SOBAS_REAL_FUNCS(SOBAS_DECLARE_POINTER)
SOBAS_REAL_VARIADIC(SOBAS_DECLARE_POINTER)
#undef SOBAS_DECLARE_POINTER

/* The real call inlined where it is hot: the resolved pointer, or libc_X's fallback before that. */
#define SOBAS_REAL(name, ...)                                                               \
  __extension__({                                                                           \
    __typeof__(sobas_real_##name) f_ = __atomic_load_n(&sobas_real_##name, __ATOMIC_RELAXED); \
    __builtin_expect(f_ != 0, 1) ? f_(__VA_ARGS__) : libc_##name(__VA_ARGS__);               \
  })

/* Resolves every real symbol with dlsym(RTLD_NEXT). Called once from the shim's constructor; until then
 * the socket and I/O calls go straight to the kernel with raw syscalls and the process-level calls
 * (fork, exec*, daemon, closefrom) resolve themselves on first use. */
void sobas_real_resolve(void);

#endif
