/* policy.c — the bdp, drs and fixed window policies (pure: no syscalls, no globals): see sobas/policy.h. */
#include "sobas/policy.h"

#include <string.h>

/* DRS's first window before it has measured anything: what Linux offers a new connection (64 KiB). */
#define DRS_INITIAL_BYTES 65536u

const char *sobas_policy_name(enum sobas_policy p) {
  static const char *const names[] = {"sobas", "off", "bdp", "drs", "fixed"};
  return (unsigned)p < sizeof names / sizeof names[0] ? names[p] : "?";
}

static uint64_t clamp(const struct sobas_window_policy *p, uint64_t s) {
  return s < p->s_min ? p->s_min : s > p->s_max ? p->s_max : s;
}

static uint64_t per_rtt(uint64_t rate_bps, uint32_t rtt_us) {
  return (uint64_t)((double)rate_bps / 8.0 * (double)rtt_us / 1e6);
}

static int set(struct sobas_window_policy *p, struct sobas_action *a, uint64_t s, enum sobas_reason why,
               uint64_t rate_bps, uint32_t rtt_us) {
  *a = (struct sobas_action){.set = 1, .s = clamp(p, s), .from = p->state, .to = SOBAS_ST_DECIDED, .why = why,
                             .rate_bps = rate_bps, .rtt_us = rtt_us};
  p->s = a->s;
  p->state = SOBAS_ST_DECIDED;
  return 1;
}

int sobas_policy_start(struct sobas_window_policy *p, enum sobas_policy kind, uint64_t bytes, uint64_t s_min,
                       uint64_t s_max, uint64_t cap_bps, uint32_t rtt_us, int64_t t_ns, struct sobas_action *a) {
  memset(p, 0, sizeof *p);
  p->kind = kind;
  p->bytes = bytes;
  p->s_min = s_min;
  p->s_max = s_max;
  p->s = s_max;
  p->state = SOBAS_ST_SLOW_START;
  switch (kind) {
    case SOBAS_POLICY_FIXED: return set(p, a, bytes, SOBAS_WHY_FIXED, 0, rtt_us);
    case SOBAS_POLICY_BDP:
      if (bytes) return set(p, a, bytes, SOBAS_WHY_BDP, 0, rtt_us);
      return sobas_policy_capacity(p, cap_bps, rtt_us, t_ns, a);
    case SOBAS_POLICY_DRS: return set(p, a, DRS_INITIAL_BYTES, SOBAS_WHY_DRS, 0, rtt_us);
    default: return 0;
  }
}

int sobas_policy_capacity(struct sobas_window_policy *p, uint64_t cap_bps, uint32_t rtt_us, int64_t t_ns,
                          struct sobas_action *a) {
  (void)t_ns;
  /* Tierney's rule is set once, from the capacity, as a tuned host would be: never moved after. */
  if (p->kind != SOBAS_POLICY_BDP || p->state == SOBAS_ST_DECIDED || !cap_bps || !rtt_us) return 0;
  return set(p, a, per_rtt(cap_bps, rtt_us), SOBAS_WHY_BDP, cap_bps, rtt_us);
}

int sobas_policy_feed(struct sobas_window_policy *p, const struct sobas_engine_input *in, struct sobas_action *a) {
  if (p->kind != SOBAS_POLICY_DRS || !in->rate_bps) return 0;
  /* Fisk and Feng: twice the bytes received in an RTT, so the window never limits the sender (its cwnd
   * may double in a round trip); grown only, never shrunk. The RTT is the window's own, not the base:
   * DRS sizes for the path as it is now, queue included. */
  uint64_t s = clamp(p, 2 * per_rtt(in->rate_bps, in->rtt_us));
  if (s <= p->s) return 0;
  return set(p, a, s, SOBAS_WHY_DRS, in->rate_bps, in->rtt_us);
}
