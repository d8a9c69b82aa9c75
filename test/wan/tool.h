/* tool.h — what the testbed's three programs share: the clock, a stop flag, UDP addresses and sockets. */
#ifndef WAN_TOOL_H
#define WAN_TOOL_H

#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "units.h"

static inline uint64_t wan_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Set by SIGTERM/SIGINT/SIGHUP: every program finishes its report instead of dying mid-write. */
static volatile sig_atomic_t wan_stop;
static void wan_on_stop(int sig) { (void)sig; wan_stop = 1; }
static inline void wan_catch_stop(void) {
  struct sigaction sa = {.sa_handler = wan_on_stop};
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);
}

/* Resolves numeric HOST:PORT or [V6]:PORT (no DNS: the testbed has none). Returns 0 or -1 with a message. */
static inline int wan_parse_addr(const char *spec, struct sockaddr_storage *ss, socklen_t *len) {
  char host[256];
  const char *colon = strrchr(spec, ':');
  if (!colon || (size_t)(colon - spec) >= sizeof host) goto bad;
  memcpy(host, spec, (size_t)(colon - spec));
  host[colon - spec] = 0;
  char *h = host;
  size_t hl = strlen(h);
  if (hl >= 2 && h[0] == '[' && h[hl - 1] == ']') {
    h[hl - 1] = 0;
    h++;
  }
  struct addrinfo hints = {.ai_socktype = SOCK_DGRAM, .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV}, *ai;
  if (getaddrinfo(h, colon + 1, &hints, &ai) != 0) goto bad;
  memcpy(ss, ai->ai_addr, ai->ai_addrlen);
  *len = ai->ai_addrlen;
  freeaddrinfo(ai);
  return 0;
bad:
  fprintf(stderr, "bad address '%s' (want HOST:PORT, numeric)\n", spec);
  return -1;
}

/* A UDP socket on PORT for IPv4 and IPv6 at once; -1 with a message naming PROG on failure. */
static inline int wan_udp_bind(const char *prog, const char *port_s) {
  uint64_t port;
  if (!wan_parse_bytes(port_s, &port) || port == 0 || port > 65535) {
    fprintf(stderr, "%s: bad port '%s'\n", prog, port_s);
    return -1;
  }
  int fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0), off = 0;
  setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);
  struct sockaddr_in6 sa = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port), .sin6_addr = in6addr_any};
  if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
    fprintf(stderr, "%s: bind port %s: %m\n", prog, port_s);
    if (fd >= 0) close(fd);
    return -1;
  }
  return fd;
}

/* A UDP socket connected to HOST:PORT; -1 with a message on failure. */
static inline int wan_udp_connect(const char *prog, const char *spec) {
  struct sockaddr_storage dst;
  socklen_t dl;
  if (wan_parse_addr(spec, &dst, &dl) < 0) return -1;
  int fd = socket(dst.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || connect(fd, (struct sockaddr *)&dst, dl) < 0) {
    fprintf(stderr, "%s: connect %s: %m\n", prog, spec);
    if (fd >= 0) close(fd);
    return -1;
  }
  return fd;
}

#endif
