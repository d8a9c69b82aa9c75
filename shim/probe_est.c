/* probe_est.c — RTT/forward-loss bookkeeping of echoes and the train-dispersion capacity estimate (pure). */
#include "probe_est.h"

#include <string.h>

void sobas_echo_add(struct sobas_echo_est *e, uint32_t rsp_seq, uint32_t rtt_us) {
  if (!e->have) {
    e->have = 1;
    e->first_rsp = e->high_rsp = rsp_seq;
  } else if ((int32_t)(rsp_seq - e->high_rsp) > 0) {
    e->high_rsp = rsp_seq;
  }
  e->received++;
  if (e->min_rtt_us == 0 || rtt_us < e->min_rtt_us) e->min_rtt_us = rtt_us;
  e->win_rtt_sum += rtt_us;
  e->win_n++;
  if (rtt_us > e->win_max_us) e->win_max_us = rtt_us;
  if (e->win_least_us == 0 || rtt_us < e->win_least_us) e->win_least_us = rtt_us;
}

void sobas_echo_take(struct sobas_echo_est *e, struct sobas_echo_window *w) {
  memset(w, 0, sizeof *w);
  uint64_t expected = e->have ? (uint64_t)(uint32_t)(e->high_rsp - e->first_rsp) + 1 : 0;
  /* A late echo counted after its gap was reported makes `lost` shrink: never report a negative. */
  uint64_t lost = expected > e->received ? expected - e->received : 0;
  if (lost > e->lost_taken) {
    w->lost = (uint32_t)(lost - e->lost_taken);
    e->lost_taken = lost;
  }
  w->lost_total = e->lost_taken;
  w->received_total = e->received;
  w->echoes = e->win_n;
  w->rtt_avg_us = e->win_n ? (uint32_t)(e->win_rtt_sum / e->win_n) : 0;
  w->rtt_max_us = e->win_max_us;
  w->rtt_least_us = e->win_least_us;
  w->rtt_min_us = e->min_rtt_us;
  e->win_rtt_sum = 0;
  e->win_n = e->win_max_us = e->win_least_us = 0;
}

uint64_t sobas_train_rate_bps(const int64_t *t_ns, uint32_t count, uint32_t ip_bytes) {
  uint32_t got = 0, first = 0, last = 0;
  /* The head packet is not timed: it meets an idle path, and whatever wakes up for it (the testbed's
   * emulator after a sleep, a NIC's interrupt moderation) may hand it over late, right in front of the
   * second. Measured on the testbed: one gap in 31 collapsed, C' 3.3% (31/30) high on a quiet link. */
  for (uint32_t i = 1; i < count; i++) {
    if (t_ns[i] == 0) continue;
    if (got++ == 0) first = i;
    last = i;
  }
  if (got < 2 || 2 * got < count - 1 || t_ns[last] <= t_ns[first]) return 0;
  double secs = (double)(t_ns[last] - t_ns[first]) / 1e9;
  return (uint64_t)((double)(last - first) * ip_bytes * 8.0 / secs);
}

uint64_t sobas_capacity_bps(const uint64_t *rates, uint32_t n, uint32_t min_trains) {
  uint64_t v[SOBAS_TRAIN_MAX_TRAINS];
  uint32_t k = 0;
  for (uint32_t i = 0; i < n && k < SOBAS_TRAIN_MAX_TRAINS; i++)
    if (rates[i]) v[k++] = rates[i];
  if (k == 0 || k < min_trains) return 0;
  for (uint32_t i = 1; i < k; i++) /* insertion sort: at most 8 */
    for (uint32_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
      uint64_t t = v[j];
      v[j] = v[j - 1];
      v[j - 1] = t;
    }
  return k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
}

uint32_t sobas_train_ip_bytes(uint32_t payload, uint8_t family) { return payload + 8 + (family == 6 ? 40 : 20); }
