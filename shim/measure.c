/* measure.c — pure measurement windows (no syscalls, no globals): see measure.h. */
#include "measure.h"

#include <string.h>

void sobas_meas_params_default(struct sobas_meas_params *p) {
  p->min_window_us = 10000;    /* 10 ms: 100 TCP_INFO reads/s per flow at most */
  p->max_window_us = 2000000;  /* 2 s */
  p->default_rtt_us = 100000;  /* 100 ms, a long-haul guess until the kernel knows better */
}

void sobas_meas_init(struct sobas_meas *m) { memset(m, 0, sizeof *m); }

uint32_t sobas_meas_rtt_us(enum sobas_role role, const struct sobas_sample *s, const struct sobas_meas_params *p) {
  if (role == SOBAS_ROLE_RECEIVER && s->rcv_rtt_us > 0) return s->rcv_rtt_us;
  if (s->rtt_us > 0) return s->rtt_us;
  if (s->rcv_rtt_us > 0) return s->rcv_rtt_us;
  return p->default_rtt_us;
}

int64_t sobas_meas_window_ns(enum sobas_role role, const struct sobas_sample *s, const struct sobas_meas_params *p) {
  uint64_t us = 2ull * sobas_meas_rtt_us(role, s, p);
  if (us < p->min_window_us) us = p->min_window_us;
  if (us > p->max_window_us) us = p->max_window_us;
  return (int64_t)us * 1000;
}

uint64_t sobas_rate_bps(uint64_t bytes, int64_t ns) {
  if (ns <= 0) return 0;
  return (uint64_t)((unsigned __int128)bytes * 8u * 1000000000u / (uint64_t)ns);
}

int64_t sobas_meas_due_ns(const struct sobas_meas *m) { return m->started ? m->start.t_ns + m->window_ns : 0; }

/* Bytes a sender saw delivered between samples a and s. The cumulative ACK lags the data a loss's
 * repair leaves SACKed, then takes it all at once: measured on `gig` (1 Gb/s, both ends preloaded), the
 * two windows after a slow start's 1725 retransmits read 1080 and 1181 Mb/s of acked data while the
 * kernel's delivery rate read 965, and the sender decided at 1131 Mb/s, paced over the link, and stepped
 * aside on its own queue 0.2 s later. The segments delivered (tcpi_delivered counts SACKed ones when
 * they arrive) have no such jump: the fewer of the two. Not the more during the repair, when the acked
 * bytes fall behind: the engine's drop rules were measured on the acked count. */
static uint64_t sender_delivered(const struct sobas_sample *a, const struct sobas_sample *s) {
  uint64_t acked = s->bytes_acked - a->bytes_acked;
  if (!(a->have & s->have & SOBAS_HAVE_DELIVERED) || s->snd_mss == 0) return acked;
  uint64_t segs = (uint32_t)(s->delivered - a->delivered) * (uint64_t)s->snd_mss;
  return segs < acked ? segs : acked;
}

enum sobas_meas_result sobas_meas_feed(struct sobas_meas *m, const struct sobas_meas_params *p, enum sobas_role role,
                                       const struct sobas_sample *s, struct sobas_window *out) {
  /* The window's length is decided by the newest RTT: the RTT at its start may be the handshake's,
   * far from the loaded path's. */
  int64_t need = sobas_meas_window_ns(role, s, p);
  if (!m->started) {
    m->start = *s;
    m->window_ns = need;
    m->started = 1;
    return SOBAS_MEAS_PENDING;
  }
  const struct sobas_sample *a = &m->start;
  if (s->bytes_received < a->bytes_received || s->bytes_acked < a->bytes_acked || s->total_retrans < a->total_retrans)
    return SOBAS_MEAS_REGRESSED;
  m->window_ns = need;
  if (s->t_ns - a->t_ns < need) return SOBAS_MEAS_PENDING;

  int64_t dt = s->t_ns - a->t_ns;
  out->t_start_ns = a->t_ns;
  out->t_end_ns = s->t_ns;
  out->rx_bytes = s->bytes_received - a->bytes_received;
  out->tx_bytes = sender_delivered(a, s);
  out->rx_rate_bps = sobas_rate_bps(out->rx_bytes, dt);
  out->tx_rate_bps = sobas_rate_bps(out->tx_bytes, dt);
  out->rtt_us = sobas_meas_rtt_us(role, s, p);
  out->retrans = s->total_retrans - a->total_retrans;
  out->ooopack = s->rcv_ooopack >= a->rcv_ooopack ? s->rcv_ooopack - a->rcv_ooopack : 0;
  out->app_limited = s->app_limited;
  out->delivery_bps = s->delivery_bps;
  out->busy_us = s->busy_us >= a->busy_us ? s->busy_us - a->busy_us : 0;
  out->rwnd_limited_us = s->rwnd_limited_us >= a->rwnd_limited_us ? s->rwnd_limited_us - a->rwnd_limited_us : 0;
  out->sndbuf_limited_us =
      s->sndbuf_limited_us >= a->sndbuf_limited_us ? s->sndbuf_limited_us - a->sndbuf_limited_us : 0;
  m->start = *s;
  return SOBAS_MEAS_WINDOW;
}

