/* peer_steers.h — does a sobas receiver steer this sending flow? sobasd's steered-flows table says (sobas/steered.h). */
#ifndef SOBAS_PEER_STEERS_H
#define SOBAS_PEER_STEERS_H

#include <stdint.h>

#include "flowtable.h"

/* 1 when sobasd on this host verified a probe from the flow's receiver within the last second (local: the
 * sender's end, peer: the receiver's); 0 otherwise, also when no sobasd publishes a table here. */
int sobas_peer_steers(const struct sobas_addr *local, const struct sobas_addr *peer, int64_t now_ns);

/* In a fork's child: a look another thread had begun is orphaned; the child may look again. */
void sobas_peer_steers_fork_child(void);

#endif
