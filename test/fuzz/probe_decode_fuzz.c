/* probe_decode_fuzz.c — libFuzzer target: the side probe's decoder on arbitrary datagrams (bounded reads, and what it accepts re-encodes byte for byte). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sobas/probe.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct sobas_probe_msg m;
  if (sobas_probe_decode(data, size, &m) != SOBAS_PROBE_OK) return 0;
  uint8_t again[SOBAS_TRAIN_MAX_SIZE];
  int n = sobas_probe_encode(&m, again, sizeof again);
  /* Accepted means canonical: nothing in the datagram went unchecked. */
  if (n < 0 || (size_t)n != size || memcmp(again, data, size) != 0) abort();
  return 0;
}
