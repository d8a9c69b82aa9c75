/* flowtable.h — fd-indexed table of what each fd is, and the pool of TCP flow records the fds point at. */
#ifndef SOBAS_FLOWTABLE_H
#define SOBAS_FLOWTABLE_H

#include <stdint.h>

#include "enforce.h"
#include "measure.h"
#include "sobas/engine.h"
#include "sobas/policy.h"
#include "sobas/sample.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What an fd is, as far as the shim knows. 0 must mean "never looked at": unmapped chunks read as 0. */
enum sobas_fd_kind {
  SOBAS_FD_UNKNOWN = 0, /* classify on first use (inherited, or created behind our back) */
  SOBAS_FD_OTHER = 1,   /* file, pipe, UDP, unix...: pass straight through */
  SOBAS_FD_TCP = 2,     /* TCP socket with no flow yet (unconnected, listening) */
  SOBAS_FD_SKIP = 3,    /* TCP flow we chose not to track (loopback) */
  SOBAS_FD_FLOW = 4,    /* tracked flow: the slot names a flow record */
};

/* A slot packs kind (bits 0-7), flags (8-15) and the flow record's address (16-63) in one word, so one
 * atomic load on the read/write path sees a consistent slot and reaches the flow without a second
 * lookup. x86-64 user addresses are below 2^47, so the address shifted by 16 fits. */
typedef uint64_t sobas_slot;
#define SOBAS_SLOT(kind, flags, flow) \
  ((uint64_t)(kind) | ((uint64_t)(flags) << 8) | ((uint64_t)(uintptr_t)(flow) << 16))
static inline unsigned sobas_slot_kind(sobas_slot s) { return (unsigned)(s & 0xff); }
static inline unsigned sobas_slot_flags(sobas_slot s) { return (unsigned)((s >> 8) & 0xff); }
static inline sobas_slot sobas_slot_with_flags(sobas_slot s, unsigned flags) { return s | ((uint64_t)flags << 8); }

/* Slot flags: what the application asked of the socket itself (the enforcement layer must respect it). */
#define SOBAS_FDF_APP_RCVBUF 0x01u
#define SOBAS_FDF_APP_SNDBUF 0x02u
#define SOBAS_FDF_APP_PACING 0x04u /* SO_MAX_PACING_RATE: the application paces the flow itself */
#define SOBAS_FDF_APP_LOWAT 0x08u  /* TCP_NOTSENT_LOWAT: the application chose when its writer wakes */

#define SOBAS_FD_CHUNK_BITS 12
#define SOBAS_FD_CHUNK (1u << SOBAS_FD_CHUNK_BITS)
#define SOBAS_FD_CHUNKS 256 /* fds below 1 048 576 are tracked; higher ones pass through */
#define SOBAS_FD_LIMIT (SOBAS_FD_CHUNK * SOBAS_FD_CHUNKS)

#define SOBAS_FLOW_CHUNK 256
#define SOBAS_FLOW_CHUNKS 256 /* at most 65 536 live flows per process */

struct sobas_addr {
  uint16_t family; /* AF_INET, AF_INET6, 0 = unknown */
  uint16_t port;   /* host order */
  uint8_t addr[16];
};

/* Flow flags, guarded by the flow's `busy` lock. */
#define SOBAS_FLOW_ANNOUNCED 0x01u /* "open" recorded, local address read */
#define SOBAS_FLOW_BULK 0x02u      /* moved bulk_bytes: measured from now on */
#define SOBAS_FLOW_ENGINE 0x04u    /* a flow the SOBAS engine steers */
#define SOBAS_FLOW_PROBED 0x08u    /* the side probe was asked for (it may have given up) */
#define SOBAS_FLOW_CAP_SEEN 0x10u  /* the probe's final capacity estimate went to the engine */
#define SOBAS_FLOW_SENDS 0x20u     /* a sending flow the engine steers by pacing (SOBAS_SENDER) */
#define SOBAS_FLOW_APP_PACED 0x40u /* the application set its own pacing rate: never paced by sobas */
#define SOBAS_FLOW_PEER_STEERS 0x80u /* the other end's sobas steers the flow (the receiver's window holds a sender, or a
                                        sender told sobasd it leads): this end measures only */
#define SOBAS_FLOW_LED_EARLY 0x100u /* a sender's first LEAD, before its receiver could probe, was looked at (sent or not) */
#define SOBAS_FLOW_APP_LOWAT 0x200u /* the application set TCP_NOTSENT_LOWAT: sobas never sets it */
#define SOBAS_FLOW_REGROWN 0x400u   /* a sender's CUBIC was started again after slow start's loss (track.c) */

enum sobas_flow_origin { SOBAS_ORIGIN_CONNECT = 0, SOBAS_ORIGIN_ACCEPT = 1, SOBAS_ORIGIN_INHERITED = 2 };

