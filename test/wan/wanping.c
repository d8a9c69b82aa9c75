/* wanping.c — an independent small UDP ping through the emulated path: echo server, or prober logging each RTT. */
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "tool.h"

#define PROBE_BYTES 32 /* small: the ping must not load the path it measures */
#define MAX_PROBES (1u << 22)

struct probe {
  uint32_t magic, seq;
  uint64_t sent_ns;
  uint8_t pad[PROBE_BYTES - 16];
};
#define MAGIC 0x77616e70u /* "wanp" */

static int echo(const char *port_s) {
  int fd = wan_udp_bind("wanping", port_s);
  if (fd < 0) return 2;
  while (!wan_stop) {
    struct probe p;
    struct sockaddr_storage from;
    socklen_t fl = sizeof from;
    ssize_t n = recvfrom(fd, &p, sizeof p, 0, (struct sockaddr *)&from, &fl);
    /* Only well-formed probes are answered, never larger than they came. */
    if (n == (ssize_t)sizeof p && p.magic == MAGIC) sendto(fd, &p, sizeof p, 0, (struct sockaddr *)&from, fl);
  }
  return 0;
}

/* Records the RTT of every pending reply; stale, duplicate or foreign packets are ignored. */
static void take_replies(int fd, uint32_t seq, const uint64_t *sent, int64_t *rtt) {
  struct probe p;
  while (recv(fd, &p, sizeof p, MSG_DONTWAIT) == (ssize_t)sizeof p) {
    uint64_t t = wan_now_ns();
    if (p.magic == MAGIC && p.seq < seq && sent[p.seq] == p.sent_ns && rtt[p.seq] < 0)
      rtt[p.seq] = (int64_t)(t - p.sent_ns);
  }
}

int main(int argc, char **argv) {
  const char *to = NULL, *out = NULL, *echo_port = NULL;
  uint64_t interval_ns = 10000000, duration_ns = 0;
  static const struct option opts[] = {{"echo", required_argument, NULL, 'e'},
                                       {"to", required_argument, NULL, 't'},
                                       {"interval", required_argument, NULL, 'i'},
                                       {"duration", required_argument, NULL, 'd'},
                                       {"out", required_argument, NULL, 'o'},
                                       {"help", no_argument, NULL, 'h'},
                                       {0, 0, 0, 0}};
  int c;
  while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
    switch (c) {
    case 'e': echo_port = optarg; break;
    case 't': to = optarg; break;
    case 'o': out = optarg; break;
    case 'i':
    case 'd':
      if (!wan_parse_duration(optarg, c == 'i' ? &interval_ns : &duration_ns) || (c == 'i' && !interval_ns)) {
        fprintf(stderr, "wanping: bad duration '%s'\n", optarg);
        return 2;
      }
      break;
    case 'h':
      puts("usage: wanping --echo PORT\n"
           "       wanping --to HOST:PORT [--interval 10ms] [--duration D] [--out FILE]\n"
           "Prober output: one line per probe, 'send_time_s seq rtt_us' (CLOCK_MONOTONIC seconds) (rtt -1 = no reply), until\n"
           "--duration passes or SIGTERM/SIGINT.");
      return 0;
    default: return 2;
    }
  }
  wan_catch_stop();
  if (echo_port && !to) return echo(echo_port);
  if (!to || echo_port || optind != argc) {
    fprintf(stderr, "wanping: want --echo PORT or --to HOST:PORT (see --help)\n");
    return 2;
  }

  int fd = wan_udp_connect("wanping", to);
  if (fd < 0) return 2;
  FILE *f = out ? fopen(out, "w") : stdout;
  if (!f) {
    perror(out);
    return 1;
  }
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
  /* Replies are matched by sequence; the send time travels in the probe, so nothing is kept per probe
   * but whether it came back. */
  uint64_t *sent = calloc(MAX_PROBES, sizeof *sent);
  int64_t *rtt = malloc(MAX_PROBES * sizeof *rtt);
  uint64_t start = wan_now_ns(), next = start;
  uint32_t seq = 0;
  while (!wan_stop && seq < MAX_PROBES) {
    uint64_t now = wan_now_ns();
    if (duration_ns && now - start >= duration_ns) break;
    if (now >= next) {
      struct probe p = {.magic = MAGIC, .seq = seq, .sent_ns = now};
      sent[seq] = now;
      rtt[seq] = -1;
      send(fd, &p, sizeof p, 0);
      seq++;
      next += interval_ns;
      continue;
    }
    struct pollfd pfd = {.fd = fd, .events = POLLIN};
    uint64_t wait = next - now;
    struct timespec ts = {.tv_sec = (time_t)(wait / 1000000000u), .tv_nsec = (long)(wait % 1000000000u)};
    if (ppoll(&pfd, 1, &ts, NULL) <= 0) continue;
    take_replies(fd, seq, sent, rtt);
  }
  /* Late replies get one more RTT-sized chance before the log is written. */
  uint64_t grace = wan_now_ns() + 500000000u;
  while (wan_now_ns() < grace) {
    struct pollfd pfd = {.fd = fd, .events = POLLIN};
    if (poll(&pfd, 1, 50) <= 0) break;
    take_replies(fd, seq, sent, rtt);
  }
  for (uint32_t i = 0; i < seq; i++)
    fprintf(f, "%.6f %u %.1f\n", (double)sent[i] / 1e9, i, rtt[i] < 0 ? -1.0 : (double)rtt[i] / 1e3);
  return fclose(f) == 0 ? 0 : 1;
}
