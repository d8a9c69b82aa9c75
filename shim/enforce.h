/* enforce.h — the one place that knows the kernel levers: a receiver's advertised window held at S, a sender's rate paced at S/T. */
#ifndef SOBAS_ENFORCE_H
#define SOBAS_ENFORCE_H

#include <stdint.h>

/* What was done to one socket, so the hold can be verified and undone. */
struct sobas_hold {
  uint64_t s;        /* bytes the window is held at; 0 = not held */
  uint64_t rcvbuf;   /* the SO_RCVBUF set (the kernel doubles it); 0 = not set. Set, it locks autotuning
                        out, which can then no longer move the clamp (until a release unlocks it) */
  uint8_t unlocked;   /* a release unlocked that buffer (autotuning grows it again); the next hold locks it */
  uint32_t reapplied; /* times the kernel had moved TCP_WINDOW_CLAMP and we set it again */
  uint64_t pace_Bps;  /* a sender: the SO_MAX_PACING_RATE set now, bytes per second; 0 = not paced */
  uint64_t held_Bps;  /* ... and the rate it holds when no queue is draining */
  uint32_t lowat;     /* a sender: the TCP_NOTSENT_LOWAT set now, bytes; 0 = not set by sobas */
};

/* Holds fd's advertised window at s bytes: SO_RCVBUF (when the host's rmem_max allows a buffer that
 * fits S; a buffer autotuning already grew larger is locked as it is, never shrunk) to stop autotuning
 * from resetting the clamp, then TCP_WINDOW_CLAMP = s. The window offered so far is never withdrawn;
 * it shrinks to s as data is consumed. Returns 0 or -errno. */
int sobas_enforce_hold(int fd, uint64_t s, struct sobas_hold *h);

/* After each measurement window of a held receiving flow: re-applies the clamp if the kernel moved it.
 * Returns 1 when it had to, 0 when it held, -errno on failure. */
int sobas_enforce_verify(int fd, struct sobas_hold *h);

/* S = S_max (a congested path): the clamp opens, a locked buffer goes to the host maximum and is
 * unlocked (SO_BUF_LOCK), so autotuning takes it on from there. */
int sobas_enforce_release(int fd, struct sobas_hold *h);

/* A released flow's window capped at s bytes (TCP_WINDOW_CLAMP alone), a ceiling its sender never reaches:
 * the buffer stays as the release left it, open and unlocked. What it caps is the window autotuning
 * would offer into that buffer (the most it may hold), which a later hold could not withdraw. Verified
 * as a hold is. Returns 0 or -errno. */
int sobas_enforce_ceiling(int fd, uint64_t s, struct sobas_hold *h);

/* A sending socket held for S = s at held_Bps bytes per second, paced now at now_Bps (at most held_Bps:
 * lower while a queue drains) with SO_MAX_PACING_RATE, which also turns on the kernel's own TCP pacing
 * where no fq qdisc paces (docs/kernel-facts.md). Sets the socket only when the pace changes. Returns 0
 * or -errno. */
int sobas_enforce_pace(int fd, uint64_t s, uint64_t held_Bps, uint64_t now_Bps, struct sobas_hold *h);

/* A sending socket's S = S_max: no rate limit (the kernel keeps pacing at its own rate). */
int sobas_enforce_unpace(int fd, struct sobas_hold *h);

/* A sending socket's writer woken whenever fewer than about bytes/2 are left unsent (TCP_NOTSENT_LOWAT
 * = bytes), so that a blocked writer comes back to the shim often enough for its windows to close on
 * time (docs/kernel-facts.md); 0 gives the socket back the host's default. A socket whose mark is set
 * already (by its application) is left alone: -EEXIST. Sets the socket only when the mark changes.
 * Returns 0 or -errno. */
int sobas_enforce_wake(int fd, uint32_t bytes, struct sobas_hold *h);

/* A CUBIC sender's growth curve started again from its cwnd now, by switching the socket to reno and
 * back (the kernel initialises an algorithm it switches to; setting the same one does nothing). Only
 * where this process may set cubic again, tried first on a socket of its own: a switch whose way back
 * is refused would leave the host's flow on reno. Returns 0 when done, 1 when the flow is not CUBIC
 * (left alone), -EPERM when this process may not, or -errno. */
int sobas_enforce_regrow(int fd);

/* Name of the lever used, for the log ("lock+clamp", "clamp" or "pacing"; a ceiling aside, on the buffer a
 * release unlocked, is "clamp"). */
const char *sobas_enforce_lever(const struct sobas_hold *h);

#endif
