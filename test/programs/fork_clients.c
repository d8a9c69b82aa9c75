/* fork_clients.c — 200 forked children each download 1 MiB at once from the parent, which serves every connection on a thread of its own. */
#include <sys/wait.h>

#include "common.h"

enum { CHILDREN = 200, BYTES = 1024 * 1024 };

static void *serve_one(void *arg) {
  int c = (int)(intptr_t)arg;
  write_all(c, BYTES, 3);
  close(c);
  return NULL;
}

int main(void) {
  uint16_t port;
  int l = listen_any(&port);
  for (int i = 0; i < CHILDREN; i++) {
    pid_t p = fork();
    if (p < 0) DIE("fork: %s", strerror(errno));
    if (p == 0) {
      close(l);
      int s = connect_to(port);
      uint64_t got = drain(s);
      close(s);
      exit(got == BYTES ? 0 : 3); /* exit handlers run: each child's flow is recorded at its exit too */
    }
  }
  pthread_t t[CHILDREN];
  for (int i = 0; i < CHILDREN; i++) {
    int c = accept(l, NULL, NULL);
    if (c < 0) DIE("accept: %s", strerror(errno));
    pthread_create(&t[i], NULL, serve_one, (void *)(intptr_t)c);
  }
  for (int i = 0; i < CHILDREN; i++) pthread_join(t[i], NULL);
  close(l);
  int status, bad = 0;
  while (wait(&status) > 0) bad += !WIFEXITED(status) || WEXITSTATUS(status) != 0;
  if (bad) DIE("%d children did not get their %d bytes", bad, BYTES);
  printf("ok %d children\n", CHILDREN);
  return 0;
}
