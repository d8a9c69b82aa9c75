/* wanemu.c — the WAN path emulator: forwards IP packets between two TUN devices through wan_link. */
#include <errno.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include <getopt.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "link.h"
#include "tool.h"

#define SLOT_BYTES 2048u /* payload room per packet: the TUN MTU must stay below it */
#define READ_BATCH 64    /* reads per device per loop turn, so releases are never starved */

struct dir {
  const char *name;  /* "fwd" (a→b) or "rev" (b→a) */
  int in_fd, out_fd;
  struct wan_link link;
  unsigned char *payload;
  uint64_t write_errors, oversize;
  uint64_t watch_bytes_out; /* IP bytes released towards --watch ADDR: one flow's share of the link */
  uint64_t watch_drops;     /* packets towards --watch ADDR the link dropped (DropTail or random loss) */
  uint64_t last_read_ns;    /* when the device was last read (drained, or READ_BATCH taken) */
};

static uint32_t watch_addr; /* IPv4, network order; 0 = off */

static int is_watched(const unsigned char *pkt, size_t len) {
  return watch_addr && len >= 20 && (pkt[0] >> 4) == 4 && !memcmp(pkt + 16, &watch_addr, 4);
}

/* SIGUSR1: write the report now and keep going (a caller snapshots counters around a phase). */
static volatile sig_atomic_t dump_requested;
static void on_dump(int sig) { (void)sig; dump_requested = 1; }

/* The namespaces we attached in. A TUN fd keeps its namespace alive after `ip netns delete`,
 * invisibly; so when a namespace's name disappears, wanemu reports and exits instead. */
struct ns_ref {
  char path[300];
  dev_t dev;
  ino_t ino;
};
static struct ns_ref ns_refs[2];
static int n_ns_refs;

static int namespaces_gone(void) {
  for (int i = 0; i < n_ns_refs; i++) {
    struct stat st;
    if (stat(ns_refs[i].path, &st) != 0 || st.st_dev != ns_refs[i].dev || st.st_ino != ns_refs[i].ino) {
      fprintf(stderr, "wanemu: %s is gone; stopping\n", ns_refs[i].path);
      return 1;
    }
  }
  return 0;
}


static void die(const char *what) {
  fprintf(stderr, "wanemu: %s: %s\n", what, strerror(errno));
  exit(1);
}

/* Attaches to TUN device DEV inside network namespace NS ("NS:DEV"); the fd keeps working after we
 * leave the namespace, so one process can sit between two of them. */
static int open_tun(const char *spec, int home_ns) {
  char ns[256], path[300];
  const char *colon = strchr(spec, ':');
  if (!colon || colon == spec || (size_t)(colon - spec) >= sizeof ns || strlen(colon + 1) >= IFNAMSIZ) {
    fprintf(stderr, "wanemu: bad device '%s' (want NAMESPACE:DEVICE)\n", spec);
    exit(2);
  }
  memcpy(ns, spec, (size_t)(colon - spec));
  ns[colon - spec] = 0;
  snprintf(path, sizeof path, "/run/netns/%s", ns);
  int nsfd = open(path, O_RDONLY | O_CLOEXEC);
  if (nsfd < 0) die(path);
  if (setns(nsfd, CLONE_NEWNET) < 0) die("setns");
  struct stat st;
  if (fstat(nsfd, &st) == 0 && n_ns_refs < 2) {
    snprintf(ns_refs[n_ns_refs].path, sizeof ns_refs[n_ns_refs].path, "%s", path);
    ns_refs[n_ns_refs].dev = st.st_dev;
    ns_refs[n_ns_refs].ino = st.st_ino;
    n_ns_refs++;
  }
  close(nsfd);
  int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) die("/dev/net/tun");
  struct ifreq ifr = {0};
  ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
  strcpy(ifr.ifr_name, colon + 1);
  if (ioctl(fd, TUNSETIFF, &ifr) < 0) die(spec);
  /* Back home: a process left inside a testbed namespace is killed with it, before it can report. */
  if (setns(home_ns, CLONE_NEWNET) < 0) die("setns back");
  return fd;
}

