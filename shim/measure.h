/* measure.h — pure measurement windows: turns timestamped TCP_INFO samples into 2·RTT rate windows. */
#ifndef SOBAS_MEASURE_H
#define SOBAS_MEASURE_H

#include <stdint.h>

#include "sobas/sample.h"

#ifdef __cplusplus
extern "C" {
#endif

struct sobas_meas_params {
  uint32_t min_window_us;   /* floor on 2·RTT: loopback RTTs of 20 µs would sample 50 000 times/s */
  uint32_t max_window_us;   /* ceiling: a stalled RTT estimate must not freeze reporting */
  uint32_t default_rtt_us;  /* used until the kernel has any RTT estimate */
};

struct sobas_meas {
  struct sobas_sample start;  /* the sample the open window began at */
  int64_t window_ns;          /* length the open window needs, from the newest sample's RTT */
  int started;
};

enum sobas_meas_result {
  SOBAS_MEAS_PENDING = 0,   /* window still open */
  SOBAS_MEAS_WINDOW = 1,    /* *out holds a closed window; the next one starts at this sample */
  SOBAS_MEAS_REGRESSED = -1 /* counters went backwards: this is not the socket we started with */
};

void sobas_meas_params_default(struct sobas_meas_params *p);
void sobas_meas_init(struct sobas_meas *m);

/* The RTT a window is sized by: a receiver's own estimate (tcpi_rcv_rtt) when it has one, since a pure
 * receiver's tcpi_rtt only reflects the few segments it sent; otherwise the sender's smoothed RTT. */
uint32_t sobas_meas_rtt_us(enum sobas_role role, const struct sobas_sample *s, const struct sobas_meas_params *p);

/* Window length for the current RTT, clamped to [min_window_us, max_window_us]. */
int64_t sobas_meas_window_ns(enum sobas_role role, const struct sobas_sample *s, const struct sobas_meas_params *p);

/* Feeds one sample. The first sample only opens a window. */
enum sobas_meas_result sobas_meas_feed(struct sobas_meas *m, const struct sobas_meas_params *p, enum sobas_role role,
                                       const struct sobas_sample *s, struct sobas_window *out);

/* Time at which the open window is due to close (0 when no window is open). */
int64_t sobas_meas_due_ns(const struct sobas_meas *m);

/* bits per second for `bytes` over `ns`, 0 for an empty interval. */
uint64_t sobas_rate_bps(uint64_t bytes, int64_t ns);

/* What held the flow back in window w, s being the sample it ended with: a share of over half the
 * window's time for the sender's chrono stats; for a receiver, its window nearly used up every RTT.
 * held_s: the S sobas holds (0: none); paced: held by pacing; unread: bytes received that the
 * application has not read yet. */
enum sobas_limit sobas_window_limit(enum sobas_role role, const struct sobas_window *w, const struct sobas_sample *s,
                                    uint64_t held_s, int paced, uint64_t unread);
const char *sobas_limit_name(enum sobas_limit l);

#ifdef __cplusplus
}
#endif
#endif
