/* track.c — classifies fds, keeps one flow record per TCP socket, samples TCP_INFO in 2·RTT windows. */
#include "track.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <unistd.h>
#include <linux/tcp.h> /* the kernel's struct tcp_info; glibc's netinet/tcp.h copy is older */
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "clock.h"
#include "enforce.h"
#include "hb.h"
#include "log.h"
#include "pace.h"
#include "peer_steers.h"
#include "probe.h"
#include "real.h"
#include "ringw.h"
#include "sobas/steered.h"

struct sobas_proc sobas_proc;

/* Every entry point from the interposed layer keeps the host's errno: the shim's own syscalls fail
 * routinely (ENOTSOCK while classifying, ENOTCONN on a listener) and must leave no trace. */
static void restore_errno(const int *saved) { errno = *saved; }
#define KEEP_ERRNO int saved_errno_ __attribute__((cleanup(restore_errno))) = errno

#define STRIDE_MIN (16u * 1024)
#define STRIDE_MAX (4u * 1024 * 1024)

static int active(void) { return __atomic_load_n(&sobas_proc.active, __ATOMIC_RELAXED); }

/* glibc's vfork child runs in its parent's memory with its own fd table: what it closes or dups before
 * exec must not change the parent's table. Checked (one getpid) only on the fd set-up calls such a child
 * makes (close of a flow, dup*, close_range, closefrom), never per read/write or per connection. */
static int may_change(void) { return active() && getpid() == sobas_proc.pid; }
static int logging(void) { return sobas_proc.cfg.log_path[0] != '\0'; }
/* bdp, drs or fixed: a seed's policy sets receiving windows instead of the SOBAS engine. */
static int seed_policy(void) { return sobas_proc.cfg.policy >= SOBAS_POLICY_BDP; }
static enum sobas_state flow_state(const struct sobas_flow *f) { return seed_policy() ? f->pol.state : f->eng.state; }

static const char *const role_names[] = {"none", "receiver", "sender", "both"};
static const char *const origin_names[] = {"connect", "accept", "inherited"};

/* Mostly-one-way flows get the role of their direction; 8:1 leaves request/response chatter out. */
static enum sobas_role role_of(const struct sobas_flow *f) {
  uint64_t rx = __atomic_load_n(&f->app[SOBAS_RX], __ATOMIC_RELAXED);
  uint64_t tx = __atomic_load_n(&f->app[SOBAS_TX], __ATOMIC_RELAXED);
  if (rx == 0 && tx == 0) return SOBAS_ROLE_NONE;
  if (rx >= 8 * tx) return SOBAS_ROLE_RECEIVER;
  if (tx >= 8 * rx) return SOBAS_ROLE_SENDER;
  return SOBAS_ROLE_BOTH;
}

static int addr_from_sockaddr(struct sobas_addr *out, const struct sockaddr *sa, socklen_t len) {
  memset(out, 0, sizeof *out);
  if (!sa) return -1;
  if (sa->sa_family == AF_INET && len >= (socklen_t)sizeof(struct sockaddr_in)) {
    const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
    out->family = AF_INET;
    out->port = ntohs(in->sin_port);
    memcpy(out->addr, &in->sin_addr, 4);
    return 0;
  }
  if (sa->sa_family == AF_INET6 && len >= (socklen_t)sizeof(struct sockaddr_in6)) {
    const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
    out->family = AF_INET6;
    out->port = ntohs(in6->sin6_port);
    memcpy(out->addr, &in6->sin6_addr, 16);
    return 0;
  }
  return -1;
}

static int is_loopback(const struct sobas_addr *a) {
  static const uint8_t v6_loop[16] = {[15] = 1};
  static const uint8_t v4_mapped[12] = {[10] = 0xff, [11] = 0xff};
  if (a->family == AF_INET) return a->addr[0] == 127;
  if (a->family == AF_INET6)
    return memcmp(a->addr, v6_loop, 16) == 0 || (memcmp(a->addr, v4_mapped, 12) == 0 && a->addr[12] == 127);
  return 0;
}

static int name_of(int fd, struct sobas_addr *out, int peer) {
  struct sockaddr_storage ss;
  socklen_t len = sizeof ss;
  /* getpeername/getsockname are not interposed: the plain libc calls are the real ones. */
  int r = peer ? getpeername(fd, (struct sockaddr *)&ss, &len) : getsockname(fd, (struct sockaddr *)&ss, &len);
  return r == 0 ? addr_from_sockaddr(out, (struct sockaddr *)&ss, len) : -1;
}

/* TCP_INFO, read by the length this kernel returns: fields past it stay 0 and are flagged absent. */
static int take_sample(int fd, struct sobas_sample *s) {
  union {
    struct tcp_info ti;
    unsigned char raw[512];
  } u;
  memset(&u, 0, sizeof u);
  socklen_t len = sizeof u;
  if (libc_getsockopt(fd, IPPROTO_TCP, TCP_INFO, &u, &len) != 0) return -errno;
  const struct tcp_info *ti = &u.ti;
  memset(s, 0, sizeof *s);
  s->t_ns = sobas_now_ns();
  s->state = ti->tcpi_state;
  s->bytes_received = ti->tcpi_bytes_received;
  s->bytes_acked = ti->tcpi_bytes_acked;
  s->rcv_rtt_us = ti->tcpi_rcv_rtt;
  s->rtt_us = ti->tcpi_rtt;
  s->min_rtt_us = ti->tcpi_min_rtt;
  s->snd_cwnd = ti->tcpi_snd_cwnd;
  s->snd_ssthresh = ti->tcpi_snd_ssthresh;
  s->snd_mss = ti->tcpi_snd_mss;
  s->rcv_mss = ti->tcpi_rcv_mss;
  s->rcv_space = ti->tcpi_rcv_space;
  s->total_retrans = ti->tcpi_total_retrans;
  if (len >= offsetof(struct tcp_info, tcpi_rcv_ooopack) + 4) {
    s->rcv_ooopack = ti->tcpi_rcv_ooopack;
    s->have |= SOBAS_HAVE_RCV_OOOPACK;
  }
  if (len >= offsetof(struct tcp_info, tcpi_delivered) + 4) {
    s->delivered = ti->tcpi_delivered;
    s->have |= SOBAS_HAVE_DELIVERED;
  }
  if (len >= offsetof(struct tcp_info, tcpi_snd_wnd) + 4) {
    s->busy_us = ti->tcpi_busy_time;
    s->rwnd_limited_us = ti->tcpi_rwnd_limited;
    s->sndbuf_limited_us = ti->tcpi_sndbuf_limited;
    s->snd_wnd = ti->tcpi_snd_wnd;
    s->app_limited = ti->tcpi_delivery_rate_app_limited;
    s->delivery_bps = ti->tcpi_delivery_rate * 8;
    s->have |= SOBAS_HAVE_CHRONO;
  }
  /* tcpi_rcv_wnd (Linux 6.2+) follows tcpi_snd_wnd; Debian 12's uapi headers predate it, so it is read
   * at its ABI offset. Checked on 6.18 against `ss -tin` rcv_wnd (docs/kernel-facts.md). */
  size_t rcv_wnd_off = offsetof(struct tcp_info, tcpi_snd_wnd) + 4;
  if (len >= rcv_wnd_off + 4) {
    memcpy(&s->rcv_wnd, u.raw + rcv_wnd_off, 4);
    s->have |= SOBAS_HAVE_RCV_WND;
  }
  return 0;
}

static int try_lock(struct sobas_flow *f) {
  uint32_t expected = 0;
  /* acquire: the sampler sees the previous holder's writes to the measurement state */
  if (!__atomic_compare_exchange_n(&f->busy, &expected, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) return 0;
  SOBAS_HB_AFTER(&f->busy);
  return 1;
}
static void unlock(struct sobas_flow *f) {
  SOBAS_HB_BEFORE(&f->busy);
  __atomic_store_n(&f->busy, 0, __ATOMIC_RELEASE);
}

static void log_flow_line(const struct sobas_flow *f, const char *event, const char *fmt_tail, ...)
    __attribute__((format(printf, 3, 4)));
static void log_flow_line(const struct sobas_flow *f, const char *event, const char *fmt_tail, ...) {
  char line[768];
  int64_t t_ms = (sobas_now_ns() - f->t_open_ns) / 1000000;
  int n = snprintf(line, sizeof line, "sobas pid=%d comm=%s flow=%llu ev=%s t_ms=%lld ", sobas_proc.pid,
                   program_invocation_short_name, (unsigned long long)f->id, event, (long long)t_ms);
  va_list ap;
  va_start(ap, fmt_tail);
  n += vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt_tail, ap);
  va_end(ap);
  if (n > (int)sizeof line - 2) n = (int)sizeof line - 2;
  line[n++] = '\n';
  sobas_log_append(sobas_proc.cfg.log_path, line, (size_t)n);
}

/* The 4-tuple is read when someone will look at it: the log, or a flow that turned bulk. A short
 * connection that is not logged costs no syscall here. */
static void learn_names(int fd, struct sobas_flow *f) {
  if (f->local.family == 0) name_of(fd, &f->local, 0);
  if (f->peer.family == 0) name_of(fd, &f->peer, 1);
}

