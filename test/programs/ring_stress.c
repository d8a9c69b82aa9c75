/* ring_stress.c — N writer processes × M records against a reader on one ring file; some writers are killed -9 mid-run. No torn record may be accepted, and every ticket must be accounted for. */
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>

#include "common.h"
#include "ring_file.h"

static int64_t mono(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Every payload field is a function of (writer, k): a record mixing two writes cannot pass. */
static void fill(struct sobas_ring_record *r, uint32_t w, uint64_t k) {
  memset(r, 0, sizeof *r);
  r->pid = w;
  r->flow_id = k;
  r->rate_bps = k * 2654435761u + w;
  r->s_bytes = ~r->rate_bps;
  r->bytes_received = k ^ ((uint64_t)w << 40);
  r->rtt_us = (uint32_t)(k * 7 + w);
  snprintf(r->comm, sizeof r->comm, "w%u", w);
}

static int consistent(const struct sobas_ring_record *r) {
  struct sobas_ring_record want;
  fill(&want, r->pid, r->flow_id);
  want.seq = r->seq;
  want.check = r->check;
  return memcmp(&want, r, sizeof want) == 0;
}

int main(int argc, char **argv) {
  if (argc != 5) DIE("usage: ring_stress RING_PATH WRITERS RECORDS_EACH KILL_EVERY_NTH");
  const char *path = argv[1];
  int writers = atoi(argv[2]), kill_nth = atoi(argv[4]);
  uint64_t each = strtoull(argv[3], NULL, 10);
  struct sobas_ring_map m;
  void *base;
  size_t size;
  uint64_t ino;
  char err[640];
  if (sobas_ring_open(path, 1, &m, &base, &size, &ino, err, sizeof err) != 0) DIE("%s", err);
  uint64_t t0 = __atomic_load_n(&m.h->ticket, __ATOMIC_RELAXED);
  pid_t pids[256];
  for (int w = 0; w < writers && w < 256; w++) {
    pids[w] = fork();
    if (pids[w] < 0) DIE("fork: %s", strerror(errno));
    if (pids[w] == 0) {
      struct sobas_ring_record r;
      for (uint64_t k = 0; k < each; k++) {
        fill(&r, (uint32_t)w + 1, k);
        sobas_ring_write(&m, &r);
      }
      _exit(0);
    }
  }
  /* Kill every kill_nth writer a little into the run: some of them die mid-write. */
  struct timespec pause = {0, 2 * 1000 * 1000};
  nanosleep(&pause, NULL);
  int killed = 0;
  for (int w = 0; kill_nth > 0 && w < writers; w += kill_nth, killed++) kill(pids[w], SIGKILL);

  struct sobas_ring_cursor c;
  memset(&c, 0, sizeof c);
  c.next = t0;
  struct sobas_ring_record r;
  uint64_t accepted = 0, bad = 0;
  int alive = writers;
  int64_t quiet_since = 0;
  for (;;) {
    int got = sobas_ring_read(&m, &c, &r, mono());
    if (got) {
      accepted++;
      bad += !consistent(&r);
      quiet_since = 0;
      continue;
    }
    while (alive > 0 && waitpid(-1, NULL, WNOHANG) > 0) alive--;
    uint64_t t = __atomic_load_n(&m.h->ticket, __ATOMIC_ACQUIRE);
    if (alive == 0 && c.next >= t) break;
    /* Writers done: what is still incomplete ages out (SOBAS_RING_STALE_NS) and is counted lost. */
    if (alive == 0 && quiet_since == 0) quiet_since = mono();
    if (quiet_since && mono() - quiet_since > 10LL * SOBAS_RING_STALE_NS) DIE("reader stuck at %llu of %llu", (unsigned long long)c.next, (unsigned long long)t);
  }
  uint64_t tickets = __atomic_load_n(&m.h->ticket, __ATOMIC_RELAXED) - t0;
  printf("writers %d (%d killed), tickets %llu, accepted %llu, lost %llu, torn %llu, writer-dropped %llu, stolen %llu, "
         "inconsistent accepted %llu\n",
         writers, killed, (unsigned long long)tickets, (unsigned long long)accepted, (unsigned long long)c.lost,
         (unsigned long long)c.torn, (unsigned long long)m.h->dropped, (unsigned long long)m.h->stolen,
         (unsigned long long)bad);
  if (bad) DIE("a torn record was accepted");
  if (accepted + c.lost + c.torn != tickets) DIE("accepted + lost + torn != tickets");
  return 0;
}
