/* ring_bench.c — what the decision ring costs: ns per record written (one writer, and two contending) and records per second one reader gets through, against the targets. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sobas/ring.h"

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static struct sobas_ring_map ring;
static uint64_t per_thread;

static void *writer(void *arg) {
  struct sobas_ring_record r;
  memset(&r, 0, sizeof r);
  r.pid = (uint32_t)(uintptr_t)arg;
  strcpy(r.comm, "bench");
  for (uint64_t k = 0; k < per_thread; k++) {
    r.flow_id = k;
    r.rate_bps = k * 3;
    sobas_ring_write(&ring, &r);
  }
  return NULL;
}

static double write_ns(int threads) {
  pthread_t t[8];
  int64_t t0 = now_ns();
  for (int i = 0; i < threads; i++) pthread_create(&t[i], NULL, writer, (void *)(uintptr_t)(i + 1));
  for (int i = 0; i < threads; i++) pthread_join(t[i], NULL);
  return (double)(now_ns() - t0) / (double)per_thread; /* per record, as each writer saw it */
}

int main(int argc, char **argv) {
  per_thread = argc > 1 ? strtoull(argv[1], NULL, 10) : 5000000;
  size_t size = sobas_ring_bytes();
  void *mem = aligned_alloc(4096, size);
  memset(mem, 0, size);
  sobas_ring_init(mem, 0, 0);
  if (sobas_ring_validate(mem, size, &ring)) return 1;
  write_ns(1); /* warm the pages */
  double one = write_ns(1), two = write_ns(2);

  /* Reading: a full ring of complete records, read from the oldest again and again. */
  struct sobas_ring_record out;
  uint64_t read = 0;
  int64_t t0 = now_ns();
  while (read < per_thread) {
    struct sobas_ring_cursor c;
    sobas_ring_cursor_oldest(&ring, &c);
    while (sobas_ring_read(&ring, &c, &out, 1)) read++;
  }
  double rps = (double)read / ((double)(now_ns() - t0) / 1e9);
  printf("ring write, 1 writer:            %6.1f ns/record   (target <= 100)  %s\n", one, one <= 100 ? "ok" : "MISSED");
  printf("ring write, 2 writers contending: %6.1f ns/record   (each; no target: one line of cache bouncing)\n", two);
  printf("ring read, 1 reader:             %6.2f M records/s (target >= 1)    %s\n", rps / 1e6, rps >= 1e6 ? "ok" : "MISSED");
  free(mem);
  return one <= 100 && rps >= 1e6 ? 0 : 1;
}