static void announce(int fd, struct sobas_flow *f) {
  f->flags |= SOBAS_FLOW_ANNOUNCED;
  if (!logging()) return;
  learn_names(fd, f);
  char l[64], p[64];
  sobas_fmt_addr(l, sizeof l, &f->local);
  sobas_fmt_addr(p, sizeof p, &f->peer);
  /* t0_ms: the flow's start on CLOCK_MONOTONIC, which other tools' logs share (t_ms counts from it). */
  log_flow_line(f, "open", "local=%s peer=%s origin=%s t0_ms=%lld", l, p, origin_names[f->origin],
                (long long)(f->t_open_ns / 1000000));
}

/* Every field the engine is fed is in the window line (end_us, rx_bps, tx_bps, dlv_bps, rcv_rtt_us, base_rtt_us, rcv_mss,
 * a sender's cwnd, ssthresh and snd_mss, ooo, the probe's probe/prtt_us/prtt_max_us/prtt_least_us/plost, the path board's siblings/siblings_searching),
 * so a log replays into the same decisions (test/unit/replay_test.cc). */
static void log_window(const struct sobas_flow *f, const struct sobas_window *w, enum sobas_role role,
                       const struct sobas_probe_view *pv) {
  const struct sobas_sample *s = &f->last;
  log_flow_line(f, "window",
                "role=%s end_us=%lld dur_us=%lld rx_bytes=%llu tx_bytes=%llu rx_bps=%llu tx_bps=%llu dlv_bps=%llu rtt_us=%u "
                "rcv_rtt_us=%u srtt_us=%u min_rtt_us=%u base_rtt_us=%u rcv_mss=%u rcv_wnd=%u rcv_space=%u cwnd=%u ssthresh=%u snd_mss=%u "
                "retrans=%u ooo=%u busy_us=%llu rwnd_lim_us=%llu sndbuf_lim_us=%llu snd_wnd=%u limit=%s state=%s s=%llu "
                "probe=%s prtt_us=%u prtt_max_us=%u prtt_least_us=%u plost=%u siblings=%u siblings_searching=%u wake=%u",
                role_names[role], (long long)((w->t_end_ns - f->t_open_ns) / 1000),
                (long long)((w->t_end_ns - w->t_start_ns) / 1000), (unsigned long long)w->rx_bytes,
                (unsigned long long)w->tx_bytes, (unsigned long long)w->rx_rate_bps,
                (unsigned long long)w->tx_rate_bps, (unsigned long long)(w->app_limited ? 0 : w->delivery_bps), w->rtt_us,
                s->rcv_rtt_us, s->rtt_us, s->min_rtt_us,
                f->base_rtt_us, s->rcv_mss, s->rcv_wnd, s->rcv_space, s->snd_cwnd, s->snd_ssthresh, s->snd_mss, w->retrans, w->ooopack,
                (unsigned long long)w->busy_us, (unsigned long long)w->rwnd_limited_us,
                (unsigned long long)w->sndbuf_limited_us, s->snd_wnd,
                sobas_limit_name((enum sobas_limit)f->last_limit), sobas_state_name(flow_state(f)), (unsigned long long)f->hold.s,
                sobas_probe_status_name((enum sobas_probe_status)f->probe_status), pv->rtt_avg_us, pv->rtt_max_us,
                pv->rtt_least_us, pv->lost, f->siblings, f->siblings_searching, f->hold.lowat);
}

/* The lever the decision left in place: a transition that sets nothing (a resume, a cap that was
 * already S_max) names none rather than the kind of lever the flow would use. */
static const char *decision_lever(const struct sobas_flow *f, const struct sobas_action *a) {
  if (a->set && a->s >= f->eng.p.s_max) return "release";
  return f->hold.s ? sobas_enforce_lever(&f->hold) : "none";
}

static void log_decision(const struct sobas_flow *f, const struct sobas_action *a, int err) {
  log_flow_line(f, "decision",
                "role=%s from=%s to=%s why=%s s=%llu rate_bps=%llu rtt_us=%u base_rtt_us=%u rcv_wnd=%u lever=%s "
                "alone_bps=%llu%s%s",
                (f->flags & SOBAS_FLOW_SENDS) ? "sender" : "receiver", sobas_state_name(a->from), sobas_state_name(a->to), sobas_reason_name(a->why),
                (unsigned long long)(a->set ? a->s : f->eng.s), (unsigned long long)a->rate_bps, a->rtt_us,
                f->base_rtt_us, f->last.rcv_wnd, decision_lever(f, a), (unsigned long long)f->eng.r_alone,
                err ? " error=" : "", err ? strerror(-err) : "");
}

static uint8_t ring_lever(const struct sobas_flow *f) {
  if (flow_state(f) == SOBAS_ST_CONGESTED) return 3;
  return f->hold.s == 0 ? 0 : f->hold.pace_Bps ? 4 : f->hold.rcvbuf ? 2 : 1;
}

static uint8_t ring_family(const struct sobas_addr *a) {
  static const uint8_t v4_mapped[12] = {[10] = 0xff, [11] = 0xff};
  return a->family == AF_INET || (a->family == AF_INET6 && memcmp(a->addr, v4_mapped, 12) == 0) ? 4 : 6;
}

static void ring_addr(uint8_t out[16], const struct sobas_addr *a) {
  static const uint8_t v4_mapped[12] = {[10] = 0xff, [11] = 0xff};
  memset(out, 0, 16);
  if (a->family == AF_INET) memcpy(out, a->addr, 4);
  else if (memcmp(a->addr, v4_mapped, 12) == 0) memcpy(out, a->addr + 12, 4);
  else memcpy(out, a->addr, 16);
}

/* One record of the flow's whole state to the user's decision ring (sobas-top reads it). */
static void ring_emit(struct sobas_flow *f, enum sobas_ring_event ev) {
  if (strcmp(sobas_proc.cfg.ring, "off") == 0) return;
  struct sobas_ring_record r;
  memset(&r, 0, sizeof r);
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  r.t_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
  r.pid = (uint32_t)sobas_proc.pid;
  r.uid = sobas_proc.uid;
  r.flow_id = f->id;
  strncpy(r.comm, program_invocation_short_name, sizeof r.comm - 1);
  r.event = (uint8_t)ev;
  r.family = ring_family(&f->peer);
  r.role = (uint8_t)role_of(f);
  r.state = (f->flags & (SOBAS_FLOW_ENGINE | SOBAS_FLOW_PEER_STEERS)) == SOBAS_FLOW_ENGINE ? (uint8_t)flow_state(f) : 0;
  r.policy = (uint8_t)sobas_proc.cfg.policy;
  r.why = f->last_why;
  r.probe = f->probe_status;
  r.probe_why = f->probe_none_why;
  r.lever = ring_lever(f);
  r.limit = f->last_limit;
  r.lport = f->local.port;
  r.rport = f->peer.port;
  ring_addr(r.laddr, &f->local);
  ring_addr(r.raddr, &f->peer);
  r.rate_bps = f->last_rate_bps;
  r.s_bytes = f->hold.s;
  r.bytes_received = f->last.bytes_received;
  r.bytes_acked = f->last.bytes_acked;
  r.app_bytes = __atomic_load_n(&f->app[0], __ATOMIC_RELAXED) + __atomic_load_n(&f->app[1], __ATOMIC_RELAXED);
  r.cap_bps = f->cap_bps;
  r.rtt_us = f->last_rtt_us ? f->last_rtt_us : f->last.rcv_rtt_us ? f->last.rcv_rtt_us : f->last.rtt_us;
  r.base_rtt_us = f->base_rtt_us;
  r.rcv_wnd = f->last.rcv_wnd;
  r.retrans = f->last.total_retrans;
  r.lost = (uint32_t)f->lost_total;
  r.age_ms = (uint32_t)((sobas_now_ns() - f->t_open_ns) / 1000000);
  char err[640];
  if (sobas_ringw_write(&r, sobas_proc.cfg.ring, err, sizeof err) < 0 && logging())
    log_flow_line(f, "ring", "error=\"%s\"", err);
}

/* The least RTT seen is the path's without our queue: one more sample of it (0 = none). */
static void lower_base_rtt(struct sobas_flow *f, uint32_t rtt_us) {
  if (rtt_us > 0 && rtt_us < 60000000u && (f->base_rtt_us == 0 || rtt_us < f->base_rtt_us)) f->base_rtt_us = rtt_us;
}

/* A receiver's samples: the handshake's (tcpi_min_rtt, from its SYN or SYN-ACK) and its own estimates. */
static void learn_base_rtt(struct sobas_flow *f) {
  lower_base_rtt(f, f->last.rcv_rtt_us);
  lower_base_rtt(f, f->last.min_rtt_us);
}

static void log_probe_status(const struct sobas_flow *f, const struct sobas_probe_view *v, enum sobas_probe_status st,
                             const char *why) {
  log_flow_line(f, "probe", "what=status status=%s why=%s rtt_min_us=%u sent=%llu echoes=%llu lost=%llu",
                sobas_probe_status_name(st), why, v->rtt_min_us, (unsigned long long)v->sent_total,
                (unsigned long long)v->received_total, (unsigned long long)v->lost_total);
}

/* Stops a receiver's probe for good (SOBAS_FLOW_PROBED keeps it from reopening); its totals, from this
 * window's view, are logged here, since the close record no longer sees them. */
