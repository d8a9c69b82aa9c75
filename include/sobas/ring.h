/* sobas/ring.h — the shared-memory decision ring's ABI (one per user in /dev/shm): a header page and fixed-size seqlocked records, plain C for the shim and sobas-top alike. */
#ifndef SOBAS_RING_H
#define SOBAS_RING_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SOBAS_RING_MAGIC 0x31474e5253424f53ull /* "SOBSRNG1", little-endian */
#define SOBAS_RING_ABI_MAJOR 1                 /* a reader refuses another major */
#define SOBAS_RING_ABI_MINOR 8                 /* fields or values added in a minor keep the record size; 1: lever 4; 2: why 13-16, limit, policy; 3: why 8 again; 4: why 17; 5: the path board; 6: why 18; 7: why 19; 8: why 20 */
#define SOBAS_RING_HEADER_SIZE 4096
#define SOBAS_RING_RECORD_SIZE 256
#define SOBAS_RING_CAPACITY 8192               /* records: 2 MiB, a power of two */

/* One steered flow on the path board (minor 5): the user's flows, by path, so that flows of one host to
 * one peer know one another, whatever process they are in (nginx's workers): a queue that a sibling
 * still searching keeps is not a competitor's. Written by its flow only, read by the user's other
 * flows, every field accessed atomically; a slot read while it changes owner misleads one window. */
struct sobas_ring_board_slot {
  uint64_t owner;    /* pid << 32 | the flow's id in its process (low 32 bits); 0: free */
  uint64_t path;     /* a hash of the peer's address family and address, never 0 */
  int64_t seen_ns;   /* CLOCK_MONOTONIC of the flow's last window */
  uint32_t reserved; /* zero */
  uint32_t searching; /* 1: still looking for the path's rate (sobas_engine_searching) */
};
#define SOBAS_RING_BOARD_SLOTS 96
#define SOBAS_RING_BOARD_OFFSET 192
#define SOBAS_RING_BOARD_FRESH_NS 2000000000 /* a flow not seen for this long is gone: its slot is free */

/* The header page. The write ticket and the writers' counters sit on cache lines of their own: every
 * writer touches them, readers only read. */
struct sobas_ring_header {
  uint64_t magic;
  uint16_t abi_major, abi_minor;
  uint32_t header_size;  /* SOBAS_RING_HEADER_SIZE */
  uint32_t record_size;  /* SOBAS_RING_RECORD_SIZE */
  uint32_t capacity;     /* records, a power of two */
  int64_t created_ns;    /* CLOCK_REALTIME */
  uint32_t owner_uid;
  uint32_t reserved0;
  uint8_t pad0[64 - 40];
  uint64_t ticket;       /* atomic: the next record number; record n lives in slot n % capacity */
  uint8_t pad1[64 - 8];
  uint64_t dropped;      /* atomic: records a writer gave up because its slot was still being written */
  uint64_t stolen;       /* atomic: slots taken from a writer two laps late (presumed dead mid-write) */
  uint8_t pad2[SOBAS_RING_BOARD_OFFSET - 144];
  struct sobas_ring_board_slot board[SOBAS_RING_BOARD_SLOTS]; /* minor 5; zero in a ring an older shim made */
  uint8_t pad3[SOBAS_RING_HEADER_SIZE - SOBAS_RING_BOARD_OFFSET - SOBAS_RING_BOARD_SLOTS * 32];
};

/* What a record reports. */
enum sobas_ring_event {
  SOBAS_EV_OPEN = 1,     /* a flow became bulk */
  SOBAS_EV_SAMPLE = 2,   /* a measurement window (at most one every SOBAS_RING_SAMPLE_MS per flow) */
  SOBAS_EV_DECISION = 3, /* the engine acted */
  SOBAS_EV_CLOSE = 4,    /* the flow ended */
};
#define SOBAS_RING_SAMPLE_MS 500

/* One record: full flow state, never a delta, so a reader that lost records heals at the next one.
 * `seq` is the seqlock: 2n+1 while record n is being written, 2n+2 once complete; `check` is a hash
 * of the record number and the payload, so a record two writers scribbled on is never accepted. */
