/* pace.h — the rate a steered sender is paced at, pure: S as a rate, and the queue feedback a pacer needs for want of an ACK clock. */
#ifndef SOBAS_PACE_H
#define SOBAS_PACE_H

#include <stdint.h>

/* The pace, bytes per second, that holds a sender at S = s bytes over a base RTT of t_us: the rate R
 * that S was set for (S = (1 + headroom)·R·T), then headroom/2 below it. */
uint64_t sobas_pace_held(uint64_t s, uint32_t t_us, double headroom);

/* The pace for the next window of a sender held at `held` bytes per second whose RTT is rtt_us over a
 * base of t_us: `held`, or, while the RTT shows a queue, the lower of `held` and `got` (bytes per second
 * the path delivered; 0: not asked) less the queue's share of two RTTs (never while lifting: that
 * queue is the lift's question). */
uint64_t sobas_pace_now(uint64_t held, uint64_t got, uint32_t rtt_us, uint32_t t_us, int lifting);

/* Whether a cwnd of cwnd_bytes is short of what a pace of held bytes per second keeps in flight over a
 * base RTT of t_us: paced that fast, the flow would wait on its congestion window. */
int sobas_pace_cwnd_short(uint64_t cwnd_bytes, uint64_t held, uint32_t t_us);

/* The least RTT excess over a base of t_us that sobas_pace_now reads as a queue. */
uint32_t sobas_pace_margin_us(uint32_t t_us);

#endif