static void probe_end(struct sobas_flow *f, const struct sobas_probe_view *pv, const char *why) {
  sobas_probe_close(f->probe);
  f->probe = 0;
  f->probe_status = SOBAS_PROBE_OFF;
  if (logging()) log_probe_status(f, pv, SOBAS_PROBE_OFF, why);
}

/* Paces a sender held for S = s at `held` bytes per second, lower while its RTT shows a queue; in a
 * drain, from the rate `got_bps` the path gave its last window when that is lower (only there: held, a
 * host stall's dip in that rate would deepen every cut it makes). */
static int pace_hold(int fd, struct sobas_flow *f, uint64_t s, uint64_t held, uint64_t got_bps) {
  uint32_t t = f->base_rtt_us ? f->base_rtt_us : f->last.rtt_us;
  uint64_t got = sobas_engine_draining(&f->eng) ? got_bps / 8 : 0;
  return sobas_enforce_pace(fd, s, held, sobas_pace_now(held, got, f->last.rtt_us, t, f->eng.lifting), &f->hold);
}

/* Whether a sender's kernel is in slow start: tcp_in_slow_start() is snd_cwnd < snd_ssthresh, and the
 * ssthresh is "infinite" until HyStart or a loss first sets it (docs/kernel-facts.md). */
static uint8_t kernel_slow_start(const struct sobas_sample *s) {
  if (s->snd_cwnd == 0 || s->snd_ssthresh == 0) return 0;
  return s->snd_cwnd < s->snd_ssthresh ? SOBAS_KERNEL_SS : SOBAS_KERNEL_CA;
}

/* Starts a CUBIC sender's curve again (sobas_enforce_regrow) into *r; whether to log it: each time it
 * acted, a refusal once a process (a server that dropped root after fork is refused on every flow). */
static int regrow_and_tell(int fd, int *r) {
  static int refused;
  *r = sobas_enforce_regrow(fd);
  return *r != 1 && logging() && !(*r < 0 && __atomic_exchange_n(&refused, 1, __ATOMIC_RELAXED));
}

/* A paced flow is not cwnd-limited, so its cwnd stays where it was when the pace first held it, and a
 * lift can take the pace past what that cwnd carries. CUBIC in congestion avoidance then grows the cwnd
 * from the state it kept, which after a loss can be a segment an RTT: on udp-leave (sobas both, at
 * ddc950e), after a step aside with losses, a lift from 49 Mb/s waited 2.7 s on cwnd 272 -> 338. Started
 * again (enforce.h), CUBIC gave a lift's need in the window after it (docs/kernel-facts.md). Slow start
 * doubles the cwnd anyway. */
static void regrow(int fd, struct sobas_flow *f) {
  uint32_t t = f->base_rtt_us ? f->base_rtt_us : f->last.rtt_us;
  uint64_t cwnd = (uint64_t)f->last.snd_cwnd * f->last.snd_mss;
  if (kernel_slow_start(&f->last) != SOBAS_KERNEL_CA || !sobas_pace_cwnd_short(cwnd, f->hold.held_Bps, t)) return;
  int r;
  if (!regrow_and_tell(fd, &r)) return;
  log_flow_line(f, "regrow", "cwnd=%u need=%llu%s%s", f->last.snd_cwnd,
                (unsigned long long)(f->hold.held_Bps * t / 1000000 / (f->last.snd_mss ? f->last.snd_mss : 1)),
                r ? " error=" : "", r ? strerror(-r) : "");
}

/* Slow start's loss leaves CUBIC regrowing from 0.7 of the cwnd it lost at towards that cwnd, slowly
 * near it, while the path may be empty: on `shallow` (0.25-BDP buffer) a sender went 214 -> 281 packets
 * in 2.4 s, the rate 59 -> 78 Mb/s of A = 77, and decided 2.5-5.2 s after the loss. Started again
 * (sobas_enforce_regrow), CUBIC grows 5% a round, and the engine decides where that climb queues
 * (sobas_engine_regrew): 0.54-0.95 s after the loss in 18 runs of 18 (sender and sobas both, interleaved
 * with the build before: docs/engine.md). Once a flow, in its search, with the loss repaired and the RTT
 * back at the base: a queue standing then is someone else's, and beside a competitor that keeps the
 * buffer full CUBIC's own regrowth is the share plain TCP would take. */
static void regrow_after_loss(int fd, struct sobas_flow *f, const struct sobas_window *w) {
  uint32_t t = f->base_rtt_us;
  if ((f->flags & SOBAS_FLOW_REGROWN) || f->hold.pace_Bps || !t) return;
  if (f->eng.state < SOBAS_ST_SLOW_START || f->eng.state > SOBAS_ST_CA_GROWING) return;
  if (!f->last.total_retrans || w->retrans || kernel_slow_start(&f->last) != SOBAS_KERNEL_CA) return;
  if (f->last.rtt_us > t + sobas_pace_margin_us(t)) return;
  f->flags |= SOBAS_FLOW_REGROWN;
  int r, tell = regrow_and_tell(fd, &r);
  if (r == 0) sobas_engine_regrew(&f->eng);
  if (tell)
    log_flow_line(f, "regrow", "why=slow-start-loss cwnd=%u ssthresh=%u rtt_us=%u%s%s", f->last.snd_cwnd,
                  f->last.snd_ssthresh, f->last.rtt_us, r ? " error=" : "", r ? strerror(-r) : "");
}

static void apply(int fd, struct sobas_flow *f, const struct sobas_action *a) {
  int err = 0;
  /* S = S_max (congested, or the start cap lifted): the window opens as far as the kernel allows. */
  if (a->set && (f->flags & SOBAS_FLOW_SENDS))
    err = a->s >= f->eng.p.s_max
              ? sobas_enforce_unpace(fd, &f->hold)
              : pace_hold(fd, f, a->s, sobas_pace_held(a->s, f->base_rtt_us ? f->base_rtt_us : a->rtt_us, f->eng.p.headroom),
                          0);
  else if (a->set)
    err = a->s >= f->eng.p.s_max           ? sobas_enforce_release(fd, &f->hold)
          : a->to == SOBAS_ST_CONGESTED ? sobas_enforce_ceiling(fd, a->s, &f->hold)
                                          : sobas_enforce_hold(fd, a->s, &f->hold);
  /* Aside, the flow's reason stays why it stepped aside (sobas-top says so beside each window); a
   * ceiling set then is one move of it, recorded as such. */
  uint8_t aside_why = f->last_why;
  f->last_why = (uint8_t)a->why;
  if (logging()) log_decision(f, a, err);
  ring_emit(f, SOBAS_EV_DECISION);
  if (a->why == SOBAS_WHY_CEILING && a->from == SOBAS_ST_CONGESTED) f->last_why = aside_why;
  if (!err && a->why == SOBAS_WHY_LIFT && f->hold.pace_Bps) regrow(fd, f);
}

/* The probe serves SOBAS, and bdp when the user gave no size (C' is its bandwidth). */
static int probe_wanted(void) {
  const struct sobas_config *c = &sobas_proc.cfg;
  return c->probe && (c->policy == SOBAS_POLICY_SOBAS || (c->policy == SOBAS_POLICY_BDP && !c->bdp_bytes));
}

/* The engine starts with the first window or the probe, whichever comes first; uncapped until C'. The
 * SOBAS engine's parameters bound every policy's S, so it starts whatever the policy. */
static void engine_begin(int fd, struct sobas_flow *f, uint32_t rtt, int64_t t) {
  if (f->flags & SOBAS_FLOW_ENGINE) return;
  struct sobas_engine_params p;
  struct sobas_action a;
  sobas_engine_default_params(&p);
  p.reeval_ns = (int64_t)sobas_proc.cfg.reeval_ms * 1000000;
  if (f->flags & SOBAS_FLOW_SENDS) sobas_engine_pacer_params(&p);
  sobas_engine_start(&f->eng, &p, 0, rtt, t, &a);
  f->flags |= SOBAS_FLOW_ENGINE;
  const struct sobas_config *c = &sobas_proc.cfg;
  if (seed_policy() &&
      sobas_policy_start(&f->pol, (enum sobas_policy)c->policy,
                         c->policy == SOBAS_POLICY_FIXED ? c->policy_bytes : c->bdp_bytes, p.s_min, p.s_max,
                         f->cap_bps, rtt, t, &a))
    apply(fd, f, &a);
}

/* Asks for the side probe once per receiving flow, early (a quarter of the bulk threshold in): C' must
 * arrive while slow start is still below the path's BDP to cap it. */
static void probe_open(int fd, struct sobas_flow *f) {
  if ((f->flags & SOBAS_FLOW_PROBED) || !probe_wanted()) return;
  f->flags |= SOBAS_FLOW_PROBED;
  learn_names(fd, f);
  take_sample(fd, &f->last); /* the handshake's RTT and the segment size, for the engine and the trains */
  learn_base_rtt(f);
  engine_begin(fd, f, f->base_rtt_us, sobas_now_ns() - f->t_open_ns);
  if (f->base_rtt_us < f->eng.p.min_rtt_us) return; /* a LAN: the engine never steers it, nothing to probe */
  enum sobas_probe_none why;
  f->probe = sobas_probe_open(&f->local, &f->peer, (uint16_t)sobas_proc.cfg.probe_port, f->last.rcv_mss,
                              sobas_proc.cfg.policy == SOBAS_POLICY_SOBAS, &f->next_check, &why);
  if (!f->probe && why == SOBAS_NONE_BUSY) {
    f->flags &= ~(uint32_t)SOBAS_FLOW_PROBED; /* the next check asks again */
    return;
  }
  f->probe_status = f->probe ? SOBAS_PROBE_PENDING : SOBAS_PROBE_NONE;
  f->probe_none_why = f->probe ? 0 : (uint8_t)why;
}

