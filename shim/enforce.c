/* enforce.c — the levers measured to hold a flow at S (docs/kernel-facts.md): a receiver's TCP_WINDOW_CLAMP held by a locked SO_RCVBUF, a sender's SO_MAX_PACING_RATE. */
#include "enforce.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "real.h"

/* The window clamp a released (S_max) flow gets: more than any buffer the kernel grants. */
#define RELEASED_CLAMP (1 << 30)

/* net.core.rmem_max, read once: SO_RCVBUF is capped at it (host-wide, not per namespace). */
static int rmem_max(void) {
  static int cached; /* 0 = not read yet, -1 = unreadable */
  int v = __atomic_load_n(&cached, __ATOMIC_RELAXED);
  if (v) return v;
  v = -1;
  int fd = open("/proc/sys/net/core/rmem_max", O_RDONLY | O_CLOEXEC); /* open is not interposed */
  if (fd >= 0) {
    char buf[32];
    ssize_t n = libc_read(fd, buf, sizeof buf - 1);
    libc_close(fd);
    if (n > 0) {
      buf[n] = 0;
      long r = strtol(buf, NULL, 10);
      if (r > 0 && r < (1L << 30)) v = (int)r;
    }
  }
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

int sobas_enforce_hold(int fd, uint64_t s, struct sobas_hold *h) {
  if (s == 0 || s > RELEASED_CLAMP) return -EINVAL;
  /* Autotuning resets TCP_WINDOW_CLAMP each time it grows the buffer (measured: a clamp set in
   * slow start was gone 100 ms later). Locking the buffer stops that. The buffer must still fit S:
   * the kernel doubles SO_RCVBUF and offers a window of buffer × (payload/truesize ≈ 0.6), so asking
   * for 2·S leaves room; above rmem_max the lock would cap the window below S, and the clamp is
   * re-applied every window instead. A lifted S raises a locked buffer with it (never lowers it: a
   * smaller S needs no smaller buffer). */
  int max = rmem_max();
  if (max > 0 && (h->rcvbuf || s <= (uint64_t)max)) {
    uint64_t want = 2 * s < (uint64_t)max ? 2 * s : (uint64_t)max;
    if (want > h->rcvbuf && set_int(fd, SOL_SOCKET, SO_RCVBUF, (int)want) == 0) h->rcvbuf = want;
  }
  int r = set_int(fd, IPPROTO_TCP, TCP_WINDOW_CLAMP, (int)s);
  if (r == 0) h->s = s;
  return r;
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

int sobas_enforce_release(int fd, struct sobas_hold *h) {
  if (h->rcvbuf) {
    int max = rmem_max();
    if (max > 0 && set_int(fd, SOL_SOCKET, SO_RCVBUF, max) == 0) h->rcvbuf = (uint64_t)max;
  }
  h->s = 0;
  return set_int(fd, IPPROTO_TCP, TCP_WINDOW_CLAMP, RELEASED_CLAMP);
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

const char *sobas_enforce_lever(const struct sobas_hold *h) {
  return h->pace_Bps ? "pacing" : h->rcvbuf ? "lock+clamp" : "clamp";
}
