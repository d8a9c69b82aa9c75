/* common.h — helpers shared by the stress programs: a counting TCP server and checked I/O. */
#ifndef SOBAS_TEST_COMMON_H
#define SOBAS_TEST_COMMON_H

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define DIE(...) do { fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); exit(1); } while (0)

/* A listener on 127.0.0.1, any port; returns its fd and writes the port. */
static inline int listen_any(uint16_t *port) {
  int l = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  int one = 1;
  setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof a) != 0 || listen(l, 128) != 0) DIE("listen: %s", strerror(errno));
  socklen_t len = sizeof a;
  getsockname(l, (struct sockaddr *)&a, &len);
  *port = ntohs(a.sin_port);
  return l;
}

static inline int connect_to(uint16_t port) {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof a) != 0) DIE("connect: %s", strerror(errno));
  return s;
}

static inline void write_all(int fd, size_t n, unsigned char seed) {
  unsigned char buf[16384];
  while (n) {
    size_t k = n < sizeof buf ? n : sizeof buf;
    for (size_t i = 0; i < k; i++) buf[i] = (unsigned char)(seed + i);
    ssize_t w = write(fd, buf, k);
    if (w <= 0) DIE("write: %s", strerror(errno));
    n -= (size_t)w;
  }
}

/* Reads to EOF; returns the byte count. */
static inline uint64_t drain(int fd) {
  unsigned char buf[16384];
  uint64_t total = 0;
  ssize_t r;
  while ((r = read(fd, buf, sizeof buf)) > 0) total += (uint64_t)r;
  if (r < 0) DIE("read: %s", strerror(errno));
  return total;
}

/* Reads up to n bytes (fewer at EOF); returns the count. */
static inline uint64_t read_upto(int fd, uint64_t n) {
  static char buf[65536];
  uint64_t got = 0;
  while (got < n) {
    ssize_t r = read(fd, buf, sizeof buf);
    if (r < 0) DIE("read: %s", strerror(errno));
    if (r == 0) break;
    got += (uint64_t)r;
  }
  return got;
}

/* An HTTP/1.0 GET of `path` from IPv4 host:port (argv-style strings); returns the connected socket,
 * the request sent. */
static inline int http_get(const char *host, const char *port, const char *path) {
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(port))};
  if (inet_pton(AF_INET, host, &a.sin_addr) != 1) DIE("bad host %s", host);
  int s = socket(AF_INET, SOCK_STREAM, 0);
  if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof a) != 0) DIE("connect: %s", strerror(errno));
  char req[512];
  int n = snprintf(req, sizeof req, "GET %s HTTP/1.0\r\n\r\n", path);
  if (write(s, req, (size_t)n) != n) DIE("write");
  return s;
}

/* Server side of one connection: read to EOF, answer with the count (8 bytes). */
static inline void serve_count(int c) {
  uint64_t n = drain(c);
  if (write(c, &n, sizeof n) != sizeof n) DIE("reply: %s", strerror(errno));
}

/* Client side: send n bytes, half-close, read the server's count. */
static inline uint64_t send_and_count(int s, size_t n) {
  write_all(s, n, 7);
  shutdown(s, SHUT_WR);
  uint64_t got = 0;
  if (read(s, &got, sizeof got) != sizeof got) DIE("no count: %s", strerror(errno));
  return got;
}

/* A server thread that serves `count` connections one after another, then returns. */
struct server { int listener; int count; };
static inline void *server_main(void *arg) {
  struct server *s = arg;
  for (int i = 0; i < s->count; i++) {
    int c = accept(s->listener, NULL, NULL);
    if (c < 0) DIE("accept: %s", strerror(errno));
    serve_count(c);
    close(c);
  }
  return NULL;
}

#endif