/* The trains are in: a flow still in its initial slow start is capped at 1.2·C'·T right away, from the
 * host's own read, not at the end of the window. */
static void take_capacity(int fd, struct sobas_flow *f) {
  uint64_t cap;
  uint32_t trains;
  if (!f->probe || (f->flags & SOBAS_FLOW_CAP_SEEN) || !sobas_probe_capacity(f->probe, &cap, &trains)) return;
  f->flags |= SOBAS_FLOW_CAP_SEEN;
  f->cap_bps = cap;
  if (logging())
    log_flow_line(f, "probe", "what=capacity cap_bps=%llu cap_trains=%u base_rtt_us=%u", (unsigned long long)cap,
                  trains, f->base_rtt_us);
  struct sobas_action a;
  int64_t t = sobas_now_ns() - f->t_open_ns;
  if (!(seed_policy() ? sobas_policy_capacity(&f->pol, cap, f->base_rtt_us, t, &a)
                      : sobas_engine_capacity(&f->eng, cap, f->base_rtt_us, t, &a)))
    return;
  /* The decision's rcv_wnd (log line, ring record) is the window offered now: the flow's last sample may
   * still be the one probe_open took near the handshake (competing: 127 KB logged beside an S of 874 KB;
   * read now, 579 KB). */
  struct sobas_sample now;
  if (take_sample(fd, &now) == 0) f->last.rcv_wnd = now.rcv_wnd;
  apply(fd, f, &a);
}

/* This window's view of the probe; logs each change of its status. A handle the process no longer
 * knows (a forked child) is opened afresh next time. */
static void probe_window(struct sobas_flow *f, struct sobas_probe_view *v, int last) {
  memset(v, 0, sizeof *v);
  v->status = (enum sobas_probe_status)f->probe_status;
  v->none_why = (enum sobas_probe_none)f->probe_none_why;
  if (!f->probe) return;
  int r = sobas_probe_read(f->probe, v, last);
  if (r > 0) { /* the helper was busy: last status, no samples this window */
    v->status = (enum sobas_probe_status)f->probe_status;
    return;
  }
  if (r < 0) {
    f->probe = 0;
    f->flags &= ~(uint32_t)SOBAS_FLOW_PROBED;
    memset(v, 0, sizeof *v);
    return;
  }
  if (v->status != f->probe_status) {
    f->probe_status = (uint8_t)v->status;
    f->probe_none_why = (uint8_t)v->none_why;
    if (logging())
      log_probe_status(f, v, v->status, v->status == SOBAS_PROBE_NONE ? sobas_probe_none_name(v->none_why) : "-");
  }
}

/* A receiving flow's engine input from one closed window. With an active probe the engine sees the
 * probe's RTT and forward-path loss; without, the kernel's. */
static struct sobas_engine_input receiver_input(struct sobas_flow *f, const struct sobas_window *w,
                                                const struct sobas_probe_view *pv) {
  learn_base_rtt(f);
  int probing = pv->status == SOBAS_PROBE_ACTIVE;
  if (probing) lower_base_rtt(f, pv->rtt_min_us);
  uint32_t rtt = f->last.rcv_rtt_us ? f->last.rcv_rtt_us : w->rtt_us;
  if (probing && pv->echoes) rtt = pv->rtt_avg_us;
  f->lost_total += probing ? pv->lost : w->ooopack;
  return (struct sobas_engine_input){.t_ns = w->t_end_ns - f->t_open_ns,
                                     .rate_bps = w->rx_rate_bps,
                                     .rtt_us = rtt,
                                     .base_rtt_us = f->base_rtt_us,
                                     .mss = f->last.rcv_mss,
                                     .rtt_max_us = probing ? pv->rtt_max_us : 0,
                                     .rtt_least_us = probing ? pv->rtt_least_us : 0,
                                     .losses = probing ? pv->lost : w->ooopack,
                                     .ooo = probing ? w->ooopack : 0,
                                     .probe = (uint8_t)probing,
                                     .rcv_wnd = f->last.rcv_wnd};
}

/* A sending flow's engine input: the sender sees its own delivery (bytes acked), its smoothed RTT in
 * µs, the least RTT since the handshake, and its retransmissions as losses. It has no offered window
 * to drain: a paced rate holds at once, so "held" comes from the RTT (engine.c, update_held). */
static struct sobas_engine_input sender_input(struct sobas_flow *f, const struct sobas_window *w) {
  lower_base_rtt(f, f->last.min_rtt_us);
  f->lost_total += w->retrans;
  return (struct sobas_engine_input){.t_ns = w->t_end_ns - f->t_open_ns,
                                     .rate_bps = w->tx_rate_bps,
                                     .rtt_us = f->last.rtt_us ? f->last.rtt_us : w->rtt_us,
                                     .base_rtt_us = f->base_rtt_us,
                                     .mss = f->last.snd_mss,
                                     .losses = w->retrans,
                                     .rate_now_bps = w->app_limited ? 0 : w->delivery_bps,
                                     .cwnd_bytes = (uint64_t)f->last.snd_cwnd * f->last.snd_mss,
                                     .kernel_ss = kernel_slow_start(&f->last),
                                     .lift_cut = f->lift_cut};
}

/* The flow's owner key on the path board: its process and its id there. */
static uint64_t board_owner(const struct sobas_flow *f) { return (uint64_t)(uint32_t)sobas_proc.pid << 32 | (uint32_t)f->id; }

/* Puts the flow on the ring's path board, searching or not, and counts its siblings (no ring: none known). */
static void board_report(struct sobas_flow *f, int64_t now_ns) {
  struct sobas_ring_header *h = sobas_ringw_header();
  f->siblings = f->siblings_searching = 0;
  if (!h) return;
  f->siblings = sobas_ring_board_report(h, board_owner(f), sobas_ring_board_path(f->peer.family, f->peer.addr),
                                        (uint32_t)sobas_engine_searching(&f->eng), now_ns, &f->board_slot,
                                        &f->siblings_searching);
}

/* One closed window of a steered flow through the SOBAS engine, and its decision onto the socket. */
static void steer(int fd, struct sobas_flow *f, const struct sobas_window *w, const struct sobas_probe_view *pv) {
  struct sobas_engine_input in = (f->flags & SOBAS_FLOW_SENDS) ? sender_input(f, w) : receiver_input(f, w, pv);
  struct sobas_action a;
  engine_begin(fd, f, in.rtt_us, w->t_start_ns - f->t_open_ns);
  board_report(f, w->t_end_ns);
  in.siblings = f->siblings;
  in.siblings_searching = f->siblings_searching;
  f->last_rtt_us = in.rtt_us;
  f->lift_cut = 0;
  if (!(seed_policy() ? sobas_policy_feed(&f->pol, &in, &a) : sobas_engine_feed(&f->eng, &in, &a))) {
    /* Held: the kernel may have moved the clamp (autotuning, when the buffer could not be locked); a
     * paced sender drains whatever queue the window ended with. */
    if (f->hold.pace_Bps)
      pace_hold(fd, f, f->hold.s, f->hold.held_Bps, w->tx_rate_bps);
    else if (f->hold.s)
      sobas_enforce_verify(fd, &f->hold);
    return;
  }
  apply(fd, f, &a);
  /* Stepped aside for a competitor, a receiver stops its probe: aside it steers nothing, and coming
   * back needs no more than the kernel's signals give a receiver without sobasd (arrive-leave, probe
   * closed: back 1.0-1.3 s after the departure, the last 10 s within 0.7 ms of the base). Probing on
   * cost the flow its share, measured on `competing` (6 repeats, each contender at the phase drawn for
   * the repeat): on, 0.74x plain CUBIC and under it in 5 repeats of 6; closed, 1.01x (17.8-30.7 Mb/s
   * against 16.9-33.1), without sobasd 1.03x. Aside, the engine made no decision and moved no lever in
   * those runs; the cost follows the echo rate (slowed to 10 a second aside, a build not committed: 23.3
   * Mb/s, as closed) and comes with the emulator's forward lateness doubled, so it may be the testbed's
   * (docs/probe.md).
   * Aside for the path's losses, it keeps probing: its echoes' gaps are the forward path's loss. A
   * probe that gave up already (none) keeps its record of why. */
  if (a.to == SOBAS_ST_CONGESTED && a.why == SOBAS_WHY_COMPETING && f->probe && f->probe_status != SOBAS_PROBE_NONE &&
      !(f->flags & SOBAS_FLOW_SENDS))
    probe_end(f, pv, "aside");
}

