/* pace.c — the rate a steered sender is paced at (pace.h); no syscalls, unit tested. */
#include "pace.h"

/* S = (1 + headroom)·R·T leaves a window-limited flow a little slack that its ACK clock turns into at
 * most headroom·T of queue; a pacer has no such clock, and any rate above A queues without bound
 * (measured at 100 Mb/s, 40 ms: paced at S/T = 1.02·A the RTT climbed from 58 to 79 ms in 4 s, to a
 * loss). So it paces half the headroom below R: R measured at saturation is A within ~0.5% window to
 * window; 1% below it keeps the queue empty (2% below cost 2% of A). 0.5% below gained little and
 * queued more: interleaved, 4 runs each way, `udp-leave` senders 75.12 against 74.40 Mb/s and `long`
 * 34.45 against 34.27, RTT+ p50 medians 0.91 against 0.72 ms on `gig-udp` (bar 1.0) and 3.07 against
 * 1.65 on `long`. Nor did 1% scaled down by 40 ms/T on longer paths (0.27% at 150 ms, where the RTT bar
 * leaves room): interleaved on `long`, 6 runs each way, senders 34.15 against 34.37 Mb/s and `sobas
 * both` 34.20 against 34.22, RTT+ p50 medians 2.24 against 2.49 and 1.72 against 1.59 ms. Measured
 * again at 0.5% below (2026-12-07, interleaved, 3 runs each way of `sobas sender` and `sobas both` on
 * seven paths): the held windows sent 0.2-0.9% more on `bloated`, `typical` and `arrive-leave` (1% less
 * on `long`), `gig-udp`'s trims went from 6 to 20 and its `sobas both` RTT+ p50 from 0.67 to 0.95 ms
 * (a run at 1.14), and goodput moved 0.999x pooled over the 14 rows. */
uint64_t sobas_pace_held(uint64_t s, uint32_t t_us, double headroom) {
  return (uint64_t)((double)s * 1e6 / t_us / (1.0 + headroom) * (1.0 - headroom / 2));
}

/* 2.5% of the base, and at least 0.5 ms. A sender's tcpi_rtt is exact to the µs: held with no cross
 * traffic at 1 Gb/s / 20 ms it read 0.3-0.5 ms over the base (the link's serialisation), ±0.1 ms. With
 * a floor of 1 ms, beside 430 Mb/s of constant UDP (gig-udp) a held sender's tcpi_rtt sat 1.3-2.2 ms
 * over its 20 ms base (p50 of 3 runs), the ping's RTT+ p50 1.6 ms (mean) against the 5% bar's 1.0;
 * with 0.5 ms, tcpi_rtt 0.9-1.2 ms over, the ping's 0.7, 1.0 and 1.2 ms, at the same goodput (532
 * Mb/s). At 40 ms and more the margin is 2.5%, as before. */
uint32_t sobas_pace_margin_us(uint32_t t_us) { return t_us / 40 > 500 ? t_us / 40 : 500; }

/* A paced sender has no ACK clock to bound a queue: slow start's or a lift's would drain at only 1% of R
 * (measured: 1.4 s for slow start's 33 ms at 100 Mb/s), and a path that slows (cross traffic) queues
 * whatever it no longer carries (a bats run at a fixed pace held 7 ms of queue, p50). So while its RTT
 * shows a queue the pace is lowered, for the next window (two RTTs), by the queue's share of those two
 * RTTs, which empties it by the window's end.
 * The share is cut from `got` when that is lower: a decision over the path's rate, held, keeps a cut
 * pace over it too, and its queue stands. Measured on `gig-udp` (29a0511): decided at 661.6 Mb/s of A =
 * 551, the cut from the held rate paced 504-525, the queue went 13.2 -> 16.9 -> 14.0 ms, and the flow
 * stepped aside as if beside a competitor. */
uint64_t sobas_pace_now(uint64_t held, uint64_t got, uint32_t rtt_us, uint32_t t_us, int lifting) {
  if (lifting || rtt_us <= t_us + sobas_pace_margin_us(t_us)) return held;
  uint64_t from = got && got < held ? got : held;
  return (uint64_t)((double)from * (rtt_us + t_us) / (2.0 * rtt_us));
}

/* A paced flow that is not cwnd-limited does not grow its cwnd, so a lift can take the pace past what
 * the cwnd carries; the flow then waits on the congestion control (track.c, regrow). */
int sobas_pace_cwnd_short(uint64_t cwnd_bytes, uint64_t held, uint32_t t_us) {
  return (double)cwnd_bytes < (double)held * t_us / 1e6;
}
