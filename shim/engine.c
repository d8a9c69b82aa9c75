/* engine.c — SOBAS's decision logic: Fig. 8's states driven by 2·RTT rate windows (pure: no syscalls, no globals). */
#include "sobas/engine.h"

#include "pace.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

void sobas_engine_default_params(struct sobas_engine_params *p) {
  *p = (struct sobas_engine_params){
      .equal_tol = 0.05,       /* 3x the window-to-window noise of a flow at A beside Poisson cross traffic */
      .drop_frac = 0.20,       /* a loss cuts CUBIC's rate by 30% and slow start's by 50%; noise stays < 10% */
      .flat_n_ss = 2,          /* paper */
      .flat_n_ca = 5,          /* paper */
      .start_gain = 1.2,       /* paper */
      .headroom = 0.02,        /* measured: held at exactly R·T_base a flow ran at 97% of R (the ACK clock
                                  and cross-traffic jitter add ~1.2 ms to 40 ms); 2% more keeps it near R
                                  for under 1 ms of queue (3% pushed the RTT to +4.6%, near the 5% bar) */
      .lift_fit_max = 0.04,    /* measured on arrive-leave (100 Mb/s, 40 ms): held at 1.02·A·T with no queue a flow
                                  delivered 98.9% of A (the reader and delayed ACKs lengthen its loop by ~1.3 ms),
                                  lifted it delivered A: the window that does is 1.031·A·T; a fit wrong by all
                                  of its 4% queues 4% of T, under the 5% RTT bar */
      .lift_fit_rtt_us = 500,  /* 4-window medians of the held RTT over its least, measured: arrive-leave 110-480 us
                                  in 31 of 36 with the probe (one 703, a stall's 1.1-3.4 ms in four), 0 without;
                                  beside 20 Mb/s of Poisson UDP (typical, bloated) over 500 in 40 of 44 (312-3554),
                                  where a 1 ms guard bought the flow 0.4-0.9% more of the path for +0.3-0.7 ms of
                                  queue (3 paired runs each) */
      .grow_frac = 0.02,       /* the paper's MSS per RTT is 0.06% of S at 1 Gb/s / 20 ms: measured, a start
                                  cap 29% low (C' = 713 of 1000 Mb/s) took 6 s of a 6 s transfer to grow
                                  out of; 2% per RTT takes 15 RTTs, and overshoots A·T by at most the ~10%
                                  of a few RTTs that flat-rate needs to see a queue or S grow */
      .grow_max_frac = 0.10,   /* measured on gig: the probe put C' at 314 of 1000 Mb/s (its trains on a
                                  stalling host), and the start cap took 1.35 s of a 6.6 s transfer to
                                  grow out of at 2% per RTT; doubling from the third window to 10% per
                                  RTT takes ~16 RTTs; the step that meets the path adds 10% of S per RTT
                                  of its window, which the RTT shows a round later (measured: the last
                                  took S to 1.16-1.42·A·T, which a 1-BDP buffer held) */
      .limited_frac = 0.90,    /* in flight (R·T) within 10% of S: the cap, not the path, holds the flow */
      .full_least = 0,         /* a receiver's tcpi_rcv_rtt is coarse: the median; senders set it (pacer params),
                                  and a receiver's probed windows take the least anyway (search) */
      .full_rtt_frac = 0.10,   /* tcpi_rcv_rtt jitters by up to ~5% beside Poisson cross traffic; a full
                                  path's queue grows past that within a window or two */
      .congested_episodes = 2, /* one isolated loss is not a loss rate: a burst of cross traffic into a
                                  shallow buffer (measured: a window held at A·T beside Poisson UDP lost
                                  one burst every 5-15 s, each spanning two windows) */
      .congested_span_rtts = 100, /* random loss p recurs every ~1/sqrt(1.5p) RTTs for a flow it limits:
                                     36 RTTs at p = 5e-4, 82 at 1e-4 */
      .drain_rtts = 50,        /* window not known: 13.2 MB offered at the decision took 2.0 s = 50 RTTs
                                  of 40 ms to be consumed; after that losses count anyway */
      .min_rtt_us = 1000,      /* a sub-ms path has no long-fat-network problem; scheduling jitter there
                                  rivals the RTT, so R·T would be noise */
      .s_min = 16384,          /* below this a cap only hurts (a few segments in flight) */
      .s_max = 64u << 20,      /* the caller replaces it by what the kernel really allows */
      .reeval_ns = 0,          /* paper: decide once per transfer */
      .queue_windows = 3,      /* 6 base RTTs: a loss-based competitor's queue outlasts them (measured: a
                                  CUBIC flow keeps a 1-BDP buffer 0.4-1 BDP full), a host stall (1-40 ms)
                                  or a burst of cross traffic does not */
      .queue_min_ns = 300000000, /* ... and at least 300 ms: at 1 Gb/s / 20 ms three windows are 120 ms,
                                    which an emulator falling behind on this 2-core host outlasted (a
                                    held flow trimmed from 954 to 554 Mb/s, another stepped aside, with
                                    no cross traffic at all) */
      .queue_rtt_frac = 0.10,  /* held at 1.02·R·T_base our own queue is ~2% of T; rcv_rtt jitters ~5% */
      .queue_rtt_min_us = 2000, /* tcpi_rcv_rtt counts whole ms: two ticks */
      .queue_rate_keep = 0.95, /* held alone the flow makes R ±2%; a 10% queue over R·T leaves it 0.93·R */
      .loss_rate_frac = 0.85,  /* an overshoot's loss comes at A, which the decided rate is within ±5% of
                                  beside Poisson cross traffic; under 0.85 of it the flow fills no queue */
      .foreign_growth = 0.15,  /* beside one CUBIC flow every echo met 8-20 ms of its queue at 34.6 Mb/s, and the
                                  flow went on to a 42.1 plateau (+22%) while the queue stood; a flow at A with
                                  its own queue moves +-5% a window beside Poisson cross traffic */
      .share_frac = 0.50,      /* beside one CUBIC flow already filling a 1-BDP buffer (its queue in the base
                                  RTT too, so no rule sees it) the flow decided on CUBIC's regrowth at 17.6-29.6
                                  Mb/s of C' = 100 (0.18-0.30), and the hold cost 0.65x plain CUBIC's goodput;
                                  beside one with random loss (congested) at 0.44. The lowest plateau a path gave
                                  a flow to itself here is gig-udp's, 0.57 of C' beside 430 Mb/s of constant UDP
                                  on 1 Gb/s; C' reading 15% high would put it under, costing the queue SOBAS
                                  spares, not goodput */
      .resume_frac = 0.90,     /* two flows share about half each: 0.9 of the rate held alone is the path back */
      .resume_jump = 0.40,     /* a CUBIC flow's share beside another swings ±20-30% over a sawtooth */
      .resume_clear_ns = 1000000000, /* BBR's ProbeRTT empties the queue for 200 ms + an RTT every 10 s */
      .resume_cap_frac = 0.80, /* C' reads up to 15% high; beside a competitor no kept receiver aside held 0.8 */
      .resume_backoff_ns = 2000000000,      /* a return that finds the competitor again costs ~1 s at a */
      .resume_backoff_max_ns = 64000000000, /* reduced rate: doubling bounds what vain returns cost */
      .lift_gain = 0.10,       /* at A a lift queues 10% of T for ~3 windows: under the 5% RTT bar's p50 */
      .lift_first_held = 1,    /* the first lift with the first held window at the base RTT (first_lift_due) */
      .ss_queue_frac = 0,      /* a receiver's RTT lags slow start's queue by a round or more */
      .ss_queue_min_us = 5000,
      .lift_queue_frac = 0,    /* a receiver's lift queues at most lift_gain of its window */
      .trim_first = 0,         /* a receiver's window has the ACK clock: it follows a slower path (senders set it) */
      .sibling_trim_wait_ns = 2000000000, /* 8 siblings' trims came within 1.04 s of the first (held_queue) */
      .lift_grow = 0.05,       /* held alone the rate keeps ±2% a window (±5% beside Poisson cross traffic):
                                  both windows 5% up is the path, not noise */
      .lift_gain_max = 0.20,   /* a chain's last lift overshoots A by up to this: a receiver's queues 0.2·T, under the
                                  0.25-BDP buffer of `shallow`; 18 -> 55.1 Mb/s at 40 ms takes 8 lifts, not 13 */
      .lift_wait_ns = 1000000000, /* CUBIC near its last peak grows a packet or two per round trip: in 25
                                     round trips at 40 ms, 10-20% of a 250-packet window */
      .lift_cap_flat = 0.005,  /* lifted on `gig`, windows of 963.7-966.0 Mb/s at A = 965 (a 1 Gb/s emulator); a
                                  sender growing into a lift, 85 -> 89 Mb/s over 1 s, moves ~0.7% in three windows */
      .lift_backoff_ns = 1000000000,        /* measured: a 1 Gb/s flow decided at 76% of A in slow start
                                               (C' 18% low) lost a quarter of its 6 s transfer */
      .lift_backoff_max_ns = 32000000000,   /* at A, lifts every 32 s queue ~0.1·T for ~1% of the time */
      .calm_windows = 5,       /* receivers too: tcpi_rcv_rtt counts whole ms, yet held without the probe on
                                  `udp-leave` it calmed once the UDP stopped (2 of 30 and 8 of 28 windows 1 ms
                                  over the base, against 17 of 18 and 43 of 59 before). Replayed over 38 such
                                  kept receivers, the rule lifted before their first lift after the stop in
                                  22, 0.92 s sooner on average over the 38 */
      .calm_busy_us = 1000,
      .calm_busy_frac = 0.30,
      .lift_share = 0.10,      /* a lift lasts ~4 windows, 8 RTTs: 0.3 s at 40 ms, where the 1 s backoff
                                  rules, but 1.2 s at 150 ms, where lifts 1 and 2 s apart were 27% of
                                  the held time, each queueing 0.1·T: RTT+ p50 7.7 ms of the 7.5 bar */
      .steady_spread_us = 0,   /* a receiver's tcpi_rcv_rtt counts whole ms: no spread under one (pacer params) */
      .ca_ceiling_gain = 3.0,  /* CUBIC grows at most 1.5x a round, 2.25x a 2·RTT window: 3x what is in
                                  flight never holds it, while autotuning offered 4-17x (below) */
      .outgrown_gain = 0.30,   /* over 138 kept receivers that decided in slow start (2026-12-06/07), the
                                  windows before the hold read at most 1.02x the decided rate where it was
                                  A, up to 1.29x beside a competitor or UDP, and 1.43-1.99x on decisions at
                                  47-521 Mb/s on gig-tcp and gig (outgrown) */
  };
}

/* A sender's tcpi_rtt is exact to the µs: a pacer's lift ends at the first queue it shows (lift), and a
 * plateau in congestion avoidance is the path's only with a queue in every window of it: CUBIC
 * regrowing after a loss on a 0.25-BDP path, flat at 35.7 Mb/s of A = 77 with two RTT spikes of cross
 * traffic in five windows (median +5.7%, least +1.3%), was decided there and held 46% of A. A pacer
 * has no ACK clock either: a path that slows queues its excess, so it first trims S. And it has no
 * offered window to wait for: it drains its own queue (track.c lowers the pace by the queue's share),
 * so it is held 8 base RTTs after the decision unless that queue is still falling, and a queue then
 * that no longer falls is a competitor's (aside_undrained, update_held). With a receiver's 50 RTTs, a
 * server that decided on its share beside a CUBIC flow already in the buffer (its base RTT 57 ms, the
 * competitor's queue in it) met a queue in every window from the first (65-70 ms) and stepped aside
 * only 4.0-4.2 s after deciding (3 runs); with 6 and a standing queue's span, 1.5-1.6 s. On the typical
 * path a sender decided with 29 ms of queue read 4 ms one window later and none the next.
 * The same exact RTT caps its slow start: it decides in the round its own queue shows (ss_queue_frac,
 * in search). */
void sobas_engine_pacer_params(struct sobas_engine_params *p) {
  p->lift_queue_frac = 0.05;
  p->ss_queue_frac = 0.25;
  p->full_least = 1;
  p->trim_first = 1;
  p->drain_rtts = 8;
  p->aside_undrained = 1;
  p->ca_ceiling_gain = 0; /* a pace is no offered window: it holds at once */
  p->lift_fit_max = 0;    /* ... nor a window that a longer loop slows: a pace over A only queues */
  /* Ending at its first queue, a pacer's lift that finds nothing costs little: over the kept sender runs
   * of 2026-12-03/04 (246 runs, this bound's among them), 3 of 1974 lifts met a retransmission by three
   * windows after their end (2 of 200 on the 0.25-BDP `shallow`), and one at A held about two windows
   * 3.5-5 ms over the base. Doubled to 32 s, the wait is what a path that frees up costs: on `udp-leave`,
   * in 2 of 16 runs, a lift ended just before the UDP stopped with the backoff at 8 s, and the flow held
   * its share 7-8 s into the room (up_s 9.1 and 9.6 s; plain CUBIC's 0.2-2.2 in the same batches),
   * unless it sees the path free up: then calmed() lifts at once. */
  p->lift_backoff_max_ns = 4000000000;
  /* held_queue's steady queue: see steady_queue. */
  p->steady_spread_us = 600;
  p->steady_span_ns = 1000000000;
}

/* The T of S = R·T: the path's base RTT, or the RTT now until a base is known. */
static uint32_t base_rtt(const struct sobas_engine_input *in) { return in->base_rtt_us ? in->base_rtt_us : in->rtt_us; }

static uint64_t window_bytes(uint64_t rate_bps, uint32_t rtt_us) {
  return (uint64_t)((double)rate_bps * rtt_us / 8e6);
}

/* The rate that moves `bytes` each rtt_us (window_bytes' inverse; 0 with no RTT). */
static uint64_t window_rate(uint64_t bytes, uint32_t rtt_us) {
  return rtt_us ? (uint64_t)((double)bytes * 8e6 / rtt_us) : 0;
}

static uint64_t clamp_s(const struct sobas_engine *e, uint64_t s) {
  if (s < e->p.s_min) s = e->p.s_min;
  if (s > e->p.s_max) s = e->p.s_max;
  return s;
}

/* The rate history holds the windows since the last change of state, with S at each. */
static void forget_rates(struct sobas_engine *e) { e->n_rates = 0; }

/* How long the window being fed lasted (last_t_ns: the end of the one before), for queue_span: at most
 * four base RTTs (a 2·RTT window whose RTT a queue doubled), since the time since the last window fed
 * also holds the windows the caller did not feed (an application-limited one, an idle one). */
static int64_t window_length(const struct sobas_engine *e, const struct sobas_engine_input *in) {
  int64_t d = in->t_ns - e->last_t_ns, most = 4 * (int64_t)base_rtt(in) * 1000;
  if (d < 0) d = 0;
  return most > 0 && d > most ? most : d;
}

/* The window being fed joins the history: its rate, RTT, length, and the S it was measured at. */
static void push_rate(struct sobas_engine *e, const struct sobas_engine_input *in) {
  if (e->n_rates == SOBAS_ENGINE_HISTORY) {
    memmove(e->rates, e->rates + 1, sizeof e->rates[0] * (SOBAS_ENGINE_HISTORY - 1));
    memmove(e->s_at, e->s_at + 1, sizeof e->s_at[0] * (SOBAS_ENGINE_HISTORY - 1));
    memmove(e->rtt_at, e->rtt_at + 1, sizeof e->rtt_at[0] * (SOBAS_ENGINE_HISTORY - 1));
    memmove(e->dur_at, e->dur_at + 1, sizeof e->dur_at[0] * (SOBAS_ENGINE_HISTORY - 1));
    memmove(e->least_at, e->least_at + 1, sizeof e->least_at[0] * (SOBAS_ENGINE_HISTORY - 1));
    e->n_rates--;
  }
  e->rates[e->n_rates] = in->rate_bps;
  e->s_at[e->n_rates] = e->s;
  e->rtt_at[e->n_rates] = in->rtt_us;
  e->dur_at[e->n_rates] = window_length(e, in);
  e->least_at[e->n_rates] = in->rtt_least_us; /* 0 without the probe (engine.h) */
  e->n_rates++;
}

/* The n rates before window `end` are each within ±equal_tol of their mean, which *mean gets. */
static int rates_equal(const struct sobas_engine *e, uint32_t end, uint32_t n, double *mean) {
  if (n < 2 || end < n || end > e->n_rates) return 0;
  double sum = 0;
  for (uint32_t i = end - n; i < end; i++) sum += (double)e->rates[i];
  double m = sum / n;
  if (m <= 0) return 0;
  for (uint32_t i = end - n; i < end; i++) {
    double d = (double)e->rates[i] - m;
    if (d < 0) d = -d;
    if (d > e->p.equal_tol * m) return 0;
  }
  *mean = m;
  return 1;
}

