/* peer_steers.h — does a sobas receiver probe this sending flow? sobasd's steered-flows table says (sobas/steered.h); and the sender's word back to sobasd that it steers the flow. */
#ifndef SOBAS_PEER_STEERS_H
#define SOBAS_PEER_STEERS_H

#include <stdint.h>

#include "flowtable.h"

/* 1 when sobasd on this host verified a probe from the flow's receiver within the last second (local: the
 * sender's end, peer: the receiver's); 0 otherwise, also when no sobasd publishes a table here. */
int sobas_peer_steers(const struct sobas_addr *local, const struct sobas_addr *peer, int64_t now_ns);

/* Tells this host's sobasd that this sender steers the flow (sobas/probe.h, LEAD), so that its echoes stand
 * the receiver's sobas down. Returns 0 when sobasd took the datagram, -1 when no sobasd here listens for
 * it (none, or one from before LEAD): then the receiver steers. Keeps errno. */
int sobas_peer_lead(const struct sobas_addr *local, const struct sobas_addr *peer);

/* 1 when a sobasd publishes its steered-flows table here (looked for at most once a second): a LEAD
 * has someone to go to. */
int sobas_peer_sobasd_here(int64_t now_ns);

/* In a fork's child: a look another thread had begun is orphaned; the child may look again. */
void sobas_peer_steers_fork_child(void);

#endif
