/* close_range_mid.c — closes every other fd mid-transfer (close_range, closefrom) and keeps going. */
#include <fcntl.h>

#include "common.h"

enum { HALF = 4 * 1024 * 1024 };

int main(void) {
  uint16_t port;
  int l = listen_any(&port);
  struct server srv = {l, 1};
  pthread_t t;
  pthread_create(&t, NULL, server_main, &srv);
  int s = connect_to(port);
  /* Park the socket high so everything between 3 and it, and above it, can be swept. */
  int hi = fcntl(s, F_DUPFD_CLOEXEC, 200);
  close(s);
  write_all(hi, HALF, 1);

  int junk[6];
  for (int i = 0; i < 3; i++) junk[i] = open("/dev/null", O_RDONLY);
  if (pipe(&junk[3]) != 0) DIE("pipe");
  junk[5] = dup2(junk[0], 300);
  for (int i = 0; i < 5; i++)
    if (junk[i] <= l) DIE("fd layout: junk fd %d not above listener %d", junk[i], l);
  close_range((unsigned)junk[0], (unsigned)hi - 1, 0);
  closefrom(hi + 1);
  for (int i = 0; i < 6; i++)
    if (fcntl(junk[i], F_GETFD) != -1 || errno != EBADF) DIE("fd %d survived", junk[i]);

  write_all(hi, HALF, 2);
  shutdown(hi, SHUT_WR);
  uint64_t got = 0;
  if (read(hi, &got, sizeof got) != sizeof got || got != 2ull * HALF) DIE("server counted %llu", (unsigned long long)got);
  close(hi);
  pthread_join(t, NULL);
  printf("ok %llu bytes across close_range\n", (unsigned long long)got);
  return 0;
}