/* Exactly one end steers a flow: the receiver, when it runs sobas too. Its offered window holds the
 * flow whatever the sender does, and a sender pacing under a receiver's hold has each end's lift
 * capped by the other: measured at 1 Gb/s, both ends lifting in turn held 410-450 Mb/s for a whole
 * transfer while max buffer made 910; at 100 Mb/s, 51-54 Mb/s after cross traffic had left, 59.7-81.4
 * with this rule. The sender cannot see the receiver's shim, but it sees the hold, two windows in a row,
 * the peer's window not growing: either that window limited the flow for over half the window
 * (tcpi_rwnd_limited), or it is tight, allowing at most PEER_WND_TIGHT times what the flow delivers
 * per round trip. A receiver holding S offers (1 + headroom)·R·T, ~1.03 times a sender paced at
 * 0.99·R, and a pacer lifted 10% into it is held back only while it waits for ACKs (the share of
 * rwnd-limited time alone missed it: 45% at most in a lift); a plain receiver's autotuning offers
 * 2 times and more (measured 6.3 at 95 Mb/s, 40 ms) and never held a sender. Then the sender lets go
 * of its pacing and only measures, for good. Two windows: the engine decides on two equal rates in
 * slow start, and a plateau that is the peer's window must not become the sender's decision. */
#define PEER_HELD_WINDOWS 2
#define PEER_HELD_SHARE 0.5
#define PEER_HELD_FIRMLY 0.8
#define PEER_WND_TIGHT 1.25
#define PEER_WND_GROWTH 1.10

/* A window held firmly (rwnd-limited for most of it) is held whatever the peer's window reads at its
 * end: a slow reader's window opens and closes as it reads (measured under curl --limit-rate 2M:
 * snd_wnd 1 KB to 1 MB at successive window ends, rwnd-limited 72-92% of most windows). So "not
 * growing" compares the window's end with the largest the held windows before it ended on, not with
 * the first: a first one that ended near closed (1 KiB here) lets no later one pass. A CI run's sender,
 * held for over half of each of 13 windows, never let go (likely so: the firm rule needs 80% twice
 * in a row, and the log was not kept). A window that grows, as autotuning's does, ends above every
 * one before it. */
static int peer_holds(struct sobas_flow *f, const struct sobas_window *w) {
  int64_t dur_us = (w->t_end_ns - w->t_start_ns) / 1000;
  double per_rtt = (double)w->tx_rate_bps / 8.0 * (double)f->last.rtt_us / 1e6;
  int chrono = (f->last.have & SOBAS_HAVE_CHRONO) && dur_us > 0;
  int firm = chrono && (double)w->rwnd_limited_us >= PEER_HELD_FIRMLY * (double)dur_us;
  int held = chrono && ((double)w->rwnd_limited_us >= PEER_HELD_SHARE * (double)dur_us ||
                        (per_rtt > 0 && (double)f->last.snd_wnd <= PEER_WND_TIGHT * per_rtt));
  if (!held) {
    f->peer_held = f->peer_firm = 0;
    return 0;
  }
  f->peer_firm = firm ? f->peer_firm + 1 : 0;
  if (f->peer_held++ == 0) f->peer_wnd_max = f->last.snd_wnd;
  int flat = f->peer_held >= PEER_HELD_WINDOWS && (double)f->last.snd_wnd <= PEER_WND_GROWTH * (double)f->peer_wnd_max;
  if (f->last.snd_wnd > f->peer_wnd_max) f->peer_wnd_max = f->last.snd_wnd;
  return f->peer_firm >= PEER_HELD_WINDOWS || flat;
}

/* Leaves the flow to the receiver's sobas (why: peer-window, or peer-probe when sobasd here says the
 * receiver probes and takes no LEAD, or still probes after it). */
static void yield_to_peer(int fd, struct sobas_flow *f, const struct sobas_window *w, enum sobas_reason why) {
  int err = f->hold.pace_Bps ? sobas_enforce_unpace(fd, &f->hold) : 0;
  f->flags |= SOBAS_FLOW_PEER_STEERS;
  f->last_why = (uint8_t)why;
  if (logging())
    log_flow_line(f, "yield",
                  "role=sender from=%s why=%s rwnd_lim_us=%llu dur_us=%lld snd_wnd=%u tx_bps=%llu rtt_us=%u%s%s",
                  sobas_state_name(flow_state(f)), sobas_reason_name(why), (unsigned long long)w->rwnd_limited_us,
                  (long long)((w->t_end_ns - w->t_start_ns) / 1000), f->last.snd_wnd,
                  (unsigned long long)w->tx_rate_bps, f->last.rtt_us, err ? " error=" : "", err ? strerror(-err) : "");
  ring_emit(f, SOBAS_EV_DECISION);
}

/* Repeated while the receiver's probe still reaches sobasd: a receiver that missed the echoes of the first
 * LEAD (sobasd's word holds 2 s) hears the next. */
#define LEAD_REPEAT_NS 500000000LL
/* A receiver stands down at its first window, the early LEAD having reached sobasd before its first probe
 * (lead_early; 423-719 ms into its flow on the testbed), or at its next window after a LEAD from the
 * table; one whose window still holds the flow a second after the table's first LEAD did not (a policy
 * the user chose, or a sobas from before LEAD), and keeps the flow. */
#define LEAD_GRACE_NS 1000000000LL

/* A receiver that stood down stopped probing by the grace's end, and sobasd's table forgets it a second
 * after its last probe (SOBAS_STEERED_FRESH_NS) reached sobasd, at most a round trip after it left. A
 * flow the table still names then is probed by a receiver that did not stand down: it keeps the flow.
 * Its window need not hold the sender for that: bdp's C'·T is the path's capacity, over a sender that
 * decided on what cross traffic left it (60 of 100 Mb/s beside 40 of UDP) or low (in a CI run a sender
 * that left slow start on a rate drop paced under a bdp receiver's window for 6 s, neither window rule
 * met, both ends steering), and the flow never meets it. Only bdp and SOBAS receivers probe: one under
 * fixed:BYTES or drs is never in the table, and the window rule alone lets go to it. */
#define LEAD_UNHEARD_NS (LEAD_GRACE_NS + SOBAS_STEERED_FRESH_NS)

/* The receiver's sobas probes this flow (sobasd's table says so): with sobasd listening, this sender
 * steers and sobasd's echoes stand the receiver down (docs/design.md, "When both ends run sobas");
 * with a sobasd from before LEAD, the receiver steers. A repeat that fails (sobasd's queue full, or it
 * restarted) changes nothing: the receiver may have stood down already, and the flow must not be left
 * to nobody. */
static void lead_or_yield(int fd, struct sobas_flow *f, const struct sobas_window *w) {
  if (f->lead_at_ns && w->t_end_ns >= f->lead_at_ns + LEAD_UNHEARD_NS + (int64_t)f->last.rtt_us * 1000) {
    yield_to_peer(fd, f, w, SOBAS_WHY_PEER_PROBE);
    return;
  }
  if (w->t_end_ns < f->lead_next_ns) return;
  if (sobas_peer_lead(&f->local, &f->peer) != 0) {
    if (!f->lead_at_ns) yield_to_peer(fd, f, w, SOBAS_WHY_PEER_PROBE);
    return;
  }
  f->lead_next_ns = w->t_end_ns + LEAD_REPEAT_NS;
  if (f->lead_at_ns) return;
  f->lead_at_ns = w->t_end_ns;
  if (logging()) log_flow_line(f, "lead", "role=sender why=peer-probe state=%s", sobas_state_name(flow_state(f)));
}

/* A sender's first LEAD, at the point where its receiver would open the probe (a quarter of the way to
 * bulk), so that it reaches sobasd before that probe: a sobas receiver then stands down at its first
 * window, and sobasd withholds the trains it asks for with it. Measured with the LEAD left until the
 * sender found its flow in sobasd's table (250-460 ms into the flow), the receiver had asked for its
 * trains ~150 ms in and capped its window at 1.2·C'·T when they came: on `servers` (8 downloads, both
 * ends preloaded) 109-150 retransmits against the sender alone's 35; with this LEAD, 14-63 (3 runs), every
 * receiver down at its first window with no trains. Only where a sobasd publishes its
 * table here; nothing is logged (no receiver may ever probe), and sobasd drops it unanswered after 2 s.
 * The table's LEADs (lead_or_yield) still come, and still start the second a receiver is given (LEAD_GRACE_NS). */
static void lead_early(int fd, struct sobas_flow *f) {
  const struct sobas_config *c = &sobas_proc.cfg;
  f->flags |= SOBAS_FLOW_LED_EARLY;
  if (c->policy != SOBAS_POLICY_SOBAS || !c->sender || (f->flags & SOBAS_FLOW_APP_PACED) ||
      !sobas_peer_sobasd_here(sobas_now_ns()))
    return;
  learn_names(fd, f);
  sobas_peer_lead(&f->local, &f->peer);
}

/* sobasd's echo says the flow's sender runs sobas and steers it (in the window's probe view): the
 * receiver opens its window as far as the kernel allows, stops probing (C' and the echoes serve only a
 * receiver that steers) and measures. Only under SOBAS: a policy the user chose (fixed, bdp, drs) holds;
 * its sender then lets go when the window holds it. Returns 1 when it stood down. */
