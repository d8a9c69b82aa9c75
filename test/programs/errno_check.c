/* errno_check.c — failing calls whose return values and errno must be the same with and without the shim. */
#include <fcntl.h>
#include <sys/uio.h>

#include "common.h"

#define SHOW(expr)                                          \
  do {                                                      \
    errno = 0;                                              \
    long r_ = (long)(expr);                                 \
    printf("%-44s -> %ld errno=%s\n", #expr, r_, strerrorname_np(errno) ? strerrorname_np(errno) : "0"); \
  } while (0)

int main(void) {
  char buf[16];
  struct iovec iov = {buf, sizeof buf};
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(9), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  SHOW(close(-1));
  SHOW(close(987654));
  SHOW(read(987654, buf, sizeof buf));
  SHOW(write(987654, buf, sizeof buf));
  SHOW(readv(987654, &iov, 1));
  SHOW(recv(0x7fffffff, buf, sizeof buf, 0));
  SHOW(send(987654, buf, sizeof buf, 0));
  SHOW(dup2(987654, 5));
  SHOW(dup3(1, 1, 0));
  SHOW(fcntl(987654, F_DUPFD, 0));
  SHOW(close_range(10, 5, 0));
  SHOW(socket(AF_INET, 12345, 0));
  int s = socket(AF_INET, SOCK_STREAM, 0);
  SHOW(connect(s, (struct sockaddr *)&a, sizeof a));
  SHOW(send(s, buf, sizeof buf, MSG_NOSIGNAL));
  SHOW(shutdown(s, 77));
  SHOW(setsockopt(s, SOL_SOCKET, 99999, buf, 4));
  SHOW(accept(s, NULL, NULL));
  SHOW(listen(987654, 1));
  int nb = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  SHOW(read(nb, buf, sizeof buf));
  SHOW(close(s));
  SHOW(close(s));
  return 0;
}
