/* io_fastpath.c — N one-byte send()s and recv()s on one loopback TCP flow: the shim's per-call cost. */
#include "../programs/common.h"

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 100000;
  uint16_t port;
  int l = listen_any(&port);
  int c = connect_to(port), s = accept(l, NULL, NULL);
  char x = 'x';
  for (long i = 0; i < n; i++)
    if (send(c, &x, 1, 0) != 1 || recv(s, &x, 1, 0) != 1) DIE("round %ld: %s", i, strerror(errno));
  close(c);
  close(s);
  close(l);
  return 0;
}