static int stand_down(int fd, struct sobas_flow *f, const struct sobas_probe_view *pv) {
  if (!pv->sender_leads || !f->probe || (f->flags & (SOBAS_FLOW_SENDS | SOBAS_FLOW_PEER_STEERS)) ||
      sobas_proc.cfg.policy != SOBAS_POLICY_SOBAS)
    return 0;
  int err = f->hold.s ? sobas_enforce_release(fd, &f->hold) : 0;
  f->flags |= SOBAS_FLOW_PEER_STEERS;
  f->last_why = (uint8_t)SOBAS_WHY_PEER_SENDER;
  probe_end(f, pv, "peer-sender");
  if (logging())
    log_flow_line(f, "yield", "role=receiver from=%s why=%s rcv_wnd=%u%s%s", sobas_state_name(flow_state(f)),
                  sobas_reason_name(SOBAS_WHY_PEER_SENDER), f->last.rcv_wnd, err ? " error=" : "",
                  err ? strerror(-err) : "");
  ring_emit(f, SOBAS_EV_DECISION);
  return 1;
}

/* Whether this window goes to the engine (or the policy): a receiver's under every policy but off (its
 * probe is asked for then); a sender's under SOBAS, from its first window on and as a sender for good
 * (a flow whose role flips would otherwise have its engine fed two kinds of window), unless its
 * application paces it or its peer's sobas steers it. */
static int steered_window(int fd, struct sobas_flow *f, enum sobas_role role, const struct sobas_window *w) {
  const struct sobas_config *c = &sobas_proc.cfg;
  if (c->policy != SOBAS_POLICY_OFF && role == SOBAS_ROLE_RECEIVER && !(f->flags & SOBAS_FLOW_SENDS)) {
    probe_open(fd, f);
    return !(f->flags & SOBAS_FLOW_PEER_STEERS);
  }
  if (c->policy == SOBAS_POLICY_SOBAS && c->sender && role == SOBAS_ROLE_SENDER && !(f->flags & SOBAS_FLOW_ENGINE))
    f->flags |= SOBAS_FLOW_SENDS;
  if ((f->flags & (SOBAS_FLOW_SENDS | SOBAS_FLOW_PEER_STEERS)) == SOBAS_FLOW_SENDS) {
    if (sobas_peer_steers(&f->local, &f->peer, w->t_end_ns)) lead_or_yield(fd, f, w);
    int standing_down = f->lead_at_ns && w->t_end_ns < f->lead_at_ns + LEAD_GRACE_NS;
    if (!(f->flags & SOBAS_FLOW_PEER_STEERS) && !standing_down && peer_holds(f, w))
      yield_to_peer(fd, f, w, SOBAS_WHY_PEER_WINDOW);
  }
  return (f->flags & (SOBAS_FLOW_SENDS | SOBAS_FLOW_APP_PACED | SOBAS_FLOW_PEER_STEERS)) == SOBAS_FLOW_SENDS;
}

static void drop_flow(struct sobas_flow *f, int fd);

/* A sample that fails or goes backwards means the fd no longer names this socket: it was closed
 * behind our back (a raw syscall, glibc-internal close) and its number reused. `s` is the slot the
 * caller read: the drop happens only if nothing changed it since. */
static void forget_stale(int fd, struct sobas_flow *f, sobas_slot s) {
  if (sobas_ft_cas(&sobas_proc.ft, fd, s, 0)) drop_flow(f, -1);
}

/* The S a paced sender's lift began from, while the lift is in a window that its first queue ends
 * (sobas_engine_lift_watched): its RTT is then read at every clock read, not only at the window's end.
 * 0: not watched. */
static uint64_t lift_watched(const struct sobas_flow *f) {
  return f->hold.pace_Bps && f->base_rtt_us && !f->lift_cut ? sobas_engine_lift_watched(&f->eng) : 0;
}

/* A lifted pace runs its gain (10-20%) over the pace before it until a window's end shows its queue,
 * ~3 round trips later (engine.c, sobas_engine_lift_watched). Read within the window, the same queue
 * pulls the pace back at once to the one of the S the lift began from, less the queue's share of two
 * RTTs (sobas_pace_now), and the window's input says so: the engine ends the lift there as on a
 * queued window. */
static int watch_lift(int fd, struct sobas_flow *f, uint64_t s_from) {
  struct sobas_sample s;
  if (take_sample(fd, &s) != 0) return -1;
  if (!sobas_engine_lift_queued(&f->eng, f->base_rtt_us, s.rtt_us)) return 0;
  uint64_t back = sobas_pace_held(s_from, f->base_rtt_us, f->eng.p.headroom);
  int err = sobas_enforce_pace(fd, f->hold.s, back, sobas_pace_now(back, 0, s.rtt_us, f->base_rtt_us, 0), &f->hold);
  if (!err) f->lift_cut = 1;
  if (logging())
    log_flow_line(f, "lift-cut", "rtt_us=%u base_rtt_us=%u pace_bps=%llu%s%s", s.rtt_us, f->base_rtt_us,
                  (unsigned long long)f->hold.pace_Bps * 8, err ? " error=" : "", err ? strerror(-err) : "");
  return 0;
}

/* TCP_NOTSENT_LOWAT for a steered sender searching in slow start: a quarter of its cwnd, so that its
 * writer, blocked on a full send buffer, comes back to the shim every eighth of a round trip or so, and
 * the window that sees slow start fill the path closes on time. Unset, a writer slept up to 0.30 s at a
 * time on `long` (150 ms), and in 2 of 6 runs slow start's second window closed 0.96-1.16 s after it
 * opened, past the overflow (docs/kernel-facts.md). At least 128 KiB, so that a 64 KiB write fits
 * under the mark; at most 4 MiB. The mark also changes when poll reports the socket writable, so it is
 * set only while it matters: the host's default comes back once the flow has decided, is no longer
 * steered, or has retransmitted (slow start has overflowed already, and a flow whose engine stays in
 * slow start while CUBIC regrows from that loss would keep the mark for the transfer), and a path the
 * engine does not steer (a base RTT under min_rtt_us: loopback, a LAN) never gets it. It is set too
 * while a lift's queue is watched (watch_lift): without it a writer came back every ~60 ms on `shallow`
 * in bursts, twice a window, and missed the lift's queue there. */
#define WAKE_MIN (128u * 1024)
#define WAKE_MAX (4u * 1024 * 1024)
static void wake_often(int fd, struct sobas_flow *f, int steering) {
  if (f->flags & SOBAS_FLOW_APP_LOWAT) {
    f->hold.lowat = 0; /* the application's mark stands, whatever sobas set before it */
    return;
  }
  /* An engine not started yet has no state: not in slow start. */
  int in_ss = f->eng.state == SOBAS_ST_SLOW_START || f->eng.state == SOBAS_ST_SS_GROWING;
  int wan = f->base_rtt_us >= f->eng.p.min_rtt_us;
  int no_loss_yet = f->last.total_retrans == 0;
  int wanted = (in_ss && no_loss_yet) || lift_watched(f);
  uint64_t want = steering && wanted && wan ? (uint64_t)f->last.snd_cwnd * f->last.snd_mss / 4 : 0;
  if (want) want = want < WAKE_MIN ? WAKE_MIN : want > WAKE_MAX ? WAKE_MAX : want;
  if (sobas_enforce_wake(fd, (uint32_t)want, &f->hold) == -EEXIST) f->flags |= SOBAS_FLOW_APP_LOWAT;
}

/* Samples now, under the flow's lock; returns -1 when the fd turned out stale. */
static int sample_locked(int fd, struct sobas_flow *f) {
  struct sobas_sample s;
  if (take_sample(fd, &s) != 0) return -1;
  enum sobas_role role = role_of(f);
  struct sobas_window w;
  enum sobas_meas_result r = sobas_meas_feed(&f->meas, &sobas_proc.cfg.meas, role, &s, &w);
  if (r == SOBAS_MEAS_REGRESSED) return -1;
  f->last = s;
  if (r == SOBAS_MEAS_WINDOW) {
    uint64_t total = __atomic_load_n(&f->app[0], __ATOMIC_RELAXED) + __atomic_load_n(&f->app[1], __ATOMIC_RELAXED);
    f->windows++;
    f->app_last_window = total - f->app_at_window;
    f->app_at_window = total;
    struct sobas_probe_view pv;
    int steered = steered_window(fd, f, role, &w);
    probe_window(f, &pv, 0);
    if (stand_down(fd, f, &pv)) steered = 0;
    f->last_rate_bps = role == SOBAS_ROLE_SENDER ? w.tx_rate_bps : w.rx_rate_bps;
    /* What held the window back, under the hold it ran with (before this window's decision). */
    uint64_t read = __atomic_load_n(&f->app[0], __ATOMIC_RELAXED);
    f->last_limit = (uint8_t)sobas_window_limit(role, &w, &s, f->hold.s, f->hold.pace_Bps != 0,
                                                s.bytes_received > read ? s.bytes_received - read : 0);
    /* A window the application limited (or, a sender's, the peer's window) measures them, not the
     * path: the engine never decides on it (measured: a server writing 64 KiB every 50 ms was decided
     * at its own rate and paced 1% under it; one sending to a reader of 2 MB/s, at the reader's rate).
     * A receiver's too: a reader of 2 MB/s after a first window at 72 Mb/s is a drop to 17 Mb/s, which
     * with a loss of the sender's slow start beside it ends the receiver's slow start and opens its
     * window. Likely what a run of the WAN suite saw (its log was not kept): a slow reader that read
     * "sender or path" in 17 of 23 windows, where autotuning's window reads "application" in 31 of 32,
     * and its sender never held by that window. */
    int measures_path = f->last_limit != SOBAS_LIMIT_APP &&
                        (!(f->flags & SOBAS_FLOW_SENDS) || f->last_limit != SOBAS_LIMIT_PEER_WINDOW);
    if (steered && measures_path) steer(fd, f, &w, &pv);
    if (f->flags & SOBAS_FLOW_SENDS) {
      wake_often(fd, f, steered);
      if (steered && measures_path) regrow_after_loss(fd, f, &w);
    }
    if (logging()) log_window(f, &w, role, &pv);
    if (w.t_end_ns - f->ring_sample_ns >= (int64_t)SOBAS_RING_SAMPLE_MS * 1000000) {
      f->ring_sample_ns = w.t_end_ns;
      ring_emit(f, SOBAS_EV_SAMPLE);
    }
  }
  return 0;
}

