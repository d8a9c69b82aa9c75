/* track.h — the middle layer: which fds are TCP flows, what each flow moved, and its TCP_INFO time series. */
#ifndef SOBAS_TRACK_H
#define SOBAS_TRACK_H

#include <limits.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "config.h"
#include "flowtable.h"

/* The process's shim state. `active` is 0 for pass-through: SOBAS_DISABLE, a seccomp sandbox, or before
 * the constructor ran. */
struct sobas_proc {
  int active; /* atomic, read on every call */
  struct sobas_config cfg;
  struct sobas_flowtable ft;
  int pid;
  uint32_t uid;             /* the real uid, for the ring's records (read once) */
  char self_path[PATH_MAX]; /* this library, for LD_PRELOAD across exec */
};
extern struct sobas_proc sobas_proc;

enum { SOBAS_RX = 0, SOBAS_TX = 1 };

void sobas_track_socket(int fd, int domain, int type, int protocol);
void sobas_track_socketpair(const int sv[2]);
/* After connect() succeeded or is in progress. */
void sobas_track_connect(int fd, const struct sockaddr *addr, socklen_t len);
/* After accept() returned nfd; addr/len as the caller passed them (may be NULL). */
void sobas_track_accept(int lfd, int nfd, const struct sockaddr *addr, const socklen_t *len);
void sobas_track_setsockopt(int fd, int level, int name);
/* After a successful shutdown(SHUT_WR/RDWR): the sender has finished, take its last sample now. */
void sobas_track_shutdown(int fd, int how);
/* fds arriving in SCM_RIGHTS are new to this process: forget whatever their numbers held. */
void sobas_track_received_fds(const struct msghdr *msg);
/* Before the real close: last sample while the socket is still ours, then forget the fd. */
void sobas_track_close(int fd);
/* Before the real close_range / closefrom (hi inclusive). */
void sobas_track_close_range(unsigned lo, unsigned hi, int flags);
/* Before dup2/dup3 onto `nfd`: last sample of the flow it may end. */
void sobas_track_before_replace(int nfd);
/* After a successful dup/dup2/dup3/F_DUPFD: nfd now names what ofd names. */
void sobas_track_dup(int ofd, int nfd);
/* After daemon() in the child: fds 0-2 were replaced by /dev/null behind our back (unless noclose). */
void sobas_track_stdio_replaced(void);
/* In a forked child: refresh what names the process. */
void sobas_track_fork_child(void);
/* At normal process exit: record the end of every flow still open (the kernel closes them, not us). */
void sobas_track_exit(void);
/* Stop making syscalls of our own for the rest of the process (a seccomp filter is coming or is on). */
void sobas_track_quiet(void);

/* Slow paths of sobas_track_io (out of line so the fast path stays small). */
void sobas_track_classify(int fd, int dir, size_t n);
void sobas_track_check(int fd, struct sobas_flow *f, sobas_slot s);

/* After a read/write-like call moved n bytes on fd: the hot path. One slot load for fds that are not
 * tracked flows; for flows two relaxed atomics and a compare, the clock only every `stride` bytes. */
static inline void sobas_track_io(int fd, int dir, ssize_t n) {
  if (n <= 0 || !__atomic_load_n(&sobas_proc.active, __ATOMIC_RELAXED)) return;
  sobas_slot s = sobas_ft_get(&sobas_proc.ft, fd);
  unsigned kind = sobas_slot_kind(s);
  if (kind == SOBAS_FD_FLOW) {
    struct sobas_flow *f = sobas_ft_slot_flow(s);
    uint64_t total = __atomic_add_fetch(&f->app[dir], (uint64_t)n, __ATOMIC_RELAXED) +
                     __atomic_load_n(&f->app[dir ^ 1], __ATOMIC_RELAXED);
    if (total >= __atomic_load_n(&f->next_check, __ATOMIC_RELAXED)) sobas_track_check(fd, f, s);
  } else if (kind == SOBAS_FD_UNKNOWN || kind == SOBAS_FD_TCP) {
    sobas_track_classify(fd, dir, (size_t)n);
  }
}

#endif
