/* sobas/engine.h — the controller-engine API: SOBAS's decision logic (paper §IV), pure and replayable. */
#ifndef SOBAS_ENGINE_H
#define SOBAS_ENGINE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The six states of the paper's Fig. 8, as docs/engine.md reads them. */
enum sobas_state {
  SOBAS_ST_SLOW_START = 1, /* initial slow start; S = 1.2·C'·T, or uncapped without C' */
  SOBAS_ST_SS_GROWING = 2, /* slow start, buffer limited: S grows by max(MSS, grow_frac·S) per RTT */
  SOBAS_ST_CONG_AVOID = 3, /* congestion avoidance (a loss ended slow start) */
  SOBAS_ST_CA_GROWING = 4, /* congestion avoidance, buffer limited: as state 2 */
  SOBAS_ST_DECIDED = 5,    /* S = R·T held */
  SOBAS_ST_CONGESTED = 6,  /* congested path: S = S_max, SOBAS steps aside */
};

/* Why the engine acted: every action carries one. */
enum sobas_reason {
  SOBAS_WHY_NONE = 0,
  SOBAS_WHY_START,           /* a start cap: gain·C'·T from the probe's capacity estimate, or a pacer's in-flight rate when its slow start first queues */
  SOBAS_WHY_FLAT_RATE,       /* n almost-equal rates: the flow saturates what is available */
  SOBAS_WHY_CONST_RATE_DROP, /* a significant drop right after 2 almost-equal rates: self-induced loss */
  SOBAS_WHY_BUFFER_LIMITED,  /* the cap S is what limits the flow: S grows */
  SOBAS_WHY_RATE_DROP,       /* a drop without a plateau before it: slow start ended in loss */
  SOBAS_WHY_CONGESTED,       /* losses whatever the window: step aside */
  SOBAS_WHY_REEVALUATE,      /* a long transfer re-runs the search from the decided S */
  SOBAS_WHY_STANDING_QUEUE,  /* a pacer held with a standing queue and its rate sunk: S trimmed to the rate it got (ring ABI 1.3; 1.1-1.2: unused) */
  SOBAS_WHY_COMPETING,       /* held, a queue stayed: an elastic competitor keeps it: step aside */
  SOBAS_WHY_RESUME,          /* stepped aside, the rate came back (the competitor left): search again */
  SOBAS_WHY_LIFT,            /* held alone with no queue a while: S raised by lift_gain to see if the path gives more */
  SOBAS_WHY_LIFT_END,        /* the lift's rate did not grow: S = R·T of the rate it got (never below the S before) */
  SOBAS_WHY_PEER_WINDOW,     /* not the engine's: a sender held by its peer's window leaves the flow to the receiver's sobas */
  SOBAS_WHY_FIXED,           /* policy fixed: the S the user gave (policy.h) */
  SOBAS_WHY_BDP,             /* policy bdp: S = C'·T, or the bytes the user gave */
  SOBAS_WHY_DRS,             /* policy drs: S = 2 x the bytes received per RTT, grown only */
  SOBAS_WHY_PEER_PROBE,      /* not the engine's: sobasd on the sender's host verified the receiver's probe for the flow:
                                its sobas steers, the sender leaves the flow to it (sobas/steered.h; ring ABI 1.4) */
  SOBAS_WHY_CEILING,         /* congestion avoidance, searching: S = ca_ceiling_gain x what the flow has in flight, a
                                ceiling it never reaches, so that a decision holds within a round (ring ABI 1.6) */
  SOBAS_WHY_PEER_SENDER,     /* not the engine's: the flow's sender runs sobas and told its sobasd it steers: the
                                receiver opens its window and stops probing (sobas/probe.h, LEAD; ring ABI 1.7) */
  SOBAS_WHY_OUTGROWN,        /* decided in slow start, the flow's rate rose well past the decision before the window
                                offered earlier was consumed: the plateau was the sender's, search on (ring ABI 1.8) */
};