/* App bytes between clock reads: a quarter of the last window's bytes, so a window closes at most
 * ~25% late, and a flow at 10 Gb/s reads the clock a few thousand times a second, not per call. A
 * sixteenth while a lift's queue is watched: an eighth of a round trip, over which the lift's 10% adds
 * ~1% of T to its queue. */
static uint64_t stride_of(const struct sobas_flow *f) {
  uint64_t st = f->app_last_window / (lift_watched(f) ? 16 : 4);
  return st < STRIDE_MIN ? STRIDE_MIN : st > STRIDE_MAX ? STRIDE_MAX : st;
}

void sobas_track_check(int fd, struct sobas_flow *f, sobas_slot s) {
  KEEP_ERRNO;
  if (!active() || !try_lock(f)) return;
  if (sobas_slot_flags(s) & SOBAS_FDF_APP_PACING) f->flags |= SOBAS_FLOW_APP_PACED;
  if (sobas_slot_flags(s) & SOBAS_FDF_APP_LOWAT) f->flags |= SOBAS_FLOW_APP_LOWAT;
  uint64_t total = __atomic_load_n(&f->app[0], __ATOMIC_RELAXED) + __atomic_load_n(&f->app[1], __ATOMIC_RELAXED);
  if (!(f->flags & SOBAS_FLOW_ANNOUNCED)) announce(fd, f);
  uint64_t probe_at = sobas_proc.cfg.bulk_bytes / 4;
  if (!(f->flags & SOBAS_FLOW_PROBED) && total >= probe_at && role_of(f) == SOBAS_ROLE_RECEIVER) probe_open(fd, f);
  if (!(f->flags & SOBAS_FLOW_LED_EARLY) && total >= probe_at && role_of(f) == SOBAS_ROLE_SENDER) lead_early(fd, f);
  take_capacity(fd, f);
  if (!(f->flags & SOBAS_FLOW_BULK)) {
    if (total < sobas_proc.cfg.bulk_bytes) {
      __atomic_store_n(&f->next_check, total < probe_at ? probe_at : sobas_proc.cfg.bulk_bytes, __ATOMIC_RELAXED);
      unlock(f);
      return;
    }
    f->flags |= SOBAS_FLOW_BULK;
    learn_names(fd, f);
    take_sample(fd, &f->last);
    ring_emit(f, SOBAS_EV_OPEN);
  }
  int64_t due = sobas_meas_due_ns(&f->meas);
  int stale = 0;
  uint64_t s_from;
  if (due == 0 || sobas_now_ns() >= due)
    stale = sample_locked(fd, f) != 0;
  else if ((s_from = lift_watched(f)))
    stale = watch_lift(fd, f, s_from) != 0;
  __atomic_store_n(&f->next_check, total + stride_of(f), __ATOMIC_RELAXED);
  unlock(f);
  if (stale) forget_stale(fd, f, s);
}

static void log_close(int fd, struct sobas_flow *f) {
  if (fd >= 0 && (logging() || (f->flags & SOBAS_FLOW_BULK))) sample_locked(fd, f);
  if (f->flags & SOBAS_FLOW_BULK) ring_emit(f, SOBAS_EV_CLOSE);
  if (!logging()) return;
  char l[64], p[64];
  sobas_fmt_addr(l, sizeof l, &f->local);
  sobas_fmt_addr(p, sizeof p, &f->peer);
  enum sobas_role role = role_of(f);
  struct sobas_probe_view pv;
  probe_window(f, &pv, 1);
  /* app[] is bumped lock-free by I/O on other threads, which can still be running at process exit. */
  log_flow_line(f, "close",
                "local=%s peer=%s role=%s app_rx=%llu app_tx=%llu bytes_received=%llu bytes_acked=%llu retrans=%u "
                "windows=%llu probe=%s probe_why=%s probe_sent=%llu probe_echoes=%llu probe_lost=%llu probe_rtt_min_us=%u",
                l, p, role_names[role], (unsigned long long)__atomic_load_n(&f->app[SOBAS_RX], __ATOMIC_RELAXED),
                (unsigned long long)__atomic_load_n(&f->app[SOBAS_TX], __ATOMIC_RELAXED),
                (unsigned long long)f->last.bytes_received, (unsigned long long)f->last.bytes_acked,
                f->last.total_retrans, (unsigned long long)f->windows,
                sobas_probe_status_name((enum sobas_probe_status)f->probe_status),
                f->probe_status == SOBAS_PROBE_NONE ? sobas_probe_none_name((enum sobas_probe_none)f->probe_none_why) : "-",
                (unsigned long long)pv.sent_total, (unsigned long long)pv.received_total,
                (unsigned long long)pv.lost_total, pv.rtt_min_us);
}

/* Drops one fd's reference; the last one records the close (sampling through fd if it is still open,
 * fd = -1 if not) and frees the record. */
static void drop_flow(struct sobas_flow *f, int fd) {
  SOBAS_HB_BEFORE(&f->refs);
  if (__atomic_sub_fetch(&f->refs, 1, __ATOMIC_ACQ_REL) != 0) return;
  SOBAS_HB_AFTER(&f->refs);
  /* A thread that loaded the slot before it was cleared may still be sampling: wait it out briefly,
   * and skip the close record rather than block if it does not let go. */
  int locked = 0;
  for (int spin = 0; spin < 1000 && !(locked = try_lock(f)); spin++) __builtin_ia32_pause();
  if (locked && active() && (f->flags & SOBAS_FLOW_ANNOUNCED)) log_close(fd, f);
  /* Unlocked, a sampler may still be reporting: its slot goes stale 2 s after its last window instead. */
  struct sobas_ring_header *h = locked && f->board_slot ? sobas_ringw_header() : NULL;
  if (h) sobas_ring_board_leave(h, board_owner(f), f->board_slot);
  sobas_probe_close(f->probe);
  if (locked) unlock(f);
  sobas_ft_flow_free(&sobas_proc.ft, f);
}

static void drop_slot(int fd, sobas_slot old) {
  if (sobas_slot_kind(old) == SOBAS_FD_FLOW) drop_flow(sobas_ft_slot_flow(old), fd);
}

/* Points fd at `s`, releasing whatever the number held before (a stale flow from an fd closed behind
 * our back). */
static void set_slot(int fd, sobas_slot s) { drop_slot(-1, sobas_ft_swap(&sobas_proc.ft, fd, s)); }

/* New flow for a connected TCP socket, or SKIP for one we do not track. */
static void start_flow(int fd, const struct sobas_addr *peer, uint64_t inode, enum sobas_flow_origin origin,
                       unsigned fd_flags) {
  if (is_loopback(peer) && !sobas_proc.cfg.track_loopback) {
    set_slot(fd, SOBAS_SLOT(SOBAS_FD_SKIP, fd_flags, 0));
    return;
  }
  struct sobas_flow *f = sobas_ft_find_inode(&sobas_proc.ft, inode);
  if (!f) {
    f = sobas_ft_flow_alloc(&sobas_proc.ft);
    if (!f) { /* pool exhausted: the fd passes through untracked */
      set_slot(fd, SOBAS_SLOT(SOBAS_FD_SKIP, fd_flags, 0));
      return;
    }
    f->inode = inode;
    f->peer = *peer;
    f->origin = (uint8_t)origin;
    f->t_open_ns = sobas_now_ns();
    __atomic_sub_fetch(&f->refs, 1, __ATOMIC_RELAXED); /* sobas_ft_flow_slot takes the fd's reference */
  } else {
    __atomic_sub_fetch(&f->refs, 1, __ATOMIC_RELAXED); /* find_inode's reference becomes the slot's */
  }
  set_slot(fd, sobas_ft_flow_slot(f, fd_flags));
}

void sobas_track_socket(int fd, int domain, int type, int protocol) {
  KEEP_ERRNO;
  if (fd < 0 || !active()) return;
  int tcp = (domain == AF_INET || domain == AF_INET6) && (type & 0xf) == SOCK_STREAM &&
            (protocol == 0 || protocol == IPPROTO_TCP);
  set_slot(fd, SOBAS_SLOT(tcp ? SOBAS_FD_TCP : SOBAS_FD_OTHER, 0, 0));
}

void sobas_track_socketpair(const int sv[2]) {
  KEEP_ERRNO;
  if (!active()) return;
  set_slot(sv[0], SOBAS_SLOT(SOBAS_FD_OTHER, 0, 0));
  set_slot(sv[1], SOBAS_SLOT(SOBAS_FD_OTHER, 0, 0));
}

