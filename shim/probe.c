/* probe.c — the side-probe client: a helper thread sends each probed flow's 100-byte probes and train request to the peer's sobasd and reads the replies. */
#include "probe.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "hb.h"
#include "probe_est.h"
#include "real.h"

#define SLOTS 64                        /* probed flows per process */
#define INTERVAL_NS 10000000LL          /* the paper's probe period: 100 B every 10 ms = 80 kb/s */
#define ECHO_BOUND_NS 500000000LL       /* no echo for this long (or 4 base RTTs if longer): give up */
#define IDLE_NS 1000000000LL            /* a flow whose sampler has not looked for 1 s is idle: pause */
/* Trains, and packets per train, we ask for (sobasd may send fewer). Each train is a burst at the
 * sender's line rate into the buffer the flow's slow start is filling. The paper's 5 trains of 32 (48 KB
 * each) on `shallow` (a 125 KB buffer) left 7 of 17 sobas runs far under A (41.9-67.4 of 77 Mb/s: an early
 * slow-start loss 0.1 s after the trains, then 4-8 s of CUBIC regrowth), linux default 4 of 43; 5 of 16
 * left none of 7 but read C' at 1 Gb/s off by over 15% in 4 of 19 tries (168 µs of dispersion beside
 * this host's stalls); 8 of 16: none of 7 on `shallow`, none of 13 at 1 Gb/s (851-1025 Mb/s). */
#define TRAINS 8
#define TRAIN_LEN 16
#define TRAIN_WAIT_NS 1000000000LL      /* trains not complete a second after the request: use what came */
#define TRAIN_QUIET_NS 50000000LL       /* no train packet for this long after some came: the rest were lost
                                           (sobasd spaces its trains 10 ms apart) */
#define TRAIN_TRIES 3                   /* requests sent when nothing at all comes back */
#define MIN_TRAINS 3                    /* usable trains needed for C' */
#define RCVBUF (1 << 20)                /* holds a whole train set (up to 8·64·1.5 KB) between two wake-ups */

struct slot {
  uint32_t gen;
  uint8_t used, status, none_why, paused;
  uint8_t fam; /* 4 or 6: which socket */
  struct sobas_probe_flow flow;
  struct sockaddr_storage to;
  socklen_t to_len;
  uint32_t nonce, seq;
  uint64_t sent;
  int64_t opened_ns, next_send_ns, last_echo_ns, last_read_ns;
  struct sobas_echo_est echo;
  /* trains: 0 to request, 1 requested, 2 over */
  uint8_t train_phase, train_tries;
  uint16_t train_size, train_count;
  uint32_t req_id, train_got;
  int64_t req_ns, train_last_ns;
  int64_t arr[TRAINS][SOBAS_TRAIN_MAX_LEN]; /* kernel receive times (CLOCK_REALTIME ns), 0 = not arrived */
  uint64_t cap_bps;
  uint32_t cap_trains;
  uint8_t sender_leads; /* an echo said the flow's sender runs sobas and steers it */
  uint8_t yields;       /* the flow stands down when its sender leads: trains withheld are not asked again */
  uint64_t *poke; /* the flow's next-check mark: zeroed so the host's next read looks at the news */
  uint32_t close_req; /* atomic: the handle its flow closed with; the helper frees the slot */
};

static struct {
  pthread_mutex_t mu;
  struct slot *slots; /* mapped on first open */
  int fd[2];          /* IPv4, IPv6 sockets; -1 until needed (atomic: read by the host's close path) */
  pthread_t th;
  int started;        /* the thread exists and is joinable */
  int stopped;        /* atomic: never probe again in this process; STOP_JOIN when a joiner waits */
  uint32_t next_gen;
  uint32_t seed;
} P = {.mu = PTHREAD_MUTEX_INITIALIZER, .fd = {-1, -1}};

static int64_t realtime_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* xorshift seeded from both clocks and the slot address: a nonce only has to be unguessable by an
 * off-path sender of forged echoes, not cryptographic. */