/* Every tolerance the paper leaves open, named; defaults and their reasons in docs/engine.md. */
struct sobas_engine_params {
  double equal_tol;         /* rates "almost equal": each within ±equal_tol of their mean */
  double drop_frac;         /* "significant drop": R_k <= (1 - drop_frac)·R_{k-1} */
  uint32_t flat_n_ss;       /* almost-equal rates that make flat-rate in slow start (paper: 2) */
  uint32_t flat_n_ca;       /* ... in congestion avoidance (paper: 5) */
  double start_gain;        /* initial S = start_gain·C'·T (paper: 1.2) */
  double headroom;          /* decided S = (1 + headroom)·R·T: the window also covers the path's jitter */
  double lift_fit_max;      /* a lift's end: the held window scaled by the rate the lift found over the rate it delivered,
                               up to (1 + this)·R·T (0: not scaled; a pacer's S is no window) */
  uint32_t lift_fit_rtt_us; /* ... only where the held windows' median RTT was within this of the RTT held alone */
  double grow_frac;         /* buffer limited: S grows by this share of S per RTT, or one MSS if more */
  double grow_max_frac;     /* ... in slow start with no queue, from the third window on the share doubles each window up to this */
  double limited_frac;      /* buffer limited: R·T_now >= limited_frac·S (the cap is full) */
  double full_rtt_frac;     /* the path is full (for flat-rate): RTT_now >= (1 + this)·T_base, and 2 ms over */
  uint8_t full_least;       /* congestion avoidance: the path is full when the least RTT of the plateau shows the queue (a sender; a probed receiver always), not its median */
  uint32_t congested_episodes; /* kernel signals: this many loss episodes not of our making => congested ... */
  uint32_t congested_span_rtts; /* ... each beginning within this many base RTTs of the one before */
  uint32_t drain_rtts;      /* decided, window not known: held at the first window with no queue, or after this many base RTTs */
  uint8_t aside_undrained;  /* ... unless the queue is still draining; one through them that no longer falls and is half or more of the one decided with is a competitor's: step aside (a pacer) */
  uint32_t min_rtt_us;      /* paths with a base RTT below this are not steered (LANs, loopback) */
  uint64_t s_min;           /* never cap below this many bytes */
  uint64_t s_max;           /* the largest window the kernel gives: S on a congested path */
  int64_t reeval_ns;        /* 0: decide once per transfer; else re-run after this long decided */
  uint32_t queue_windows;   /* held: a standing queue is one seen in each of this many windows in a row ... */
  int64_t queue_min_ns;      /* ... spanning at least this long (more windows on short paths) ... */
  double queue_rtt_frac;    /* ... the least of their RTTs at least this far over the base ... */
  uint32_t queue_rtt_min_us; /* ... and this many µs over it ... */
  double queue_rate_keep;   /* ... while their median rate is below this share of the held rate */
  double loss_rate_frac;    /* decided, not yet held: a loss while the rate is under this share of the
                               decided rate, with no queue, is the path's */
  double foreign_growth;    /* slow start, with the probe: a plateau this much above the rate at which every echo
                               of two windows in a row already met a queue is a competitor's share */
  double share_frac;        /* with C': a plateau under this share of the path's capacity is a share of a path
                               someone else fills, not a rate to hold (0: never) */
  double resume_frac;       /* stepped aside: the rate is back to this share of what the flow held alone */
  double resume_jump;       /* ... or (never held alone) this much above the rate it had aside */
  int64_t resume_clear_ns;  /* ... with no queue in any window of this span (never held alone) */
  double resume_cap_frac;   /* ... or (never held alone, with C') back to this share of the path's capacity */
  int64_t resume_backoff_ns; /* the least time aside before searching again; doubles after each vain return */
  int64_t resume_backoff_max_ns;
  double lift_gain;         /* held alone with no queue: S is raised by this share to test for more (0: never) ... */
  double lift_grow;         /* ... and the rate grew when both measured windows are this much above the rate before */
  double lift_gain_max;     /* ... and a lift the path gave in full is followed by one of twice the gain, up to this */
  int64_t sibling_trim_wait_ns; /* trim_first, among siblings: after a trim, a queue that stands again is a competitor's
                               only this long after it (each sibling trims on its own windows) */
  uint8_t trim_first;        /* held, a standing queue with the rate sunk first trims S to that rate (a pacer: no ACK clock follows a slower path); only a queue that stands again is a competitor's */
  double ss_queue_frac;     /* > 0: in slow start, a window at the highest rate yet whose RTT is this far (and ss_queue_min_us) over the base decides on that rate: a pacer's exact RTT sees its own slow start fill the buffer a round before it overflows */
  uint32_t ss_queue_min_us;  /* ... and at least this many µs over it */
  double lift_queue_frac;   /* > 0: a lift also ends at the first window whose RTT is this far (and queue_rtt_min_us) over the RTT held alone: a pacer's lift queues without bound */
  uint8_t lift_first_held;   /* alone and untrimmed, the first lift comes with the first held window at the base RTT, not after a clean hold */
  int64_t lift_wait_ns;     /* a lift that finds neither room nor a queue waits this long for the sender to take it */
  double lift_cap_flat;     /* ... unless three of its windows after the first sit within this share of each other, lift_grow/2 over the rate before: the path's rate, reached */
  int64_t lift_backoff_ns;  /* the least time between lifts that found nothing; doubles after each */
  int64_t lift_backoff_max_ns;
  double lift_share;        /* > 0: after a lift that found nothing, the next waits at least until lifting was this share of the time */
  uint32_t calm_windows;    /* > 0: held, after windows of which calm_busy_frac had the RTT calm_busy_us over the base,
                               this many in a row within calm_busy_us/2 of it: the cross traffic left, lift now (a
                               pacer: its tcpi_rtt is exact to the µs; 0: never) */
  uint32_t calm_busy_us;
  double calm_busy_frac;
  uint32_t steady_spread_us; /* > 0: held, a queue (equal_tol and 1 ms over the base) whose RTTs in every window of a
                                span sit within this of each other is window-limited flows': step aside (a pacer: its
                                tcpi_rtt is exact to the µs; 0: never) ... */
  int64_t steady_span_ns;     /* ... the span: windows back to this long, or the whole history */
  double ca_ceiling_gain;   /* > 0: searching in congestion avoidance, S is this many times the most the flow had in
                               flight (a receiver's offered window, never withdrawn, stays near what the decision
                               will hold); 0: S_max there */
  double outgrown_gain;     /* > 0: decided in slow start, not yet held (a receiver's offered window not yet down to
                               S), a window this share over the decided rate with no loss: search on in congestion
                               avoidance (0: never) */
};

