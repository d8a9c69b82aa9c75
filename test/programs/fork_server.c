/* fork_server.c — a fork-per-connection server: the child serves, the parent closes its copy at once. */
#include <sys/wait.h>

#include "common.h"

enum { CONNS = 16, BYTES = 2 * 1024 * 1024 };

int main(void) {
  uint16_t port;
  int l = listen_any(&port);
  pid_t client = fork();
  if (client == 0) {
    close(l);
    for (int i = 0; i < CONNS; i++) {
      int s = connect_to(port);
      uint64_t got = send_and_count(s, BYTES);
      if (got != BYTES) DIE("connection %d: server counted %llu", i, (unsigned long long)got);
      close(s);
    }
    exit(0);
  }
  for (int i = 0; i < CONNS; i++) {
    int c = accept(l, NULL, NULL);
    if (c < 0) DIE("accept: %s", strerror(errno));
    pid_t p = fork();
    if (p == 0) {
      close(l);
      serve_count(c);
      _exit(0); /* like many servers: no exit handlers in the child */
    }
    close(c);
  }
  int status, bad = 0;
  while (wait(&status) > 0) bad += !WIFEXITED(status) || WEXITSTATUS(status) != 0;
  if (bad) DIE("%d processes failed", bad);
  printf("ok %d forked connections\n", CONNS);
  return 0;
}
