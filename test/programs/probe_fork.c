/* probe_fork.c — downloads over HTTP, forks halfway, and lets the child read the rest: the child must run its own probe helper. */
#include <sys/wait.h>

#include "common.h"

int main(int argc, char **argv) {
  if (argc != 4) DIE("usage: probe_fork HOST PORT PATH");
  int s = http_get(argv[1], argv[2], argv[3]);
  uint64_t parent = read_upto(s, 8u << 20); /* the parent's probe runs, decides, maybe */
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) DIE("fork: %s", strerror(errno));
  if (pid == 0) {
    uint64_t child = read_upto(s, ~0ull);
    printf("child %d read %llu\n", (int)getpid(), (unsigned long long)child);
    exit(0);
  }
  int st;
  if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) DIE("child failed");
  printf("parent %d read %llu\n", (int)getpid(), (unsigned long long)parent);
  return 0;
}
