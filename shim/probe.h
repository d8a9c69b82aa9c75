/* probe.h — the side-probe client: one helper thread per process probes each bulk receiving flow's sobasd. */
#ifndef SOBAS_PROBE_CLIENT_H
#define SOBAS_PROBE_CLIENT_H

#include <stdint.h>

#include "flowtable.h"
#include "sobas/probe.h"

enum sobas_probe_status {
  SOBAS_PROBE_OFF = 0,     /* no probe for this flow (disabled, or not a steered receiver) */
  SOBAS_PROBE_PENDING = 1, /* probing, no echo yet */
  SOBAS_PROBE_ACTIVE = 2,  /* echoes arrive: RTT and forward loss are the probe's */
  SOBAS_PROBE_NONE = 3,    /* gave up (no sobasd, or it stopped answering): kernel signals only */
};

/* Why a probe gave up (status NONE). */
enum sobas_probe_none {
  SOBAS_NONE_NO_ECHO = 1,   /* nothing came back within the bound: no sobasd there, or it refused us */
  SOBAS_NONE_SILENT = 2,    /* echoes stopped mid-flow: sobasd went away */
  SOBAS_NONE_NO_SOCKET = 3, /* the helper could not open its socket or start */
  SOBAS_NONE_NO_SLOT = 4,   /* too many probed flows in this process */
  SOBAS_NONE_BUSY = 5,      /* not an outcome: open found the helper busy, ask again */
  SOBAS_NONE_FD_LIMIT = 6,  /* the host may open so few files that the helper's sockets would be missed */
};

/* One measurement window's view of a flow's probe, read by the flow's sampler. */
struct sobas_probe_view {
  enum sobas_probe_status status;
  enum sobas_probe_none none_why;
  uint32_t echoes, rtt_avg_us, rtt_max_us, rtt_least_us, rtt_min_us, lost; /* this window (min: ever) */
  uint64_t lost_total, received_total, sent_total;
  uint8_t sender_leads; /* an echo said the flow's sender runs sobas and steers it (sobas/probe.h, LEAD) */
};

/* A TCP flow as the probe's wire and sobasd's steered-flows table name it: rcv the data receiver's end, snd
 * the sender's (IPv4 also when v4-mapped). Returns 0, or -1 when the two ends are of no one family. */
int sobas_probe_flow_of(const struct sobas_addr *rcv, const struct sobas_addr *snd, struct sobas_probe_flow *fl);

/* Starts probing a flow (local/peer: the receiver's TCP ends; mss: its segment size, which sizes the train
 * packets; yields: the flow stands down when an echo says its sender leads, so trains sobasd withholds then
 * are not asked for again; poke_at: the flow's next-check mark, zeroed when C' is in or the probe gives
 * up), starting the helper thread on first use. Returns a handle, or 0 when the flow will not be probed
 * (*why tells the flow's log why). */
uint32_t sobas_probe_open(const struct sobas_addr *local, const struct sobas_addr *peer, uint16_t port,
                          uint32_t mss, int yields, uint64_t *poke_at, enum sobas_probe_none *why);
/* Closes the window: fills *v and keeps the probe going (a flow not read for a second is idle and its
 * probe pauses). Returns -1 for a handle this process no longer knows (after fork): open again; 1 when
 * the helper was busy (nothing read, nothing lost: the next window gets it). Never blocks; `patient`
 * (a flow's last read) naps up to ~2 ms for the helper's turn to end. */
int sobas_probe_read(uint32_t handle, struct sobas_probe_view *v, int patient);
/* 1 once the train measurement is over (C' in *cap_bps, 0 if too few trains came; also when the probe
 * gave up), else 0. */
int sobas_probe_capacity(uint32_t handle, uint64_t *cap_bps, uint32_t *trains);
void sobas_probe_close(uint32_t handle);

/* 1 when fd is one of the helper's own sockets: the host must not see it (close → EBADF, close_range
 * skips it). Cheap: two relaxed loads. */
int sobas_probe_owns_fd(int fd);
/* The helper's fds, ascending, into out; returns how many (0-2). */
int sobas_probe_own_fds(int out[2]);
/* The host wants this number (dup2/dup3 target): the helper's socket moves to another high number. */
void sobas_probe_vacate_fd(int fd);

/* Stops the helper for good: with join = 1 (seccomp is coming) waits until it made its last syscall;
 * with join = 0 (exit) returns at once and the helper detaches itself. */
void sobas_probe_stop(int join);
/* In a forked child: the helper thread did not survive; forget its sockets and flows. */
void sobas_probe_fork_child(void);

const char *sobas_probe_status_name(enum sobas_probe_status s);
const char *sobas_probe_none_name(enum sobas_probe_none w);

#endif
