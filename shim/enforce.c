/* enforce.c — the levers measured to hold a flow at S (docs/kernel-facts.md): a receiver's TCP_WINDOW_CLAMP held by a locked SO_RCVBUF, a sender's SO_MAX_PACING_RATE. */
#include "enforce.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "real.h"

/* The window clamp a released (S_max) flow gets: more than any buffer the kernel grants. */
#define RELEASED_CLAMP (1 << 30)

/* SO_BUF_LOCK (Linux 5.15) reads and sets the socket's buffer locks; its bit 2 is the one SO_RCVBUF sets
 * (SOCK_RCVBUF_LOCK). glibc's headers may predate it. */
#ifndef SO_BUF_LOCK
#define SO_BUF_LOCK 72
#endif
#define RCVBUF_LOCK 2

/* The field-th number in a /proc/sys file, or -1 when it cannot be read (a sandbox without /proc). */
static int proc_int(const char *path, int field) {
  int fd = open(path, O_RDONLY | O_CLOEXEC); /* open is not interposed */
  if (fd < 0) return -1;
  char buf[64];
  ssize_t n = libc_read(fd, buf, sizeof buf - 1);
  libc_close(fd);
  if (n <= 0) return -1;
  buf[n] = 0;
  char *p = buf;
  long r = -1;
  for (int i = 0; i <= field; i++) {
    char *end;
    r = strtol(p, &end, 10);
    if (end == p) return -1;
    p = end;
  }
  return r > 0 && r < (1L << 30) ? (int)r : -1;
}

/* net.core.rmem_max, read once: SO_RCVBUF is capped at it (host-wide, not per namespace). */
static int rmem_max(void) {
  static int cached; /* 0 = not read yet, -1 = unreadable */
  int v = __atomic_load_n(&cached, __ATOMIC_RELAXED);
  if (v) return v;
  v = proc_int("/proc/sys/net/core/rmem_max", 0);
  __atomic_store_n(&cached, v, __ATOMIC_RELAXED);
  return v;
}

static int set_int(int fd, int level, int name, int v) {
  return libc_setsockopt(fd, level, name, &v, sizeof v) == 0 ? 0 : -errno;
}

static int get_int(int fd, int level, int name, int *v) {
  socklen_t len = sizeof *v;
  return libc_getsockopt(fd, level, name, v, &len) == 0 ? 0 : -errno;
}

/* Sets or clears the receive buffer's lock alone, keeping the send buffer's as it is. */
static int set_buf_lock(int fd, int on) {
  int locks;
  int r = get_int(fd, SOL_SOCKET, SO_BUF_LOCK, &locks);
  if (r != 0) return r;
  return set_int(fd, SOL_SOCKET, SO_BUF_LOCK, on ? locks | RCVBUF_LOCK : locks & ~RCVBUF_LOCK);
}

/* The window clamped at s, and recorded so that sobas_enforce_verify re-applies it. */
static int clamp_window(int fd, uint64_t s, struct sobas_hold *h) {
  int r = set_int(fd, IPPROTO_TCP, TCP_WINDOW_CLAMP, (int)s);
  if (r == 0) h->s = s;
  return r;
}

/* A buffer autotuning has grown to hold `want` (what SO_RCVBUF would be set to) or more is locked at
 * that size (SO_BUF_LOCK) instead of being set smaller, at a first hold and at one after a release alike:
 * the window is the clamp's either way, but a slow start's loss recovery keeps the old window's
 * out-of-order data in the buffer, and a buffer made smaller under it prunes that data, which the sender
 * then finds only by a timeout (SACK reneging). Measured on `gig` (docs/kernel-facts.md, "The first hold
 * never shrinks the buffer"). */
static void lock_as_grown(int fd, uint64_t want, struct sobas_hold *h) {
  int now; /* sk_rcvbuf: twice what SO_RCVBUF was set to */
  if (get_int(fd, SOL_SOCKET, SO_RCVBUF, &now) != 0 || (uint64_t)now / 2 < want) return;
  if (set_buf_lock(fd, 1) != 0) return;
  h->rcvbuf = (uint64_t)now / 2;
  h->unlocked = 0;
}

int sobas_enforce_hold(int fd, uint64_t s, struct sobas_hold *h) {
  if (s == 0 || s > RELEASED_CLAMP) return -EINVAL;
  /* Autotuning resets TCP_WINDOW_CLAMP each time it grows the buffer (measured: a clamp set in
   * slow start was gone 100 ms later). Locking the buffer stops that. The buffer must still fit S:
   * the kernel doubles SO_RCVBUF and offers a window of buffer × (payload/truesize ≈ 0.6), so asking
   * for 2·S leaves room; above rmem_max the lock would cap the window below S, and the clamp is
   * re-applied every window instead. A buffer not locked by us yet (a first hold, or one a release
   * unlocked) that autotuning grew past that is locked as it is (lock_as_grown), and a lifted S raises
   * a locked buffer with it: never lowered (a smaller S needs no smaller buffer). SO_RCVBUF locks the
   * buffer too. A release unlocks only a buffer we set, so a hold after one always gets here. */
  int max = rmem_max();
  if (max > 0 && (h->rcvbuf || s <= (uint64_t)max)) {
    uint64_t want = 2 * s < (uint64_t)max ? 2 * s : (uint64_t)max;
    if (!h->rcvbuf || h->unlocked) lock_as_grown(fd, want, h);
    if (want > h->rcvbuf && set_int(fd, SOL_SOCKET, SO_RCVBUF, (int)want) == 0) {
      h->rcvbuf = want;
      h->unlocked = 0;
    }
  }
  return clamp_window(fd, s, h);
}