void sobas_track_connect(int fd, const struct sockaddr *addr, socklen_t len) {
  KEEP_ERRNO;
  if (!active()) return;
  sobas_slot s = sobas_ft_get(&sobas_proc.ft, fd);
  struct sobas_addr peer;
  if (sobas_slot_kind(s) != SOBAS_FD_TCP || addr_from_sockaddr(&peer, addr, len) != 0) return;
  start_flow(fd, &peer, 0, SOBAS_ORIGIN_CONNECT, sobas_slot_flags(s));
}

void sobas_track_accept(int lfd, int nfd, const struct sockaddr *addr, const socklen_t *len) {
  KEEP_ERRNO;
  if (nfd < 0 || !active()) return;
  if (sobas_slot_kind(sobas_ft_get(&sobas_proc.ft, lfd)) != SOBAS_FD_TCP) {
    set_slot(nfd, 0); /* a listener we did not create: classify the new fd on first use */
    return;
  }
  struct sobas_addr peer;
  if ((addr && len && addr_from_sockaddr(&peer, addr, *len) == 0) || name_of(nfd, &peer, 1) == 0)
    start_flow(nfd, &peer, 0, SOBAS_ORIGIN_ACCEPT, 0);
  else
    set_slot(nfd, 0);
}

void sobas_track_setsockopt(int fd, int level, int name) {
  KEEP_ERRNO;
  int lowat = level == IPPROTO_TCP && name == TCP_NOTSENT_LOWAT;
  if (!active() || (!lowat && (level != SOL_SOCKET ||
                               (name != SO_RCVBUF && name != SO_SNDBUF && name != SO_MAX_PACING_RATE))))
    return;
  sobas_slot s = sobas_ft_get(&sobas_proc.ft, fd);
  unsigned k = sobas_slot_kind(s);
  if (k != SOBAS_FD_TCP && k != SOBAS_FD_FLOW && k != SOBAS_FD_SKIP) return;
  unsigned flag = lowat                ? SOBAS_FDF_APP_LOWAT
                  : name == SO_RCVBUF  ? SOBAS_FDF_APP_RCVBUF
                  : name == SO_SNDBUF  ? SOBAS_FDF_APP_SNDBUF
                                       : SOBAS_FDF_APP_PACING;
  sobas_ft_cas(&sobas_proc.ft, fd, s, sobas_slot_with_flags(s, flag)); /* a lost race only loses the note */
}

void sobas_track_shutdown(int fd, int how) {
  KEEP_ERRNO;
  if (!active() || how == SHUT_RD) return;
  sobas_slot s = sobas_ft_get(&sobas_proc.ft, fd);
  if (sobas_slot_kind(s) != SOBAS_FD_FLOW) return;
  struct sobas_flow *f = sobas_ft_slot_flow(s);
  if (!try_lock(f)) return;
  int stale = (f->flags & SOBAS_FLOW_BULK) && sample_locked(fd, f) != 0;
  unlock(f);
  if (stale) forget_stale(fd, f, s);
}

void sobas_track_received_fds(const struct msghdr *msg) {
  KEEP_ERRNO;
  if (!msg || !msg->msg_control || !active()) return;
  for (struct cmsghdr *c = CMSG_FIRSTHDR((struct msghdr *)msg); c; c = CMSG_NXTHDR((struct msghdr *)msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < n; i++) {
      int fd;
      memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
      set_slot(fd, 0);
    }
  }
}

/* Only a flow's slot is released: other kinds may stay, since a number can come back as a socket only
 * through socket(), accept() or dup, which overwrite the slot (a file opened there passes through as
 * before, an unconnected-TCP slot reclassifies itself on first I/O). */
void sobas_track_close(int fd) {
  KEEP_ERRNO;
  if (sobas_slot_kind(sobas_ft_get(&sobas_proc.ft, fd)) != SOBAS_FD_FLOW || !may_change()) return;
  drop_slot(fd, sobas_ft_swap(&sobas_proc.ft, fd, 0));
}

static void drop_slot_cb(void *ctx, int fd, sobas_slot old) {
  (void)ctx;
  drop_slot(fd, old);
}

void sobas_track_close_range(unsigned lo, unsigned hi, int flags) {
  KEEP_ERRNO;
  if ((flags & CLOSE_RANGE_CLOEXEC) || !may_change()) return; /* CLOEXEC only marks fds */
  sobas_ft_take_range(&sobas_proc.ft, lo, hi, drop_slot_cb, NULL);
}

void sobas_track_before_replace(int nfd) {
  KEEP_ERRNO;
  sobas_slot s = sobas_ft_get(&sobas_proc.ft, nfd);
  if (!active() || sobas_slot_kind(s) != SOBAS_FD_FLOW) return;
  struct sobas_flow *f = sobas_ft_slot_flow(s);
  if (__atomic_load_n(&f->refs, __ATOMIC_RELAXED) != 1 || !(f->flags & SOBAS_FLOW_BULK) || !try_lock(f)) return;
  sample_locked(nfd, f);
  unlock(f);
}

void sobas_track_dup(int ofd, int nfd) {
  KEEP_ERRNO;
  sobas_slot s = sobas_ft_get(&sobas_proc.ft, ofd);
  if (ofd == nfd || (s == 0 && sobas_ft_get(&sobas_proc.ft, nfd) == 0) || !may_change()) return;
  if (sobas_slot_kind(s) == SOBAS_FD_FLOW) {
    struct sobas_flow *f = sobas_ft_slot_flow(s);
    s = sobas_ft_flow_slot(f, sobas_slot_flags(s));
  }
  set_slot(nfd, s);
}

void sobas_track_stdio_replaced(void) {
  KEEP_ERRNO;
  if (!active()) return; /* daemon's child is a real fork: its pid was refreshed at fork */
  for (int fd = 0; fd <= 2; fd++) set_slot(fd, SOBAS_SLOT(SOBAS_FD_OTHER, 0, 0));
}

void sobas_track_fork_child(void) {
  /* getpid is a syscall; a quiet (sandboxed) process keeps the parent's number, which it never logs. */
  if (!active()) return;
  sobas_proc.pid = getpid();
  sobas_probe_fork_child();
  sobas_peer_steers_fork_child();
  for (uint32_t c = 0; c < SOBAS_FLOW_CHUNKS && sobas_proc.ft.flow_chunks[c]; c++)
    for (uint32_t i = 0; i < SOBAS_FLOW_CHUNK; i++) {
      struct sobas_flow *f = &sobas_proc.ft.flow_chunks[c][i];
      /* Only the forking thread lives on: a sampler lock another thread held at fork is orphaned. */
      f->busy = 0;
      /* The child records only what it moves itself: a child that never touches an inherited socket
       * (a forked helper, a fork-per-connection parent's listener) leaves no record of it. The kernel
       * side (bulk state, measurement window) is the socket's and carries over. */
      f->flags &= ~SOBAS_FLOW_ANNOUNCED;
      f->app[SOBAS_RX] = f->app[SOBAS_TX] = 0;
      f->next_check = 0;
    }
}

void sobas_track_exit(void) {
  if (!may_change()) return;
  sobas_ft_take_range(&sobas_proc.ft, 0, ~0u, drop_slot_cb, NULL);
  sobas_track_quiet(); /* later destructors' I/O passes straight through */
}

void sobas_track_quiet(void) {
  __atomic_store_n(&sobas_proc.active, 0, __ATOMIC_RELAXED);
  sobas_probe_stop(0);
}

void sobas_track_classify(int fd, int dir, size_t n) {
  KEEP_ERRNO;
  if ((unsigned)fd >= SOBAS_FD_LIMIT || !active()) return;
  sobas_slot s = sobas_ft_get(&sobas_proc.ft, fd);
  uint64_t inode = 0;
  if (sobas_slot_kind(s) == SOBAS_FD_UNKNOWN) {
    struct stat st;
    int proto = 0, domain = 0;
    socklen_t l1 = sizeof proto, l2 = sizeof domain;
    if (fstat(fd, &st) != 0) return; /* cannot happen after a successful read; stay unknown */
    if (!S_ISSOCK(st.st_mode) || libc_getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &l1) != 0 ||
        libc_getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &l2) != 0 || proto != IPPROTO_TCP ||
        (domain != AF_INET && domain != AF_INET6)) {
      sobas_ft_cas(&sobas_proc.ft, fd, s, SOBAS_SLOT(SOBAS_FD_OTHER, 0, 0));
      return;
    }
    inode = (uint64_t)st.st_ino;
  }
  struct sobas_addr peer;
  if (name_of(fd, &peer, 1) != 0) {
    /* Data moved on an unconnected TCP socket: nothing to measure (e.g. a listener's error path). */
    sobas_ft_cas(&sobas_proc.ft, fd, s, SOBAS_SLOT(SOBAS_FD_OTHER, sobas_slot_flags(s), 0));
    return;
  }
  start_flow(fd, &peer, inode, inode ? SOBAS_ORIGIN_INHERITED : SOBAS_ORIGIN_CONNECT, sobas_slot_flags(s));
  /* count the bytes that revealed it (only once it is a flow: a slot that failed to store stays unknown) */
  if (sobas_slot_kind(sobas_ft_get(&sobas_proc.ft, fd)) == SOBAS_FD_FLOW) sobas_track_io(fd, dir, (ssize_t)n);
}
