/* sobas/steered.h — the table of TCP flows a sobas receiver steers, which sobasd publishes on the sending host and a preloaded sender reads to leave them alone. */
#ifndef SOBAS_STEERED_H
#define SOBAS_STEERED_H

#include <stdint.h>

#include "sobas/probe.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Why: with both ends preloaded, exactly one end steers a flow, the receiver (docs/design.md). A sender
 * sees that only when its peer's window holds it, and beside a competitor the share holds it first: it
 * decided on that share and paced it for 1.4-3.7 s before its own rules let go. The receiver's probe
 * reaches sobasd on the sender's host for that flow's 4-tuple, and sobasd verifies the connection, so
 * sobasd can tell the sender's shim at once.
 *
 * One file per network namespace, /dev/shm/sobasd.steered.<inode of /proc/self/ns/net>: the 4-tuples
 * are that namespace's. sobasd (the one writer) creates it 0644, maps it shared and updates a slot per
 * verified probe, at most every SOBAS_STEERED_REFRESH_NS; a preloaded sender maps it read-only. Open
 * addressing: a flow lives in one of SOBAS_STEERED_PROBES slots from its hash, and a slot not refreshed
 * for SOBAS_STEERED_FRESH_NS is free again. Each slot is a seqlock: `seq` odd while sobasd writes it. */
#define SOBAS_STEERED_DIR "/dev/shm"
#define SOBAS_STEERED_PREFIX "sobasd.steered."
#define SOBAS_STEERED_MAGIC 0x53425354u /* "SBST" */
#define SOBAS_STEERED_VERSION 1
#define SOBAS_STEERED_SLOTS 4096
#define SOBAS_STEERED_PROBES 16
#define SOBAS_STEERED_FRESH_NS 1000000000LL /* the probe sends every 10 ms: 1 s without one, it has stopped */
#define SOBAS_STEERED_REFRESH_NS 100000000LL

struct sobas_steered_slot {
  uint32_t seq;
  uint8_t family; /* 4 or 6; 0 never used */
  uint8_t pad[3];
  uint16_t snd_port, rcv_port; /* host order */
  uint8_t snd_addr[16], rcv_addr[16];
  int64_t seen_ns; /* CLOCK_MONOTONIC of the last verified probe */
};

struct sobas_steered_table {
  uint32_t magic;
  uint16_t version;
  uint16_t slot_size; /* sizeof(struct sobas_steered_slot) */
  uint32_t slots;     /* SOBAS_STEERED_SLOTS */
  uint32_t pad;
  struct sobas_steered_slot slot[SOBAS_STEERED_SLOTS];
};

/* Fills a fresh table's header (the mapping is zeroed). */
void sobas_steered_init(struct sobas_steered_table *t);

/* Whether a mapped table is one this build reads. */
int sobas_steered_valid(const struct sobas_steered_table *t);

/* The writer: marks the flow seen at now_ns. Returns 0, or -1 when its slots are all taken by fresh
 * flows. Slots are rewritten at most every SOBAS_STEERED_REFRESH_NS per flow. */
int sobas_steered_put(struct sobas_steered_table *t, const struct sobas_probe_flow *f, int64_t now_ns);

/* A reader: 1 when the flow was seen within SOBAS_STEERED_FRESH_NS of now_ns, else 0. Lock-free: a slot
 * read while sobasd rewrites it is read again (a few times, then taken as not seen). */
int sobas_steered_has(const struct sobas_steered_table *t, const struct sobas_probe_flow *f, int64_t now_ns);

#ifdef __cplusplus
}
#endif
#endif