static int set_pacing(int fd, uint64_t rate) {
  return libc_setsockopt(fd, SOL_SOCKET, SO_MAX_PACING_RATE, &rate, sizeof rate) == 0 ? 0 : -errno;
}

int sobas_enforce_verify(int fd, struct sobas_hold *h) {
  if (h->s == 0 || h->pace_Bps) return 0;
  int clamp;
  int r = get_int(fd, IPPROTO_TCP, TCP_WINDOW_CLAMP, &clamp);
  if (r != 0) return r;
  if ((uint64_t)clamp == h->s) return 0;
  r = set_int(fd, IPPROTO_TCP, TCP_WINDOW_CLAMP, (int)h->s);
  if (r != 0) return r;
  h->reapplied++;
  return 1;
}

/* Gives a released flow the buffer plain TCP's autotuning could reach, tcp_rmem[2] (per namespace,
 * read at each release: releases are rare), where the process may set it past rmem_max
 * (SO_RCVBUFFORCE needs CAP_NET_ADMIN); otherwise rmem_max. SO_RCVBUF's value is half the buffer. */
static void open_buffer(int fd, struct sobas_hold *h) {
  int max = rmem_max(), autotune = proc_int("/proc/sys/net/ipv4/tcp_rmem", 2) / 2;
  if (autotune > max && set_int(fd, SOL_SOCKET, SO_RCVBUFFORCE, autotune) == 0) {
    h->rcvbuf = (uint64_t)autotune;
    return;
  }
  if (max > 0 && set_int(fd, SOL_SOCKET, SO_RCVBUF, max) == 0) h->rcvbuf = (uint64_t)max;
}

int sobas_enforce_release(int fd, struct sobas_hold *h) {
  /* A locked buffer is opened and unlocked, so that the flow has what plain TCP would have had and
   * autotuning takes it on from there (docs/kernel-facts.md: left locked at rmem_max, a released
   * gig-tcp flow's window stopped at 5.2-6.5 MB; its loss recovery then filled that window with
   * out-of-order data, the sender could send nothing new to find a lost retransmission, and CUBIC cut
   * its window a second time). Where the kernel has no SO_BUF_LOCK the buffer stays locked. */
  if (h->rcvbuf) {
    open_buffer(fd, h);
    if (!h->unlocked && set_buf_lock(fd, 0) == 0) h->unlocked = 1;
  }
  h->s = 0;
  return set_int(fd, IPPROTO_TCP, TCP_WINDOW_CLAMP, RELEASED_CLAMP);
}

int sobas_enforce_ceiling(int fd, uint64_t s, struct sobas_hold *h) {
  if (s == 0 || s > RELEASED_CLAMP) return -EINVAL;
  return clamp_window(fd, s, h);
}

int sobas_enforce_pace(int fd, uint64_t s, uint64_t held, uint64_t now, struct sobas_hold *h) {
  if (s == 0 || held == 0) return -EINVAL;
  if (now == 0 || now > held) now = held;
  int r = now == h->pace_Bps ? 0 : set_pacing(fd, now);
  if (r != 0) return r;
  h->s = s;
  h->pace_Bps = now;
  h->held_Bps = held;
  return 0;
}

int sobas_enforce_unpace(int fd, struct sobas_hold *h) {
  h->s = 0;
  h->pace_Bps = h->held_Bps = 0;
  return set_pacing(fd, ~0ULL);
}

int sobas_enforce_wake(int fd, uint32_t bytes, struct sobas_hold *h) {
  if (bytes == h->lowat) return 0;
  if (h->lowat == 0) {
    int now;
    int r = get_int(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &now);
    if (r != 0) return r;
    if (now != 0) return -EEXIST; /* 0: the socket follows net.ipv4.tcp_notsent_lowat */
  }
  int r = set_int(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, (int)bytes);
  if (r == 0) h->lowat = bytes;
  return r;
}

static int set_cc(int fd, const char *name) {
  return libc_setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name, (socklen_t)strlen(name)) == 0 ? 0 : -errno;
}

/* Whether this process may switch a socket to reno and back to cubic now. The kernel lets a process set
 * an algorithm in net.ipv4.tcp_allowed_congestion_control, or any with CAP_NET_ADMIN over the socket's
 * network namespace; a socket of its own asks it exactly. Asked at each regrow (a few a flow), never
 * remembered: a server that drops root after fork (nginx's workers, sshd's session child) may no longer
 * set cubic where its parent could. The socket is closed at once; a sandbox that refuses it refuses the
 * switch. */
static int cc_switch_allowed(void) {
  int fd = libc_socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  int ok = set_cc(fd, "reno") == 0 && set_cc(fd, "cubic") == 0;
  libc_close(fd);
  return ok;
}

int sobas_enforce_regrow(int fd) {
  char name[16] = {0}; /* TCP_CA_NAME_MAX */
  socklen_t len = sizeof name - 1;
  if (libc_getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name, &len) != 0) return -errno;
  if (strcmp(name, "cubic") != 0) return 1;
  if (!cc_switch_allowed()) return -EPERM;
  int r = set_cc(fd, "reno");
  return r ? r : set_cc(fd, "cubic");
}

const char *sobas_enforce_lever(const struct sobas_hold *h) {
  return h->pace_Bps ? "pacing" : h->rcvbuf && !h->unlocked ? "lock+clamp" : "clamp";
}