/* The last n rates are still climbing: the newest more than equal_tol/2 above the oldest, of their mean
 * m. CUBIC regrowing after a loss rises ~1.5% a window, which five windows of ±5% alone would call flat. */
static int climbing(const struct sobas_engine *e, uint32_t n, double m) {
  return (double)e->rates[e->n_rates - 1] - (double)e->rates[e->n_rates - n] > e->p.equal_tol / 2 * m;
}

static int dropped(const struct sobas_engine *e, uint64_t before, uint64_t now) {
  return (double)now <= (1.0 - e->p.drop_frac) * (double)before;
}

/* Slow start (1, 2) and congestion avoidance (3, 4) are phases: growing S within one keeps its
 * rate history, since a plateau may span the step into growing. */
static int phase(enum sobas_state s) {
  return s == SOBAS_ST_SS_GROWING ? SOBAS_ST_SLOW_START : s == SOBAS_ST_CA_GROWING ? SOBAS_ST_CONG_AVOID : s;
}

static int act(struct sobas_engine *e, struct sobas_action *a, enum sobas_state to, enum sobas_reason why,
               int set, uint64_t s, uint64_t rate, uint32_t rtt, int64_t t_ns) {
  *a = (struct sobas_action){.set = (uint8_t)set, .s = s, .from = e->state, .to = to, .why = why,
                             .rate_bps = rate, .rtt_us = rtt};
  if (set) e->s = s;
  if (phase(to) != phase(e->state) || why == SOBAS_WHY_REEVALUATE) forget_rates(e);
  if (to != e->state) {
    e->lifting = 0;
    if (to == SOBAS_ST_DECIDED || to == SOBAS_ST_CONGESTED) e->climb = e->climbed = 0;
    if (to == SOBAS_ST_DECIDED) {
      e->ss_decided = phase(e->state) == SOBAS_ST_SLOW_START;
      e->decided_ns = t_ns;
      e->loss_episodes = 0;
      e->drained = e->held = 0;
      e->held_clean = 0;
      e->lifted = 0;
      e->rebased = 0;
      e->trimmed = 0;
      e->pace_trimmed = 0;
      e->trim_ns = 0;
      e->rtt_alone_us = 0;
      e->clean_run = e->quiet_run = 0;
      e->r_held = rate;
    }
    if (to == SOBAS_ST_CONGESTED) {
      /* Stepping aside right after a return that found the path still shared: wait longer next time. */
      if (e->resumed && (e->backoff_ns *= 2) > e->p.resume_backoff_max_ns) e->backoff_ns = e->p.resume_backoff_max_ns;
      e->resumed = 0;
      e->resume_after_ns = t_ns + e->backoff_ns;
      e->aside_on_loss = why == SOBAS_WHY_CONGESTED;
      e->path_loss_ns = t_ns;
      e->clear = 0;
      forget_rates(e);
    }
  }
  e->state = to;
  return 1;
}

/* The paper's S for rate R over T, with the headroom: (1 + headroom)·R·T, within the flow's bounds. */
static uint64_t s_of(const struct sobas_engine *e, uint64_t rate_bps, uint32_t t_us) {
  return clamp_s(e, (uint64_t)((1.0 + e->p.headroom) * (double)window_bytes(rate_bps, t_us)));
}

static int decide(struct sobas_engine *e, struct sobas_action *a, uint64_t rate, uint32_t t_us,
                  enum sobas_reason why, int64_t t_ns) {
  return act(e, a, SOBAS_ST_DECIDED, why, 1, s_of(e, rate, t_us), rate, t_us, t_ns);
}

/* The flow fills its window S: in flight (R·T now) at least limited_frac of it, so S, not the sender's
 * cwnd, is what holds the sender. */
static int fills_s(const struct sobas_engine *e, const struct sobas_engine_input *in) {
  uint32_t t = in->rtt_us ? in->rtt_us : base_rtt(in);
  return e->s < e->p.s_max && (double)window_bytes(in->rate_bps, t) >= e->p.limited_frac * (double)e->s;
}

/* Steps aside: S = S_max at once. A sender held by our window is not cwnd-limited, yet in slow start
 * Linux grows its cwnd to twice what is in flight (a CUBIC flow decided in slow start never left it),
 * so the opened window lets that cwnd go at line rate into the queue that made the flow step aside:
 * measured on arrive-leave, 131-236 retransmits a run where plain CUBIC has 41-54. That burst is what
 * an incumbent's full buffer does to a newcomer: its slow start meets losses and leaves with a small
 * window. Opened in steps of 5% a window instead (the losses 6-26), the newcomer grew into the empty
 * buffer first, and the flow kept 59-68 Mb/s of 100 for the 15 s they shared (9 runs of 10), at once
 * 69-79, plain CUBIC 71-86: 85.2 Mb/s against 88.5 at once and linux default's 90.8 (4 interleaved
 * runs each). A flow that steps aside from slow start, beside a competitor there from the start
 * (competing, congested), opened at once before too. */
static int step_aside(struct sobas_engine *e, struct sobas_action *a, const struct sobas_engine_input *in,
                      enum sobas_reason why, uint64_t rate) {
  return act(e, a, SOBAS_ST_CONGESTED, why, 1, e->p.s_max, rate, in->rtt_us, in->t_ns);
}

/* Steps aside for a competitor found after a decision on its share: nothing was held alone, so there is
 * no rate to come back to (resume waits for a jump with the queue gone). */
static int aside_from_share(struct sobas_engine *e, struct sobas_action *a, const struct sobas_engine_input *in) {
  e->r_alone = 0;
  return step_aside(e, a, in, SOBAS_WHY_COMPETING, in->rate_bps);
}

/* Steps aside for a competitor's standing queue. The rate to come back to stays the last one held alone
 * (set at a clean hold, held_queue), whether or not this decision was: a return that found
 * the competitor still there and decided on its share has learnt nothing about the path alone. Measured
 * in 2 of 5 CI runs of the arrive-leave e2e test: held alone at 96 Mb/s of 100, aside on the arrival,
 * back 3.3-4.1 s later at 87 (the newcomer still small), decided on that share, aside again 2.6 s
 * later; with the rate back to then zeroed, only a queue gone for a second could bring it back, and a
 * CUBIC flow alone at S_max keeps a 1-BDP buffer full (0.7 of 2 BDP in flight after a loss): it was
 * still aside when the file ended. */
static int aside_for_queue(struct sobas_engine *e, struct sobas_action *a, const struct sobas_engine_input *in,
                           uint64_t rate) {
  return step_aside(e, a, in, SOBAS_WHY_COMPETING, rate);
}

int sobas_engine_start(struct sobas_engine *e, const struct sobas_engine_params *p, uint64_t cap_bps,
                       uint32_t rtt_us, int64_t t_ns, struct sobas_action *a) {
  memset(e, 0, sizeof *e);
  e->p = *p;
  e->state = SOBAS_ST_SLOW_START;
  e->s = p->s_max;
  e->last_increase_ns = t_ns;
  e->last_t_ns = t_ns;
  e->backoff_ns = p->resume_backoff_ns;
  e->lift_backoff_ns = p->lift_backoff_ns;
  e->loss_age = UINT8_MAX;
  return sobas_engine_capacity(e, cap_bps, rtt_us, t_ns, a); /* no estimate: uncapped, the window scale large */
}

int sobas_engine_capacity(struct sobas_engine *e, uint64_t cap_bps, uint32_t rtt_us, int64_t t_ns,
                          struct sobas_action *a) {
  if (cap_bps) e->cap_bps = cap_bps;
  if (cap_bps == 0 || rtt_us == 0 || e->state != SOBAS_ST_SLOW_START || e->s != e->p.s_max) return 0;
  uint64_t s = clamp_s(e, window_bytes((uint64_t)(e->p.start_gain * (double)cap_bps), rtt_us));
  return act(e, a, SOBAS_ST_SLOW_START, SOBAS_WHY_START, 1, s, cap_bps, rtt_us, t_ns);
}

static int rtt_above(uint32_t rtt_us, uint32_t base_us, double frac, uint32_t min_us);

/* The RTT a queue standing through the window shows: a probed receiver's least echo, else the window's.
 * At 1 Gb/s this 2-core host delays the endpoints and the emulator by 5-10 ms for a few hundred ms at
 * a time, which lifts the echoes' mean and the flow's own RTT, not the least of a window's echoes: a
 * queue at the bottleneck is under every one of them. */
static uint32_t standing_rtt(const struct sobas_engine_input *in) {
  return in->probe && in->rtt_least_us ? in->rtt_least_us : in->rtt_us;
}

/* A flow that fills S has S in flight, so its RTT stands at S/R: a queue of S/R - T. That queue, held by
 * the path, lies under every echo; a host stretching the loop lifts the echoes' mean alone. So the least
 * echo holds at least half of it. Measured in the full run at d821210: 14 of the 15 slow-start decisions
 * on a filled cap held 0.66-0.98 of it under their least echo (`gig`, `gig-udp`, `gig-tcp`, `typical`,
 * `bloated`, `arrive-leave`). The 15th, on `gig` with C' read at 585 Mb/s of A = 965, held 0.34 (rate
 * 537.5 Mb/s under S = 1.79 MB: 6.6 ms of queue; its least echo 2.2 ms over the 20 ms base, the mean 6.1),
 * decided there, and took 0.9 s of lifts to reach A. Only the probe has a least echo: a window's own RTT
 * is a mean, and says nothing more here than the `limited` it read. */
static int queue_fills_s(const struct sobas_engine *e, const struct sobas_engine_input *in, uint32_t t0) {
  if (!in->probe || !in->rtt_least_us) return 1;
  /* least - T >= (S/R - T)/2, i.e. R over T + 2·(least - T) fills S. */
  uint32_t least = standing_rtt(in), queue = least > t0 ? least - t0 : 0;
  return window_bytes(in->rate_bps, t0 + 2 * queue) >= e->s;
}

/* Slow start's "full" (full_rtt_frac and 2 ms over the base) on the RTT a standing queue shows. */
static int standing_in_ss(const struct sobas_engine *e, const struct sobas_engine_input *in, uint32_t t0) {
  return rtt_above(standing_rtt(in), t0, e->p.full_rtt_frac, 2000);
}

/* S grows by max(MSS, grow_frac·S) for every RTT since the last increase (the windows are 2·RTT long,
 * so usually two). */
static int grow(struct sobas_engine *e, const struct sobas_engine_input *in, enum sobas_state to,
                struct sobas_action *a) {
  uint32_t rtt = in->rtt_us ? in->rtt_us : in->base_rtt_us;
  int64_t rtt_ns = (int64_t)rtt * 1000;
  int64_t k = rtt_ns > 0 ? (in->t_ns - e->last_increase_ns) / rtt_ns : 0;
  if (to != e->state) {
    /* Entering a growing state: one increase now, the next an RTT later. */
    k = 1;
    e->last_increase_ns = in->t_ns;
  } else if (k < 1) {
    return 0;
  } else {
    e->last_increase_ns += k * rtt_ns;
  }
  /* Slow start under a cap that the flow fills with no queue: the cap, not the path, holds it, as when
   * C' came out low. After two windows of that, each window doubles the share the next adds, up to
   * grow_max_frac; a queue, or congestion avoidance, brings it back to grow_frac. */
  int clear = to == SOBAS_ST_SS_GROWING && !rtt_above(standing_rtt(in), base_rtt(in), e->p.equal_tol, 1000);
  e->grow_clear = to == e->state && clear ? e->grow_clear + 1 : 0;
  double frac = e->p.grow_frac;
  for (uint32_t i = 1; i < e->grow_clear && frac < e->p.grow_max_frac; i++)
    frac = 2 * frac < e->p.grow_max_frac ? 2 * frac : e->p.grow_max_frac;
  uint64_t mss = in->mss ? in->mss : 1448, step = (uint64_t)(frac * (double)e->s);
  uint64_t s = e->s + (uint64_t)k * (step > mss ? step : mss);
  if (s > e->p.s_max) s = e->p.s_max;
  return act(e, a, to, SOBAS_WHY_BUFFER_LIMITED, 1, s, in->rate_bps, rtt, in->t_ns);
}

/* The RTT now shows a queue over the base: at least frac of it, and at least min_us. */
static int rtt_above(uint32_t rtt_us, uint32_t base_us, double frac, uint32_t min_us) {
  return rtt_us && base_us && (double)rtt_us >= (1.0 + frac) * base_us && rtt_us >= base_us + min_us;
}