struct sobas_ring_record {
  uint64_t seq;
  uint64_t check;
  /* payload: everything below */
  int64_t t_ns;             /* CLOCK_REALTIME when written */
  uint32_t pid;
  uint32_t uid;
  uint64_t flow_id;         /* per process */
  char comm[16];            /* the program's name, NUL-padded */
  uint8_t event;            /* enum sobas_ring_event */
  uint8_t family;           /* 4 or 6 */
  uint8_t role;             /* enum sobas_role */
  uint8_t state;            /* enum sobas_state, 0 before the engine started */
  uint8_t why;              /* enum sobas_reason of the last decision (minor 2: 13 peer-window, 14-16 the policies fixed, bdp, drs; minor 4: 17 peer-probe; minor 6: 18 ceiling; minor 7: 19 peer-sender; minor 8: 20 outgrown) */
  uint8_t probe;            /* enum sobas_probe_status: 0 off, 1 pending, 2 active, 3 none */
  uint8_t probe_why;        /* why the probe gave up (3) */
  uint8_t lever;            /* 0 none, 1 clamp, 2 lock+clamp, 3 released, 4 pacing (a sender; minor 1) */
  uint16_t lport, rport;
  uint8_t laddr[16], raddr[16]; /* IPv4 in the first 4 bytes */
  uint8_t limit;            /* enum sobas_limit: what held the flow back in its last window (minor 2; 0 before) */
  uint8_t policy;           /* enum sobas_policy of the writer (minor 2; 0, sobas, before) */
  uint8_t reserved1[2];
  uint64_t rate_bps;        /* the last window's receive (receiver) or send (sender) rate */
  uint64_t s_bytes;         /* the window cap S, 0 = none */
  uint64_t bytes_received;  /* tcpi_bytes_received */
  uint64_t bytes_acked;     /* tcpi_bytes_acked */
  uint64_t app_bytes;       /* bytes the process read + wrote on it */
  uint64_t cap_bps;         /* the probe's C', 0 = none */
  uint32_t rtt_us;          /* RTT now (probe mean, else the kernel's) */
  uint32_t base_rtt_us;     /* T in S = R·T */
  uint32_t rcv_wnd;         /* the window the kernel advertises */
  uint32_t retrans;         /* tcpi_total_retrans */
  uint32_t lost;            /* loss signals so far: out-of-order arrivals, or the probe's echo gaps */
  uint32_t age_ms;          /* since the flow opened */
  uint8_t pad[SOBAS_RING_RECORD_SIZE - 176];
};

/* The payload the check covers: bytes [16, 176) of a record (the pad after it is reserved, zero). */
#define SOBAS_RING_PAYLOAD_OFFSET 16
#define SOBAS_RING_PAYLOAD_END 176

/* The hash in `check`: the record number and the payload's 64-bit words, multiplied and rotated. */
uint64_t sobas_ring_check(const struct sobas_ring_record *r, uint64_t n);

/* A mapped ring, with the capacity it had when it was validated: the header is shared memory that
 * any process of the user can scribble on, so no index is ever computed from it afterwards. */
struct sobas_ring_map {
  struct sobas_ring_header *h;
  uint32_t capacity;
};

/* Writes one record into a mapped ring (the payload of *r; seq and check are filled here). Lock-free,
 * never waits: gives the record up (counted in `dropped`) when its slot is being written. */
void sobas_ring_write(const struct sobas_ring_map *m, struct sobas_ring_record *r);

/* A reader's private position. */
struct sobas_ring_cursor {
  uint64_t next;    /* record number to read next */
  uint64_t lost;    /* records overwritten before this reader got to them, or never completed */
  uint64_t torn;    /* records that changed under the copy or failed their check */
  int64_t pending_since; /* when `next` was first found incomplete (0: it was not) */
};

/* Starts a cursor at the oldest record still in the ring. */
void sobas_ring_cursor_oldest(const struct sobas_ring_map *m, struct sobas_ring_cursor *c);

/* Copies the next complete record into *out: 1 when one was read, 0 when there is nothing (more) to
 * read now. A record still incomplete SOBAS_RING_STALE_NS after the cursor first met it is skipped as
 * lost: its writer died mid-write or gave it up. now_ns: any monotonic clock. */
#define SOBAS_RING_STALE_NS 100000000
int sobas_ring_read(const struct sobas_ring_map *m, struct sobas_ring_cursor *c, struct sobas_ring_record *out,
                    int64_t now_ns);

/* Checks a mapping of `size` bytes is a ring this build can read and fills *m; returns NULL, or what is
 * wrong. */
const char *sobas_ring_validate(struct sobas_ring_header *h, size_t size, struct sobas_ring_map *m);
/* Fills a fresh header (the creator, before the ring is published). */
void sobas_ring_init(struct sobas_ring_header *h, uint32_t uid, int64_t now_ns);
/* Reports one window of a steered flow on the path board and counts its siblings: the other flows on
 * `path` seen within SOBAS_RING_BOARD_FRESH_NS of now_ns (CLOCK_MONOTONIC). *slot: the flow's slot + 1
 * from its last report (0: none yet; kept or replaced here; 0 again when the board is full). Returns
 * how many siblings there are; *searching gets how many of them are searching. */
uint32_t sobas_ring_board_report(struct sobas_ring_header *h, uint64_t owner, uint64_t path, uint32_t searching,
                                 int64_t now_ns, uint32_t *slot, uint32_t *siblings_searching);
/* The flow is gone: frees its slot, if it still holds it. */
void sobas_ring_board_leave(struct sobas_ring_header *h, uint64_t owner, uint32_t slot);
/* The board's key of a peer address (family, then 16 address bytes): never 0. */
uint64_t sobas_ring_board_path(uint16_t family, const uint8_t addr[16]);

/* Bytes a ring of the default capacity maps. */
size_t sobas_ring_bytes(void);

#ifdef __cplusplus
}
#endif
#endif