struct sobas_flow {
  uint32_t used;  /* 0 free, 1 taken (atomic) */
  uint32_t refs;  /* fds naming this flow (atomic) */
  uint32_t busy;  /* sampler try-lock: a thread that finds it taken just skips (atomic) */
  uint64_t id;    /* per-process sequence number, for logs */
  uint64_t inode; /* socket inode when known (inherited fds), merges fds that share one socket */
  uint64_t app[2];     /* bytes the process read [0] and wrote [1] (atomic) */
  uint64_t next_check; /* app[0]+app[1] at which the slow path looks at the clock (atomic) */
  /* Everything below is written only under `busy`. */
  uint32_t flags;
  uint8_t origin;
  struct sobas_addr local, peer;
  int64_t t_open_ns;
  struct sobas_meas meas;
  struct sobas_sample last;
  uint64_t windows;
  uint64_t app_at_window;   /* app bytes when the current window opened */
  uint64_t app_last_window; /* app bytes the last closed window moved: sizes the check stride */
  struct sobas_engine eng;  /* SOBAS's decision state (policy sobas; started for every policy, for its limits) */
  struct sobas_window_policy pol; /* policies bdp, drs and fixed */
  struct sobas_hold hold;   /* what the engine's decisions did to the socket */
  uint32_t base_rtt_us;     /* least RTT seen: the T in S = R·T */
  uint32_t probe;           /* side-probe handle (0: none) */
  uint8_t probe_status;     /* the probe status last logged */
  uint8_t probe_none_why;   /* why it gave up, when it did: sobas-top's "probe: none" */
  /* What the decision ring's records carry besides the sample (full state, never deltas). */
  uint64_t last_rate_bps;   /* the last window's rate in the flow's direction */
  uint32_t last_rtt_us;     /* the RTT the engine last used */
  uint8_t last_why;         /* the last decision's reason */
  uint8_t last_limit;       /* enum sobas_limit of the last window */
  uint64_t cap_bps;         /* the probe's C' */
  uint64_t lost_total;      /* loss signals so far (probe echo gaps, else out-of-order arrivals) */
  int64_t ring_sample_ns;   /* when the last sample record was written */
  uint32_t peer_held;       /* a sender's windows in a row held by the peer's window (track.c, peer_holds) */
  uint32_t peer_wnd_max;    /* the largest peer's window they ended on */
  uint32_t peer_firm;       /* of those, the windows in a row held for most of their time */
  int64_t lead_at_ns;       /* a sender's first LEAD taken by sobasd (0: none): the receiver's window may hold it
                               for LEAD_GRACE_NS after */
  int64_t lead_next_ns;     /* a leading sender tells sobasd again from then, while the receiver still probes */
  uint32_t board_slot;      /* its slot + 1 on the ring's path board (0: none) */
  uint32_t siblings;        /* the last window's count of the user's other flows to the same peer ... */
  uint32_t siblings_searching; /* ... and of those still searching */
  uint8_t lift_cut;          /* the lifted pace was pulled back within the window now open */
};

struct sobas_flowtable {
  sobas_slot *fd_chunks[SOBAS_FD_CHUNKS];             /* atomic pointers, mapped on first store */
  struct sobas_flow *flow_chunks[SOBAS_FLOW_CHUNKS];  /* atomic pointers */
  uint64_t next_id;                                   /* atomic */
};

/* Slot of `fd`; SOBAS_FD_UNKNOWN for fds never stored or out of range. Lock-free. */
static inline sobas_slot sobas_ft_get(const struct sobas_flowtable *t, int fd) {
  if ((unsigned)fd >= SOBAS_FD_LIMIT) return 0;
  sobas_slot *c = __atomic_load_n(&t->fd_chunks[(unsigned)fd >> SOBAS_FD_CHUNK_BITS], __ATOMIC_ACQUIRE);
  return c ? __atomic_load_n(&c[(unsigned)fd & (SOBAS_FD_CHUNK - 1)], __ATOMIC_ACQUIRE) : 0;
}

/* Flow named by a FLOW slot. */
static inline struct sobas_flow *sobas_ft_slot_flow(sobas_slot s) { return (struct sobas_flow *)(uintptr_t)(s >> 16); }

/* Replaces the slot of `fd` and returns the old one. Returns 0 without storing when fd is out of range
 * or its chunk cannot be mapped, and the store is then simply lost: the fd passes through. */
sobas_slot sobas_ft_swap(struct sobas_flowtable *t, int fd, sobas_slot s);
/* Stores `desired` only if the slot still holds `expected`. Returns 1 when stored. */
int sobas_ft_cas(struct sobas_flowtable *t, int fd, sobas_slot expected, sobas_slot desired);

/* Takes a free flow record (zeroed, refs = 1, fresh id). NULL when the pool is exhausted. */
struct sobas_flow *sobas_ft_flow_alloc(struct sobas_flowtable *t);
/* Returns a record to the pool; the caller holds the last reference. */
void sobas_ft_flow_free(struct sobas_flowtable *t, struct sobas_flow *f);
/* A live flow whose socket has this inode, with a reference taken; NULL if none. */
struct sobas_flow *sobas_ft_find_inode(struct sobas_flowtable *t, uint64_t inode);
/* Slot that names flow `f` (with fd flags), taking a reference for the new holder. */
sobas_slot sobas_ft_flow_slot(struct sobas_flow *f, unsigned flags);

/* Calls fn for each fd in [lo, hi] whose slot is not UNKNOWN, after resetting that slot to UNKNOWN.
 * Only mapped chunks are visited, so a close_range over 2^31 fds costs nothing for unused ranges. */
void sobas_ft_take_range(struct sobas_flowtable *t, unsigned lo, unsigned hi,
                         void (*fn)(void *ctx, int fd, sobas_slot old), void *ctx);

/* Unmaps everything (tests; the shim's table lives as long as the process). */
void sobas_ft_destroy(struct sobas_flowtable *t);

#ifdef __cplusplus
}
#endif
#endif
