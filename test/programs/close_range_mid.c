/* close_range_mid.c — closes every other fd mid-transfer (close_range twice, closefrom) and keeps going. */
#include <fcntl.h>

#include "common.h"

enum { HALF = 4 * 1024 * 1024, CLIENT_FD = 200, SERVER_FD = 400, JUNK_HIGH = 300 };

static void *serve(void *arg) {
  serve_count((int)(intptr_t)arg);
  return NULL;
}

/* Moves fd to the lowest free number >= at, closing the original. */
static int park(int fd, int at) {
  int hi = fcntl(fd, F_DUPFD_CLOEXEC, at);
  if (hi < 0) DIE("F_DUPFD_CLOEXEC: %s", strerror(errno));
  close(fd);
  return hi;
}

int main(void) {
  uint16_t port;
  int l = listen_any(&port);
  int s = connect_to(port);
  int c = accept(l, NULL, NULL);
  if (c < 0) DIE("accept: %s", strerror(errno));
  close(l);
  /* The two ends of the flow live at known high numbers; everything else gets swept around them. */
  int cli = park(s, CLIENT_FD), srv = park(c, SERVER_FD);
  pthread_t t;
  pthread_create(&t, NULL, serve, (void *)(intptr_t)srv);
  write_all(cli, HALF, 1);

  int junk[6];
  for (int i = 0; i < 3; i++) junk[i] = open("/dev/null", O_RDONLY);
  if (pipe(&junk[3]) != 0) DIE("pipe");
  junk[5] = dup2(junk[0], JUNK_HIGH); /* between the two kept fds */
  close_range(3, (unsigned)cli - 1, 0);
  close_range((unsigned)cli + 1, (unsigned)srv - 1, 0);
  closefrom(srv + 1);
  for (int i = 0; i < 6; i++)
    if (fcntl(junk[i], F_GETFD) != -1 || errno != EBADF) DIE("fd %d survived", junk[i]);

  write_all(cli, HALF, 2);
  shutdown(cli, SHUT_WR);
  uint64_t got = 0;
  if (read(cli, &got, sizeof got) != sizeof got || got != 2ull * HALF) DIE("server counted %llu", (unsigned long long)got);
  pthread_join(t, NULL);
  close(cli);
  close(srv);
  printf("ok %llu bytes across close_range\n", (unsigned long long)got);
  return 0;
}