void sobas_engine_default_params(struct sobas_engine_params *p);
/* A sender's engine, on top of the defaults: it paces (SO_MAX_PACING_RATE) and reads tcpi_rtt in µs. */
void sobas_engine_pacer_params(struct sobas_engine_params *p);

/* One 2·RTT measurement window of a receiving flow. */
struct sobas_engine_input {
  int64_t t_ns;          /* end of the window */
  uint64_t rate_bps;     /* R: received in the window, bit/s */
  uint32_t rtt_us;       /* RTT now (probe average, else the kernel's receiver estimate) */
  uint32_t base_rtt_us;  /* the path's RTT without our queue (minimum seen): the T in S = R·T */
  uint32_t mss;          /* bytes per segment */
  uint32_t rtt_max_us;   /* highest RTT the probe saw in the window (0: no probe): did a loss come with a queue? */
  uint32_t rtt_least_us; /* least RTT the probe saw in the window (0: no probe or no echo): did a queue stand throughout? */
  uint64_t rate_now_bps; /* a sender's: the kernel's delivery rate at the window's end (0: unknown, or app-limited) */
  uint64_t cwnd_bytes;   /* a sender's: its cwnd × MSS at the window's end (0: unknown) */
  uint8_t kernel_ss;     /* a sender's kernel at the window's end: SOBAS_KERNEL_SS, SOBAS_KERNEL_CA, or 0: unknown */
  uint32_t losses;       /* loss signals in this window (probe gaps, else out-of-order arrivals) */
  uint32_t ooo;          /* with the probe: the kernel's out-of-order arrivals too (without it they are `losses`) */
  uint8_t probe;         /* 1: rtt and losses come from the probe's forward-path view; 0: kernel signals */
  uint32_t rcv_wnd;      /* the window the receiver offers at the end of the window, bytes (0: not known, kernel < 6.2) */
  uint32_t siblings;      /* the user's other flows to the same peer (the ring's path board) ... */
  uint32_t siblings_searching; /* ... and of those, how many are still searching (sobas_engine_searching) */
  uint8_t lift_cut;      /* a pacer's: its lifted pace met the lift's queue within the window and was pulled
                            back then (sobas_engine_lift_watched): the window ends the lift as queued */
};

/* A sender's own kernel: in slow start (snd_cwnd < snd_ssthresh), or out of it (HyStart, a loss). */
#define SOBAS_KERNEL_SS 1
#define SOBAS_KERNEL_CA 2