static uint32_t next_random(void) {
  if (P.seed == 0) P.seed = (uint32_t)(realtime_ns() ^ sobas_now_ns() ^ (uintptr_t)&P) | 1u;
  P.seed ^= P.seed << 13;
  P.seed ^= P.seed >> 17;
  P.seed ^= P.seed << 5;
  return P.seed;
}

/* The helper's fds live high (the host numbers its own from the bottom) and close-on-exec. */
static int hide_fd(int fd) {
  struct rlimit rl;
  long base = 1024;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)base) base = (long)rl.rlim_cur;
  base = base > 96 ? base - 32 : 3;
  int hi = libc_fcntl(fd, F_DUPFD_CLOEXEC, base);
  if (hi < 0) return fd; /* no room up there: keep the low number, still close-on-exec */
  libc_close(fd);
  return hi;
}

/* Below this many files per process the helper opens none: its two sockets would come out of a budget
 * the host sized for itself (a program at RLIMIT_NOFILE 32 would get EMFILE two files early). */
#define FD_LIMIT_MIN 128

static int fd_limit_too_low(void) {
  struct rlimit rl;
  return getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < FD_LIMIT_MIN;
}

static int open_socket(int fam) {
  int fd = libc_socket(fam == 6 ? AF_INET6 : AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return -1;
  int one = 1, rcvbuf = RCVBUF;
  /* Kernel receive times: the helper wakes every 10 ms, a train's dispersion is microseconds. */
  libc_setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one);
  libc_setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
  if (fam == 6) libc_setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
  return hide_fd(fd);
}

static const uint8_t v4_mapped[12] = {[10] = 0xff, [11] = 0xff};

/* The wire's view of an address: IPv4 (also when v4-mapped on an IPv6 socket) or IPv6. */
static uint8_t wire_addr(const struct sobas_addr *a, uint8_t out[16]) {
  memset(out, 0, 16);
  if (a->family == AF_INET) {
    memcpy(out, a->addr, 4);
    return 4;
  }
  if (a->family == AF_INET6 && memcmp(a->addr, v4_mapped, 12) == 0) {
    memcpy(out, a->addr + 12, 4);
    return 4;
  }
  if (a->family == AF_INET6) {
    memcpy(out, a->addr, 16);
    return 6;
  }
  return 0;
}

int sobas_probe_flow_of(const struct sobas_addr *rcv, const struct sobas_addr *snd, struct sobas_probe_flow *fl) {
  memset(fl, 0, sizeof *fl);
  fl->rcv_port = rcv->port;
  fl->snd_port = snd->port;
  uint8_t fam = wire_addr(snd, fl->snd_addr);
  if (fam == 0 || wire_addr(rcv, fl->rcv_addr) != fam) return -1;
  fl->family = fam;
  return 0;
}

static void poke(struct slot *s);

static void set_none(struct slot *s, enum sobas_probe_none why) {
  s->status = SOBAS_PROBE_NONE;
  s->none_why = (uint8_t)why;
  poke(s);
}

static void send_msg(struct slot *s, struct sobas_probe_msg *m) {
  uint8_t buf[SOBAS_PROBE_LEN];
  m->flow = s->flow;
  m->nonce = s->nonce;
  int n = sobas_probe_encode(m, buf, sizeof buf);
  int fd = __atomic_load_n(&P.fd[s->fam == 6], __ATOMIC_RELAXED);
  if (n > 0 && fd >= 0)
    libc_sendto(fd, buf, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL, (const struct sockaddr *)&s->to, s->to_len);
}

static void send_probe(struct slot *s) {
  struct sobas_probe_msg m = {.type = SOBAS_MSG_PROBE, .seq = s->seq++, .ts = (uint64_t)realtime_ns()};
  send_msg(s, &m);
  s->sent++;
}

static void send_train_request(struct slot *s, int64_t now) {
  memset(s->arr, 0, sizeof s->arr);
  s->train_got = 0;
  s->req_id = next_random();
  s->req_ns = now;
  s->train_tries++;
  s->train_phase = 1;
  struct sobas_probe_msg m = {.type = SOBAS_MSG_TRAIN_REQ, .seq = s->req_id, .trains = TRAINS,
                              .train_len = TRAIN_LEN, .pkt_size = s->train_size};
  send_msg(s, &m);
}