/* Ring size: enough slots for a full queue plus a full delay line of mid-sized packets; the rest is
 * counted as drop_full, which makes the run invalid rather than silently wrong. */
static uint64_t pick_slots(const struct wan_params *p) {
  uint64_t limit = p->limit_bytes ? p->limit_bytes : (uint64_t)(p->limit_pkts ? p->limit_pkts : 10000) * 1500;
  uint64_t in_delay = p->rate_bps ? p->rate_bps / 8 * p->delay_ns / 1000000000u : 125000000u / 100;
  uint64_t want = 2 * (limit + in_delay) / 500 + 4096, slots = 4096;
  while (slots < want && slots < (1u << 20)) slots <<= 1;
  return slots;
}

static void dir_setup(struct dir *d, const char *name, int in_fd, int out_fd, const struct wan_params *p,
                      uint64_t slots) {
  d->name = name;
  d->in_fd = in_fd;
  d->out_fd = out_fd;
  struct wan_pkt *ring = mmap(NULL, slots * sizeof *ring, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  d->payload = mmap(NULL, slots * SLOT_BYTES, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (ring == MAP_FAILED || d->payload == MAP_FAILED) die("mmap");
  wan_link_init(&d->link, p, ring, slots);
}

/* TCP (IPv4 protocol 6, IPv6 next header 6) is loss stream 0, everything else stream 1. */
static unsigned loss_stream(const unsigned char *pkt, size_t len) {
  if (len >= 20 && (pkt[0] >> 4) == 4) return pkt[9] == 6 ? 0 : 1;
  if (len >= 40 && (pkt[0] >> 4) == 6) return pkt[6] == 6 ? 0 : 1;
  return 1;
}

/* Reads what waits on the device, up to READ_BATCH packets, and offers it to the link as one batch. */
static int read_batch(struct dir *d) {
  static unsigned char buf[READ_BATCH][SLOT_BYTES + 1]; /* one byte more: an oversize packet shows */
  static ssize_t len[READ_BATCH];
  int n = 0;
  while (n < READ_BATCH) {
    ssize_t r = read(d->in_fd, buf[n], SLOT_BYTES + 1);
    if (r < 0 && errno != EAGAIN && errno != EINTR) {
      /* The device went away (its namespace was deleted): nothing left to emulate. */
      fprintf(stderr, "wanemu: %s input: %s; stopping\n", d->name, strerror(errno));
      wan_stop = 1;
    }
    if (r <= 0) break; /* EAGAIN: drained */
    if ((size_t)r > SLOT_BYTES) {
      d->oversize++;
      continue;
    }
    len[n++] = r;
  }
  uint64_t now = wan_now_ns();
  if (n) wan_link_batch(&d->link, d->last_read_ns ? now - d->last_read_ns : 0, (uint32_t)n);
  d->last_read_ns = now;
  for (int i = 0; i < n; i++) {
    uint64_t slot;
    enum wan_verdict v = wan_link_offer(&d->link, now, (uint32_t)len[i], loss_stream(buf[i], (size_t)len[i]), &slot);
    if (v == WAN_QUEUED)
      memcpy(d->payload + slot * SLOT_BYTES, buf[i], (size_t)len[i]);
    else if (v != WAN_DROP_FULL && is_watched(buf[i], (size_t)len[i]))
      d->watch_drops++;
  }
  return n;
}

/* A stall: a release overdue by more than STALL_NS: the host did not run us (measured on the 2-core
 * VM: 1-40 ms, several a minute under a transfer, with steal time; nice -20 and SCHED_FIFO do not
 * remove them, and FIFO at 1 Gb/s made the mean release lateness 5-30x worse). The link is then
 * frozen over the stall (wan_link_stall) instead of releasing what was due meanwhile at once: a burst
 * of ACKs would make their sender burst into the queue. Spreading the late *arrivals* back over the
 * stall was tried earlier: it made RTT samples shorter than the path's. Stalls are counted and logged,
 * and how long they froze the link reported. */
#define STALL_NS 1000000u
static uint64_t stalls, stall_max_ns;
static FILE *stall_log;

static void release_one(struct dir *d, uint64_t now) {
  uint64_t slot, release;
  uint32_t len, virt;
  if (!wan_link_pop(&d->link, now, &slot, &len, &release, &virt) || virt) return;
  const unsigned char *pkt = d->payload + slot * SLOT_BYTES;
  if (write(d->out_fd, pkt, len) != (ssize_t)len) d->write_errors++;
  if (is_watched(pkt, len)) d->watch_bytes_out += len;
  wan_link_sent(&d->link, release, wan_now_ns());
}

/* Cross traffic made up inside the link (--fwd-cross): constant-rate 1500-byte packets, each offered
 * at its own arrival time, however late this process runs; a stall freezes their clock with the link's. */
#define CROSS_LEN 1500u
struct cross {
  uint64_t gap_ns;  /* between arrivals; 0 = off */
  uint64_t next_ns; /* the next arrival */
};

static void offer_cross(struct cross *x, struct dir *d, uint64_t now) {
  if (!x->gap_ns) return;
  for (; x->next_ns <= now; x->next_ns += x->gap_ns) wan_link_offer_virtual(&d->link, x->next_ns, CROSS_LEN);
}

/* Releases everything due, oldest deadline first across both directions: a write into a TUN runs
 * the receiving stack inline (an ACK makes the sender transmit in our time slice), so draining one
 * direction first would make the other's packets late behind it. */
static void release_due(struct dir *a, struct dir *b) {
  for (;;) {
    uint64_t now = wan_now_ns(), ra = wan_link_next_release(&a->link), rb = wan_link_next_release(&b->link);
    if (ra > now && rb > now) return;
    release_one(ra <= rb ? a : b, now);
  }
}

static void print_params(FILE *f, const struct wan_params *p) {
  fprintf(f, "\"params\":{\"rate_bps\":%llu,\"delay_ns\":%llu,\"limit_bytes\":%llu,\"limit_pkts\":%u,\"loss\":%g}",
          (unsigned long long)p->rate_bps, (unsigned long long)p->delay_ns,
          (unsigned long long)p->limit_bytes, p->limit_pkts, p->loss);
}

static void print_dir(FILE *f, const struct dir *d) {
  const struct wan_stats *s = &d->link.st;
  uint64_t written = s->pkts_out - s->virt_out; /* lateness is a write's */
  fprintf(f, "\"%s\":{", d->name);
  print_params(f, &d->link.p);
  fprintf(f,
          ",\"pkts_in\":%llu,\"bytes_in\":%llu,\"pkts_out\":%llu,\"bytes_out\":%llu,"
          "\"drop_queue\":%llu,\"drop_loss\":%llu,\"drop_full\":%llu,\"oversize\":%llu,\"write_errors\":%llu,"
          "\"max_backlog_bytes\":%llu,\"max_backlog_pkts\":%u,\"stall_lag_ms\":%.3f,\"spaced_max_us\":%.1f,\"late_mean_us\":%.3f,"
          "\"late_max_us\":%.3f,\"virt_out\":%llu}",
          (unsigned long long)s->pkts_in, (unsigned long long)s->bytes_in, (unsigned long long)s->pkts_out,
          (unsigned long long)s->bytes_out, (unsigned long long)s->drop_queue,
          (unsigned long long)s->drop_loss, (unsigned long long)s->drop_full,
          (unsigned long long)d->oversize, (unsigned long long)d->write_errors,
          (unsigned long long)s->max_backlog_bytes, s->max_backlog_pkts, (double)s->stall_lag_ns / 1e6,
          (double)s->spaced_max_ns / 1e3, written ? (double)s->late_sum_ns / (double)written / 1e3 : 0.0,
          (double)s->late_max_ns / 1e3, (unsigned long long)s->virt_out);
}

static void print_report(FILE *f, struct dir *fwd, struct dir *rev, uint64_t start_ns, uint64_t spin_ns) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  double cpu = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
               ru.ru_stime.tv_usec / 1e6;
  double wall = (double)(wan_now_ns() - start_ns) / 1e9;
  fprintf(f, "{\"wall_s\":%.3f,\"cpu_s\":%.3f,\"cpu_pct\":%.1f,\"spin_us\":%.1f,\"slots\":[%llu,%llu],"
          "\"stalls\":%llu,\"stall_max_us\":%.1f,", wall, cpu, wall > 0 ? 100 * cpu / wall : 0.0,
          (double)spin_ns / 1e3, (unsigned long long)(fwd->link.mask + 1), (unsigned long long)(rev->link.mask + 1),
          (unsigned long long)stalls, (double)stall_max_ns / 1e3);
  print_dir(f, fwd);
  fputc(',', f);
  print_dir(f, rev);
  fputs("}\n", f);
}

/* Written to a temporary name and renamed, so a reader never sees half a report. */
static void write_stats(const char *path, struct dir *fwd, struct dir *rev, uint64_t start_ns, uint64_t spin_ns) {
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *f = fopen(tmp, "w");
  if (!f) die(tmp);
  print_report(f, fwd, rev, start_ns, spin_ns);
  if (fclose(f) != 0 || rename(tmp, path) != 0) die(path);
}

static void usage(FILE *f) {
  fputs("usage: wanemu --a NS:TUN --b NS:TUN [options]\n"
        "Forwards packets between two TUN devices through an emulated tight link, a→b = fwd, b→a = rev.\n"
        "  --rate R         serialisation rate, bit/s with k/M/G suffix (default 0 = unlimited)\n"
        "  --delay D        one-way delay, with ns/us/ms/s suffix (default 0)\n"
        "  --limit B        DropTail limit in bytes, k/M suffix (1000-based; default 0 = none)\n"
        "  --limit-pkts N   DropTail limit in packets (default 0 = none)\n"
        "  --loss P         random loss probability 0..1 (default 0)\n"
        "  --fwd-X V, --rev-X V   the same, for one direction only (X = rate, delay, limit, limit-pkts, loss)\n"
        "  --fwd-cross R    cross traffic made up inside the link: R bit/s (k/M/G) of 1500-byte packets\n"
        "                   at a constant rate a→b, queued and serialised as any, never written\n"
        "  --seed N         loss generator seed (default 1)\n"
        "  --spin-us N      busy-wait this long before each release deadline (default 50)\n"
        "  --stats FILE     JSON counters written at exit and on SIGUSR1 (default: stdout, at exit)\n"
        "  --series FILE    one line per --interval (t_s: CLOCK_MONOTONIC), cumulative bytes, backlog now:\n"
        "                   t_s fwd_bytes_out fwd_watch_bytes_out fwd_backlog rev_bytes_out rev_backlog\n"
        "                   fwd_drops fwd_watch_drops (packets dropped by DropTail or random loss, cumulative)\n"
        "  --watch ADDR     count fwd bytes and drops to this IPv4 address apart (the measured flow's host)\n"
        "  --interval MS    series interval (default 100)\n"
        "  --ready FILE     created once both devices are attached\n"
        "  --stall-log FILE one line per stall over 1 ms: when a release was due (CLOCK_MONOTONIC ms), how\n"
        "                   late it ran (us)\n",
        f);
}

enum { O_A = 256, O_B, O_SEED, O_SPIN, O_STATS, O_SERIES, O_INTERVAL, O_READY, O_WATCH, O_STALL_LOG, O_CROSS,
       O_PARAM = 512 };
static const char *param_names[] = {"rate", "delay", "limit", "limit-pkts", "loss"};
#define NPARAM 5

static void set_param(struct wan_params *p, int which, const char *v, const char *opt) {
  int ok;
  switch (which) {
  case 0: ok = wan_parse_rate(v, &p->rate_bps); break;
  case 1: ok = wan_parse_duration(v, &p->delay_ns); break;
  case 2: ok = wan_parse_bytes(v, &p->limit_bytes); break;
  case 3: {
    uint64_t n;
    ok = wan_parse_bytes(v, &n) && n <= UINT32_MAX;
    p->limit_pkts = (uint32_t)n;
    break;
  }
  default: ok = wan_parse_probability(v, &p->loss); break;
  }
  if (!ok) {
    fprintf(stderr, "wanemu: bad value '%s' for --%s\n", v, opt);
    exit(2);
  }
}

int main(int argc, char **argv) {
  struct option opts[3 * NPARAM + 16];
  char names[3 * NPARAM][32];
  int n = 0;
  for (int i = 0; i < NPARAM; i++)
    for (int k = 0; k < 3; k++) {
      snprintf(names[n], sizeof names[n], "%s%s", k == 0 ? "" : k == 1 ? "fwd-" : "rev-", param_names[i]);
      opts[n] = (struct option){names[n], required_argument, NULL, O_PARAM + i * 3 + k};
      n++;
    }
  struct option fixed[] = {{"a", required_argument, NULL, O_A},        {"b", required_argument, NULL, O_B},
                           {"seed", required_argument, NULL, O_SEED},  {"spin-us", required_argument, NULL, O_SPIN},
                           {"stats", required_argument, NULL, O_STATS}, {"series", required_argument, NULL, O_SERIES},
                           {"interval", required_argument, NULL, O_INTERVAL},
                           {"ready", required_argument, NULL, O_READY}, {"watch", required_argument, NULL, O_WATCH},
                           {"help", no_argument, NULL, 'h'},
                           {"stall-log", required_argument, NULL, O_STALL_LOG},
                           {"fwd-cross", required_argument, NULL, O_CROSS},
                           {0, 0, 0, 0}};
  memcpy(opts + n, fixed, sizeof fixed);

  struct wan_params fwd_p = {.seed = 1}, rev_p = {.seed = 2};
  const char *a = NULL, *b = NULL, *stats = NULL, *series = NULL, *ready = NULL;
  uint64_t spin_ns = 50000, interval_ns = 100000000, seed = 1, cross_bps = 0;
  int c;
  while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
    if (c >= O_PARAM) {
      int which = (c - O_PARAM) / 3, k = (c - O_PARAM) % 3;
      const char *optname = names[c - O_PARAM];
      if (k != 2) set_param(&fwd_p, which, optarg, optname);
      if (k != 1) set_param(&rev_p, which, optarg, optname);
      continue;
    }
    uint64_t v;
    switch (c) {
    case O_A: a = optarg; break;
    case O_B: b = optarg; break;
    case O_STATS: stats = optarg; break;
    case O_SERIES: series = optarg; break;
    case O_READY: ready = optarg; break;
    case O_STALL_LOG:
      if (!(stall_log = fopen(optarg, "w"))) die(optarg);
      setvbuf(stall_log, NULL, _IOLBF, 0);
      break;
    case O_CROSS:
      if (!wan_parse_rate(optarg, &cross_bps) || cross_bps == 0) {
        fprintf(stderr, "wanemu: bad value '%s' for --fwd-cross\n", optarg);
        return 2;
      }
      break;
    case O_WATCH:
      if (inet_pton(AF_INET, optarg, &watch_addr) != 1) {
        fprintf(stderr, "wanemu: bad --watch address '%s' (IPv4)\n", optarg);
        return 2;
      }
      break;
    case O_SEED:
    case O_SPIN:
    case O_INTERVAL:
      if (!wan_parse_bytes(optarg, &v)) {
        fprintf(stderr, "wanemu: bad number '%s'\n", optarg);
        return 2;
      }
      if (c == O_SEED) seed = v;
      else if (c == O_SPIN) spin_ns = v * 1000;
      else interval_ns = v * 1000000;
      break;
    case 'h': usage(stdout); return 0;
    default: usage(stderr); return 2;
    }
  }
  if (!a || !b || optind != argc || interval_ns == 0) {
    usage(stderr);
    return 2;
  }
  fwd_p.seed = seed * 2 + 1;
  rev_p.seed = seed * 2 + 2;

  int home = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
  if (home < 0) die("/proc/self/ns/net");
  int fd_a = open_tun(a, home), fd_b = open_tun(b, home);
  close(home);
  struct dir fwd = {0}, rev = {0};
  dir_setup(&fwd, "fwd", fd_a, fd_b, &fwd_p, pick_slots(&fwd_p));
  dir_setup(&rev, "rev", fd_b, fd_a, &rev_p, pick_slots(&rev_p));

  /* Timer slack would add up to 50 µs to every sleep; the spin covers the rest. */
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
  wan_catch_stop();
  struct sigaction usr = {.sa_handler = on_dump};
  sigaction(SIGUSR1, &usr, NULL);
  signal(SIGPIPE, SIG_IGN);

  FILE *series_f = NULL;
  if (series && !(series_f = fopen(series, "w"))) die(series);
  if (ready) {
    int fd = open(ready, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) die(ready);
    close(fd);
  }

  uint64_t start = wan_now_ns(), next_sample = start + interval_ns, next_ns_check = start;
  struct cross cross = {0};
  if (cross_bps) {
    cross.gap_ns = wan_tx_ns(&(struct wan_params){.rate_bps = cross_bps}, CROSS_LEN); /* a packet's time at R */
    cross.next_ns = start;
  }
  struct pollfd pfd[2] = {{.fd = fd_a, .events = POLLIN}, {.fd = fd_b, .events = POLLIN}};
  while (!wan_stop) {
    /* Every pass releases all that is due, so a release overdue by more than STALL_NS here means the
     * host did not run us since it was due, whether we were asleep or anywhere in the pass (measured:
     * a batch spaced over 37.8 ms, so a hole of ~42 ms between reads, in a run whose sleep-deadline
     * test saw no stall over 6.3 ms). */
    uint64_t woke = wan_now_ns(), due = wan_link_next_release(&fwd.link), due_rev = wan_link_next_release(&rev.link);
    if (due_rev < due) due = due_rev;
    if (due != UINT64_MAX && woke > due + STALL_NS) {
      stalls++;
      if (woke - due > stall_max_ns) stall_max_ns = woke - due;
      if (stall_log) fprintf(stall_log, "%.3f %.0f\n", (double)due / 1e6, (double)(woke - due) / 1e3);
      offer_cross(&cross, &fwd, due); /* what arrived before the link froze; the rest comes stall later */
      wan_link_stall(&fwd.link, woke, woke - due);
      wan_link_stall(&rev.link, woke, woke - due);
      cross.next_ns += woke - due;
    }
    release_due(&fwd, &rev);
    offer_cross(&cross, &fwd, wan_now_ns());
    int got = read_batch(&fwd) + read_batch(&rev);
    uint64_t now = wan_now_ns();
    if (series_f && now >= next_sample) {
      fprintf(series_f, "%.3f %llu %llu %llu %llu %llu %llu %llu\n", (double)now / 1e9,
              (unsigned long long)fwd.link.st.bytes_out, (unsigned long long)fwd.watch_bytes_out,
              (unsigned long long)wan_link_backlog(&fwd.link, now),
              (unsigned long long)rev.link.st.bytes_out, (unsigned long long)wan_link_backlog(&rev.link, now),
              (unsigned long long)(fwd.link.st.drop_queue + fwd.link.st.drop_loss),
              (unsigned long long)fwd.watch_drops);
      next_sample += interval_ns;
    }
    if (dump_requested) {
      dump_requested = 0;
      if (stats) write_stats(stats, &fwd, &rev, start, spin_ns);
    }
    if (now >= next_ns_check) {
      if (namespaces_gone()) break;
      next_ns_check = now + 500000000u;
    }
    uint64_t next = wan_link_next_release(&fwd.link), r = wan_link_next_release(&rev.link);
    if (r < next) next = r;
    if (cross.gap_ns && cross.next_ns < next) next = cross.next_ns;
    if (got) continue;
    if (series_f && next_sample < next) next = next_sample;
    if (next <= now + spin_ns) continue; /* spin: deadline close, keep polling the devices */
    uint64_t wait = next == UINT64_MAX ? 500000000u : next - now - spin_ns; /* idle: still check namespaces */
    struct timespec ts = {.tv_sec = (time_t)(wait / 1000000000u), .tv_nsec = (long)(wait % 1000000000u)};
    if (ppoll(pfd, 2, &ts, NULL) < 0 && errno != EINTR) die("ppoll");
  }
  if (series_f) fclose(series_f);
  if (stats) write_stats(stats, &fwd, &rev, start, spin_ns);
  else print_report(stdout, &fwd, &rev, start, spin_ns);
  return 0;
}