/* Bytes a rate in bits per second moves over one round trip of the window: what a flow has in flight. */
static double per_rtt(uint64_t rate_bps, const struct sobas_window *w) {
  return (double)rate_bps / 8.0 * (double)w->rtt_us / 1e6;
}

/* A paced sender whose pace its cwnd cannot carry (a lift past it: track.c, regrow) waits on the cwnd:
 * what it has in flight, its rate over the RTT, fills the cwnd. Held at its pace it keeps less (93% in
 * the hold after such a lift: 89.5 Mb/s at 40.8 ms over 339 segments). In the kept logs of 2026-12-04
 * (12309 windows paced by sobas, 27 batches), 97% of the cwnd marked 147: runs of 20-21 windows where
 * lifts waited on the cwnd for seconds (97-104% in three such runs; 82.2 Mb/s over 292 segments: 99%),
 * and on shallow the window that ended a lift, whose queue had filled the cwnd, 1-3 a run. */
static int cwnd_full(const struct sobas_window *w, const struct sobas_sample *s) {
  return s->snd_cwnd && s->snd_mss && per_rtt(w->tx_rate_bps, w) >= 0.97 * (double)s->snd_cwnd * s->snd_mss;
}

enum sobas_limit sobas_window_limit(enum sobas_role role, const struct sobas_window *w, const struct sobas_sample *s,
                                    uint64_t held_s, int paced, uint64_t unread) {
  double dur_us = (double)(w->t_end_ns - w->t_start_ns) / 1000.0;
  if (dur_us <= 0) return SOBAS_LIMIT_UNKNOWN;
  if (role == SOBAS_ROLE_SENDER) {
    if (!(s->have & SOBAS_HAVE_CHRONO)) return SOBAS_LIMIT_UNKNOWN;
    /* busy is the time with data outstanding: less than half, and the application left nothing to
     * send. The peer's window is told by its share of the window too, before the kernel's app-limited
     * mark, which is its last delivery sample's alone: a sender the peer's window held for all of a 168
     * ms window (a reader of 2 MB/s) read "application" when the window it had just been given ran its
     * queue dry at the end (WAN test of LIMITED BY: 1 of the 97 windows it held over half, in 4 runs;
     * a run of the suite read the peer's window in 4 of 27). Neither label is fed to the engine, so
     * only the label moves. */
    if ((double)w->busy_us < 0.5 * dur_us) return SOBAS_LIMIT_APP;
    if ((double)w->rwnd_limited_us >= 0.5 * dur_us) return SOBAS_LIMIT_PEER_WINDOW;
    if (w->app_limited) return SOBAS_LIMIT_APP;
    if ((double)w->sndbuf_limited_us >= 0.5 * dur_us) return SOBAS_LIMIT_SNDBUF;
    return paced && !cwnd_full(w, s) ? SOBAS_LIMIT_SOBAS : SOBAS_LIMIT_PATH;
  }
  if (role != SOBAS_ROLE_RECEIVER || !(s->have & SOBAS_HAVE_RCV_WND)) return SOBAS_LIMIT_UNKNOWN;
  /* A reader that leaves more unread than the window still offers holds the flow whatever the window
   * (measured with curl --limit-rate: the window read 100-200 KB, opened by the read just made). Else
   * the window limits when a round trip's worth of data fills most of it: sobas's S, or its own size. */
  if (unread > s->rcv_wnd) return SOBAS_LIMIT_APP;
  if (per_rtt(w->rx_rate_bps, w) < 0.8 * (double)s->rcv_wnd) return SOBAS_LIMIT_SENDER_OR_PATH;
  return held_s && (double)s->rcv_wnd <= 1.1 * (double)held_s ? SOBAS_LIMIT_SOBAS : SOBAS_LIMIT_RCV_WINDOW;
}

const char *sobas_limit_name(enum sobas_limit l) {
  static const char *const names[] = {"unknown", "application", "peer-window", "send-buffer",
                                      "path", "sobas", "receive-window", "sender-or-path"};
  return (unsigned)l < sizeof names / sizeof names[0] ? names[l] : "?";
}
