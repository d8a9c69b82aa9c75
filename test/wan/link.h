/* link.h — the emulated tight link of one direction: random loss, DropTail queue, rate C, delay (pure). */
#ifndef WAN_LINK_H
#define WAN_LINK_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct wan_params {
  uint64_t rate_bps;    /* serialisation rate C in bit/s; 0 = infinitely fast */
  uint64_t delay_ns;    /* constant one-way propagation delay after serialisation */
  uint64_t limit_bytes; /* DropTail limit on the backlog in bytes; 0 = no byte limit */
  uint32_t limit_pkts;  /* DropTail limit on the backlog in packets; 0 = no packet limit */
  double loss;          /* probability a packet is lost before the queue, 0..1 */
  uint64_t seed;        /* loss generator seed: runs repeat exactly */
};

/* Where each accepted packet is in its life: serialised until tx_end, released at release. */
struct wan_pkt {
  uint64_t tx_end_ns;
  uint64_t release_ns;
  uint32_t len;
  uint32_t virt; /* 1: cross traffic the link made up itself (wan_link_offer_virtual): nothing to write */
};

struct wan_stats {
  uint64_t pkts_in, bytes_in;     /* offered to the link */
  uint64_t pkts_out, bytes_out;   /* released after the delay */
  uint64_t drop_queue;            /* DropTail: backlog would exceed the limit */
  uint64_t drop_loss;             /* random loss */
  uint64_t drop_full;             /* the emulator's own slots ran out: an emulator fault, not the path's */
  uint64_t max_backlog_bytes;
  uint32_t max_backlog_pkts;
  uint64_t stall_lag_ns;          /* how long host stalls froze the link while it held packets (wan_link_stall) */
  uint64_t spaced_max_ns;         /* the most a packet's arrival was put after its read (wan_link_batch) */
  uint64_t late_sum_ns, late_max_ns; /* release lateness, reported by the caller per released packet */
  uint64_t virt_out;              /* of pkts_out, those wan_link_offer_virtual made up (never written) */
};

/* One direction. Packets live in a power-of-two ring of slots the caller owns the payloads of;
 * slot i of the ring is payload slot (i & mask). Three cursors, in order:
 * head (next to release) <= served (first not fully serialised) <= tail (next free). */
/* Random loss draws from one seeded sequence per stream: TCP segments (stream 0) meet the same losses
 * whether or not other traffic (a UDP side probe, stream 1) shares the link, so runs with and without
 * it compare. */
#define WAN_LOSS_STREAMS 2

struct wan_link {
  struct wan_params p;
  struct wan_pkt *ring;
  uint64_t mask;
  uint64_t head, served, tail;
  uint64_t busy_until_ns;  /* when the serialiser finishes the last accepted packet */
  uint64_t backlog_bytes;  /* accepted, not fully serialised (the packet on the wire counts) */
  uint64_t last_arrival_ns; /* arrival given to the last packet offered */
  uint64_t spacing_ns;     /* arrivals of the batch being offered are at least this far apart */
  uint32_t backlog_pkts;
  uint64_t rng[WAN_LOSS_STREAMS];
  struct wan_stats st;
};

enum wan_verdict { WAN_QUEUED, WAN_DROP_LOSS, WAN_DROP_QUEUE, WAN_DROP_FULL };

/* The next n packets offered were read together, span_ns after the device was last drained: they
 * reached it spread over that span, and read at one instant they would leave together (ACKs bunched so
 * make their sender burst: measured, runs whose emulator was descheduled for moments too short to count
 * as stalls read batches of 17-64 ACKs and lost packets on a 10 ms buffer others never overflow). Each
 * gets arrival max(read time, previous arrival + (1 - WAN_BATCH_CATCH_UP)·span/n): never before it was
 * read, so no RTT shortens, and the delay this adds is paid back at WAN_BATCH_CATCH_UP of each gap
 * (within about ten spans). Once caught up, a packet (one a read is the usual case) arrives when it was
 * read. No arrival is put more than WAN_SPACING_MAX_NS after its read. */
void wan_link_batch(struct wan_link *l, uint64_t span_ns, uint32_t n);

/* ring: caller's array of slots (a power of two >= 2) entries. Returns -1 on a bad slot count. */
int wan_link_init(struct wan_link *l, const struct wan_params *p, struct wan_pkt *ring, uint64_t slots);

/* Offers a packet of len bytes of loss stream `stream` read at now (its arrival: see wan_link_batch).
 * On WAN_QUEUED *slot is where its payload goes. */
enum wan_verdict wan_link_offer(struct wan_link *l, uint64_t now_ns, uint32_t len, unsigned stream, uint64_t *slot);

/* Offers a packet of len bytes of cross traffic arriving at at_ns that the link makes up itself: it
 * takes its place in the DropTail queue and on the wire as any other (loss stream 1, as UDP), and the
 * caller writes nothing when it pops (*virt). Not spaced as a read batch: it was never read. Why the
 * emulator makes some up: docs/testbed.md. */
enum wan_verdict wan_link_offer_virtual(struct wan_link *l, uint64_t at_ns, uint32_t len);

/* The emulator was not run for the stall_ns up to now_ns (its host descheduled it). The link is frozen
 * over the stall: every packet it holds is released stall_ns later, spacing kept, and what was still
 * being serialised or queued resumes where it was. Released the moment it runs again, the packets due
 * meanwhile would reach their receivers as one burst, and ACKs arriving together make a window-limited
 * sender burst into the queue; delayed but paid back later (tried: releases lagging, caught up at 1.11x
 * their pace), the path loses the stall's service and the catch-up injects about stall x rate into the
 * queue (measured: 10-20 ms stalls, each followed by a loss of 100-350 segments on a 10 ms buffer that a
 * flow held at A·T does not overflow otherwise, and CUBIC at half rate for ~10 s). Frozen, the flow
 * resumes as it was; only what arrives during the stall (cross traffic from a process that kept
 * running) is extra, and wan_link_batch spreads it. */
void wan_link_stall(struct wan_link *l, uint64_t now_ns, uint64_t stall_ns);

/* How much of a batch's span its arrivals are spread over is 1 - this: the rest pays back the delay. */
#define WAN_BATCH_CATCH_UP 0.1
/* No arrival is put more than this after its read. Spacing is for the sub-ms deschedules that bunch
 * ACKs; a longer hole is a stall, which freezes the link instead. A delay D is paid back at 1.11x the
 * pace, which makes a window-limited sender inject about D x rate into the queue (measured: spacing
 * delays of 9-38 ms after holes the stall test missed, each followed by a loss episode). */
#define WAN_SPACING_MAX_NS 1000000u

/* When the oldest packet is due, or UINT64_MAX when none waits. */
uint64_t wan_link_next_release(const struct wan_link *l);

/* Pops the oldest packet if it is due by now: returns 1, its slot/len and when it was due, else 0.
 * The caller reports the real send time with wan_link_sent (lateness is measured after the write);
 * a made-up packet (*virt 1) has no write, and no lateness to report. */
int wan_link_pop(struct wan_link *l, uint64_t now_ns, uint64_t *slot, uint32_t *len, uint64_t *release_ns,
                 uint32_t *virt);
void wan_link_sent(struct wan_link *l, uint64_t release_ns, uint64_t sent_ns);

/* Bytes accepted and not fully serialised at now (the DropTail backlog). */
uint64_t wan_link_backlog(struct wan_link *l, uint64_t now_ns);

/* Serialisation time of len bytes at the link's rate, in ns (rounded to nearest). */
uint64_t wan_tx_ns(const struct wan_params *p, uint32_t len);

#ifdef __cplusplus
}
#endif
#endif