/* The median of n values. */
static uint64_t median_of(const uint64_t *x, uint32_t n) {
  uint64_t v[SOBAS_ENGINE_HISTORY];
  for (uint32_t i = 0; i < n; i++) {
    uint32_t j = i;
    for (; j > 0 && v[j - 1] > x[i]; j--) v[j] = v[j - 1];
    v[j] = x[i];
  }
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The median RTT of the last n windows (n <= n_rates): a queue that lasts, not one spike. */
static uint32_t median_rtt(const struct sobas_engine *e, uint32_t n) {
  uint64_t v[SOBAS_ENGINE_HISTORY];
  for (uint32_t i = 0; i < n; i++) v[i] = e->rtt_at[e->n_rates - n + i];
  return (uint32_t)median_of(v, n);
}

/* The least of the last n windows' values in a history beside rates (rtt_at, least_at; n <= n_rates). */
static uint32_t least_of(const struct sobas_engine *e, const uint32_t *at, uint32_t n) {
  uint32_t m = UINT32_MAX;
  for (uint32_t i = e->n_rates - n; i < e->n_rates; i++)
    if (at[i] < m) m = at[i];
  return m;
}

/* The least RTT of the last n windows (n <= n_rates): a queue in every one of them, or not. */
static uint32_t least_rtt(const struct sobas_engine *e, uint32_t n) { return least_of(e, e->rtt_at, n); }

/* The highest RTT of the last n windows (n <= n_rates). */
static uint32_t highest_rtt(const struct sobas_engine *e, uint32_t n) {
  uint32_t m = 0;
  for (uint32_t i = e->n_rates - n; i < e->n_rates; i++)
    if (e->rtt_at[i] > m) m = e->rtt_at[i];
  return m;
}

/* The highest of the last n rates (n <= n_rates). */
static uint64_t max_rate(const struct sobas_engine *e, uint32_t n) {
  uint64_t m = 0;
  for (uint32_t i = e->n_rates - n; i < e->n_rates; i++)
    if (e->rates[i] > m) m = e->rates[i];
  return m;
}

/* The least of the last n rates (n <= n_rates). */
static uint64_t least_rate(const struct sobas_engine *e, uint32_t n) {
  uint64_t m = UINT64_MAX;
  for (uint32_t i = e->n_rates - n; i < e->n_rates; i++)
    if (e->rates[i] < m) m = e->rates[i];
  return m;
}

/* Losses the receiver's own TCP shows (out-of-order arrivals): the only loss signal without the probe,
 * a second, slower one beside it (two windows, as below). */
static uint32_t kernel_losses(const struct sobas_engine_input *in) { return in->probe ? in->ooo : in->losses; }

/* The search is in slow start (states 1 and 2). */
static int in_slow_start(const struct sobas_engine *e) {
  return e->state == SOBAS_ST_SLOW_START || e->state == SOBAS_ST_SS_GROWING;
}

/* Kernel signals count loss episodes, not windows: a dropped segment makes every later one arrive out
 * of order until its retransmission lands an RTT or more later, so one loss usually spans two 2·RTT
 * windows (measured: 262 then 96 out-of-order arrivals, one burst). An episode begins with a window
 * that has losses after one that had none; `ours` = this window's losses are our own overshoot (slow
 * start, our queue, the window offered before the decision), which never count. Returns 1 when the
 * episodes that count show a loss rate: congested_episodes of them, each within congested_span_rtts
 * base RTTs of the one before. */
static int loss_episodes_congest(struct sobas_engine *e, const struct sobas_engine_input *in, int ours) {
  int loss = kernel_losses(in) != 0, begins = loss && !e->in_loss;
  e->in_loss = (uint8_t)loss;
  if (!begins || ours) return 0;
  uint32_t base = base_rtt(in);
  int64_t span_ns = (int64_t)e->p.congested_span_rtts * base * 1000;
  e->loss_episodes = e->loss_episodes && in->t_ns - e->last_episode_ns <= span_ns ? e->loss_episodes + 1 : 1;
  e->last_episode_ns = in->t_ns;
  return e->loss_episodes >= e->p.congested_episodes;
}

/* Held at R·T_base and not lifted, the flow keeps no queue of its own: a loss now is the path's. */
static int no_queue_of_ours(const struct sobas_engine *e) { return e->held && !e->lifting; }

/* Decided, but the window offered before the decision not yet consumed, the sender could still
 * overshoot into it; not while it runs under the rate it was decided on with no queue: a loss then is
 * the path's. Measured at 0.05% random loss, no sobasd: 14 MB offered at the decision took 7.4 s to be
 * consumed, and every loss until then was counted as the flow's own; the losses came at 0.50-0.80 of
 * the decided rate. An overshoot's comes with the link full, at the decided rate (the receiver's RTT
 * lags that queue: a 0.25-BDP run read 41 ms beside it). */
static int under_its_rate(const struct sobas_engine *e, const struct sobas_engine_input *in) {
  return in->rate_bps && (double)in->rate_bps < e->p.loss_rate_frac * (double)e->r_held &&
         !rtt_above(in->rtt_us, base_rtt(in), e->p.equal_tol, 1000);
}

/* With the probe, the window's highest RTT shows whether the flow met a queue (its echoes sample the
 * bottleneck every 10 ms; tcpi_rcv_rtt lags a fast-filling queue by an RTT or more). */
static int probe_saw_queue(const struct sobas_engine *e, const struct sobas_engine_input *in) {
  uint32_t base = base_rtt(in);
  uint32_t worst = in->rtt_max_us > in->rtt_us ? in->rtt_max_us : in->rtt_us;
  return rtt_above(worst, base, e->p.equal_tol, 1000);
}

/* A loss seen beside the probe is the path's (congested) when no queue came with it: DropTail drops
 * only from a full queue, so a loss with none is someone else's (random loss, a congested hop), in any
 * state and from either signal, the probe's echo gaps or the flow's own out-of-order arrivals. Held at
 * R·T_base (decided) the flow builds no queue, so a probe loss is the path's whatever the RTT: the
 * paper's rule. While searching, a loss with a queue may be our own overshoot (slow start into a
 * shallow buffer drops the probe's echoes too) and is left to flat-rate / const-rate-drop. */
static int probe_says_congested(const struct sobas_engine *e, const struct sobas_engine_input *in) {
  if (!in->probe) return 0;
  if (in->losses && no_queue_of_ours(e)) return 1;
  /* No echo in the window: its highest RTT is unknown, so "no queue" cannot be claimed. */
  if (in->rtt_max_us == 0) return 0;
  /* The flow's own losses in slow start are its overshoot far more often than not (a shallow buffer
   * overflows between two echoes): there only the probe's own echo gaps count. Nor do out-of-order
   * arrivals in the window after one that had them with a queue or in slow start: one drop spans two
   * windows (kernel_losses' episodes), and that one was our overshoot's. Its tail comes after
   * the loss has cut the sender and drained the queue: measured on `shallow` (29a0511), decided on a
   * const-rate-drop whose window had 234 with echoes up to 58 ms over the 40 ms base, then 55 with the
   * echoes at 40.1-41.4 ms, taken for the path's loss: 2 s at S_max, a return decided at 52 Mb/s of
   * A = 77, and the run made 53.7 where its others made 72.4-72.7. */
  int in_ss = in_slow_start(e);
  return (in->losses || (in->ooo && !in_ss && !e->ooo_ours)) && !probe_saw_queue(e, in);
}

/* Slow start, with the probe: a window whose every echo met a queue (its least RTT over the base, as
 * flat-rate's "full" reads it). Two in a row note the lower of their rates: a queue that stood while the
 * flow still went on to a higher plateau was not the path's ceiling, ours or unresponsive cross traffic's
 * (each stands only once the flow is at A, and then its rate grows no more), but an elastic competitor's,
 * already in the buffer when the flow arrived. Measured beside one CUBIC flow on a 1-BDP buffer: every
 * echo of the first windows at 48-71 ms (base 40), rates 34.6, 37.4, 42.5, 42.0 Mb/s, decided on 42.1,
 * and held there until the held queue stepped aside 0.8 s later at 26 Mb/s with the sender's CUBIC cut
 * by a loss at the held window: 0.84x plain CUBIC's goodput over three runs. One stalled window is not
 * a queue: two in a row. Nor is a window with losses, or the one after: its rate is cut by them, not a
 * share (measured on `gig-udp`: slow start overflowed with 1970 out-of-order arrivals at 457 Mb/s, the
 * next window 663, then a plateau at 555-568 Mb/s of A = 552 read as 1.15 times a share of 457, and
 * the flow stepped aside for the whole run, RTT+ p50 11.9 ms; no kept `competing` or `congested` run
 * noted its competitor from a lossy window). Nor is a window that fills S: under the start cap
 * (1.2·C'·T) a flow alone queues 0.2·T of its own in every echo, and one stalled window before it (the
 * rate cut, every echo late) makes the pair (AStartCapsOwnQueueIsNoCompetitors). Two WAN-suite flows
 * on a clean 100 Mb/s path (no cross traffic, C' = C) stepped aside as `competing` 0.63 and 0.66 s into
 * slow start; their windows were not kept, so that this was the cause is a reading, not a measurement. A
 * competitor's share fills no cap: replayed over the 371 kept benchmark receivers with the probe (every
 * scenario, 2026-11-27 and 28; 53 stepped aside so in slow start), no note moves. */
static void note_foreign_queue(struct sobas_engine *e, const struct sobas_engine_input *in) {
  if (!in->probe || kernel_losses(in) || e->in_loss || fills_s(e, in) ||
      !rtt_above(in->rtt_least_us, base_rtt(in), e->p.full_rtt_frac, 2000)) {
    e->queued_run = 0;
    return;
  }
  uint64_t before = e->n_rates >= 2 ? e->rates[e->n_rates - 2] : 0;
  if (++e->queued_run == 2 && e->foreign_rate == 0 && before)
    e->foreign_rate = before < in->rate_bps ? before : in->rate_bps;
}

/* A slow-start decision on `rate` would be on a competitor's share (above). */
static int foreign_share(const struct sobas_engine *e, uint64_t rate) {
  return e->foreign_rate && (double)rate >= (1.0 + e->p.foreign_growth) * (double)e->foreign_rate;
}

/* A plateau far under the path's capacity C' is a share: a loss-based competitor keeps the buffer full
 * (already when the flow arrived, its queue is in every RTT sample, the base's too, so no queue rule
 * can see it), and the flow's plateau is CUBIC's share beside it. Unresponsive cross traffic that
 * leaves a flow less than share_frac of the path would be held right, but stepping aside there costs
 * only the queue SOBAS would have spared, never goodput; holding a competitor's share costs goodput. */
static int under_share(const struct sobas_engine *e, uint64_t rate) {
  return e->cap_bps && (double)rate < e->p.share_frac * (double)e->cap_bps;
}

/* How many of the windows before window `end` span ns: all of them when they span less, with *left
 * the time still short (0 or less: spanned). */
static uint32_t windows_spanning(const struct sobas_engine *e, int64_t ns, uint32_t end, int64_t *left) {
  uint32_t k = 0;
  for (; ns > 0 && k < end; k++) ns -= e->dur_at[end - 1 - k];
  *left = ns;
  return k;
}

/* How many windows up to window `end` make a standing queue (or a clean hold): queue_windows, and as
 * many more as it takes to span queue_min_ns. Counted in time, not in base RTTs: a standing queue
 * stretches each 2·RTT window (measured on arrive-leave beside a newcomer's queue: windows of 150-200
 * ms on the 40 ms path), and a span counted in base RTTs held four such windows, 0.6-0.8 s, twice for
 * a pacer that trims first. Windows not in the history yet count two base RTTs each. */
static uint32_t queue_span(const struct sobas_engine *e, uint32_t base_us, uint32_t end) {
  int64_t need;
  uint32_t k = windows_spanning(e, e->p.queue_min_ns, end, &need);
  if (need > 0 && base_us > 0) {
    int64_t win_ns = 2 * (int64_t)base_us * 1000;
    k += (uint32_t)((need + win_ns - 1) / win_ns);
  }
  if (k < e->p.queue_windows) k = e->p.queue_windows;
  return k < SOBAS_ENGINE_HISTORY ? k : SOBAS_ENGINE_HISTORY;
}

/* The share stands: the queue_span windows before window `end` are a plateau (each within equal_tol of
 * their mean) under share_frac of C'. A plateau of two is not enough: the host holding the emulator or
 * the receiver for a few windows makes one anywhere (measured on a clean 100 Mb/s path: 32.9 Mb/s at
 * 48 ms on the 40 ms path 759 ms in, the link carrying 17-63 Mb/s with at most 3 KB queued, stepped
 * aside there and never came back in 60 s). A competitor's share stands as long as its queue does. */
static int share_stands(const struct sobas_engine *e, const struct sobas_engine_input *in, uint32_t end) {
  double m;
  return rates_equal(e, end, queue_span(e, base_rtt(in), end), &m) && under_share(e, (uint64_t)m);
}

/* Decides on `rate`, or steps aside instead when it is a competitor's share: in slow start beside its
 * queue, or in any search far under C' once that share stands (the plateau's windows end before window
 * `end`). Holding a share cedes the competitor the rest (Vegas beside Reno), and the hold itself leaves
 * the sender's window smaller than the competitor's for good. A share that does not stand yet is
 * neither decided nor stepped aside from: -1, the search goes on. */
static int decide_or_aside(struct sobas_engine *e, struct sobas_action *a, const struct sobas_engine_input *in,
                           int in_ss, uint64_t rate, uint32_t end, enum sobas_reason why) {
  if (in_ss && foreign_share(e, rate)) return step_aside(e, a, in, SOBAS_WHY_COMPETING, rate);
  if (under_share(e, rate)) return share_stands(e, in, end) ? step_aside(e, a, in, SOBAS_WHY_COMPETING, rate) : -1;
  return decide(e, a, rate, base_rtt(in), why, in->t_ns);
}

/* A sender's in-flight rate, its cwnd over its RTT now (0: unknown). When its slow start first queues
 * at 1 Gb/s the delivery rate can be half of it: each round goes out as a burst the bottleneck queues
 * before the path is full, or the path slowed for a moment (measured on `gig`, A = 965 Mb/s: 19 of 56
 * runs decided at 445-868 Mb/s, 13 of them while cwnd/RTT read 637-1025; 34 of the 37 that decided at A
 * read 1019-1031, the cwnd a window ahead of what is in flight). Paced at it as a start cap, the next
 * window meets the path at A, or a pace under it that grows as any start cap the flow fills. */
static uint64_t in_flight_rate(const struct sobas_engine_input *in) {
  return window_rate(in->cwnd_bytes, in->rtt_us);
}

/* Searching in congestion avoidance, and aside, S is a ceiling: ca_ceiling_gain times what the flow has
 * in flight (R·T at the RTT of the window), the more of this window and the one before: the window of a
 * loss reads low while the recovery holds data back. Without one, the window autotuning offers is never
 * withdrawn, and a decision holds only once the sender has consumed it: beside one CUBIC flow without
 * sobasd, 1.3-2.2 MB offered after slow start's loss where 180-230 KB were in flight, and a decision on
 * the share held 1.0-1.4 s before stepping aside (0.7-1.0 s under the ceiling); on the 0.25-BDP path
 * 5.2 MB offered (17x), which took 0.8 s to drain after the decision. */
static uint64_t ceiling_for(const struct sobas_engine *e, const struct sobas_engine_input *in) {
  uint64_t flight = window_bytes(in->rate_bps, in->rtt_us ? in->rtt_us : base_rtt(in));
  if (e->n_rates >= 2) { /* the history holds this window already */
    uint32_t i = e->n_rates - 2;
    uint64_t before = window_bytes(e->rates[i], e->rtt_at[i] ? e->rtt_at[i] : base_rtt(in));
    if (before > flight) flight = before;
  }
  return clamp_s(e, (uint64_t)(e->p.ca_ceiling_gain * (double)flight));
}

/* A receiver's ceiling moves: up with the flow (once ceiling_for is ceiling_step over it, so that a
 * climbing flow does not log a move every window), never down, and down from S_max at once. Returns 1
 * and fills *a when it moved. */
static int raise_ceiling(struct sobas_engine *e, const struct sobas_engine_input *in, struct sobas_action *a) {
  const double ceiling_step = 0.25;
  uint64_t top = ceiling_for(e, in);
  if (e->s < e->p.s_max ? (double)top <= (1.0 + ceiling_step) * (double)e->s : top >= e->s) return 0;
  return act(e, a, e->state, SOBAS_WHY_CEILING, 1, top, in->rate_bps, in->rtt_us, in->t_ns);
}

/* Slow start is over however little the rate fell: a window after the loss's (n >= 2) did not grow by
 * equal_tol, and no queue stood in both (the least RTT of the two not full). The sender has set its
 * ssthresh and recovers at the rate its ACKs return. Left in slow start, where const-rate-drop asks
 * only for a plateau of two, the recovery's flat windows and the loss its end burst into were decided
 * on: measured on `shallow` without sobasd, 71.6 Mb/s with the loss, then 58.8 (-18%, no drop), 58.6,
 * 62.6, then 41.1 with 202 out-of-order arrivals; held at 62.6 of A = 77, the run made 57.6 Mb/s
 * against plain CUBIC's 72.6-73.2 beside it. A paced sender did the same at 43.3 Mb/s: 43.3 with 73
 * retransmissions, 39.6 at +12% RTT, 30.3 with 25 more. A queue standing in both windows keeps slow
 * start's rules: on a 1-BDP buffer the recovery runs at A over it (+77-83% RTT), and its first plateau
 * is the path's. */
static int recovering(const struct sobas_engine *e, uint32_t t0) {
  const uint64_t *r = e->rates + e->n_rates - 2;
  return e->loss_age >= 1 && (double)r[1] <= (1.0 + e->p.equal_tol) * (double)r[0] &&
         !rtt_above(least_rtt(e, 2), t0, e->p.full_rtt_frac, 2000);
}

/* One of the last three windows (a plateau of two and the drop) showed a queue: an RTT queue_rtt_frac
 * and queue_rtt_min_us over the base, the standing queue's test. A sender's RTT jitters ~2 ms there
 * with no queue (measured on `congested`: 40.4-42.3 ms on the 40 ms base, the link's queue empty). */
static int queue_before_drop(const struct sobas_engine *e, const struct sobas_engine_input *in) {
  for (uint32_t i = e->n_rates >= 3 ? e->n_rates - 3 : 0; i < e->n_rates; i++)
    if (rtt_above(e->rtt_at[i], base_rtt(in), e->p.queue_rtt_frac, e->p.queue_rtt_min_us)) return 1;
  return 0;
}

/* A pacer's queue in slow start (ss_queue_frac) is its own slow start filling the buffer, the next
 * doubling about to overflow it, only while its kernel doubles: once the kernel has left slow start
 * (HyStart, with no loss) CUBIC grows a few percent a window, no overflow is a round away, and one
 * window's queue is as likely a burst or the host (the emulator late) as the path being full. There it
 * takes a queue in the window before too, as a pacer's flat-rate does (every window of the plateau).
 * Measured on `gig-tcp` (29a0511, `sobas both`): HyStart left slow start at 177 packets 288 ms in, the
 * next windows read 105, 139 and 141 Mb/s, the last at +37% RTT while the emulator forwarded 611 of
 * 1000 Mb/s with 426 KB queued (the host); decided there at 141.6, lifted 10% at a time, and the run
 * made 266.4 Mb/s where plain CUBIC made 608.6. In the kept sender logs of earlier runs, 23 valid
 * decisions so came after the kernel's exit (`long`, `gig`, `gig-udp`, `bloated`, `typical`,
 * `competing`), each with the window before it queued too (its own queue growing): kept. */
static int own_slow_start_queue(const struct sobas_engine *e, const struct sobas_engine_input *in, uint32_t t0) {
  if (!(e->kernel_ca && in->kernel_ss == SOBAS_KERNEL_CA)) return 1;
  return rtt_above(e->rtt_at[e->n_rates - 2], t0, e->p.equal_tol, 1000);
}

/* The probe's least echo stood over the base (equal_tol/2 and 1 ms) in each of the last n windows: a queue
 * under every echo, which bursts of cross traffic and host stalls, lifting the echoes' mean, do not make.
 * A window with no echo (least_at 0: no probe, or none came back) is no such queue. */
static int queue_under_echoes(const struct sobas_engine *e, uint32_t n, uint32_t t0) {
  return n <= e->n_rates && rtt_above(least_of(e, e->least_at, n), t0, e->p.equal_tol / 2, 1000);
}

/* States 1-4: looking for the rate the path gives. */
static int searching_state(enum sobas_state s) { return s >= SOBAS_ST_SLOW_START && s <= SOBAS_ST_CA_GROWING; }

/* One window of states 1-4. */
static int search(struct sobas_engine *e, const struct sobas_engine_input *in, struct sobas_action *a) {
  uint32_t t0 = base_rtt(in);
  uint32_t n = e->n_rates;
  const uint64_t *r = e->rates;
  int in_ss = in_slow_start(e);
  int queue = rtt_above(in->rtt_us, t0, e->p.equal_tol, 1000);
  /* A loss shows at the receiver as out-of-order arrivals in the window of the drop or the one before. */
  int lost_lately = kernel_losses(in) != 0 || e->in_loss;
  e->loss_age = kernel_losses(in) || in->losses ? 0 : e->loss_age < UINT8_MAX ? e->loss_age + 1 : UINT8_MAX;
  if (in_ss) note_foreign_queue(e, in);

  /* Kernel signals, in congestion avoidance: a flow overflows DropTail only through a full queue,
   * so losses while the RTT shows none are someone else's (a congested path); a rate of such loss
   * episodes and SOBAS steps aside. Not in slow start: the receiver's RTT estimate lags a fast-filling
   * queue there (a real 0.25-BDP run lost 325 segments while tcpi_rcv_rtt still read the base RTT). */
  if (loss_episodes_congest(e, in, in_ss || queue)) return step_aside(e, a, in, SOBAS_WHY_CONGESTED, in->rate_bps);
  int growing = e->state == SOBAS_ST_SS_GROWING || e->state == SOBAS_ST_CA_GROWING;
  int limited = fills_s(e, in);

  /* const-rate-drop: a plateau of two, then a significant drop; decide on the rate before it. It
   * stands for a self-induced loss: beside the probe it needs our queue (a loss without one was
   * congestion, above), without it a loss at all: a drop with neither is a pause (the application,
   * the host; measured: a 29% dip with no out-of-order arrival, taken for the signature, held a flow
   * at 84% of A). In congestion avoidance the plateau must come flat_n_ca windows into the state:
   * CUBIC's first windows after slow start's loss sit flat at ~0.7 of its peak, and the end of that
   * loss's recovery can burst into a new one (measured: a plateau at 78% of A, a loss 0.2 s in,
   * decided there and held at 78% for the whole transfer). Without the probe, in congestion avoidance
   * the loss must also follow a queue in the plateau or the drop's window: a flow overflows DropTail
   * only through a full buffer, so a loss at the base RTT is the path's (random loss, a competitor's
   * burst), and the rate it cut is no measure of the path. Measured on `congested` (0.01% loss beside
   * CUBIC): a sender back from a step aside decided there at 14.2 Mb/s, RTT 40.4-42.3 ms on the 40 ms base,
   * and lifted 10% at a time for 3.8 s to 24 Mb/s; a receiver without sobasd decided twice so (36.6 and
   * 29.3 Mb/s, RTT at the base) and stepped aside 1.0 and 1.4 s later. In slow start a loss still
   * counts: the receiver's RTT lags a fast-filling queue there. */
  int self_induced = in->probe ? probe_saw_queue(e, in) : lost_lately && (in_ss || queue_before_drop(e, in));
  uint32_t need_drop = in_ss ? 3 : e->p.flat_n_ca + 1;
  uint64_t plateau;
  if (n >= need_drop && dropped(e, r[n - 2], r[n - 1]) && self_induced) {
    const uint64_t *last3 = r + n - 3;
    double m = ((double)last3[0] + (double)last3[1]) / 2, d = (double)last3[0] - m;
    if (d < 0) d = -d;
    /* The plateau's higher rate: its second window often holds the loss already and is cut by it
     * (measured: 72 then 68 Mb/s with 270 out-of-order arrivals, then the drop). */
    uint64_t before = last3[0] > last3[1] ? last3[0] : last3[1];
    if (m > 0 && d <= e->p.equal_tol * m) {
      int r = decide_or_aside(e, a, in, in_ss, before, n - 1, SOBAS_WHY_CONST_RATE_DROP);
      if (r >= 0) return r;
    }
  }
  /* flat-rate: n almost-equal rates while the path is full: the RTT shows a queue, or S grew under the
   * flat rate. A flat rate with neither is a sender that is not pushing (CUBIC regrowing after a
   * loss, an application-limited source) or our own cap: deciding then would freeze a rate below A.
   * In congestion avoidance the queue must last: the plateau's median RTT at least equal_tol and 1 ms
   * over the base. A flow at A there keeps a few ms of queue (measured +5% over seven windows on a
   * 0.25-BDP path), while one RTT spike (a burst of cross traffic, a host stall: +17-22% in one window)
   * beside CUBIC regrowing at 80-90% of A was measured deciding there on a one-window test or a mean. */
  uint32_t need = in_ss ? e->p.flat_n_ss : e->p.flat_n_ca;
  double mean;
  if (rates_equal(e, n, need, &mean)) {
    plateau = (uint64_t)mean;
    /* Only grow() makes S grow under a plateau's windows (states 2 and 4): a ceiling's rise follows the
     * flow, it never held it. */
    int s_grew = growing && (double)e->s >= (1.0 + 2 * e->p.equal_tol) * (double)e->s_at[n - need];
    /* In congestion avoidance: the plateau's median RTT, or its least where the RTT is exact to the µs
     * (a sender's tcpi_rtt, full_least; a receiver's probe echoes). Measured on `shallow` with sobasd:
     * CUBIC regrowing after a slow-start loss, flat at 56 Mb/s of A = 77 with probe RTTs of 41.4-42.9
     * ms (median +6%: bursts of Poisson UDP and host stalls, the flow's own echoes never under
     * 40.1), was decided there and held at 73% of A; the lifts, +10% at a time, read +3% through
     * that jitter and found no room. */
    int least = e->p.full_least || in->probe;
    /* In slow start the window now, which a receiver's lagging RTT needs; a pacer's exact one, every
     * window of the plateau. CUBIC leaves slow start with no loss when its RTT samples rise 5 ms at 40
     * ms (HyStart), which a host stall or a burst of cross traffic does; its rate then climbs 5-10% a
     * window, two windows read equal, and one RTT spike made them a plateau: measured on `typical` and
     * `bloated` (sender leading, 2 of 13 runs), HyStart out at a cwnd of 57 and 96 packets, decided at
     * 33.9 and 54.1 Mb/s of A = 77 on one window 7.8 and 4.8 ms over the base (the one before at
     * +2.6 and +0.6 ms), and the paced flow, its cwnd no longer growing, took 5-9 s of lifts to A. */
    int full = in_ss ? rtt_above(e->p.full_least ? least_rtt(e, need) : in->rtt_us, t0, e->p.full_rtt_frac, 2000)
                     : rtt_above(least ? least_rtt(e, need) : median_rtt(e, need), t0, e->p.equal_tol, 1000);
    /* With the probe a queue under every echo of the plateau's last two windows is the path full too:
     * CUBIC's regrowth builds one only at the path's rate, and waiting for the plateau's every window to
     * queue lets it grow on into a shallow buffer. Measured on `shallow` (0.25-BDP buffer: 10 ms of
     * queue at 40 ms) in the full run at 0ddf733: the least echo stood 1.7-2.1 ms over the base from
     * 3.44 s in, the decision came at 3.85 s at 76.4 Mb/s of A = 77, and the next window had 234
     * out-of-order arrivals (CUBIC's overflow, the window offered before the decision still open); the
     * flow then ran at 38-60 Mb/s for 2 s. Replayed over the kept receiver logs (54 with the probe, every
     * path), only 6 of `shallow`'s 7 first decisions move, 0.29-0.95 s sooner, at 75.9-76.9 Mb/s.
     * Interleaved against the build before, 30 runs each way on `shallow`: no run dropped a packet after
     * the decision, against 2 (124 and 78 drops, 57.5 and 57.9 Mb/s), 71.72 Mb/s against 70.44. */
    if (!in_ss && queue_under_echoes(e, 2, t0)) full = 1;
    /* A plateau that fills the start cap is the path's ceiling only with a queue under every echo (the
     * cap's own 0.2·T at least, when C' is right): with the least echo near the base it is the cap at an
     * RTT the host stretched, and S grows (buffer-limited, below) until the rate stops following it.
     * Measured on `gig` (1 Gb/s, 20 ms, no cross traffic) at f71bafd: C' read 431-675 Mb/s in 8 of 11
     * runs (the trains meet the flow's own slow start at the bottleneck), and 8 decided in slow start at
     * 419-761 Mb/s on windows 3.0-12.9 ms over the base by the echoes' mean; in 4 of them the least
     * echo stood 0.35-0.69 ms over it. The run decided at 419 took 4.3 s of lifts to reach A (661.6
     * Mb/s, linux default 933.8). Every kept slow-start decision on a filled cap elsewhere (`typical`
     * 17, `long` 14, `bloated` 11, 8 on four other paths) had its least echo 20-99% over the base. */
    int standing = standing_in_ss(e, in, t0);
    if (in_ss && limited && !(standing && queue_fills_s(e, in, t0))) full = 0;
    /* Back from stepping aside, a plateau at the rate held alone is the path the flow had alone, full
     * whatever the queue: CUBIC regrowing after the competitor left flattens near its last maximum and
     * fills the buffer slowly. Measured on arrive-leave without sobasd: 96.5 Mb/s (A) for 5.8 s at
     * tcpi_rcv_rtt 41.0-41.5 ms over a 40 ms base, under the 1 ms it takes, before it decided. */
    int back = e->resumed && e->r_alone && (double)plateau >= (1.0 - e->p.equal_tol) * (double)e->r_alone;
    /* A plateau is not still climbing, except in slow start with the RTT full: two windows within
     * equal_tol there are the path's ceiling reached, and waiting a window for the rise to stop leaves the
     * window slow start was offered open for one more. Measured on `typical` without sobasd (14 runs):
     * 5 decided a window late on a rise of 2.6-4.9% at +37-41% RTT, and 4 of them then lost 24-31
     * packets, the sender filling what had been offered before the decision; the runs that decided on
     * the first plateau lost none. With the probe the queue must stand under every echo for that: on
     * `gig` a host that stretches the loop lifts the echoes' mean alone, and CUBIC, out of slow start
     * early on those delays (HyStart at 1107-1206 packets, linux default's runs 1289-5082), still
     * climbs: decided at 603 Mb/s of A = 965 on 576 then 629 (mean echo +3.9 ms, least +1.6), the flow
     * was lifted to A 1.2 s later, and another, at 536, 3.5 s later. Those on `typical` had it 42-52%
     * over the base. */
    int climbs = climbing(e, need, mean) && !(in_ss && full && standing);
    if ((s_grew || full || back) && !climbs) {
      int r = decide_or_aside(e, a, in, in_ss, plateau, n, SOBAS_WHY_FLAT_RATE);
      if (r >= 0) return r;
    }
  }
  /* flat-rate, seen by a pacer's exact RTT (ss_queue_frac) within the round it happens: its slow start
   * has filled the buffer when its RTT shows a queue in a window at its highest rate yet (not a dip: a
   * stall), with no loss yet. The next doubling would overflow it (measured on the typical path: 28 Mb/s
   * at +3 ms, 80 at +33 ms, then 62 retransmits, and it decided 1.8 s in,
   * in congestion avoidance). The window's mean still holds the ramp up to the plateau, so the rate decided is the
   * kernel's delivery rate at the window's end when that is higher (on the 150 ms path the mean read
   * 34.7 Mb/s of A = 38, and the lifts took 4 s to make it up). */
  if (in_ss && e->p.ss_queue_frac > 0 && !lost_lately && n >= 2 && in->rate_bps >= max_rate(e, n) &&
      rtt_above(in->rtt_us, t0, e->p.ss_queue_frac, e->p.ss_queue_min_us) && own_slow_start_queue(e, in, t0)) {
    uint64_t rate = in->rate_now_bps > in->rate_bps ? in->rate_now_bps : in->rate_bps;
    uint64_t flight = in_flight_rate(in);
    if (e->s >= e->p.s_max && (double)flight > (1.0 + 2 * e->p.equal_tol) * (double)rate)
      return act(e, a, e->state, SOBAS_WHY_START, 1, clamp_s(e, window_bytes(flight, t0)), flight, in->rtt_us, in->t_ns);
    int r = decide_or_aside(e, a, in, in_ss, rate, n, SOBAS_WHY_FLAT_RATE);
    if (r >= 0) return r;
  }
  /* flat-rate, seen in a climb the caller started after slow start's loss (sobas_engine_regrew): CUBIC
   * started again grows 5% a round, so the path is full at the first window at its highest rate yet
   * with a queue, which then grows ~5% of T a round. Left to the plateau rules, measured on `shallow`
   * (0.25-BDP buffer, 10 ms of queue at 40 ms): the climb went 58 -> 64 -> 71 -> 78 Mb/s of A = 77 in
   * 0.35 s, the last at +4.3 ms, and overflowed the buffer in the next window in 4 runs of 4. The climb
   * met RTT noise of +0.6-3.2 ms below A, in one window at a time: a queue is full_rtt_frac and 2 ms
   * (4 ms there), or equal_tol and 2 ms after a window 1 ms over the base (its queue growing). The rate
   * may dip within equal_tol of the highest as the queue grows (bursts of cross traffic). */
  if (e->climb && !lost_lately && n >= 2 && (double)in->rate_bps >= (1.0 - e->p.equal_tol) * (double)max_rate(e, n) &&
      (rtt_above(in->rtt_us, t0, e->p.full_rtt_frac, 2000) ||
       (rtt_above(in->rtt_us, t0, e->p.equal_tol, 2000) && rtt_above(e->rtt_at[n - 2], t0, 0, 1000)))) {
    uint64_t rate = in->rate_now_bps > in->rate_bps ? in->rate_now_bps : in->rate_bps;
    int r = decide_or_aside(e, a, in, in_ss, rate, n, SOBAS_WHY_FLAT_RATE);
    if (r >= 0) {
      e->climbed = e->state == SOBAS_ST_DECIDED;
      return r;
    }
  }
  /* A loss ends the climb: CUBIC remembers where it lost, and regrows towards it as after any loss. */
  if (lost_lately) e->climb = 0;
  /* A drop with no plateau before it: slow start ended in loss; keep looking in congestion avoidance.
   * Only with a loss in this window or the two before (a loss shows at the receiver in the window of
   * the drop or the one before; a retransmission that lands late, one later): a drop with none is a
   * pause, the host's or the application's, and the sender is still in slow start. Measured on a 2-BDP
   * path: a 20% drop 586 ms in, no retransmission in the whole run, taken for the end of slow start;
   * the start cap was lifted, the engine searched on while CUBIC was still in slow start and decided
   * 2376 ms in (94.5% of A over the transfer, 98.8% once held). A window after the loss that did not
   * grow ends it too (recovering). */
  if (in_ss && n >= 2 && e->loss_age <= 2 && (dropped(e, r[n - 2], r[n - 1]) || recovering(e, t0))) {
    /* The start cap 1.2·C'·T belongs to slow start: congestion avoidance searches uncapped (a receiver
     * under a ceiling it never reaches, ceiling_for), as without C'. Measured: kept, a 0.25-BDP buffer
     * beside 20% cross traffic (A·T + B = 1.02 BDP under a 1.2-BDP cap) overflowed every CUBIC cycle,
     * and the engine decided late (10 s) or low (82% of A). */
    if (e->p.ca_ceiling_gain > 0) {
      act(e, a, SOBAS_ST_CONG_AVOID, SOBAS_WHY_RATE_DROP, 1, ceiling_for(e, in), in->rate_bps, in->rtt_us, in->t_ns);
    } else {
      int uncap = e->s < e->p.s_max;
      enum sobas_state to = growing && !uncap ? SOBAS_ST_CA_GROWING : SOBAS_ST_CONG_AVOID;
      act(e, a, to, SOBAS_WHY_RATE_DROP, uncap, uncap ? e->p.s_max : e->s, in->rate_bps, in->rtt_us, in->t_ns);
    }
    push_rate(e, in); /* the post-drop rate starts the new state's history */
    return 1;
  }
  /* Congestion avoidance under a ceiling: it follows the flow up (it may fall to 1/(1 + ceiling_step) of
   * the gain before it moves, so that a climbing flow does not log a move every window), and nothing
   * is buffer limited under it. Entering the state uncapped, it comes down to the ceiling at once; a
   * receiver back from stepping aside is under the one it kept aside. State 3 with S under S_max is
   * under a ceiling: nothing else caps it there. */
  if (e->state == SOBAS_ST_CONG_AVOID && e->p.ca_ceiling_gain > 0) {
    if (raise_ceiling(e, in, a)) return 1;
    if (e->s < e->p.s_max) return 0;
  }
  /* Buffer limited: grow S (entering state 2 or 4 from 1 or 3). A growing state
   * whose flow no longer fills S stops growing and waits for flat-rate. */
  if (!limited) return 0;
  enum sobas_state to = e->state == SOBAS_ST_SLOW_START   ? SOBAS_ST_SS_GROWING
                        : e->state == SOBAS_ST_CONG_AVOID ? SOBAS_ST_CA_GROWING
                                                          : e->state;
  return grow(e, in, to, a);
}

/* Decided is not yet held: the window offered before the decision is never withdrawn, so the sender
 * may go on filling the queue (and overflowing a shallow buffer) until the receiver has consumed it;
 * losses until then are our own overshoot's. Held starts with the window after the one that ended with
 * the offered window down to S. A kernel that does not report its window (< 6.2): held from the first
 * window that shows no queue (beside the probe: no echo saw one), or drain_rtts base RTTs after the
 * decision, so that a queue someone else keeps standing cannot hide congestion for good. Measured on a
 * 0.25-BDP path: decided with 5.6 MB offered, two windows of out-of-order arrivals (301, 206) 0.7 s
 * later in the drain, tcpi_rcv_rtt 41 ms (no queue), taken for congestion: S_max, 88% of A.
 * A pacer (aside_undrained) lowers its pace by its queue's share each window (pace.c): its own queue
 * falls window after window, and a competitor refills what the cut leaves. So when drain_rtts are up,
 * a queue still falling (under 0.7 of the last window's) is waited for; one that no longer falls and
 * is half or more of the one it decided with is a competitor's, and it steps aside then (returns 1):
 * every window held at a share beside a loss-based flow is share ceded for good (docs/engine.md). From
 * the first window after the decision to the second, where the first held 5 ms of queue or more, the
 * queue of `gig-udp`'s decisions over A fell to 0.41-0.64 of the last window's (12 runs), the
 * competitor's on `congested` stayed at 0.75-1.29 in 21 of 23 runs (three builds of this rule). */
static int update_held(struct sobas_engine *e, const struct sobas_engine_input *in) {
  if (e->state != SOBAS_ST_DECIDED || e->held) return 0;
  if (in->rcv_wnd) {
    e->held = e->drained;
    e->drained = (double)in->rcv_wnd <= (1.0 + e->p.equal_tol) * (double)e->s;
    return 0;
  }
  uint32_t base = base_rtt(in);
  int queue = in->probe ? probe_saw_queue(e, in) : rtt_above(in->rtt_us, base, e->p.equal_tol, 1000);
  int64_t q = (int64_t)in->rtt_us - base, before = (int64_t)e->rtt_draining_us - base;
  e->rtt_draining_us = in->rtt_us;
  if (in->rtt_us < e->drain_least_us) e->drain_least_us = in->rtt_us;
  e->held = !queue || in->t_ns - e->decided_ns >= (int64_t)e->p.drain_rtts * base * 1000;
  if (!queue || !e->held || !e->p.aside_undrained) return 0;
  if (10 * q < 7 * before) e->held = 0; /* still falling: a drain not done yet */
  /* A window of the drain (since the decision or a lift's end) with no standing queue (under the
   * standing-queue test) had the flow alone in the buffer: a loss-based competitor keeps it full. A
   * queue after that (the flow's jitter on a path near full, a passing burst) is for the standing-queue
   * rules to judge over their span. Measured on `gig-udp` (1 Gb/s beside 450 Mb/s of Poisson UDP,
   * base 20.1 ms) at 4afe2e7: two senders decided at 541 Mb/s with 5.2 ms of queue and at 540 with
   * 10.5, drained to 1.8 and 1.7 ms, read 2.8 and 8.0 ms in the next window, and stepped aside on this
   * rule; run at S_max, one lost 201 packets, and the row read RTT+ p50 3.8 ms.
   * In the 14 other steps aside as `competing` within 0.4 s of a decision in the kept sender logs of
   * 2026-12-02/03 (congested 4, bbr-competitor 2, gig-tcp 7, gig-udp 1 whose queue grew) every window
   * after the decision stood 5.9 ms or more over the base. */
  if (!rtt_above(e->drain_least_us, base, e->p.queue_rtt_frac, e->p.queue_rtt_min_us)) return 0;
  /* Among siblings the queue may be theirs: one still searching, or decisions that sum over A, which no
   * drain of ours empties. Held, and the standing-queue rules judge it (held_queue: siblings trim first).
   * Measured on `servers` (8 downloads of one nginx, 2026-11-29): in one run's log flows decided at 7-16
   * Mb/s while siblings searched, the queue at 23-25 ms, and stepped aside on this rule 0.37-0.49 s later,
   * all 8 by 3.0 s; RTT+ p50 32 ms in all 3 sender runs; with the searching siblings exempt, the last to decide (30 Mb/s beside 7
   * held at 4-25, 88 of A = 77) stepped aside on it 0.6 s later, and the 7 followed within 1 s. */
  return e->held && !in->siblings && 2 * q >= (int64_t)e->q_decided_us;
}

/* S trimmed to the rate r the held flow got, when that is lower: its queue drains, and the next window
 * is measured at the new S. */
static int trim(struct sobas_engine *e, struct sobas_action *a, const struct sobas_engine_input *in, uint64_t r) {
  uint32_t base = base_rtt(in);
  uint64_t s = s_of(e, r, base);
  if (s >= e->s) return 0;
  e->trim_ns = in->t_ns;
  e->r_held = r;
  e->clean_run = e->quiet_run = 0;
  forget_rates(e);
  return act(e, a, SOBAS_ST_DECIDED, SOBAS_WHY_STANDING_QUEUE, 1, s, r, base, in->t_ns);
}

/* A pacer held over the path's rate, once a decision. Its pace is cut by the queue's share whenever
 * the RTT is sobas_pace_margin_us over the base (pace.c), which holds the queue where the cut pace
 * equals A: 2·T·(held/A - 1), under the standing-queue rule's 10% of T for a pace up to 5% over A, and
 * every window's rate is A, not sunk. Measured on `typical` (A 77.1 Mb/s, 40 ms): a sender decided in
 * slow start at 80.8 Mb/s (the window whose queue overflowed dropped some of the cross traffic) held
 * 2.7-5.2 ms of queue for seconds at 76-78 Mb/s; its lifts ended on the queue at once and kept the S
 * they began from; ping RTT+ p50 3.6 ms against 1.1 and 1.5 for two decided at 76.7-77.3. A queue
 * over the held RTT's margin in every window of a span, the rate not sunk, is that: trim S to the rate
 * the flow got. A pace further over A queues past the 10% and sinks the rate (trim_first's case). A
 * rate sunk under a small queue is no pace over the path: a host that delays the ACKs cuts the pace by
 * the delay's share, and the rate follows it (measured on `typical`: tcpi_rtt 42-48 ms for 0.65 s
 * with the emulator's queue under 1 ms, the rate 0.93 of the held 37.7 Mb/s of A = 77). A flow alone:
 * among siblings each lift that finds room re-arms it and the lifts take turns; with the rule among
 * them the 8 flows of `servers` trimmed 67-89 times a run, at 0.983x plain nginx's goodput (3 runs;
 * the row at 01c07b4 read 0.991x). Their queue is their own creep over A: held_queue's sibling trim. */
static int over_pace(const struct sobas_engine *e, const struct sobas_engine_input *in, uint32_t k, uint32_t ref) {
  if (!e->p.trim_first || e->pace_trimmed || in->siblings) return 0;
  return least_rtt(e, k) > ref + sobas_pace_margin_us(base_rtt(in));
}

/* A queue that window-limited flows keep: every window of the last steady_span_ns (or the whole
 * history) equal_tol and 1 ms over the base (a queue, as search reads one), their RTTs within
 * steady_spread_us of each other. Such flows take W/RTT each, so every pace over what they leave at the base RTT keeps a
 * queue that slows them: holding one is holding a share, and none of it was held alone
 * (aside_from_share). The queue may stand under the standing-queue rule's 10% and 2 ms without sinking
 * the rate held. Measured on `gig-tcp` (4 flows of 280 KB windows, 1 Gb/s, 20.1 ms) at 1648237: a
 * sender held 441-454 Mb/s for its last 3.3 s at 21.8-22.3 ms and made 0.70x plain CUBIC's 628.7 Mb/s;
 * replayed, its rate read sunk under a raised lift end (477) with the queue 1.0-1.5 ms over the RTT
 * held alone, so neither trim nor the standing-queue rule moved. Poisson cross traffic is not so steady
 * for long: replayed over the 257 kept sender flows of 2026-12-05/06, the rule steps aside in those 2
 * of 15 `gig-tcp` flows held at a share (3.4 and 3.8 s in) and in none of the others (`gig`, `gig-udp`,
 * `typical`, `shallow`, `bloated`, `long`, `udp-leave`, `competing`, `congested`); over the
 * standing-queue rule's span (3 windows at 40 ms) it stepped aside in 7 of 40 `udp-leave` flows beside
 * the UDP. */
static int steady_queue(const struct sobas_engine *e, const struct sobas_engine_input *in) {
  if (!e->p.steady_spread_us || in->siblings) return 0;
  int64_t need;
  uint32_t k = windows_spanning(e, e->p.steady_span_ns, e->n_rates, &need);
  if (k == 0 || (need > 0 && k < SOBAS_ENGINE_HISTORY)) return 0;
  uint32_t lo = least_rtt(e, k);
  return highest_rtt(e, k) - lo <= e->p.steady_spread_us && rtt_above(lo, base_rtt(in), e->p.equal_tol, 1000);
}

/* A pacer trimmed for a rate sunk under a standing queue (trim_first), alone: a path that slowed (more
 * unresponsive cross traffic, a decision over A) drains at the trimmed pace, while window-limited or
 * loss-based flows take what the trim freed and keep the queue. The window after the trim still carries
 * the old pace's queue on both; the second and third tell them apart. Measured over the kept sender logs
 * of 2026-12-05/06, trims with 5 ms or more of queue in each of the three windows before them: on `gig-tcp`
 * (four TCP streams with 280 KB windows) 15, each followed by a step aside 0.31-0.33 s later, the second
 * window after the trim 3.8-4.9 ms over the base; on `gig-udp` (constant UDP) 12, 11 of them followed by
 * a lift, their second window 0.3-0.4 ms over it in 10 and 3.1 then 0.4 in the other. So a queue in both
 * (the standing queue's test) steps aside there, ~0.13 s before the standing queue's span would. */
static int undrained_after_trim(const struct sobas_engine *e, const struct sobas_engine_input *in, uint32_t ref) {
  if (!e->p.trim_first || !e->trimmed || e->pace_trimmed || !e->trim_ns || in->siblings || e->n_rates != 3 ||
      e->lift_at_ns > e->trim_ns)
    return 0;
  return rtt_above(least_rtt(e, 2), ref, e->p.queue_rtt_frac, e->p.queue_rtt_min_us);
}

/* Held at R·T_base the flow keeps no queue of its own (Copa's observation): a queue that stands through
 * queue_span windows is someone else's, kept by an elastic competitor (a loss-based flow fills whatever
 * buffer it finds), beside which any cap only cedes it more of the path: step aside. A decision whose
 * first held windows find the queue was made on a competitor's share, whether or not the rate sinks
 * further (a window-limited flow's 2·RTT windows alias with its RTT: measured 22.4, 16.2, 22.4 Mb/s,
 * whose median took 2.6 s to fall 5%). Once the flow has been held alone (held_clean) the decided S
 * was right, and a newcomer's queue must also sink the rate S was set for.
 * Measured beside one CUBIC flow on a 1-BDP buffer: held at the 30 Mb/s share it decided on, the RTT
 * came within 10% of the base only right after the competitor's losses, and the flow sank to 17-29
 * Mb/s while plain CUBIC kept 29. For a receiver's window, a first trim of S to the rate the flow
 * got (in case the queue was our own excess, a decision 10% and more above A, never seen in the
 * benchmark) cost 0.83x plain CUBIC's goodput on `congested` (5 runs each): the competitor grew into
 * what the trim gave up, the queue did not stand for long enough on a lossy path, and the flow stayed
 * held at 28-38 Mb/s; without it 1.07x. A pacer trims first (trim_first, below). */
static int held_queue(struct sobas_engine *e, const struct sobas_engine_input *in, struct sobas_action *a) {
  uint32_t base = base_rtt(in);
  if (!e->held || in->rate_bps == 0) return 0;
  push_rate(e, in);
  /* Held alone, a queue is measured over the RTT the flow saw then: the base RTT is a whole-ms floor
   * (tcpi_rcv_rtt) or the handshake's, while the held window's own RTT runs ~0.6 ms over it at 1 Gb/s
   * / 20 ms (the probe's echoes: 20.6-21 ms), which left 1.2 ms of margin to the 2 ms rule: an emulator
   * falling behind for 150 ms beside 430 Mb/s of UDP read as a newcomer and stepped aside. */
  uint32_t ref = e->rtt_alone_us > base ? e->rtt_alone_us : base;
  if (undrained_after_trim(e, in, ref)) return aside_for_queue(e, a, in, in->rate_bps);
  uint32_t k = queue_span(e, base, e->n_rates);
  if (e->n_rates < k) return 0;
  uint64_t r = median_of(e->rates + e->n_rates - k, k);
  int queue = rtt_above(least_rtt(e, k), ref, e->p.queue_rtt_frac, e->p.queue_rtt_min_us);
  /* With the probe, a queue that stands is under every echo, the window's least one too: a host that
   * delays the emulator or the endpoints by up to ~20 ms at times lifts the echoes' mean and sinks the
   * rate, not the least. Measured on arrive-leave after the competitor had left: three windows at
   * 81-88 Mb/s of 96 held, echo means 45.6-47.0 ms (highest 55.7-58.7), least 40.3-41.3 (base 40):
   * stepped aside as "competing", 437 retransmits and 2 s at S_max; a real arrival's least was 45-66
   * ms. Such a window is no queue, nor a clean one: the RTT held alone is not measured over it. */
  int delayed = queue && in->probe && in->rtt_least_us &&
                !rtt_above(in->rtt_least_us, ref, e->p.queue_rtt_frac, e->p.queue_rtt_min_us);
  if (delayed) queue = 0;
  int sank = (double)r < e->p.queue_rate_keep * (double)e->r_held;
  /* Not yet held alone, a rate flat under the decision's with no queue is the decision reading over the
   * path: slow start's last window carries its queue draining. The flow holds what the path gives, so
   * that is the rate held; left as it was, the hold never counts clean, never lifts, and a later step
   * aside has no rate to come back to. Measured on `gig-udp` (A = 550 Mb/s beside constant UDP):
   * receivers decided at 577-581 Mb/s held 548-549 (0.944-0.949) with no standing queue until a dip;
   * one never held clean, stepped aside on a 0.2 s dip to 376-420 Mb/s and stayed aside to the end at
   * RTT+ p50 9.9 ms; the other, at 0.949, held clean, stepped aside on such a dip and came back 2.1 s later.
   * Once a decision: a rate that goes on sinking is no hold. Not a pacer's: its pace over the path
   * queues, and its trim takes S down to the rate it gets. */
  double flat;
  if (!e->p.trim_first && !e->rebased && sank && !queue && !delayed && !e->held_clean &&
      rates_equal(e, e->n_rates, k, &flat)) {
    e->r_held = r;
    e->rebased = 1;
    sank = 0;
  }
  /* Before a clean hold the queue alone tells; after one, a newcomer's queue sinks the rate too. A
   * sibling still searching (slow start, or congestion avoidance uncapped after slow start's loss) keeps
   * a queue that is no competitor's: it decides once it finds the path full, and then holds too. Measured
   * on `servers` (nginx, 8 downloads): four flows decided in slow start, four lost in it and searched on
   * uncapped; each held flow took their queue for a competitor's and stepped aside, each that decided
   * later then took those for competitors, and all 8 ran as plain CUBIC from 8.3 s on (RTT +32 ms). */
  int competitor = queue && (sank || !e->held_clean) && !in->siblings_searching;
  if (!competitor && !sank && over_pace(e, in, k, ref) && trim(e, a, in, r)) {
    e->pace_trimmed = 1;
    return 1;
  }
  if (!competitor && steady_queue(e, in)) return aside_from_share(e, a, in);
  if (!competitor) {
    e->clean_run = !queue && !sank && !delayed ? e->clean_run + 1 : 0;
    /* Among siblings, the queue gone for a span since a trim: the trim was right, and the next standing
     * queue is trimmed first too. Flows of one host on one path (nginx's downloads) lift in turn, each
     * lift taking a little from the others, so the rates they hold creep over A together, and a few ms
     * of queue stands that is theirs: measured on `servers`, 8 flows held 13 s, then +5-6 ms for 0.8 s
     * with no sibling searching, and those trimmed once already stepped aside, the rest following. The
     * rate does not count here: a flow of 5 Mb/s among 8 swings 5% a window (measured: a trimmed flow
     * read "sunk" in 1 of 3 queue-free windows, stayed trimmed, and stepped aside 4 s later). A flow
     * alone trims once a decision: beside a CUBIC flow on a lossy path (`congested`) the competitor's
     * random losses empty its queue for a span every second or two, and a sender re-armed each time
     * trimmed 4 times in 6 s (29.3 -> 21.0 Mb/s) while the competitor grew into each, before stepping
     * aside 7.2 s in; plain CUBIC made 51.5 Mb/s in that repeat, the sender 30.2. A path that slows
     * twice costs the flow the queue plain TCP keeps until it comes back, not rate. A lift that finds
     * room re-arms the trim too (lift). */
    e->quiet_run = !queue && !delayed ? e->quiet_run + 1 : 0;
    if (e->quiet_run >= k && in->siblings) e->trimmed = 0;
    if (e->clean_run >= k && !e->held_clean) {
      /* Held alone: a later step aside is a competitor's arrival, and a return that got here was not in vain. */
      e->held_clean = 1;
      e->r_alone = e->r_held;
      e->rtt_alone_us = least_rtt(e, k);
      /* ... and a pacer's pace was not over the path: a standing queue that sinks the rate from here
       * on is a newcomer's, and a trim would only cede it the rate trimmed (among siblings the quiet
       * span re-arms the trim, above; a lift that finds room, lift). */
      if (e->p.trim_first && !in->siblings) e->trimmed = 1;
      e->resumed = 0;
      e->backoff_ns = e->p.resume_backoff_ns;
      if (!e->lifted) e->lift_after_ns = in->t_ns; /* a first lift at once: the decision may have been made low */
    }
    return 0;
  }
  /* A pacer has no ACK clock: a path that slowed (more unresponsive cross traffic, a link that
   * stalls) leaves its pace above what the path carries, and the difference queues while the rate
   * sinks, as beside a competitor. Measured: a paced server decided at 92 Mb/s on a link the host froze
   * 4% of the time, then 81-90 Mb/s with 3-9 ms of queue for 1.5 s, stepped aside as "competing". So
   * the first such queue trims S to the rate the flow got; a competitor's queue stands again. */
  if (e->p.trim_first && sank && !e->trimmed && trim(e, a, in, r)) {
    e->trimmed = 1;
    return 1;
  }
  /* Siblings trim one after another, each on its own windows, and the queue stands until the last has:
   * the queue after a flow's own trim is theirs for a while. Measured on `servers` (sender, 8 flows held
   * 20 s, none searching): a flow stepped aside 0.57 s after its trim, before any of its 7 siblings had
   * trimmed (0.60-1.04 s after it); unpaced, it took the RTT from 46.7 to 61-69 ms, and the 7 stepped
   * aside 0.76-1.29 s after it (RTT+ p50 29.8 ms for the run). */
  if (in->siblings && e->trim_ns && in->t_ns - e->trim_ns < e->p.sibling_trim_wait_ns) return 0;
  return aside_for_queue(e, a, in, r);
}

/* The base RTT fell well under the one the flow decided at: a queue that was not ours stood then, in
 * the handshake's RTT and every sample since. A loss-based competitor keeps the buffer full, and only
 * its own losses (random ones, a sawtooth's) or a BBR competitor's ProbeRTT empty it. So the decided
 * rate was its share beside that queue, and every queue rule since measured against a base inflated by
 * it. Measured on `congested` (one CUBIC flow, 0.01% loss), 17 sender logs: the 10 whose handshake
 * met the queue (base 56-59 ms of 40) decided at 8.8-27.4 Mb/s and made 19.9-36.3 over their flows,
 * the queue under the 10% rule for seconds at a time (56-63 ms); the 7 whose handshake met an empty buffer
 * decided at 29.8-47.0 and made 27.2-52.6. In all 10 the base fell (to 40.0-42.5 ms) 1.4-9.4 s in;
 * beside a BBR flow, at its ProbeRTT 9.3-9.9 s in. Beside a CUBIC flow with no random loss, whose
 * queue never empties, it fell in 1 of 19 runs. On the paths without a competing flow (68 decisions
 * of every role on gig, gig-udp, gig-tcp, typical, shallow, bloated, long, servers, arrive-leave)
 * the base never fell more than 0.13 ms after the decision. */
static int base_fell(const struct sobas_engine *e, const struct sobas_engine_input *in) {
  return rtt_above(e->base_decided_us, in->base_rtt_us, e->p.queue_rtt_frac, e->p.queue_rtt_min_us);
}

/* Aside, a loss the path caused: one with no queue beside it (DropTail drops only from a full queue,
 * and at S_max a full queue is as often our own). A probe window with no echo at all is not clean. */
static int path_loss_aside(const struct sobas_engine *e, const struct sobas_engine_input *in) {
  if (in->probe) return (in->losses || in->ooo) && (in->rtt_max_us == 0 || !probe_saw_queue(e, in));
  return in->losses && !rtt_above(in->rtt_us, base_rtt(in), e->p.equal_tol, 1000);
}

/* Aside and never held alone, the flow has no rate of its own to come back to, only a jump of its share,
 * and that jump must come with the queue gone and stay so for resume_clear_ns. A BBR competitor's
 * ProbeRTT (its cwnd at 4 packets for 200 ms and an RTT, every 10 s) empties the queue, and the flow's
 * rate jumps with it for a few windows before the queue is back. Measured on bbr-competitor: a sender
 * returned 14 times in 7 runs, at most ProbeRTTs, the first queued window (45-69 ms of a 40 ms base)
 * 0.4-0.6 s after the dip began; it decided on its share 0.8-2.1 s later with the queue standing, and
 * stepped aside again 1.1-1.9 s after that. A competitor that left leaves the queue empty while the
 * flow regrows to the path. The share the jump is measured against is the windows' before the queue
 * went, not the jump's. */
static void track_clear(struct sobas_engine *e, const struct sobas_engine_input *in) {
  const uint32_t before = 8;
  if (rtt_above(in->rtt_us, base_rtt(in), e->p.queue_rtt_frac, e->p.queue_rtt_min_us)) {
    e->clear = 0;
    return;
  }
  if (e->clear) return;
  uint32_t n = e->n_rates - 1, k = n < before ? n : before; /* the windows before this one */
  e->clear = 1;
  e->clear_since_ns = in->t_ns - e->dur_at[n];
  e->r_share = k ? median_of(e->rates + n - k, k) : 0;
}

/* Aside for a competitor's queue, the path is the flow's again (`now`: the least rate of the last windows):
 * back to resume_frac of what it held alone or, never held alone, resume_jump above its share with the
 * queue gone for resume_clear_ns (track_clear), or back to resume_cap_frac of C'. The queue's going is
 * no sign a flow at S_max can count on: alone, CUBIC keeps a buffer of 0.43 BDP and more from ever
 * emptying (0.7 of BDP + buffer in flight after each loss). The rate alone is no sign either, without
 * C': a flow steps aside at a share its hold squeezed, and beside a loss-based flow regrows to its fair
 * share over seconds. In the kept logs (175 flows that stepped aside on competing, congested,
 * bbr-competitor, arrive-leave, gig-tcp, every role) the least rate over 2 s reached 1.4 times the
 * median of the windows before it, the competitor still there, in 38; 1.8 times in 12; twice in 6. The
 * least of 3 windows at 0.8 of C' came in 6 of the 43 receivers' asides that had a C', all on
 * arrive-leave 2-2.5 s after the arrival (the newcomer still small; those flows had held alone, so
 * resume_frac rules them), none beside a competitor there from the start (at 0.7: 14, two of them on
 * `congested`). */
static int given_back(const struct sobas_engine *e, const struct sobas_engine_input *in, uint64_t now) {
  if (e->r_alone) return (double)now >= e->p.resume_frac * (double)e->r_alone;
  int jumped = e->clear && e->r_share && in->t_ns - e->clear_since_ns >= e->p.resume_clear_ns &&
               (double)now >= (1.0 + e->p.resume_jump) * (double)e->r_share;
  return jumped || (e->cap_bps && (double)now >= e->p.resume_cap_frac * (double)e->cap_bps);
}

/* Stepped aside: search again once the path is given back (above), never sooner than the backoff.
 * After the path's losses: also a backoff with none of them, since a flow that stepped aside before it
 * ever held has no rate to come back to (measured on the 0.25-BDP path beside Poisson UDP: a burst's
 * loss with no queue 1.3 s in, and the flow ran as plain CUBIC for the remaining 60 s). The search runs
 * uncapped (a receiver's under a ceiling it never reaches) until it decides, so a return that finds the
 * competitor or the losses still there costs only the held windows that find them again. A flow on a
 * lossy path keeps seeing losses and stays aside, as the paper has it.
 * Aside, a receiver keeps a ceiling too (raise_ceiling), from its first window after the step, which
 * opened the window at once: released to S_max, autotuning offers the window of the whole buffer the
 * release opened, and a return's decision holds only once the sender has consumed it. Measured on
 * arrive-leave (100 Mb/s, 40 ms) at bdde72f: aside, the window offered grew to 20.97 MB where ~0.7 MB
 * were in flight; back and decided 0.9-1.2 s after the departure, it receded at ~70% of the receive
 * rate (16.2 MB to 0.49 in 1.8 s), the RTT 58 ms on the 40 ms base all that time: the queue gone
 * 3.40-3.66 s after the departure (gone_s in scripts/wanbench.py). On udp-leave without sobasd a flow
 * that stepped aside beside the UDP decided again 2.8 s later with 18.5 MB offered, and kept 24-33 ms
 * of queue for the 3.4 s until the UDP stopped. With the ceiling (interleaved against bdde72f, 2 runs
 * each way of `sobas` and `sobas` without sobasd): a ceiling of 2.72-3.17 MB aside, 5.5-6.5 times the
 * S decided after the return offered at that decision against 33-35 times, held 0.33-0.45 s after it
 * against 1.9-2.0 s, the queue gone 1.71-2.14 s after the departure against 3.40-3.66. Over 3828
 * windows aside under it (arrive-leave, competing, congested, bbr-competitor, gig-tcp, udp-leave) the
 * flow had at most 0.42 of it in flight, none limited by it. */
static int aside(struct sobas_engine *e, const struct sobas_engine_input *in, struct sobas_action *a) {
  const uint32_t recent = 3;
  if (path_loss_aside(e, in)) e->path_loss_ns = in->t_ns;
  if (in->rate_bps == 0) return 0;
  push_rate(e, in);
  track_clear(e, in);
  uint32_t n = e->n_rates;
  int due = in->t_ns >= e->resume_after_ns && n >= recent;
  int back = due && given_back(e, in, least_rate(e, recent));
  int clean = due && e->aside_on_loss && in->t_ns - e->path_loss_ns >= e->backoff_ns;
  if (!back && !clean) return e->p.ca_ceiling_gain > 0 ? raise_ceiling(e, in, a) : 0;
  e->resumed = 1;
  e->last_increase_ns = in->t_ns;
  return act(e, a, SOBAS_ST_CONG_AVOID, SOBAS_WHY_RESUME, 0, e->s, in->rate_bps, in->rtt_us, in->t_ns);
}

/* Held alone with no queue, the flow cannot tell a path at A from one with room left: a decision made
 * low (slow start against an underestimated C', CUBIC's plateau after a loss in a shallow buffer) would
 * hold that rate for the whole transfer. So, as a window-based flow has to, it looks: S is lifted by
 * lift_gain; when both windows measured at the lifted S (the one after the lift opens the window) carry
 * the rate lift_grow higher, the path had room and the next lift follows at once; when they do not, S
 * ends at (1 + headroom)·R·T_base of the rate the lifted window got, which at A is the paper's S measured
 * at saturation, and never below the S before the lift (a host stall in those windows is no reason to
 * hold less). Lifts that find nothing come at doubling intervals. */
static int lift_due(const struct sobas_engine *e, const struct sobas_engine_input *in, uint32_t k) {
  return e->p.lift_gain > 0 && e->held && e->held_clean && e->clean_run >= k && in->t_ns >= e->lift_after_ns &&
         e->s < e->p.s_max;
}

/* The first lift need not wait for a clean hold. A pacer's RTT is exact and its lift ends at the first
 * window that shows a queue (lift_queue_frac), so a lift at A costs a window or two of queue (on `long`
 * 6-35 ms over the 150 ms base, ~0.5 s), and the clean hold's 2·queue_span - 1 windows held low cost more.
 * Measured on `long` (A = 38.3 Mb/s, 150 ms, 7 sender runs): decided in slow start at 35.8-36.8 Mb/s (6 of
 * 7) on windows slowed by its own drain (the pace cut by the queue's share), held at the base RTT from the
 * first window after it, and lifted 2.4-2.9 s after the decision (five windows of ~0.5 s), to 37.8-38.7 in
 * one lift: 0.971x max buffer's goodput. Lifted with the first held window: 0.49-0.98 s after the
 * decision, 0.979x (10 runs; docs/engine.md: what is left).
 * A receiver's lift at A queues lift_gain of T for its three windows, as the clean hold's first lift
 * would, only sooner; at 20 ms queue_min_ns makes the clean hold 15 windows. Measured on `gig` (A = 965
 * Mb/s), receivers first lifted 0.61-0.69 s after their decisions with the probe (13 interleaved runs)
 * and 0.70-0.98 s after without (12 of 13), one decided in slow start on a host stall (534 then 496
 * Mb/s at +7 ms) holding 515 Mb/s all that time; with the rule, 0.10-0.11 s after with the probe (the
 * decision's drain, then one window; 11 runs) and 0.19-0.72 s without (10). The lift's room for
 * fit_to_loop is measured from that one held window's rate (delivered_at_base).
 * Alone (siblings lift in turn, held_queue), with the window at the base RTT: a competitor's queue is no
 * room, and the lift would only delay the step aside. Not after a trim either: the trim measured what the
 * path gives, and a lift at once paces over it again (measured on `gig-udp`, A = 551 Mb/s beside constant
 * UDP: 2 of 3 decided at 625-633, trimmed to 552-555, lifted 0.12 s later and back, one trimmed again to
 * 536 and held there 0.65 s: 3 runs at 496-527 Mb/s against 530-536 before, RTT+ p50 0.74-1.44 ms against
 * 0.45-0.92). Nor after a decision at a regrown climb's end (climbed): the climb met the path full, and
 * it leaves the cwnd 20-30% over R·T, so nothing but the pace bounds a lift: on `shallow` (10 ms of
 * buffer) 3 of 6 such first lifts, 0.21-0.23 s after the decision at +10% for a window, were followed
 * by 3-11 retransmissions, where the cwnd a loss leaves bounds a lift's queue to a few ms. */
static int first_lift_due(const struct sobas_engine *e, const struct sobas_engine_input *in) {
  return e->p.lift_first_held && e->p.lift_gain > 0 && e->held && !e->lifted && !e->trim_ns && !e->climbed &&
         !in->siblings && in->rate_bps && e->s < e->p.s_max &&
         !rtt_above(in->rtt_us, base_rtt(in), e->p.equal_tol, 1000);
}

/* A lift's gain: lift_gain, doubled for each lift before it in a row that the path gave in full. A flow
 * decided far under A (a gig-udp sender out of slow start by HyStart at 329 packets decided at 180 Mb/s of
 * A = 551) took 10% lifts of 3-4 windows each and was at 244 Mb/s 2.2 s later. */
static double lift_gain_now(const struct sobas_engine *e) {
  double most = e->p.lift_gain_max > e->p.lift_gain ? e->p.lift_gain_max : e->p.lift_gain;
  double gain = e->p.lift_gain;
  for (uint8_t i = 0; i < e->lift_streak && gain < most; i++) gain *= 2;
  return gain < most ? gain : most;
}

/* in_full: the lift follows one whose rate rose by all of its gain (the path had at least that much room). */
static int lift_start(struct sobas_engine *e, const struct sobas_engine_input *in, struct sobas_action *a,
                      uint64_t r_before, uint64_t r_got, int in_full) {
  uint32_t base = base_rtt(in);
  e->lift_streak = in_full && e->lift_streak < UINT8_MAX ? e->lift_streak + 1 : 0;
  e->lift_bumped = 0;
  e->lift_chained = 0;
  e->lift_from_full = fills_s(e, in) && !in->siblings;
  e->s_before_lift = e->s;
  e->r_before_lift = r_before;
  e->r_got_before_lift = r_got;
  e->lifting = 1;
  e->lifted = 1;
  e->lift_at_ns = in->t_ns;
  uint32_t at = standing_rtt(in);
  e->lift_rtt_us = at > base ? at : base;
  return act(e, a, SOBAS_ST_DECIDED, SOBAS_WHY_LIFT, 1, clamp_s(e, (uint64_t)((1.0 + lift_gain_now(e)) * e->s)),
             r_before, base, in->t_ns);
}

/* Whether the lift's last two windows showed no queue of its own: their least RTT at most equal_tol/2
 * (or 1 ms) over ref, the RTT the lift is measured from. */
static int lift_quiet(const struct sobas_engine *e, uint32_t ref) {
  return !rtt_above(least_rtt(e, 2), ref, e->p.equal_tol / 2, 1000);
}

/* A lift whose last three windows (not its first, which opens the window) sit flat, within
 * lift_cap_flat, and lift_grow/2 or more over the rate before has taken what the path gives: the
 * sender took the window, the path capped it short of room. Waiting lift_wait_ns on it only meets the
 * next stall. Measured on `gig` (9271f06): decided at 923 Mb/s of A = 965 on slow start's plateau,
 * held mostly at 890-907 (a loop longer than the base RTT), two receivers' lifts read 963.7-966.0
 * Mb/s for 5 and 12 windows at 20.0-20.6 ms, +4.5% (under lift_grow), waited, and ended on host
 * stalls at 738 and 907 Mb/s, S where it began: 852.7 and 860.6 Mb/s where plain CUBIC's valid runs
 * made 929.0-933.8. */
static int at_the_paths_rate(const struct sobas_engine *e) {
  if (e->lifting < 5 || e->n_rates < 3 || e->p.lift_cap_flat <= 0) return 0;
  uint64_t lo = least_rate(e, 3);
  return (double)max_rate(e, 3) <= (1.0 + e->p.lift_cap_flat) * (double)lo &&
         (double)lo >= (1.0 + e->p.lift_grow / 2) * (double)e->r_before_lift;
}

/* The lift so far found neither room nor a queue, the rate as it was: the sender has not taken the
 * window yet. A CUBIC sender near the peak of its last loss grows its cwnd by a packet or two a round
 * trip, and a window held at S gives it no reason to grow at all (measured on the 0.25-BDP path: decided
 * at 69 Mb/s of A = 77 after a loss, every lift read 69 at the base RTT two windows in and ended, and
 * the flow held 90% of A for its last 5 s). Unused, the lifted window costs nothing: the lift waits up
 * to lift_wait_ns for the sender to grow into it, and ends as any other once a queue or room shows.
 * Quiet (at A, a lift queues 10% of T, and that queue stands in both windows: measured at 76.3 Mb/s
 * of A = 77, 42.7 ms in each on the 40 ms path), and their mean rate (`got`) within equal_tol of the
 * rate held before. Neither each window's RTT nor its rate: on the 2-BDP path beside Poisson cross
 * traffic on a busy host the held windows read 40-43 ms with no queue (each of 9 pairs had one over
 * the 1 ms, 3 had both) and 34-45 Mb/s around 41; a flow decided at 43.7 Mb/s of A = 77 (its sender out of slow start at 10
 * Mb/s, HyStart on a host stall) ended its lift on windows of 39.9 Mb/s at 40.1 ms and 47.0 at 42.8,
 * the next read 48.3 (the room it had), and it held 43.7 for 5 s more. A stall sinks both windows'
 * mean. */
static int untaken(const struct sobas_engine *e, const struct sobas_engine_input *in, uint32_t ref, uint64_t got) {
  if (!lift_quiet(e, ref) || at_the_paths_rate(e)) return 0;
  return in->t_ns - e->lift_at_ns < e->p.lift_wait_ns &&
         (double)got >= (1.0 - e->p.equal_tol) * (double)e->r_before_lift;
}

/* How long after a lift that found nothing the next may come: the backoff, and long enough that lifts
 * of this one's length (`spent`) are at most lift_share of the time. A lift's windows are RTTs, the
 * backoff seconds: on a long path the backoff alone lets lifts, each queueing lift_gain of T, fill a
 * good part of the held time. */
static int64_t lift_wait(const struct sobas_engine *e, int64_t spent) {
  int64_t wait = e->lift_backoff_ns;
  if (e->p.lift_share > 0 && spent > 0) {
    int64_t share_wait = (int64_t)((double)spent * (1.0 - e->p.lift_share) / e->p.lift_share);
    if (share_wait > wait) wait = share_wait;
  }
  return wait;
}

/* What the held S delivered over the last k windows, for fit_to_loop: their best rate (a host stall
 * dips some windows, the loop's length every one), and only where their RTT was the one held alone.
 * Beside cross traffic the held window keeps a little queue, and a larger one takes a larger share of
 * the FIFO: more rate for more queue, which is no loop to fit (0: nothing to fit).
 * Before a clean hold (the first lift) nothing was held alone, and the base is under what a flow alone
 * sees: at 1 Gb/s its own bursts queue. A probed window's least echo stands in for it, so the window's
 * echoes are measured over their own least, as lift_fit_rtt_us was. Measured over the kept receiver
 * logs with the probe: held windows' echo mean over the base 472-1056 us (deciles) on `gig`, over
 * their least 133-491; beside Poisson UDP on `typical` 1063-2446 over the base, 576-1562 over the least
 * (2994 and 856 windows). Against the base, 14 of 16 first lifts on `gig` ended at S = 2.36-2.46 MB
 * until the second lift, ~1.4 s later, fitted it to 2.49-2.51; in an interleaved batch first lifts
 * ended at 2.45-2.47 MB held 938-952 Mb/s (median per run) until the second, at 2.50-2.51 954-963. */
static uint64_t delivered_at_base(const struct sobas_engine *e, const struct sobas_engine_input *in, uint32_t k) {
  uint32_t base = base_rtt(in), ref = e->rtt_alone_us > base ? e->rtt_alone_us : base;
  if (!e->rtt_alone_us && in->probe && in->rtt_least_us > ref) ref = in->rtt_least_us;
  return k == 0 || median_rtt(e, k) > ref + e->p.lift_fit_rtt_us ? 0 : max_rate(e, k);
}

/* The window of the longest loop a held window fills with no queue, for rate r: (1 + lift_fit_max)·r·T. */
static double longest_loop_window(const struct sobas_engine *e, uint64_t r, uint32_t base) {
  return (1.0 + e->p.lift_fit_max) * (double)window_bytes(r, base);
}

/* A window's rate is S over the loop's round trip, and the loop is longer than T_base by what no queue
 * shows: the reader's pauses, delayed ACKs, the host. Held at (1 + headroom)·R·T the flow delivered less
 * than the lift then found (measured: 98.9% of A at 40 ms, with the RTT at the base): scaled by the
 * rate found over the rate delivered, the held window delivers it over the same loop, adding no queue;
 * at most (1 + lift_fit_max)·R·T, so that a held rate some cross traffic dipped cannot make a queue
 * past the RTT bar. A lift after a lift from the held rate (room) has no rate delivered to scale. */
static uint64_t fit_to_loop(const struct sobas_engine *e, uint64_t got, uint32_t base, uint64_t s) {
  if (e->p.lift_fit_max <= 0 || e->r_got_before_lift == 0 || got <= e->r_got_before_lift) return s;
  double fit = (double)e->s_before_lift * (double)got / (double)e->r_got_before_lift;
  double most = longest_loop_window(e, got, base);
  if (fit > most) fit = most;
  return fit > (double)s ? clamp_s(e, (uint64_t)fit) : s;
}

/* A pacer's lifted window whose RTT shows a queue yet which delivered the lifted rate (within equal_tol):
 * a pace over A alone delivers A, so the path carried this one, and the queue may be the host's. Such a
 * window passes once a lift; a second queue ends it, the excess one window longer. Not the lift's first
 * window: half of it still carries the pace before. Measured over the kept sender runs of 2026-12-03/04
 * (queued ends in a lift's second window or later): on `udp-leave` after the UDP stopped (A = 100 Mb/s)
 * 16 of 32 delivered 0.95 of the lifted rate or more, and in 11 of them the next window was back within
 * 1 ms of the base; each such end held the flow 2.3-2.6 s under the room (lift_share's wait). Beside the
 * 50 Mb/s of UDP, where every lift was over A, 21 of 33 did too (a FIFO shares a growing queue by arrival
 * rate), as did 2 of 13 on `shallow`, 1 of 11 on `gig`, 2 of 3 on `gig-udp`. */
static int lift_bump(const struct sobas_engine *e, const struct sobas_engine_input *in, uint32_t base) {
  if (e->lift_bumped || e->lifting < 2) return 0;
  double lifted = (double)window_rate(e->s, base) / (1.0 + e->p.headroom);
  return (double)in->rate_bps >= (1.0 - e->p.equal_tol) * lifted;
}

/* The S held before a lift that found no room kept a queue of the flow's own: alone, the flow filled
 * it, the lift read the rate held again (within equal_tol: no host stall in its windows), and S is
 * more than the headroom over (1 + lift_fit_max)·R·T_base of that rate (or of the lift's, if higher),
 * longest_loop_window, the most fit_to_loop lets a held window fill with no queue. The rate held is
 * the higher of the held windows' median and the rate S was set for, so this is a decision 5% or more
 * over what its S then delivered (held_queue took the rate held down to it): slow start's last windows
 * carry their queue. Held, that S keeps a queue under the standing-queue rule's 10% of T. The lift's
 * end takes S down to the longest loop's window (returned; 0: S is not over it) instead of back up to
 * the S before it. Measured on `gig-udp` (A = 550 Mb/s, 20 ms) at 2f841e9: receivers decided at 596
 * and 584 held S for 608 and 595, received 550 with the echoes' least 1.3-1.5 and 0.8-1.1 ms over the
 * base, and each of their three lifts ended back at that S (RTT+ p50 1.68 and 1.10 ms); the run
 * decided at 552 held 0.56. Over the receiver logs kept in /tmp (2026-12-05/06, 2133 lift ends) the
 * rule would act at 9 ends on `gig-udp` and 2 on `udp-leave`, at none elsewhere: a sender regrowing
 * under S (the floor's own case) does not fill it, and on `gig` the loop holds S at 1.039-1.054
 * R·T_base (per-run medians of the held windows), under the bound's 1.04·(1 + headroom) = 1.061.
 * Measured against the median of the last 3 held windows instead, it acts at 15 more, on `typical`,
 * `bloated` and `shallow`, where Poisson cross traffic dips the held rate. Interleaved against
 * 941b1ed (2 batches of 3 each way): the 3 `gig-udp` receivers decided at 581-587 and cut read RTT+
 * p50 0.56-0.68 ms, the other build's 3 decided at 581-586 1.03-1.19, at equal goodput (537.35 and
 * 537.22 Mb/s over the 6). Cut to the S of the rate got instead (fit_to_loop's), they read 0.48-0.60,
 * but a `udp-leave` receiver without sobasd cut so 1.9 s in held 47.0 Mb/s beside the UDP over 2-9 s
 * where the comparison's 3 others made 48.3-48.9 (75.9 Mb/s in all; the other build's 76.6 and
 * 76.9); cut to the bound instead, 0.84 and 0.88. Among siblings the rate swings with their lifts:
 * alone only. Not a pacer's: a pace over A is trimmed when it queues (over_pace). */
static uint64_t held_over_loop(const struct sobas_engine *e, uint64_t got, uint32_t base) {
  uint64_t r = got > e->r_before_lift ? got : e->r_before_lift;
  uint64_t most = clamp_s(e, (uint64_t)longest_loop_window(e, r, base));
  int over = e->p.lift_fit_max > 0 && e->lift_from_full &&
             (double)got >= (1.0 - e->p.equal_tol) * (double)e->r_before_lift &&
             (double)e->s_before_lift > (1.0 + e->p.headroom) * (double)most;
  return over ? most : 0;
}

/* The RTT a lift's queue is read over: the RTT held alone, or the base. */
static uint32_t lift_ref_us(const struct sobas_engine *e, uint32_t base) {
  return e->rtt_alone_us > base ? e->rtt_alone_us : base;
}

/* A pacer's lift ends at the first window whose RTT shows a queue, but a window is ~3 round trips, and
 * paced 10% over A for all of it the lift queues ~0.3·T: more than `shallow`'s 0.25-BDP buffer holds.
 * Over 62 kept `shallow` sender runs (2026-12-06/07), 165 of 182 lifts ended on their first window,
 * 121 ms long (median) with its RTT 3.4-8.3 ms over the base (deciles 1-9; the buffer holds 10 ms), 42
 * were followed by drops within 400 ms, and 459 of the 660 drops after the decisions came then. So the
 * queue that ends the lift is also watched within the window, where the window is sure to end the lift
 * on it: the lift's first, or one after its bump (lift_bump passes a later window's queue once).
 * Interleaved against the build before, 9 runs each way of the sender and of `sobas both` on `shallow`:
 * the link dropped packets after the decision in 5 of 18 runs against 15 of 18 (docs/engine.md). */
uint64_t sobas_engine_lift_watched(const struct sobas_engine *e) {
  int watched = e->p.lift_queue_frac > 0 && e->lifting && (e->lifting == 1 || e->lift_bumped);
  return watched ? e->s_before_lift : 0;
}

int sobas_engine_lift_queued(const struct sobas_engine *e, uint32_t base_rtt_us, uint32_t rtt_us) {
  return e->p.lift_queue_frac > 0 &&
         rtt_above(rtt_us, lift_ref_us(e, base_rtt_us), e->p.lift_queue_frac, e->p.queue_rtt_min_us);
}

/* A lift's end that raised S re-arms a lone pacer's trims. The trim for a pace over the path
 * (pace_trimmed, over_pace) always: the raised pace may be over A by any amount, and its queue does not
 * sink the rate. The trim for a rate sunk under a standing queue (trimmed) only when the rate got grew
 * over the rate held before by more than equal_tol/2 (climbing's test; alone the rate keeps ±2% a
 * window): an end within it is the rate already held alone, so a queue that then sinks the rate is a
 * newcomer's, as it was before the lift. Measured on `arrive-leave` (100 Mb/s, 40 ms, a CUBIC competitor
 * arriving 10 s in), `sobas both` at 0ddf733: in 2 of 3 runs a lift ended 0.2-0.3% over the rate held
 * (96.58 against 96.28 Mb/s), the arrival's first queue trimmed (at 81.6 and 78.2 Mb/s) and the flow
 * stepped aside 0.55-0.65 s later, 1.20-1.25 s after the arrival (86.5 and 87.6 Mb/s for the run); the
 * third run and the 3 sender runs, their trims spent, stepped aside on that first queue, 0.45-0.62 s
 * after the arrival (89.1-89.8). In that full run's kept sender logs no other lone flow's sunk-rate trim
 * followed an end within the spread; on `udp-leave` one followed an end 4.2% over (47.24 -> 49.23 Mb/s
 * beside the UDP, A 47.4), the rate sunk to 45.5 under the queue the raised pace kept. Interleaved
 * against the build before, 12 runs each way of the sender and of both ends on `arrive-leave`: all 12
 * stepped aside 0.49-0.65 s after the arrival, against 5 of 12 at 1.04-1.30 s; `gig-udp` unchanged. */
static void rearm_trims(struct sobas_engine *e, uint64_t got) {
  e->pace_trimmed = 0;
  if ((double)got > (1.0 + e->p.equal_tol / 2) * (double)e->r_before_lift) e->trimmed = 0;
}

static int lift(struct sobas_engine *e, const struct sobas_engine_input *in, struct sobas_action *a) {
  uint32_t base = base_rtt(in);
  if (in->rate_bps == 0) return 0; /* an idle window says nothing about the lifted S */
  push_rate(e, in);
  /* A paced sender has no ACK clock: lifted above A it queues the whole excess, 0.1·A over the lift's
   * six round trips, +24 ms at 40 ms (measured: tcpi_rtt 44 -> 67 and 83 ms in two lifts). The first
   * window that shows a queue says there was no room, unless it delivered the lifted rate (lift_bump);
   * so does one whose pace met that queue within it and was pulled back (sobas_engine_lift_watched). */
  uint32_t ref = lift_ref_us(e, base);
  int queued = sobas_engine_lift_queued(e, base, in->rtt_us) || in->lift_cut;
  /* Quiet is measured from the RTT the lift started at where that is lower: the RTT held alone is
   * taken once, and beside cross traffic that later leaves it keeps the traffic's queue. Measured on
   * `udp-leave` without sobasd: held clean 1.6 s in at 44 ms (base 40) beside the UDP; after the UDP
   * stopped every lift at A queued 4 ms under that, read quiet and ran out its 1 s wait; with the next
   * lift after the backoff alone, and the backoff reset by calmed() (a build with it on for receivers),
   * the flow lifted half the time (RTT+ p50 3.75 ms, against 0.90-1.12 in that build's other runs). */
  uint32_t quiet_ref = e->lift_rtt_us && e->lift_rtt_us < ref ? e->lift_rtt_us : ref;
  if (queued && lift_bump(e, in, base)) {
    e->lift_bumped = 1;
    return 0;
  }
  if (!queued && e->lifting < UINT8_MAX && ++e->lifting < 4) return 0; /* windows 2 and 3 after the lift are the last two rates */
  uint64_t r1 = e->rates[e->n_rates - (queued ? 1 : 2)], r2 = e->rates[e->n_rates - 1];
  uint64_t got = (r1 + r2) / 2, least = r1 < r2 ? r1 : r2;
  if (!queued && (double)least >= (1.0 + e->p.lift_grow) * (double)e->r_before_lift) {
    /* Room: the flow holds this rate alone; look further at once, and soon again after the next miss.
     * A rate the flow found room for is a new decision: a queue after it may be the path slowing (or
     * the lift's own excess), so a pacer trims first again. Measured on `gig-udp`: lifted from 565 to
     * 626 Mb/s on two windows that found room, beside 430 Mb/s of UDP, then a queue and a trim to 554. */
    e->r_alone = e->r_held = got;
    e->trimmed = e->pace_trimmed = 0;
    e->lift_backoff_ns = e->p.lift_backoff_ns;
    /* Taken in full (within lift_grow), the path may have much more: the next lift is larger. */
    int in_full = (double)least >= (1.0 + lift_gain_now(e) - e->p.lift_grow) * (double)e->r_before_lift;
    /* Room short of the lift (the lifted S over what the path gives): the next lift starts from the S
     * of the rate got. From the lifted S, its end (never below the S before it) would hold the excess
     * as a queue. Never below the S before the lift either: a flow under its S (a sender's CUBIC
     * regrowing after a loss) reads room as it grows, and the S of such a window caps the regrowth.
     * Measured on `shallow` at e8aaf5c: held at 74.9 Mb/s, cut to 44 by a loss, lifted at 43.9, and S
     * set from a window at 47.4 held the flow at 44.1-50.8 Mb/s for its last 6.9 s (51.4 Mb/s; the
     * other runs 72.2-72.5). */
    uint64_t s_got = s_of(e, got, base);
    if (s_got < e->s_before_lift) s_got = e->s_before_lift;
    if (s_got < e->s) e->s = s_got;
    int r = lift_start(e, in, a, got, 0, in_full);
    e->lift_chained = 1;
    return r;
  }
  if (!queued && untaken(e, in, quiet_ref, got)) return 0;
  uint64_t s = fit_to_loop(e, got, base, s_of(e, got, base));
  uint64_t most = held_over_loop(e, got, base);
  if (s < e->s_before_lift && !most) {
    s = e->s_before_lift;
  } else {
    if (s < most) s = most;
    e->r_held = got;
    if (got > e->r_alone) e->r_alone = got;
    /* S raised on what the lift got is a new decision, as one on room is: a pacer's lift ends on its
     * first queued window, whose rate beside cross traffic is the FIFO's share at the lifted pace, over
     * A. A flow alone trims first again: measured on `gig-udp` (A 550 Mb/s), lifts ended at 557-594 and
     * 5 of 49 such ends on that path were followed within 1.2 s by a step aside as `competing` at
     * 477-549, the queue the raised S kept taken for a newcomer's (1 of 36 on `typical`: 81 of 77).
     * Among siblings the quiet span re-arms it (held_queue). */
    if (!in->siblings) rearm_trims(e, got);
  }
  e->lifting = 0;
  /* lift_share bounds the time lifts queue. A lift that ended quiet queued nothing, however long it
   * waited for the sender: the backoff alone spaces the next. Measured on `udp-leave` without sobasd
   * (18e83e4): a receiver lifted at 85.5 Mb/s of A = 100 after the UDP stopped, its CUBIC sender took
   * the window at 85-89 Mb/s over 1.05 s at the base RTT, and the next lift came 9.5 s later (lifts of
   * that length a tenth of the time), the flow held at 89 Mb/s: 0.95x linux default's run. Nor does
   * the end of a chain (a lift after one that found room): the path gave room a lift ago, and one
   * host's bump ends a chain short of A. In the kept `udp-leave` logs of 2026-12-03/05, 61 of 182
   * senders' chain ends and 12 of 58 receivers' came under 0.93 of the rate the flow held later, the
   * next lift 1-9.5 s after them. At A it costs one more lift, which then waits as any other. */
  int64_t spent = (!queued && lift_quiet(e, quiet_ref)) || e->lift_chained ? 0 : in->t_ns - e->lift_at_ns;
  e->lift_after_ns = in->t_ns + lift_wait(e, spent);
  if ((e->lift_backoff_ns *= 2) > e->p.lift_backoff_max_ns) e->lift_backoff_ns = e->p.lift_backoff_max_ns;
  /* The queue the lift built drains as the window offered for it is consumed: held again after that. */
  e->held = e->drained = 0;
  e->decided_ns = in->t_ns;
  e->drain_least_us = in->rtt_us;
  e->clean_run = e->quiet_run = 0;
  forget_rates(e);
  return act(e, a, SOBAS_ST_DECIDED, SOBAS_WHY_LIFT_END, 1, s, got, base, in->t_ns);
}

/* Held beside cross traffic that leaves, a flow sees no room: its windows deliver S at the base RTT
 * before and after, and only a lift finds out, after the lift backoff (up to 4 s for a pacer). What
 * does change is the RTT's jitter: a path near full queues the cross traffic's bursts, an emptied one
 * nothing. So, held and not lifting, a flow whose recent windows were busy (calm_busy_frac of them
 * calm_busy_us over the base, a moving average over ~8) and whose last calm_windows are all within
 * half that of it lifts at once, its backoff reset. Not among siblings: their own lifts make the
 * jitter, and one that leaves re-arms the lift already (feed_window). Measured by replaying the rule
 * (a script over the logged windows) on the kept sender logs of 2026-12-03/05: on `udp-leave` (A = 49
 * Mb/s beside 50 of UDP, 96 once it stops 10 s in; 100 flows) it fired within 1 s of the UDP's end in
 * 49 (0.32-0.82 s after it in 48), and before the flow's first lift after the end in 51, 0.92 s sooner
 * on average over the 100; elsewhere in 8 of 20 `gig` flows (host stalls; one lift each at A, which a
 * pacer ends at its first queue) and 1 of 8 on `servers`, never on `typical`, `bloated`, `shallow`,
 * `long`, `gig-udp`, `gig-tcp`, `competing`, `congested` or `arrive-leave`. A receiver's whole-ms
 * tcpi_rcv_rtt calms too: over the kept receiver logs, before the first lift after the UDP's end in 22
 * of 38 receivers without sobasd, 0.92 s sooner on average over the 38; elsewhere mostly on `gig` with
 * the probe (24 of 50 flows: host stalls, a lift at A each). */
static int calmed(struct sobas_engine *e, const struct sobas_engine_input *in) {
  if (!e->p.calm_windows || !e->held || e->lifting || in->rate_bps == 0 || in->rtt_us == 0) return 0;
  uint32_t base = base_rtt(in);
  int busy = rtt_above(in->rtt_us, base, 0, e->p.calm_busy_us);
  int calm = !rtt_above(in->rtt_us, base, 0, e->p.calm_busy_us / 2);
  e->calm_run = calm ? e->calm_run + 1 : 0;
  if (e->calm_run == 1) e->busy_before_calm = e->busy_share;
  e->busy_share += ((busy ? 1.0 : 0.0) - e->busy_share) / 8;
  if (e->calm_run < e->p.calm_windows || e->busy_before_calm < e->p.calm_busy_frac) return 0;
  e->busy_share = e->busy_before_calm = 0;
  return !in->siblings && e->p.lift_gain > 0 && e->s < e->p.s_max;
}

/* A slow-start decision is on the path's ceiling, or on the sender's: CUBIC's HyStart leaves slow start
 * when its RTT samples rise 4 ms (at a 20 ms base), which a burst of cross traffic does, and its rate
 * then climbs ~5% a round; two windows at that rate read flat, and the burst's RTT reads full. Held at
 * R·T the sender is no longer cwnd-limited and its cwnd stops growing. Until the window offered before
 * the decision is consumed (a receiver's drain, update_held), the sender is not yet held, and a rate
 * that rises well past the decision's, with no loss, shows the path had room: search on in congestion
 * avoidance under its ceiling, where a plateau must come with a lasting queue. Measured on `gig-tcp`
 * (4 window-limited flows, 1 Gb/s) without sobasd: HyStart out at 88-99 packets in 3 runs of 3;
 * one decided at 47.5 Mb/s, the rate 65-95 Mb/s in the drain, then held at 25-63 for 1.3 s before a
 * standing queue stepped it aside (422.4 Mb/s; plain CUBIC's row 605). */
static int outgrown(struct sobas_engine *e, const struct sobas_engine_input *in) {
  if (!e->ss_decided || e->state != SOBAS_ST_DECIDED) return 0;
  /* Held once, the decision stands: a lift's end drains again, and what it reads is the lift's. */
  if (e->held || e->lifting) {
    e->ss_decided = 0;
    return 0;
  }
  /* Not in a loss's window nor the one after: its recovery delivers in a burst (measured on `udp-leave`
   * without sobasd: decided at 52.2 Mb/s, 372 out-of-order arrivals at 27.0, then 69.1 with none). */
  return e->p.outgrown_gain > 0 && in->rcv_wnd && !in->losses && !kernel_losses(in) && !e->in_loss &&
         (double)in->rate_bps >= (1.0 + e->p.outgrown_gain) * (double)e->r_held;
}

static int feed_window(struct sobas_engine *e, const struct sobas_engine_input *in, struct sobas_action *a) {
  /* A sibling left the path: its share is free, and only a lift finds it (a held flow grows no
   * other way). Measured on `servers`: 8 flows held 76.6-77.2 Mb/s of A = 77.2 together, and as
   * they finished the last three held 40.6 and then 32.8 Mb/s, waiting out lift backoffs of up to 32 s. */
  if (in->siblings < e->siblings_known) {
    e->lift_after_ns = in->t_ns;
    e->lift_backoff_ns = e->p.lift_backoff_ns;
  }
  e->siblings_known = in->siblings;
  if (e->state == SOBAS_ST_CONGESTED) return aside(e, in, a);
  /* A lift's end starts a drain too, so a flow held alone before keeps that rate: measured on arrive-leave,
   * a sender whose lift ended 0.1-0.2 s after the newcomer arrived stepped aside on its undrained queue
   * with that rate forgotten, and ran as plain CUBIC, its queue standing, for the transfer's last 28 s,
   * all after the newcomer had left. */
  if (update_held(e, in)) return aside_for_queue(e, a, in, in->rate_bps);
  if (outgrown(e, in)) {
    push_rate(e, in); /* ceiling_for reads this window from the history */
    uint64_t s = e->p.ca_ceiling_gain > 0 ? ceiling_for(e, in) : e->p.s_max;
    act(e, a, SOBAS_ST_CONG_AVOID, SOBAS_WHY_OUTGROWN, 1, s, in->rate_bps, in->rtt_us, in->t_ns);
    push_rate(e, in); /* the rate past the decision starts the new state's history */
    return 1;
  }
  if (probe_says_congested(e, in)) return step_aside(e, a, in, SOBAS_WHY_CONGESTED, in->rate_bps);
  if (e->state == SOBAS_ST_DECIDED) {
    /* Kernel signals: held at R·T we build no queue, so losses now are someone else's. */
    /* A sibling's slow start overflows the buffer beside the held flow too: not the path's losses. */
    if (loss_episodes_congest(e, in, (!no_queue_of_ours(e) && !under_its_rate(e, in)) || in->siblings_searching))
      return step_aside(e, a, in, SOBAS_WHY_CONGESTED, in->rate_bps);
    if (base_fell(e, in)) return aside_from_share(e, a, in);
    if (e->lifting) return lift(e, in, a);
    if (held_queue(e, in, a)) return 1;
    if (calmed(e, in)) {
      e->lift_backoff_ns = e->p.lift_backoff_ns;
      return lift_start(e, in, a, e->r_held, 0, 0);
    }
    if (first_lift_due(e, in)) return lift_start(e, in, a, e->r_held, delivered_at_base(e, in, 1), 0);
    uint32_t k = queue_span(e, base_rtt(in), e->n_rates);
    /* Room is measured against what was held, never below the rate S was set from: a host stall or a
     * dip of cross traffic in the held windows (measured: 87.4 after a decision at 91.2 Mb/s) would
     * otherwise pass for room, and S would end 10% above A, a standing queue for a pacer. */
    if (lift_due(e, in, k)) {
      uint64_t held = median_of(e->rates + e->n_rates - k, k);
      return lift_start(e, in, a, held > e->r_held ? held : e->r_held, delivered_at_base(e, in, k), 0);
    }
    if (e->p.reeval_ns > 0 && in->t_ns - e->decided_ns >= e->p.reeval_ns) {
      e->last_increase_ns = in->t_ns;
      return act(e, a, SOBAS_ST_CA_GROWING, SOBAS_WHY_REEVALUATE, 0, e->s, in->rate_bps, in->rtt_us, in->t_ns);
    }
    return 0;
  }
  /* An idle window (the application paused) says nothing about the path; a LAN-short path is not
   * SOBAS's business (until its base RTT is known, nothing is decided either). */
  uint32_t base = base_rtt(in);
  if (in->rate_bps == 0 || base < e->p.min_rtt_us) return 0;
  push_rate(e, in);
  int r = search(e, in, a);
  if (e->state == SOBAS_ST_DECIDED) {
    e->base_decided_us = in->base_rtt_us;
    e->rtt_draining_us = e->drain_least_us = in->rtt_us;
    e->q_decided_us = in->rtt_us > in->base_rtt_us ? in->rtt_us - in->base_rtt_us : 0;
  }
  return r;
}

int sobas_engine_feed(struct sobas_engine *e, const struct sobas_engine_input *in, struct sobas_action *a) {
  int in_ss = in_slow_start(e);
  int r = feed_window(e, in, a);
  e->last_t_ns = in->t_ns;
  e->kernel_ca = in->kernel_ss == SOBAS_KERNEL_CA;
  e->ooo_ours = in->probe && in->ooo && (in_ss || probe_saw_queue(e, in));
  return r;
}

void sobas_engine_regrew(struct sobas_engine *e) {
  if (searching_state(e->state)) e->climb = 1;
}

int sobas_engine_searching(const struct sobas_engine *e) {
  if (e->state == SOBAS_ST_DECIDED) return !e->held || e->lifting;
  return searching_state(e->state);
}

int sobas_engine_draining(const struct sobas_engine *e) {
  return e->state == SOBAS_ST_DECIDED && !e->held && !e->lifting;
}

const char *sobas_state_name(enum sobas_state s) {
  static const char *const names[] = {"none", "slow-start", "ss-growing", "cong-avoid", "ca-growing", "decided",
                                      "congested"};
  return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : "?";
}

const char *sobas_reason_name(enum sobas_reason r) {
  static const char *const names[] = {"none", "start", "flat-rate", "const-rate-drop", "buffer-limited",
                                      "rate-drop", "congested", "reevaluate", "standing-queue", "competing",
                                      "resume", "lift", "lift-end", "peer-window", "fixed", "bdp", "drs",
                                      "peer-probe", "ceiling", "peer-sender", "outgrown"};
  return (unsigned)r < sizeof names / sizeof names[0] ? names[r] : "?";
}
