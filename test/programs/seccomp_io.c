/* seccomp_io.c — moves bulk TCP data under a seccomp filter that kills on the syscalls a shim would add. */
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "common.h"

enum { BYTES = 8 * 1024 * 1024 };

/* Kills the process on getsockopt, fstat, getpid and openat: what the shim itself would call while
 * measuring; everything else is allowed. */
static void install(int via_syscall) {
  struct sock_filter f[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getsockopt, 4, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_fstat, 3, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getpid, 2, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
  };
  struct sock_fprog prog = {.len = sizeof f / sizeof *f, .filter = f};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) DIE("no_new_privs");
  int r = via_syscall ? (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog)
                      : prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
  if (r != 0) DIE("seccomp: %s", strerror(errno));
}

int main(int argc, char **argv) {
  int via_syscall = argc > 1 && strcmp(argv[1], "syscall") == 0;
  uint16_t port;
  int l = listen_any(&port);
  struct server srv = {l, 1};
  pthread_t t;
  pthread_create(&t, NULL, server_main, &srv);
  int s = connect_to(port);
  write_all(s, 64 * 1024, 1); /* a flow the shim already tracks when the sandbox closes */
  install(via_syscall);
  write_all(s, BYTES, 2);
  shutdown(s, SHUT_WR);
  uint64_t got = 0;
  if (read(s, &got, sizeof got) != sizeof got || got != BYTES + 64 * 1024) DIE("server counted %llu", (unsigned long long)got);
  close(s);
  pthread_join(t, NULL);
  printf("ok %llu bytes under seccomp (%s)\n", (unsigned long long)got, via_syscall ? "seccomp(2)" : "prctl");
  fflush(stdout);
  _exit(0);
}
