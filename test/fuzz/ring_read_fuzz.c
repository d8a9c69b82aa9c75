/* ring_read_fuzz.c — libFuzzer target: arbitrary bytes as a ring file, through the reader's validation and a full read (no crash, no out-of-bounds read, always terminates). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sobas/ring.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* A copy in its own allocation, aligned like a mapping: ASan sees any read past the "file". */
  void *mem = NULL;
  if (size < sizeof(uint64_t) || posix_memalign(&mem, 4096, size) != 0) return 0;
  memcpy(mem, data, size);
  struct sobas_ring_map m;
  if (sobas_ring_validate(mem, size, &m) == NULL) {
    struct sobas_ring_cursor c;
    sobas_ring_cursor_oldest(&m, &c);
    struct sobas_ring_record r;
    int64_t now = 1;
    /* Incomplete records age out as the clock moves: the loop must end within capacity + 1 steps. */
    for (uint32_t i = 0; i <= m.capacity + 1; i++, now += SOBAS_RING_STALE_NS) sobas_ring_read(&m, &c, &r, now);
  }
  free(mem);
  return 0;
}