/* C' is in or the probe gave up: have the flow's next read act on it now, not at its window's end
 * (slow start doubles every RTT). Flow records are never unmapped, and a closed slot pokes nothing. */
static void poke(struct slot *s) { __atomic_store_n(s->poke, 0, __ATOMIC_RELAXED); }

/* C' from the complete trains when there are enough of them: a packet lost inside a train may have
 * been lost before the bottleneck (then the rest are closer together than the link spaced them) or
 * after it, and the dispersion cannot tell which. Measured: 1% random loss ahead of the queue made
 * C' 3% high. */
static void finish_trains(struct slot *s) {
  uint64_t all[TRAINS] = {0}, whole[TRAINS] = {0};
  uint32_t ip = sobas_train_ip_bytes(s->train_size, s->fam), n_all = 0, n_whole = 0;
  for (int t = 0; t < TRAINS && s->train_count >= 2; t++) {
    all[t] = sobas_train_rate_bps(s->arr[t], s->train_count, ip);
    int complete = 1;
    for (uint32_t i = 0; i < s->train_count; i++) complete &= s->arr[t][i] != 0;
    if (complete) whole[t] = all[t];
    n_all += all[t] != 0;
    n_whole += whole[t] != 0;
  }
  int use_whole = n_whole >= MIN_TRAINS;
  s->cap_trains = use_whole ? n_whole : n_all;
  s->cap_bps = sobas_capacity_bps(use_whole ? whole : all, TRAINS, MIN_TRAINS);
  s->train_phase = 2;
  poke(s);
}

static int64_t echo_bound(const struct slot *s) {
  int64_t b = 4LL * s->echo.min_rtt_us * 1000;
  return b > ECHO_BOUND_NS ? b : ECHO_BOUND_NS;
}

/* One slot's due work; lowers *wake to when it next needs the thread. */
static void service(struct slot *s, int64_t now, int64_t *wake) {
  if (s->status == SOBAS_PROBE_NONE) return;
  if (now - s->last_read_ns > IDLE_NS) { /* idle or closed behind our back: stop sending */
    s->paused = 1;
    return;
  }
  if (s->paused) { /* back from idle: the echo clock restarts */
    s->paused = 0;
    s->last_echo_ns = now;
    s->next_send_ns = now;
  }
  int64_t since = now - (s->status == SOBAS_PROBE_PENDING ? s->opened_ns : s->last_echo_ns);
  if (since > echo_bound(s)) {
    set_none(s, s->status == SOBAS_PROBE_PENDING ? SOBAS_NONE_NO_ECHO : SOBAS_NONE_SILENT);
    return;
  }
  if (s->train_phase == 0) send_train_request(s, now);
  if (s->train_phase == 1 && s->train_got && now - s->train_last_ns > TRAIN_QUIET_NS) finish_trains(s);
  if (s->train_phase == 1 && now - s->req_ns > TRAIN_WAIT_NS) {
    /* sobasd withholds a led flow's first trains (docs/probe.md): one that stands down has no use for them. */
    if (s->train_got == 0 && s->train_tries < TRAIN_TRIES && !(s->sender_leads && s->yields))
      send_train_request(s, now);
    else
      finish_trains(s);
  }
  if (now >= s->next_send_ns) {
    send_probe(s);
    /* A thread that fell behind (a stopped process) does not burst to catch up. */
    s->next_send_ns = now - s->next_send_ns > INTERVAL_NS ? now + INTERVAL_NS : s->next_send_ns + INTERVAL_NS;
  }
  if (s->next_send_ns < *wake) *wake = s->next_send_ns;
  if (s->train_phase == 1 && s->req_ns + TRAIN_WAIT_NS < *wake) *wake = s->req_ns + TRAIN_WAIT_NS;
  if (s->train_phase == 1 && s->train_got && s->train_last_ns + TRAIN_QUIET_NS < *wake)
    *wake = s->train_last_ns + TRAIN_QUIET_NS;
}

