/* link.c — the emulated tight link: pure arithmetic on timestamps, unit tested on synthetic streams. */
#include "link.h"

uint64_t wan_tx_ns(const struct wan_params *p, uint32_t len) {
  if (p->rate_bps == 0) return 0;
  /* 128-bit intermediate: 8e9·len overflows nothing at MTU sizes, but keep it exact for any len. */
  unsigned __int128 bits_ns = (unsigned __int128)len * 8u * 1000000000u;
  return (uint64_t)((bits_ns + p->rate_bps / 2) / p->rate_bps);
}

int wan_link_init(struct wan_link *l, const struct wan_params *p, struct wan_pkt *ring, uint64_t slots) {
  if (slots < 2 || (slots & (slots - 1)) != 0) return -1;
  *l = (struct wan_link){.p = *p, .ring = ring, .mask = slots - 1};
  /* xorshift64* must not start at 0. */
  for (unsigned i = 0; i < WAN_LOSS_STREAMS; i++) l->rng[i] = (p->seed ? p->seed : 0x9e3779b97f4a7c15ull) + i * 0x632be59bd9b4e019ull;
  return 0;
}

static double uniform01(uint64_t *s) {
  uint64_t x = *s;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *s = x;
  return (double)((x * 0x2545f4914f6cdd1dull) >> 11) * 0x1.0p-53;
}

/* Packets whose serialisation has ended by now leave the backlog (they are only delayed now). */
static void advance_served(struct wan_link *l, uint64_t now_ns) {
  while (l->served != l->tail && l->ring[l->served & l->mask].tx_end_ns <= now_ns) {
    l->backlog_bytes -= l->ring[l->served & l->mask].len;
    l->backlog_pkts--;
    l->served++;
  }
}

void wan_link_batch(struct wan_link *l, uint64_t span_ns, uint32_t n) {
  l->spacing_ns = n ? (uint64_t)((double)span_ns / n * (1.0 - WAN_BATCH_CATCH_UP)) : 0;
}

/* The DropTail queue and the serialiser, for a packet arriving at now_ns. */
static enum wan_verdict enqueue(struct wan_link *l, uint64_t now_ns, uint32_t len, unsigned stream, uint32_t virt,
                                uint64_t *slot) {
  l->st.pkts_in++;
  l->st.bytes_in += len;
  if (l->p.loss > 0 && uniform01(&l->rng[stream % WAN_LOSS_STREAMS]) < l->p.loss) {
    l->st.drop_loss++;
    return WAN_DROP_LOSS;
  }
  advance_served(l, now_ns);
  if ((l->p.limit_bytes && l->backlog_bytes + len > l->p.limit_bytes) ||
      (l->p.limit_pkts && l->backlog_pkts + 1 > l->p.limit_pkts)) {
    l->st.drop_queue++;
    return WAN_DROP_QUEUE;
  }
  if (l->tail - l->head > l->mask) {
    l->st.drop_full++;
    return WAN_DROP_FULL;
  }
  uint64_t start = l->busy_until_ns > now_ns ? l->busy_until_ns : now_ns;
  struct wan_pkt *pk = &l->ring[l->tail & l->mask];
  pk->len = len;
  pk->virt = virt;
  pk->tx_end_ns = start + wan_tx_ns(&l->p, len);
  pk->release_ns = pk->tx_end_ns + l->p.delay_ns;
  l->busy_until_ns = pk->tx_end_ns;
  *slot = l->tail & l->mask;
  l->tail++;
  l->backlog_bytes += len;
  l->backlog_pkts++;
  /* A packet serialised instantly (rate 0) is never part of the backlog. */
  advance_served(l, now_ns);
  if (l->backlog_bytes > l->st.max_backlog_bytes) l->st.max_backlog_bytes = l->backlog_bytes;
  if (l->backlog_pkts > l->st.max_backlog_pkts) l->st.max_backlog_pkts = l->backlog_pkts;
  return WAN_QUEUED;
}

enum wan_verdict wan_link_offer(struct wan_link *l, uint64_t now_ns, uint32_t len, unsigned stream, uint64_t *slot) {
  if (l->last_arrival_ns && l->last_arrival_ns + l->spacing_ns > now_ns) {
    uint64_t at = l->last_arrival_ns + l->spacing_ns;
    if (at > now_ns + WAN_SPACING_MAX_NS) at = now_ns + WAN_SPACING_MAX_NS;
    if (at - now_ns > l->st.spaced_max_ns) l->st.spaced_max_ns = at - now_ns;
    now_ns = at;
  }
  l->last_arrival_ns = now_ns;
  return enqueue(l, now_ns, len, stream, 0, slot);
}

enum wan_verdict wan_link_offer_virtual(struct wan_link *l, uint64_t at_ns, uint32_t len) {
  uint64_t slot;
  return enqueue(l, at_ns, len, 1, 1, &slot);
}

void wan_link_stall(struct wan_link *l, uint64_t now_ns, uint64_t stall_ns) {
  uint64_t from = now_ns > stall_ns ? now_ns - stall_ns : 0;
  if (l->head == l->tail && l->busy_until_ns <= from) return; /* idle throughout: nothing to freeze */
  /* Everything still ahead of each packet at the stall's start (its release; the serialisation of
   * those not yet served) now lies stall_ns later. Served packets only wait for release. */
  for (uint64_t i = l->head; i != l->tail; i++) {
    struct wan_pkt *pk = &l->ring[i & l->mask];
    pk->release_ns += stall_ns;
    if (pk->tx_end_ns > from) pk->tx_end_ns += stall_ns;
  }
  if (l->busy_until_ns > from) l->busy_until_ns += stall_ns;
  l->st.stall_lag_ns += stall_ns;
}

uint64_t wan_link_next_release(const struct wan_link *l) {
  return l->head == l->tail ? UINT64_MAX : l->ring[l->head & l->mask].release_ns;
}

int wan_link_pop(struct wan_link *l, uint64_t now_ns, uint64_t *slot, uint32_t *len, uint64_t *release_ns,
                 uint32_t *virt) {
  if (l->head == l->tail) return 0;
  struct wan_pkt *pk = &l->ring[l->head & l->mask];
  if (pk->release_ns > now_ns) return 0;
  /* Release implies serialised (release >= tx_end), so served is never behind head. */
  advance_served(l, now_ns);
  *slot = l->head & l->mask;
  *len = pk->len;
  *release_ns = pk->release_ns;
  *virt = pk->virt;
  l->head++;
  l->st.pkts_out++;
  l->st.virt_out += pk->virt;
  l->st.bytes_out += pk->len;
  return 1;
}

void wan_link_sent(struct wan_link *l, uint64_t release_ns, uint64_t sent_ns) {
  uint64_t late = sent_ns > release_ns ? sent_ns - release_ns : 0;
  l->st.late_sum_ns += late;
  if (late > l->st.late_max_ns) l->st.late_max_ns = late;
}

uint64_t wan_link_backlog(struct wan_link *l, uint64_t now_ns) {
  advance_served(l, now_ns);
  return l->backlog_bytes;
}
