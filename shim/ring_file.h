/* ring_file.h — placing and opening the decision ring file (shared by the shim's writer and sobas-top). */
#ifndef SOBAS_RING_FILE_H
#define SOBAS_RING_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "sobas/ring.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The ring's path: `override` (SOBAS_RING / --ring) as an absolute path or a bare name in /dev/shm,
 * else /dev/shm/sobas-UID.ring. Returns -1 for a relative path with a slash, or one too long. */
int sobas_ring_path(char *out, size_t n, const char *override, unsigned uid);

/* Maps the ring at `path`: read-write for a writer (created atomically, mode 0600, if missing),
 * read-only otherwise. Refuses a symbolic link, another user's file, one others can read or write,
 * and a corrupt or foreign ring. The fd is closed before returning. On success fills *m, the mapping
 * (*base, *size) and the file's inode (a reader notices a ring recreated under it); on failure
 * returns -1 and says why in err. */
int sobas_ring_open(const char *path, int writer, struct sobas_ring_map *m, void **base, size_t *size, uint64_t *ino,
                    char *err, size_t n);

/* As sobas_ring_open for a reader, of a ring that must belong to `owner`: a root monitor reading every
 * user's ring (sobas-top --all-users). The other checks are the same. */
int sobas_ring_open_of(const char *path, unsigned owner, struct sobas_ring_map *m, void **base, size_t *size,
                       uint64_t *ino, char *err, size_t n);

#ifdef __cplusplus
}
#endif
#endif