static int same_flow(const struct sobas_probe_flow *a, const struct sobas_probe_flow *b) {
  return a->family == b->family && a->rcv_port == b->rcv_port && a->snd_port == b->snd_port &&
         memcmp(a->rcv_addr, b->rcv_addr, 16) == 0 && memcmp(a->snd_addr, b->snd_addr, 16) == 0;
}

static int same_sockaddr(const struct sockaddr_storage *a, const struct sockaddr_storage *b) {
  if (a->ss_family != b->ss_family) return 0;
  if (a->ss_family == AF_INET) {
    const struct sockaddr_in *x = (const void *)a, *y = (const void *)b;
    return x->sin_port == y->sin_port && x->sin_addr.s_addr == y->sin_addr.s_addr;
  }
  const struct sockaddr_in6 *x = (const void *)a, *y = (const void *)b;
  return x->sin6_port == y->sin6_port && memcmp(&x->sin6_addr, &y->sin6_addr, 16) == 0;
}

/* A reply counts only from the flow's sobasd, about the flow, with the flow's nonce. */
static struct slot *owner_of(const struct sobas_probe_msg *m, const struct sockaddr_storage *from) {
  for (int i = 0; i < SLOTS; i++) {
    struct slot *s = &P.slots[i];
    if (s->used && s->nonce == m->nonce && same_flow(&s->flow, &m->flow) && same_sockaddr(&s->to, from)) return s;
  }
  return NULL;
}

static void on_reply(const struct sobas_probe_msg *m, const struct sockaddr_storage *from, int64_t rx_real,
                     int64_t now) {
  struct slot *s = owner_of(m, from);
  if (!s || s->status == SOBAS_PROBE_NONE) return;
  if (m->type == SOBAS_MSG_ECHO) {
    if ((int32_t)(s->seq - m->seq) <= 0) return; /* not a probe we sent */
    int64_t rtt = rx_real - (int64_t)m->ts;
    if (rtt <= 0 || rtt > 60LL * 1000000000) return; /* the wall clock stepped */
    sobas_echo_add(&s->echo, m->rsp_seq, (uint32_t)(rtt / 1000));
    s->last_echo_ns = now;
    s->status = SOBAS_PROBE_ACTIVE;
    if (m->flags & SOBAS_PROBE_F_SENDER_LEADS) s->sender_leads = 1;
  } else if (m->type == SOBAS_MSG_TRAIN) {
    if (s->train_phase != 1 || m->seq != s->req_id || m->trains >= TRAINS) return;
    if (s->train_got && m->count != s->train_count) return;
    s->train_count = m->count;
    s->train_size = m->pkt_size;
    if (s->arr[m->trains][m->train_len] == 0) s->train_got++;
    s->arr[m->trains][m->train_len] = rx_real;
    s->train_last_ns = now;
    if (s->train_got == (uint32_t)TRAINS * s->train_count) finish_trains(s);
  }
}

static void drain(int fd, int64_t now) {
  for (int i = 0; i < 1024; i++) { /* bounded: a flood cannot keep the thread from sending */
    uint8_t buf[SOBAS_TRAIN_MAX_SIZE + 1];
    union {
      struct cmsghdr align;
      char b[CMSG_SPACE(sizeof(struct timespec))];
    } ctl;
    struct sockaddr_storage from;
    struct iovec iov = {buf, sizeof buf};
    struct msghdr mh = {.msg_name = &from, .msg_namelen = sizeof from, .msg_iov = &iov, .msg_iovlen = 1,
                        .msg_control = ctl.b, .msg_controllen = sizeof ctl.b};
    ssize_t n = libc_recvmsg(fd, &mh, MSG_DONTWAIT);
    if (n < 0) return;
    int64_t rx = 0;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
        struct timespec ts;
        memcpy(&ts, CMSG_DATA(c), sizeof ts);
        rx = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
      }
    if (rx == 0) rx = realtime_ns();
    struct sobas_probe_msg m;
    if (sobas_probe_decode(buf, (size_t)n, &m) == SOBAS_PROBE_OK) on_reply(&m, &from, rx, now);
  }
}

