/* ringw.c — the shim's side of the decision ring: maps the user's ring on first use and writes records; a ring that cannot be had is given up, once. */
#include "ringw.h"

#include <stdio.h>
#include <unistd.h>

#include "hb.h"
#include "ring_file.h"

enum { UNTRIED, MAPPING, READY, OFF };
static int state; /* atomic */
static struct sobas_ring_map map;

int sobas_ringw_write(struct sobas_ring_record *r, const char *path_override, char *err, size_t n) {
  int s = __atomic_load_n(&state, __ATOMIC_ACQUIRE); /* pairs with the release below: `map` is set */
  SOBAS_HB_ATOMIC(&state);
  if (s == READY) {
    SOBAS_HB_AFTER(&state);
    sobas_ring_write(&map, r);
    return 1;
  }
  int untried = UNTRIED;
  if (s != UNTRIED || !__atomic_compare_exchange_n(&state, &untried, MAPPING, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
    return 0; /* off, or being mapped by another thread: this record is not written */
  char path[512];
  void *base;
  size_t size;
  uint64_t ino;
  if (sobas_ring_path(path, sizeof path, path_override, (unsigned)geteuid()) != 0) {
    snprintf(err, n, "SOBAS_RING=\"%s\" is not a name or an absolute path", path_override);
    __atomic_store_n(&state, OFF, __ATOMIC_RELEASE);
    return -1;
  }
  if (sobas_ring_open(path, 1, &map, &base, &size, &ino, err, n) != 0) {
    __atomic_store_n(&state, OFF, __ATOMIC_RELEASE);
    return -1;
  }
  SOBAS_HB_BEFORE(&state);
  __atomic_store_n(&state, READY, __ATOMIC_RELEASE);
  sobas_ring_write(&map, r);
  return 1;
}

struct sobas_ring_header *sobas_ringw_header(void) {
  if (__atomic_load_n(&state, __ATOMIC_ACQUIRE) != READY) return NULL; /* pairs with the release above */
  SOBAS_HB_AFTER(&state);
  return map.h;
}