/* What the engine wants done, and why. `set` = 1: hold the flow's window at `s` bytes. */
struct sobas_action {
  uint8_t set;
  uint64_t s;
  enum sobas_state from, to;
  enum sobas_reason why;
  uint64_t rate_bps;     /* the R the decision used (for const-rate-drop: the rate before the drop) */
  uint32_t rtt_us;       /* the T it used */
};

#define SOBAS_ENGINE_HISTORY 16

struct sobas_engine {
  struct sobas_engine_params p;
  enum sobas_state state;
  uint64_t s;                       /* current cap, bytes; p.s_max = uncapped */
  uint64_t rates[SOBAS_ENGINE_HISTORY]; /* recent R, newest last, since the last change of state */
  uint64_t s_at[SOBAS_ENGINE_HISTORY];  /* S when each was measured: did S grow under a flat rate? */
  uint32_t rtt_at[SOBAS_ENGINE_HISTORY]; /* the RTT in each: did the path fill, and for long enough? */
  int64_t dur_at[SOBAS_ENGINE_HISTORY]; /* how long each lasted: a standing queue is counted in time */
  uint32_t least_at[SOBAS_ENGINE_HISTORY]; /* the probe's least echo in each (0: none): a queue under every echo */
  uint32_t n_rates;
  int64_t last_t_ns;                /* the end of the last window fed */
  int64_t last_increase_ns;         /* when S last grew */
  uint32_t grow_clear;              /* increases in a row in slow start with no queue */
  int64_t decided_ns;
  uint32_t base_decided_us;         /* the base RTT the search decided at (0: none known then) */
  uint32_t q_decided_us;            /* the queue (RTT over the base) of the window the search decided on */
  uint32_t rtt_draining_us;         /* decided, not yet held: the RTT of the last window */
  uint32_t drain_least_us;          /* ... and the least RTT of the windows since the decision */
  uint32_t loss_episodes;           /* kernel signals: loss episodes we did not cause, each close to the last */
  int64_t last_episode_ns;          /* when the last of them began */
  uint8_t in_loss;                  /* the last window had out-of-order arrivals: an episode is under way */
  uint8_t loss_age;                 /* windows searched since the last with a loss signal (saturates; UINT8_MAX: none yet) */
  uint8_t climb;                    /* searching, a sender's CUBIC started again (sobas_engine_regrew): ~5% a round */
  uint8_t climbed;                  /* decided at the end of such a climb: no first lift (first_lift_due) */
  uint8_t drained;                  /* decided, and the last window ended with the offered window down to S */
  uint8_t held;                     /* decided, and what was offered before the decision has been consumed */
  uint8_t ss_decided;               /* decided from slow start (act), not yet held: may be outgrown (outgrown_gain) */
  uint8_t trimmed;                  /* trim_first: no trim due: S was trimmed since the decision, or the flow held clean
                                       alone since (among siblings: since the queue was last gone for a span) */
  uint8_t pace_trimmed;             /* trim_first: S was trimmed for a pace over the path since the decision (over_pace) */
  int64_t trim_ns;                  /* when S was last trimmed (0: not since the decision) */
  uint8_t held_clean;               /* decided, and held queue_windows evaluations in a row with no queue and R kept */
  uint32_t clean_run;               /* how many such evaluations in a row so far */
  uint32_t quiet_run;               /* held evaluations in a row with no queue, whatever the rate */
  uint32_t rtt_alone_us;            /* the least RTT of the evaluations that made it held_clean (0: none) */
  uint8_t resumed;                  /* the search under way came back from stepping aside */
  uint64_t r_alone;                 /* the rate last held alone: a clean hold's or a lift's (0: never) */
  uint64_t r_held;                  /* the rate S was last set from (decision or lift) */
  uint32_t queued_run;              /* slow start: windows in a row whose every echo met a queue */
  uint64_t foreign_rate;            /* the lower rate of the first two such windows (0: none yet) */
  uint64_t cap_bps;                 /* the probe's capacity estimate C' (0: none) */
  int64_t resume_after_ns;          /* stepped aside: no new search before this */
  uint8_t aside_on_loss;            /* stepped aside for the path's losses (not a competitor's queue) */
  int64_t path_loss_ns;             /* ... and when the last of them was seen */
  uint8_t clear;                    /* aside: the windows since clear_since_ns had no queue */
  int64_t clear_since_ns;           /* ... since then */
  uint64_t r_share;                 /* ... and the median rate of the (queued) windows before it */
  int64_t backoff_ns;               /* the current least time aside */
  uint8_t lifting;                  /* windows since S was lifted (0: not lifting) */
  uint8_t lifted;                   /* S was lifted since the decision */
  uint8_t lift_streak;              /* lifts in a row the path gave in full: the lift under way's gain doubled this often */
  uint8_t lift_bumped;              /* the lift under way let one queued window pass that delivered its rate */
  uint8_t lift_chained;             /* the lift under way followed one that found room */
  uint8_t lift_from_full;           /* ... began alone with the flow filling S (fills_s) */
  uint32_t lift_rtt_us;             /* the RTT the lift under way started at (not under the base) */
  uint8_t rebased;                  /* the rate held was taken down to what the path gives since the decision */
  int64_t lift_at_ns;               /* when the lift under way began */
  uint64_t s_before_lift;           /* S before the lift under way */
  uint64_t r_before_lift;           /* the rate held before it */
  uint64_t r_got_before_lift;       /* ... and the best rate the held S delivered (0: its RTT showed a queue, or none) */
  int64_t lift_after_ns;            /* no lift before this */
  int64_t lift_backoff_ns;          /* the current least time between lifts */
  double busy_share;                /* held, not lifting: the share of recent windows whose RTT was calm_busy_us over the
                                       base (a moving average over ~8 windows) ... */
  double busy_before_calm;          /* ... as it was when the calm run under way began */
  uint32_t calm_run;                /* held windows in a row within calm_busy_us/2 of the base */
  uint32_t siblings_known;          /* the siblings the last window counted */
  uint8_t kernel_ca;                /* a sender's kernel was out of slow start at the last window's end */
  uint8_t ooo_ours;                 /* with the probe: the last window's out-of-order arrivals came with a queue, or in slow start */
};

