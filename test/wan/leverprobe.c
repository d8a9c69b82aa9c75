/* leverprobe.c — measures which kernel lever holds a flow at S mid-transfer: the receiver's window, or the sender's rate (TCP_INFO trace). */
#include <arpa/inet.h>
#include <getopt.h>
#include <netinet/in.h>
#include <linux/tcp.h> /* the kernel's struct tcp_info (pacing, delivery rate, notsent); glibc's is older */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tool.h"

/* tcpi_rcv_wnd's ABI offset (Linux 6.2+); Debian 12's headers stop before it. */
#define TCPI_RCV_WND_OFFSET 232

static void trace(int fd, uint64_t t0, uint64_t got, uint64_t *last_got, uint64_t *last_t) {
  unsigned char ti[512] = {0};
  socklen_t len = sizeof ti;
  getsockopt(fd, IPPROTO_TCP, TCP_INFO, ti, &len);
  struct tcp_info *i = (struct tcp_info *)ti;
  uint32_t rcv_wnd = 0;
  if (len >= TCPI_RCV_WND_OFFSET + 4) memcpy(&rcv_wnd, ti + TCPI_RCV_WND_OFFSET, 4);
  int clamp = 0, rcvbuf = 0;
  socklen_t l = sizeof clamp;
  getsockopt(fd, IPPROTO_TCP, TCP_WINDOW_CLAMP, &clamp, &l);
  l = sizeof rcvbuf;
  getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, &l);
  uint64_t now = wan_now_ns();
  double mbps = (double)(got - *last_got) * 8 / ((double)(now - *last_t) / 1e9) / 1e6;
  printf("%.3f %.1f %u %u %d %d %u %u\n", (double)(now - t0) / 1e9, mbps, rcv_wnd, i->tcpi_rcv_space, clamp, rcvbuf,
         i->tcpi_rcv_rtt, i->tcpi_rcv_ssthresh);
  *last_got = got;
  *last_t = now;
}

/* Applies the lever under test: "clamp" (TCP_WINDOW_CLAMP = S), "rcvbuf" (SO_RCVBUF = S),
 * "lock+clamp" (SO_RCVBUF = S, which locks autotuning, then TCP_WINDOW_CLAMP = S). */
static void apply(int fd, const char *lever, int s) {
  if (!strcmp(lever, "rcvbuf") || !strcmp(lever, "lock+clamp")) setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &s, sizeof s);
  if (!strcmp(lever, "clamp") || !strcmp(lever, "lock+clamp") || !strcmp(lever, "reclamp"))
    setsockopt(fd, IPPROTO_TCP, TCP_WINDOW_CLAMP, &s, sizeof s);
}

/* Sender levers: "pacing" (SO_MAX_PACING_RATE = cap bytes/s: the kernel's own TCP pacing without fq),
 * "sndbuf" (SO_SNDBUF = cap: what is in flight plus unsent). */
static int is_sender_lever(const char *lever) { return !strcmp(lever, "pacing") || !strcmp(lever, "sndbuf"); }

static void apply_sender(int fd, const char *lever, uint64_t cap) {
  if (!strcmp(lever, "pacing")) {
    uint64_t rate = cap;
    if (setsockopt(fd, SOL_SOCKET, SO_MAX_PACING_RATE, &rate, sizeof rate) < 0) perror("SO_MAX_PACING_RATE");
  }
  if (!strcmp(lever, "sndbuf")) {
    int b = (int)cap;
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &b, sizeof b);
  }
}

static void trace_sender(int fd, uint64_t t0, uint64_t *last_acked, uint64_t *last_t) {
  struct tcp_info i;
  memset(&i, 0, sizeof i);
  socklen_t len = sizeof i;
  getsockopt(fd, IPPROTO_TCP, TCP_INFO, &i, &len);
  uint64_t now = wan_now_ns();
  double mbps = (double)(i.tcpi_bytes_acked - *last_acked) * 8 / ((double)(now - *last_t) / 1e9) / 1e6;
  printf("%.3f %.1f %.1f %.1f %u %u %u %u %u %llu %llu\n", (double)(now - t0) / 1e9, mbps,
         (double)i.tcpi_pacing_rate * 8 / 1e6, (double)i.tcpi_delivery_rate * 8 / 1e6, i.tcpi_rtt, i.tcpi_min_rtt,
         i.tcpi_snd_cwnd, i.tcpi_notsent_bytes, i.tcpi_total_retrans,
         (unsigned long long)i.tcpi_rwnd_limited / 1000, (unsigned long long)i.tcpi_sndbuf_limited / 1000);
  fflush(stdout);
  *last_acked = i.tcpi_bytes_acked;
  *last_t = now;
}

