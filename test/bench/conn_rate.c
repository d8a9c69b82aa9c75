/* conn_rate.c — connections per second on loopback: connect, send a byte, accept, read, close, N times. */
#include <time.h>

#include "../programs/common.h"

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 20000;
  uint16_t port;
  int l = listen_any(&port);
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (int i = 0; i < n; i++) {
    int c = connect_to(port);
    int s = accept(l, NULL, NULL);
    char x = 'x';
    if (s < 0 || write(c, &x, 1) != 1 || read(s, &x, 1) != 1) DIE("round %d: %s", i, strerror(errno));
    close(c);
    close(s);
  }
  clock_gettime(CLOCK_MONOTONIC, &b);
  double secs = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
  printf("%.0f\n", n / secs);
  return 0;
}