/* How the helper is stopped: at exit nobody waits for it, before a seccomp filter its stopper joins it. */
enum { STOP_DETACH = 1, STOP_JOIN = 2 };

static void *probe_main(void *arg) {
  (void)arg;
  pthread_setname_np(pthread_self(), "sobas-probe");
  pthread_mutex_lock(&P.mu);
  while (!__atomic_load_n(&P.stopped, __ATOMIC_ACQUIRE)) {
    int64_t now = sobas_now_ns(), wake = now + INTERVAL_NS;
    for (int i = 0; i < SLOTS; i++) {
      struct slot *s = &P.slots[i];
      if (s->used && __atomic_load_n(&s->close_req, __ATOMIC_ACQUIRE) == (s->gen << 8 | (uint32_t)i)) s->used = 0;
      if (s->used) service(s, now, &wake);
    }
    struct pollfd pfd[2];
    nfds_t n = 0;
    for (int i = 0; i < 2; i++)
      if (P.fd[i] >= 0) pfd[n++] = (struct pollfd){.fd = P.fd[i], .events = POLLIN};
    pthread_mutex_unlock(&P.mu);
    int64_t wait = wake - now;
    if (wait < 0) wait = 0;
    if (wait > INTERVAL_NS) wait = INTERVAL_NS; /* a stop request is seen within one period */
    struct timespec ts = {wait / 1000000000, wait % 1000000000};
    ppoll(pfd, n, &ts, NULL);
    pthread_mutex_lock(&P.mu);
    if (__atomic_load_n(&P.stopped, __ATOMIC_ACQUIRE)) break;
    now = sobas_now_ns();
    /* The numbers may have moved (the host dup2'd over one) since the poll: read them again. */
    for (int i = 0; i < 2; i++)
      if (P.fd[i] >= 0) drain(P.fd[i], now);
  }
  /* Stopped at exit, where the stopper must not block (it may be _exit in a signal handler): the
   * helper lets itself go, or a thread sanitizer in the host reports it leaked and fails the host. */
  if (__atomic_load_n(&P.stopped, __ATOMIC_ACQUIRE) == STOP_DETACH) {
    pthread_detach(pthread_self());
    P.started = 0;
  }
  pthread_mutex_unlock(&P.mu);
  return NULL;
}

/* Under P.mu. The thread is born with every signal blocked: the host's handlers never run on it. */
static int start_thread(void) {
  if (P.started) return 0;
  sigset_t all, old;
  sigfillset(&all);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 256 * 1024);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  int r = pthread_create(&P.th, &attr, probe_main, NULL);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  pthread_attr_destroy(&attr);
  if (r != 0) return -1;
  P.started = 1;
  return 0;
}

static void fill_to(struct slot *s, const struct sobas_addr *peer, uint16_t port) {
  memset(&s->to, 0, sizeof s->to);
  if (s->fam == 4) {
    struct sockaddr_in *in = (struct sockaddr_in *)&s->to;
    in->sin_family = AF_INET;
    in->sin_port = htons(port);
    memcpy(&in->sin_addr, s->flow.snd_addr, 4);
    s->to_len = sizeof *in;
  } else {
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&s->to;
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons(port);
    memcpy(&in6->sin6_addr, peer->addr, 16);
    s->to_len = sizeof *in6;
  }
}

