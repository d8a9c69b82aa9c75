/* sobas/policy.h — the window policies beside SOBAS (the seeds' systems), pure engines with the SOBAS engine's API. */
#ifndef SOBAS_POLICY_H
#define SOBAS_POLICY_H

#include <stdint.h>

#include "sobas/engine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* SOBAS_POLICY: what sets a receiving flow's window. Each policy is fed the same 2·RTT windows as the
 * SOBAS engine and answers with the same actions, so the shim, the log and the ring treat them alike;
 * only `sobas` also steers sending flows (by pacing). */
enum sobas_policy {
  SOBAS_POLICY_SOBAS = 0, /* the paper's engine (engine.h) */
  SOBAS_POLICY_OFF = 1,   /* measure and record, never change a socket */
  SOBAS_POLICY_BDP = 2,   /* Tierney's static size: S = C'·T from the probe, or the bytes the user gives */
  SOBAS_POLICY_DRS = 3,   /* Dynamic Right-Sizing: S = 2 x the bytes received per RTT, never shrinking */
  SOBAS_POLICY_FIXED = 4, /* a given S for the whole flow: the paper's section III sweep as a policy */
};

const char *sobas_policy_name(enum sobas_policy p);

/* The state of one flow under bdp, drs or fixed. `state` reads as the SOBAS engine's: slow start until
 * S is first set, decided after (a DRS window that keeps growing stays decided: it is never searched). */
struct sobas_window_policy {
  enum sobas_policy kind;
  uint64_t bytes;   /* fixed: S; bdp: S given by the user (0: C'·T from the probe) */
  uint64_t s_min, s_max;
  uint64_t s;       /* the S held (s_max: none yet) */
  enum sobas_state state;
};

/* Starts a flow (kind bdp, drs or fixed) at t_ns; cap_bps: the probe's C' if already known. Returns 1
 * and fills *a when S is set from the start (fixed; bdp with bytes or C'; drs at its first window). */
int sobas_policy_start(struct sobas_window_policy *p, enum sobas_policy kind, uint64_t bytes, uint64_t s_min,
                       uint64_t s_max, uint64_t cap_bps, uint32_t rtt_us, int64_t t_ns, struct sobas_action *a);

/* The probe's C' arrived (bdp without bytes: S = C'·T now). Returns 1 and fills *a when applied. */
int sobas_policy_capacity(struct sobas_window_policy *p, uint64_t cap_bps, uint32_t rtt_us, int64_t t_ns,
                          struct sobas_action *a);

/* One window (the SOBAS engine's input). Returns 1 and fills *a when S changes (drs). */
int sobas_policy_feed(struct sobas_window_policy *p, const struct sobas_engine_input *in, struct sobas_action *a);

#ifdef __cplusplus
}
#endif
#endif