int main(int argc, char **argv) {
  const char *lever = "none", *to = NULL;
  uint64_t at_ns = 2000000000u, cap = 300000, dur_ns = 6000000000u;
  int port = 0, c;
  static const struct option opts[] = {{"recv", required_argument, NULL, 'r'}, {"send", required_argument, NULL, 's'},
                                       {"lever", required_argument, NULL, 'l'}, {"cap", required_argument, NULL, 'c'},
                                       {"at", required_argument, NULL, 'a'},    {"duration", required_argument, NULL, 'd'},
                                       {0, 0, 0, 0}};
  while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
    switch (c) {
    case 'r': port = atoi(optarg); break;
    case 's': to = optarg; break;
    case 'l': lever = optarg; break;
    case 'c': wan_parse_bytes(optarg, &cap); break;
    case 'a': wan_parse_duration(optarg, &at_ns); break;
    case 'd': wan_parse_duration(optarg, &dur_ns); break;
    default: return 2;
    }
  }
  static char buf[1 << 16];
  if (to) { /* sender: TCP, as fast as the path allows, until the receiver closes */
    struct sockaddr_storage a;
    socklen_t al;
    if (wan_parse_addr(to, &a, &al) < 0) return 2;
    int fd = socket(a.ss_family, SOCK_STREAM, 0);
    if (connect(fd, (struct sockaddr *)&a, al) < 0) return perror("connect"), 1;
    if (!is_sender_lever(lever)) {
      while (send(fd, buf, sizeof buf, MSG_NOSIGNAL) > 0) {}
      return 0;
    }
    printf("# t_s acked_mbps pacing_mbps delivery_mbps rtt_us min_rtt_us cwnd notsent retrans rwnd_limited_ms "
           "sndbuf_limited_ms  lever=%s cap=%llu\n", lever, (unsigned long long)cap);
    uint64_t t0 = wan_now_ns(), next = t0 + 100000000u, last_acked = 0, last_t = t0;
    int applied = 0;
    while (wan_now_ns() - t0 < dur_ns && send(fd, buf, sizeof buf, MSG_NOSIGNAL) > 0) {
      uint64_t now = wan_now_ns();
      if (!applied && now - t0 >= at_ns) {
        apply_sender(fd, lever, cap);
        applied = 1;
      }
      if (now >= next) {
        trace_sender(fd, t0, &last_acked, &last_t);
        next += 100000000u;
      }
    }
    return 0;
  }
  int l = socket(AF_INET, SOCK_STREAM, 0), one = 1;
  setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  if (bind(l, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(l, 1) < 0) return perror("listen"), 1;
  int fd = accept(l, NULL, NULL);
  printf("# t_s mbps rcv_wnd rcv_space window_clamp so_rcvbuf rcv_rtt_us rcv_ssthresh  lever=%s cap=%llu\n", lever,
         (unsigned long long)cap);
  uint64_t t0 = wan_now_ns(), next = t0 + 100000000u, got = 0, last_got = 0, last_t = t0;
  int applied = 0;
  while (wan_now_ns() - t0 < dur_ns) {
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    got += (uint64_t)n;
    uint64_t now = wan_now_ns();
    if (!applied && now - t0 >= at_ns) {
      apply(fd, lever, (int)cap);
      applied = 1;
    }
    /* "reclamp": the shim's way, re-applied every sample as autotuning may reset it. */
    if (applied && !strcmp(lever, "reclamp") && now >= next) apply(fd, lever, (int)cap);
    if (now >= next) {
      trace(fd, t0, got, &last_got, &last_t);
      next += 100000000u;
    }
  }
  close(fd);
  return 0;
}
