/* dup2_over.c — dup2 one live socket over another: the replaced connection ends, the other goes on. */
#include "common.h"

enum { CHUNK = 1024 * 1024 };

struct two { int listener; uint64_t counts[2]; };

static void *server(void *arg) {
  struct two *t = arg;
  int c0 = accept(t->listener, NULL, NULL), c1 = accept(t->listener, NULL, NULL);
  if (c0 < 0 || c1 < 0) DIE("accept");
  t->counts[1] = drain(c1); /* B ends first: it is replaced by A */
  t->counts[0] = drain(c0);
  close(c0);
  close(c1);
  return NULL;
}

int main(void) {
  struct two t = {0};
  uint16_t port;
  t.listener = listen_any(&port);
  pthread_t th;
  pthread_create(&th, NULL, server, &t);
  int a = connect_to(port), b = connect_to(port);
  write_all(a, CHUNK, 1);
  write_all(b, 3 * CHUNK, 2);
  if (dup2(a, b) != b) DIE("dup2: %s", strerror(errno));
  write_all(b, 2 * CHUNK, 3); /* now lands on A's connection */
  close(a);
  close(b);
  pthread_join(th, NULL);
  if (t.counts[0] != 3ull * CHUNK || t.counts[1] != 3ull * CHUNK)
    DIE("A got %llu, B got %llu", (unsigned long long)t.counts[0], (unsigned long long)t.counts[1]);
  printf("ok A=%llu B=%llu\n", (unsigned long long)t.counts[0], (unsigned long long)t.counts[1]);
  return 0;
}