uint32_t sobas_probe_open(const struct sobas_addr *local, const struct sobas_addr *peer, uint16_t port,
                          uint32_t mss, int yields, uint64_t *poke_at, enum sobas_probe_none *why) {
  *why = SOBAS_NONE_NO_SOCKET;
  if (__atomic_load_n(&P.stopped, __ATOMIC_ACQUIRE)) return 0;
  struct sobas_probe_flow fl;
  if (sobas_probe_flow_of(local, peer, &fl) != 0) return 0;
  uint8_t fam = fl.family;
  /* Never wait for the helper in the host's I/O path (it may even be a signal handler's): busy now,
   * the flow asks again at its next check. */
  *why = SOBAS_NONE_BUSY;
  if (pthread_mutex_trylock(&P.mu) != 0) return 0;
  uint32_t handle = 0;
  *why = SOBAS_NONE_FD_LIMIT;
  if (P.fd[fam == 6] < 0 && fd_limit_too_low()) goto out;
  *why = SOBAS_NONE_NO_SOCKET;
  if (!P.slots) {
    void *m = mmap(NULL, sizeof(struct slot) * SLOTS, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    P.slots = m == MAP_FAILED ? NULL : m;
    for (int i = 0; P.slots && i < SLOTS; i++) SOBAS_HB_ATOMIC(&P.slots[i].close_req);
    SOBAS_HB_ATOMIC(&P.stopped);
  }
  int fi = fam == 6;
  if (P.slots && P.fd[fi] < 0) __atomic_store_n(&P.fd[fi], open_socket(fam), __ATOMIC_RELAXED);
  if (!P.slots || P.fd[fi] < 0 || start_thread() != 0) goto out;
  *why = SOBAS_NONE_NO_SLOT;
  for (int i = 0; i < SLOTS; i++) {
    struct slot *s = &P.slots[i];
    if (s->used) continue;
    uint32_t gen = ++P.next_gen & 0xffffff;
    if (gen == 0) gen = P.next_gen = 1;
    memset(s, 0, sizeof *s);
    s->gen = gen;
    s->used = 1;
    s->status = SOBAS_PROBE_PENDING;
    s->fam = fam;
    s->flow = fl;
    s->poke = poke_at;
    s->yields = (uint8_t)(yields != 0);
    fill_to(s, peer, port);
    s->nonce = next_random();
    /* Train packets as large as the flow's own segments: what the path carries unfragmented. */
    uint32_t size = mss ? mss + 40 - (fam == 6 ? 48 : 28) : SOBAS_TRAIN_MAX_SIZE;
    s->train_size = (uint16_t)(size > SOBAS_TRAIN_MAX_SIZE ? SOBAS_TRAIN_MAX_SIZE
                               : size < SOBAS_TRAIN_MIN_SIZE ? SOBAS_TRAIN_MIN_SIZE : size);
    s->opened_ns = s->last_read_ns = s->next_send_ns = sobas_now_ns();
    handle = gen << 8 | (uint32_t)i;
    break;
  }
out:
  pthread_mutex_unlock(&P.mu);
  return handle;
}

static struct slot *slot_of(uint32_t handle) {
  uint32_t i = handle & 0xff;
  if (handle == 0 || i >= SLOTS || !P.slots) return NULL;
  struct slot *s = &P.slots[i];
  return s->used && s->gen == handle >> 8 ? s : NULL;
}

int sobas_probe_read(uint32_t handle, struct sobas_probe_view *v, int patient) {
  memset(v, 0, sizeof *v);
  /* Busy: this window goes without, nothing is lost. A flow's last read (its close record) waits up
   * to ~2 ms for the helper's turn to end, in 50 µs naps: never unbounded. */
  int tries = patient ? 40 : 1;
  while (pthread_mutex_trylock(&P.mu) != 0) {
    if (--tries == 0) return 1;
    struct timespec nap = {0, 50000};
    nanosleep(&nap, NULL);
  }
  struct slot *s = slot_of(handle);
  if (s) {
    struct sobas_echo_window w;
    sobas_echo_take(&s->echo, &w);
    v->status = (enum sobas_probe_status)s->status;
    v->none_why = (enum sobas_probe_none)s->none_why;
    v->echoes = w.echoes;
    v->rtt_avg_us = w.rtt_avg_us;
    v->rtt_max_us = w.rtt_max_us;
    v->rtt_least_us = w.rtt_least_us;
    v->rtt_min_us = w.rtt_min_us;
    v->lost = w.lost;
    v->lost_total = w.lost_total;
    v->received_total = w.received_total;
    v->sent_total = s->sent;
    v->sender_leads = s->sender_leads;
    s->last_read_ns = sobas_now_ns();
  }
  pthread_mutex_unlock(&P.mu);
  return s ? 0 : -1;
}

int sobas_probe_capacity(uint32_t handle, uint64_t *cap_bps, uint32_t *trains) {
  if (pthread_mutex_trylock(&P.mu) != 0) return 0; /* asked again at the next check */
  struct slot *s = slot_of(handle);
  int final = s && (s->train_phase == 2 || s->status == SOBAS_PROBE_NONE);
  if (final) {
    *cap_bps = s->cap_bps;
    *trains = s->cap_trains;
  }
  pthread_mutex_unlock(&P.mu);
  return final;
}

/* Lock-free (close may come from a signal handler): the helper frees the slot on its next turn. A slot
 * reused since carries another generation, so a stale close cannot free it. */
void sobas_probe_close(uint32_t handle) {
  uint32_t i = handle & 0xff;
  if (handle == 0 || i >= SLOTS || !P.slots) return;
  __atomic_store_n(&P.slots[i].close_req, handle, __ATOMIC_RELEASE);
}

int sobas_probe_owns_fd(int fd) {
  return fd >= 0 && (fd == __atomic_load_n(&P.fd[0], __ATOMIC_RELAXED) ||
                     fd == __atomic_load_n(&P.fd[1], __ATOMIC_RELAXED));
}

int sobas_probe_own_fds(int out[2]) {
  int a = __atomic_load_n(&P.fd[0], __ATOMIC_RELAXED), b = __atomic_load_n(&P.fd[1], __ATOMIC_RELAXED), n = 0;
  if (a >= 0) out[n++] = a;
  if (b >= 0) out[n++] = b;
  if (n == 2 && out[0] > out[1]) {
    out[0] = b;
    out[1] = a;
  }
  return n;
}

void sobas_probe_vacate_fd(int fd) {
  pthread_mutex_lock(&P.mu);
  for (int i = 0; i < 2; i++) {
    if (P.fd[i] != fd) continue;
    int moved = libc_fcntl(fd, F_DUPFD_CLOEXEC, fd + 1);
    __atomic_store_n(&P.fd[i], moved, __ATOMIC_RELAXED); /* -1 if no room: that family's probes fall back */
    libc_close(fd);
  }
  pthread_mutex_unlock(&P.mu);
}

void sobas_probe_stop(int join) {
  __atomic_store_n(&P.stopped, join ? STOP_JOIN : STOP_DETACH, __ATOMIC_RELEASE);
  if (!join) return;
  pthread_mutex_lock(&P.mu);
  int joinable = P.started && !pthread_equal(P.th, pthread_self());
  P.started = 0;
  pthread_mutex_unlock(&P.mu);
  if (joinable) pthread_join(P.th, NULL);
}

void sobas_probe_fork_child(void) {
  /* Only the forking thread survives: the lock may have been held by the helper, which is gone. */
  pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
  P.mu = fresh;
  P.started = 0;
  for (int i = 0; i < 2; i++)
    if (P.fd[i] >= 0) {
      libc_close(P.fd[i]);
      __atomic_store_n(&P.fd[i], -1, __ATOMIC_RELAXED);
    }
  /* The parent's flows are probed by the parent; the child's handles go stale and open afresh. */
  if (P.slots)
    for (int i = 0; i < SLOTS; i++) P.slots[i].used = 0;
  P.seed = 0;
}

const char *sobas_probe_status_name(enum sobas_probe_status s) {
  static const char *const names[] = {"off", "pending", "active", "none"};
  return (unsigned)s < 4 ? names[s] : "?";
}

const char *sobas_probe_none_name(enum sobas_probe_none w) {
  static const char *const names[] = {"-", "no-echo", "silent", "no-socket", "no-slot", "busy", "fd-limit"};
  return (unsigned)w < sizeof names / sizeof *names ? names[w] : "?";
}
