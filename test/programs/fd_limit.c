/* fd_limit.c — a program at RLIMIT_NOFILE 32: downloads over HTTP and, mid-transfer, opens files until EMFILE; prints how many it got and the body's length. */
#include <fcntl.h>
#include <sys/resource.h>

#include "common.h"

int main(int argc, char **argv) {
  if (argc != 4) DIE("usage: fd_limit IPV4 PORT PATH");
  struct rlimit rl = {32, 32};
  if (setrlimit(RLIMIT_NOFILE, &rl) != 0) DIE("setrlimit: %s", strerror(errno));
  int s = http_get(argv[1], argv[2], argv[3]);
  /* 4 MiB in: the shim has measured the flow for a while, and opened whatever it opens for it. */
  uint64_t total = read_upto(s, 4u << 20);
  int got = 0, fds[64];
  for (; got < 64; got++)
    if ((fds[got] = open("/dev/null", O_RDONLY)) < 0) break;
  if (got < 64 && errno != EMFILE) DIE("open: %s", strerror(errno));
  for (int i = 0; i < got; i++) close(fds[i]);
  total += drain(s);
  printf("files %d, bytes %llu\n", got, (unsigned long long)total);
  return 0;
}
