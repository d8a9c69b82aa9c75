/* ringw.h — the shim's side of the decision ring: map the user's ring on first use, then write records. */
#ifndef SOBAS_RINGW_H
#define SOBAS_RINGW_H

#include <stddef.h>

#include "sobas/ring.h"

/* Writes one record (payload filled by the caller). Maps the ring at `path_override` (SOBAS_RING) on
 * first use; if that fails the ring is off for the rest of the process. Returns 1 when written, 0 when
 * not (off, or another thread is mapping it right now), -1 the one time mapping fails (err says why). */
int sobas_ringw_write(struct sobas_ring_record *r, const char *path_override, char *err, size_t n);

/* The mapped ring's header, for its path board; NULL until a record was written, or when the ring is off. */
struct sobas_ring_header *sobas_ringw_header(void);

#endif
