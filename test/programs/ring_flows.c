/* ring_flows.c — writes N live-looking flows (one sample record each, stamped now) into a ring, for sobas-top's screen tests. */
#include <time.h>

#include "common.h"
#include "ring_file.h"

int main(int argc, char **argv) {
  if (argc != 3) DIE("usage: ring_flows RING_PATH N");
  struct sobas_ring_map m;
  void *base;
  size_t size;
  uint64_t ino;
  char err[640];
  if (sobas_ring_open(argv[1], 1, &m, &base, &size, &ino, err, sizeof err) != 0) DIE("%s", err);
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  for (int i = 1, n = atoi(argv[2]); i <= n; i++) {
    struct sobas_ring_record r;
    memset(&r, 0, sizeof r);
    r.t_ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
    r.pid = 70000 + (uint32_t)i;
    r.flow_id = 1;
    snprintf(r.comm, sizeof r.comm, "flow%02d", i);
    r.event = SOBAS_EV_SAMPLE;
    r.family = 4;
    r.role = 1;
    r.state = 5;
    r.rate_bps = (uint64_t)i * 1000000; /* sorted by rate, flow01 is last */
    r.rtt_us = 40000;
    r.laddr[0] = 10, r.raddr[0] = 10, r.raddr[3] = (uint8_t)i;
    r.lport = 40000, r.rport = 80;
    sobas_ring_write(&m, &r);
  }
  return 0;
}
