/* clock.h — the one monotonic clock the shim uses (vDSO, so no syscall on the fast path). */
#ifndef SOBAS_CLOCK_H
#define SOBAS_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline int64_t sobas_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

#endif
