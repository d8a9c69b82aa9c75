/* probe_est.h — the side probe's estimators, pure: RTT and forward-path loss from echoes, capacity C' from train dispersion. */
#ifndef SOBAS_PROBE_EST_H
#define SOBAS_PROBE_EST_H

#include <stdint.h>

#include "sobas/probe.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Echoes of one flow. sobasd numbers its echoes 0, 1, 2, ... per flow; an echo that never arrives
 * leaves a gap, and only the sender→receiver (forward) direction can lose an echo once sent. */
struct sobas_echo_est {
  uint32_t have;         /* an echo has arrived */
  uint32_t first_rsp;    /* its rsp_seq */
  uint32_t high_rsp;     /* highest rsp_seq seen (serial arithmetic) */
  uint64_t received;     /* echoes counted (late ones included: they fill a gap) */
  uint64_t lost_taken;   /* losses already reported by sobas_echo_take */
  uint32_t min_rtt_us;   /* least RTT ever: the path's base RTT */
  uint64_t win_rtt_sum;  /* this window's RTTs */
  uint32_t win_n, win_max_us, win_least_us;
};

/* What one measurement window saw. */
struct sobas_echo_window {
  uint32_t echoes;     /* echoes that arrived in the window */
  uint32_t rtt_avg_us; /* their mean RTT (0 if none) */
  uint32_t rtt_max_us; /* their highest RTT */
  uint32_t rtt_least_us; /* their least RTT (0 if none): a queue that stood through the whole window */
  uint32_t rtt_min_us; /* least RTT ever seen */
  uint32_t lost;       /* forward-path losses found since the last window */
  uint64_t lost_total; /* since the flow's first echo */
  uint64_t received_total;
};

void sobas_echo_add(struct sobas_echo_est *e, uint32_t rsp_seq, uint32_t rtt_us);
/* Closes the window: fills *w and starts the next one. */
void sobas_echo_take(struct sobas_echo_est *e, struct sobas_echo_window *w);

/* Rate of one train from the arrival times of its packets (t_ns[i] = 0: packet i never arrived):
 * (i_last − i_first)·ip_bytes·8 / (t_last − t_first), between the first and last packet that arrived
 * after the head (packet 0 is not timed). 0 when fewer than half of the other count − 1 packets
 * arrived or the times do not make sense. */
uint64_t sobas_train_rate_bps(const int64_t *t_ns, uint32_t count, uint32_t ip_bytes);

/* C' from the per-train rates (0 = unusable train): the median of the usable ones, or 0 when fewer
 * than `min_trains` are usable. The median, not the mean of dispersions, because a train that shared
 * the bottleneck with a burst of the flow's own slow start spreads out and would drag a mean down. */
uint64_t sobas_capacity_bps(const uint64_t *rates, uint32_t n, uint32_t min_trains);

/* The bytes a train packet of `payload` UDP bytes occupies on an IP link (family 4 or 6). */
uint32_t sobas_train_ip_bytes(uint32_t payload, uint8_t family);

#ifdef __cplusplus
}
#endif
#endif
