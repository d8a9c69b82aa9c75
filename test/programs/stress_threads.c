/* stress_threads.c — 32 threads each open, use and close many connections at once (fd numbers churn). */
#include "common.h"

enum { THREADS = 32, CONNS = 20, BYTES = 300 * 1024 };
static uint16_t port;
static int failures;

static void *client(void *arg) {
  (void)arg;
  for (int i = 0; i < CONNS; i++) {
    int s = connect_to(port);
    if (send_and_count(s, BYTES) != BYTES) __atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);
    close(s);
  }
  return NULL;
}

/* Serves each connection on its own thread, so all 32 clients move data at once. */
static void *serve_one(void *arg) {
  int c = (int)(intptr_t)arg;
  serve_count(c);
  close(c);
  return NULL;
}

int main(void) {
  int l = listen_any(&port);
  pthread_t t[THREADS];
  for (int i = 0; i < THREADS; i++) pthread_create(&t[i], NULL, client, NULL);
  pthread_t w[THREADS * CONNS];
  for (int i = 0; i < THREADS * CONNS; i++) {
    int c = accept(l, NULL, NULL);
    if (c < 0) DIE("accept: %s", strerror(errno));
    pthread_create(&w[i], NULL, serve_one, (void *)(intptr_t)c);
  }
  for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
  for (int i = 0; i < THREADS * CONNS; i++) pthread_join(w[i], NULL);
  close(l);
  if (failures) DIE("%d connections lost bytes", failures);
  printf("ok %d connections\n", THREADS * CONNS);
  return 0;
}