/* Starts a flow at t_ns. cap_bps: the probe's capacity estimate C' (0 = none: start uncapped).
 * Returns 1 and fills *a when the flow must be capped from the start. */
int sobas_engine_start(struct sobas_engine *e, const struct sobas_engine_params *p, uint64_t cap_bps,
                       uint32_t rtt_us, int64_t t_ns, struct sobas_action *a);

/* The probe's capacity estimate arrived after the start: a flow still in its initial slow start and
 * uncapped is capped at gain·C'·T now (the window never shrinks, so the cap takes hold as the flow
 * consumes what was already offered). Returns 1 and fills *a when applied. */
int sobas_engine_capacity(struct sobas_engine *e, uint64_t cap_bps, uint32_t rtt_us, int64_t t_ns,
                          struct sobas_action *a);

/* Feeds one window; returns 1 and fills *a on a state change or a new S, else 0. */
int sobas_engine_feed(struct sobas_engine *e, const struct sobas_engine_input *in, struct sobas_action *a);

/* A searching sender's congestion control was started again after slow start's loss, the path's RTT at
 * its base (track.c): it now climbs ~5% a round, and the search decides at the first window at its
 * highest rate whose RTT shows a queue, before that queue overflows a shallow buffer. */
void sobas_engine_regrew(struct sobas_engine *e);

/* The flow is still looking for the path's rate: searching (slow start, congestion avoidance), lifting
 * S, or decided with the queue of its overshoot not yet drained. A queue it keeps now is its own, and
 * its siblings on the path (the ring's path board) take it for no competitor's. */
int sobas_engine_searching(const struct sobas_engine *e);

/* A pacer lifting, in a window whose first queue ends its lift (the lift's first window, or the one
 * after its bump): the S the lift began from, for the caller to pace at once as soon as its own RTT
 * shows that queue within the window (sobas_engine_lift_queued), and to say so in the window's input
 * (lift_cut). 0: no lift may end within this window (not a pacer, not lifting, a window that may bump). */
uint64_t sobas_engine_lift_watched(const struct sobas_engine *e);

/* Whether an RTT of rtt_us over a base of base_rtt_us shows the queue that ends a lift at a window's
 * end. */
int sobas_engine_lift_queued(const struct sobas_engine *e, uint32_t base_rtt_us, uint32_t rtt_us);

/* Decided, and the queue its decision (or a lift's end) left is not yet drained: what a paced sender's
 * queue means is still the question, and its pace is cut from the rate the path gave (pace.h). */
int sobas_engine_draining(const struct sobas_engine *e);

const char *sobas_state_name(enum sobas_state s);
const char *sobas_reason_name(enum sobas_reason r);

#ifdef __cplusplus
}
#endif
#endif
